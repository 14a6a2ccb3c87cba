package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
)

// sweepRefuser is a devnet chain whose signer refuses the sweeps from the
// addresses it is told to (as a remote signer's policy would), noting
// each sweep refused (the engine may ask twice for one: once as it plans
// it, once as it sends it).
type sweepRefuser struct {
	*devnet.Chain
	mu      sync.Mutex
	refused map[string]map[string]bool // by address blocked, the sweeps refused
}

// Sign refuses a sweep from a refused address with chains.ErrSignerRefused
// (and chains.ErrInvalidForward, as the remote signer's client wraps it);
// anything else the devnet signs.
func (r *sweepRefuser) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.HasPrefix(f.ID, "sweep:") && r.refused[f.From] != nil {
		r.refused[f.From][f.ID] = true
		return chains.Signed{}, fmt.Errorf("%w: %w: the policy does not allow a transfer from %s", chains.ErrSignerRefused, chains.ErrInvalidForward, f.From)
	}
	return r.Chain.Sign(ctx, f)
}

// block makes the signer refuse every sweep from addr.
func (r *sweepRefuser) block(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused[addr] = map[string]bool{}
}

// count is how many distinct sweeps from addr were refused.
func (r *sweepRefuser) count(addr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.refused[addr])
}

// TestPayoutSweepRefused: on the devnet (eth), a queued payout whose sweep
// to the payout wallet the signer refuses does not stay processing:
//
//   - When other held funds cover it, it stays queued and is paid from
//     them (their sweep), and the refused address is not swept again.
//   - When nothing else covers it, it is error at once with the sweep's
//     reason, its requests rejected, one payout.error webhook sent; the
//     refused funds are held again where they were, the balance what it
//     was, and nothing is swept again or sent later.
func TestPayoutSweepRefused(t *testing.T) {
	t.Parallel()
	tk, _ := family.DefaultRegistry().Lookup("eth")
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			var refuser *sweepRefuser
			me := newMerchantEnv(t, d, func(c *server.Config) {
				c.OutboundBackend = func(ticker string, b chains.Backend) chains.Backend {
					if ticker != "eth" {
						return b
					}
					refuser = &sweepRefuser{Chain: b.(*devnet.Chain), refused: map[string]map[string]bool{}}
					return refuser
				}
			})
			e := me.devEnv
			ctx := context.Background()
			if err := project.SetPayoutNotify(ctx, e.in.Server.DB().Client, nil, e.in.ProjectA, me.ms.URL+"/merchant", true, clock.Now()); err != nil {
				t.Fatal(err)
			}
			nf := tk.Rules().NetworkFee(tk)
			u := decimal.Max(nf, tk.MinTransaction).Mul(decimal.NewFromInt(10))
			times := func(n int64) decimal.Decimal { return u.Mul(decimal.NewFromInt(n)) }
			balance := func() string {
				t.Helper()
				r := e.in.Get(t, "/eth/payout/balance/", nil, e.in.KeyA)
				wantStatus(t, r, 200)
				return fmt.Sprint(r.JSON["balance"])
			}
			addresses := 0
			pay := func(v decimal.Decimal) string { // to a new address (a callback of its own)
				t.Helper()
				addresses++
				c := e.in.Get(t, "/eth/create/", q("callback", fmt.Sprintf("%s/hook?held=%d", e.sink.URL, addresses)), e.in.KeyA)
				wantStatus(t, c, 200)
				a := c.JSON["address_in"].(string)
				wantStatus(t, e.post(t, "/devnet/eth/pay/", map[string]any{"address_in": a, "value_coin": v.String()}), 200)
				return a
			}
			chain, _ := e.in.Server.Devnet().Chain("eth")
			sweepsFrom := func(addr string) int {
				n := 0
				for _, f := range chain.Forwards() {
					if strings.HasPrefix(f.ID, "sweep:") && f.From == addr {
						n++
					}
				}
				return n
			}
			r := e.in.Get(t, "/eth/payout/address/", nil, e.in.KeyA)
			wantStatus(t, r, 200)
			wallet := r.JSON["address"].(string)
			x, y := pay(times(30)), pay(times(20))
			e.mine(t, "eth", 25)
			if b := balance(); b != times(50).String() {
				t.Fatalf("balance %s, want %s", b, times(50))
			}
			refuser.block(x)
			destA, destB := destinations(t, tk)

			// 1. The sweep of x (the largest) is refused; y covers the
			// payout: it stays queued, y is swept, the payout is paid.
			r = e.postKey(t, "/eth/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, destA, times(15)), e.in.KeyA)
			wantStatus(t, r, 200)
			first := fmt.Sprint(r.JSON["payout_info"].(map[string]any)["id"])
			if n := refuser.count(x); n != 1 {
				t.Fatalf("%d sweeps from x refused, want 1", n)
			}
			if info := e.payoutStatus(t, first, e.in.KeyA); info["status"] != "processing" {
				t.Fatalf("a payout other held funds cover, after its sweep was refused: %v, want processing", info)
			}
			for range 4 {
				e.mine(t, "eth", 5)
			}
			if info := e.payoutStatus(t, first, e.in.KeyA); info["status"] != "done" || info["from"] != wallet {
				t.Fatalf("the payout once y was swept: %v, want done from the wallet", info)
			}
			if n, m := sweepsFrom(x), sweepsFrom(y); n != 0 || m != 1 {
				t.Fatalf("sweeps sent from x %d, from y %d; want 0 and 1", n, m)
			}
			if n := refuser.count(x); n != 1 {
				t.Fatalf("x was swept again: %d sweeps refused, want 1", n)
			}
			inWallet := times(20).Sub(nf).Sub(times(15)).Sub(nf)
			if b := balance(); b != times(30).Add(inWallet).String() {
				t.Fatalf("balance %s, want x's %s and the wallet's %s", b, times(30), inWallet)
			}

			// 2. z's sweep is refused too and nothing else covers the
			// payout: it is error with the sweep's reason, at once.
			z := pay(times(40))
			e.mine(t, "eth", 25)
			refuser.block(z)
			before := balance()
			if before != times(70).Add(inWallet).String() {
				t.Fatalf("balance %s, want %s", before, times(70).Add(inWallet))
			}
			r = e.postKey(t, "/eth/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, destB, times(35)), e.in.KeyA)
			wantStatus(t, r, 200)
			second := fmt.Sprint(r.JSON["payout_info"].(map[string]any)["id"])
			if n := refuser.count(z); n != 1 {
				t.Fatalf("%d sweeps from z refused, want 1", n)
			}
			info := e.payoutStatus(t, second, e.in.KeyA)
			if info["status"] != "error" {
				t.Fatalf("a payout whose only sweep was refused: %v, want error", info)
			}
			if msg := fmt.Sprint(info["error"]); !strings.Contains(msg, "swept to the payout wallet") || !strings.Contains(msg, "signer refused") || !strings.Contains(msg, "does not allow") {
				t.Errorf("the payout's error %q: want the sweep's reason", msg)
			}
			if b := balance(); b != before {
				t.Errorf("balance after the refusal %s, want %s as before", b, before)
			}
			for _, acc := range []entledger.Account{entledger.AccountOutgoing, entledger.AccountSwept} {
				if got := ledgerSum(t, e.in, e.in.ProjectA, "eth", acc); !got.IsZero() {
					t.Errorf("journal: %s %s base units, want 0", acc, got)
				}
			}

			// Later blocks and ticks send nothing more.
			for range 3 {
				e.mine(t, "eth", 5)
				if err := e.in.Server.Payouts().Tick(ctx, tk); err != nil {
					t.Fatal(err)
				}
			}
			if n, m := refuser.count(x), refuser.count(z); n != 1 || m != 1 {
				t.Errorf("sweeps refused: from x %d, from z %d; want one each (nothing swept again)", n, m)
			}
			if n := sweepsFrom(z); n != 0 {
				t.Errorf("%d sweeps sent from z", n)
			}
			for _, f := range chain.Forwards() {
				if f.ID == "payout:"+second {
					t.Errorf("the failed payout was sent: %+v", f)
				}
			}
			if info := e.payoutStatus(t, second, e.in.KeyA); info["status"] != "error" {
				t.Errorf("the failed payout later: %v", info)
			}
			if b := balance(); b != before {
				t.Errorf("balance later %s, want %s", b, before)
			}

			// One webhook per payout: done for the first, error (with the
			// reason) for the second.
			if err := e.in.Server.Notifier().Dispatcher.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			hooks, errs := me.ms.take()
			if len(errs) > 0 {
				t.Fatalf("webhook errors %v", errs)
			}
			events := map[string][]webhook{}
			for _, h := range hooks {
				events[h.get("payout_id")] = append(events[h.get("payout_id")], h)
			}
			if hs := events[first]; len(hs) != 1 || hs[0].event != "payout.done" {
				t.Errorf("webhooks of the first payout %+v, want one payout.done", hs)
			}
			if hs := events[second]; len(hs) != 1 || hs[0].event != "payout.error" || hs[0].get("status") != "error" ||
				!strings.Contains(hs[0].get("error"), "signer refused") {
				t.Errorf("webhooks of the second payout %+v, want one payout.error with the reason", hs)
			}
			if len(hooks) != 2 {
				t.Errorf("%d payout webhooks, want 2", len(hooks))
			}
		})
	}
}
