package payment

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entwatched "github.com/payhook/payhook/ent/db/watchedtransfer"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/outbound"
)

func ints(vs ...int64) []*big.Int {
	out := make([]*big.Int, len(vs))
	for i, v := range vs {
		out[i] = big.NewInt(v)
	}
	return out
}

// TestApportion: rows and columns add up exactly, no cell is negative, and
// the leftover units go to the largest rows first.
func TestApportion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		rows, cols []int64
		want       [][]int64
	}{
		{"one row takes all", []int64{13000}, []int64{130, 2000, 10870}, [][]int64{{130, 2000, 10870}}},
		{"exact thirds", []int64{3, 3, 3}, []int64{3, 6}, [][]int64{{1, 2}, {1, 2}, {1, 2}}},
		{"remainder to the largest", []int64{1, 2, 4}, []int64{1, 2, 4}, [][]int64{{0, 0, 1}, {0, 1, 1}, {1, 1, 2}}},
		{"dust payment keeps its value", []int64{1, 99999}, []int64{1000, 2000, 97000}, [][]int64{{0, 0, 1}, {1000, 2000, 96999}}},
		{"zero total", []int64{0, 0}, []int64{0}, [][]int64{{0}, {0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := apportion(ints(tc.rows...), ints(tc.cols...))
			for i := range got {
				for j := range got[i] {
					if got[i][j].Int64() != tc.want[i][j] {
						t.Fatalf("cell %d,%d = %d, want %v", i, j, got[i][j].Int64(), tc.want)
					}
				}
			}
		})
	}
	// Random sums: the invariants hold whatever the values.
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		rows := make([]int64, 1+r.IntN(8))
		var total int64
		for i := range rows {
			rows[i] = r.Int64N(1_000_000)
			if r.IntN(4) == 0 {
				rows[i] = r.Int64N(3) // dust
			}
			total += rows[i]
		}
		cols := make([]int64, 1+r.IntN(4))
		left := total
		for j := range cols[:len(cols)-1] {
			cols[j] = r.Int64N(left + 1)
			left -= cols[j]
		}
		cols[len(cols)-1] = left
		got := apportion(ints(rows...), ints(cols...))
		colSum := make([]int64, len(cols))
		for i, row := range got {
			var sum int64
			for j, c := range row {
				if c.Sign() < 0 {
					t.Fatalf("rows %v cols %v: negative cell %d,%d", rows, cols, i, j)
				}
				sum += c.Int64()
				colSum[j] += c.Int64()
			}
			if sum != rows[i] {
				t.Fatalf("rows %v cols %v: row %d sums to %d", rows, cols, i, sum)
			}
		}
		if !slices.Equal(colSum, cols) {
			t.Fatalf("rows %v cols %v: columns sum to %v", rows, cols, colSum)
		}
	}
}

// TestSplitPlan: each payment's fee, network fee and forwarded amount add
// up to its value, and the parts add up to the plan, per destination too.
func TestSplitPlan(t *testing.T) {
	t.Parallel()
	tk, err := family.DefaultRegistry().Get("btc")
	if err != nil {
		t.Fatal(err)
	}
	der, _ := chains.NewDeriver(make([]byte, 32), family.All())
	a, _ := der.Address(tk, 1)
	b, _ := der.Address(tk, 2)
	d := decimal.RequireFromString
	for _, tc := range []struct {
		name   string
		values []string
		shares []distribute.Share
	}{
		{"three small", []string{"0.00004", "0.00004", "0.00005"}, []distribute.Share{{Address: a, Share: d("1")}}},
		{"uneven, two destinations", []string{"0.00003333", "0.00000001", "0.00007777", "0.00001"}, []distribute.Share{{Address: a, Share: d("0.3")}, {Address: b, Share: d("0.7")}}},
		{"one", []string{"0.5"}, []distribute.Share{{Address: a, Share: d("0.5")}, {Address: b, Share: d("0.5")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			values := make([]decimal.Decimal, len(tc.values))
			sum := decimal.Zero
			for i, v := range tc.values {
				values[i] = d(v)
				sum = sum.Add(values[i])
			}
			plan, err := distribute.Compute(tk, sum, tk.NetworkFeeEstimate, tc.shares)
			if err != nil {
				t.Fatal(err)
			}
			parts := splitPlan(tk, plan, values)
			fee, net, fwd := decimal.Zero, decimal.Zero, decimal.Zero
			perDest := map[string]decimal.Decimal{}
			for i, p := range parts {
				if !p.fee.Add(p.networkFee).Add(p.forwarded).Equal(values[i]) {
					t.Errorf("part %d: %s + %s + %s != value %s", i, p.fee, p.networkFee, p.forwarded, values[i])
				}
				outs := decimal.Zero
				for _, o := range p.outputs {
					if o.Amount.Sign() <= 0 || !o.Amount.Equal(o.Amount.Truncate(tk.Decimals)) {
						t.Errorf("part %d: output %v", i, o)
					}
					outs = outs.Add(o.Amount)
					perDest[o.Address] = perDest[o.Address].Add(o.Amount)
				}
				if !outs.Equal(p.forwarded) {
					t.Errorf("part %d: outputs %s != forwarded %s", i, outs, p.forwarded)
				}
				fee, net, fwd = fee.Add(p.fee), net.Add(p.networkFee), fwd.Add(p.forwarded)
			}
			if !fee.Equal(plan.Fee) || !net.Equal(plan.NetworkFee) || !fwd.Equal(plan.Forwarded) {
				t.Errorf("parts sum to fee %s network %s forwarded %s; plan %s %s %s", fee, net, fwd, plan.Fee, plan.NetworkFee, plan.Forwarded)
			}
			for _, o := range plan.Outputs {
				if !perDest[o.Address].Equal(o.Amount) {
					t.Errorf("destination %s gets %s in parts, %s in the plan", o.Address, perDest[o.Address], o.Amount)
				}
			}
		})
	}
}

// merchantAddress creates a btc address of invoice 1 (a deposit's) paying
// to one destination, and returns it and the destination.
func merchantAddress(t *testing.T, f *fixture, index uint32, invoice bool) (string, string) {
	t.Helper()
	addrIn, _ := f.der.Address(f.tk, index)
	dest, _ := f.der.Address(f.tk, 1000)
	c := f.db.Client.Address.Create().SetAPIKeyID(f.keyID).SetProjectID(1).SetTicker(f.tk.Ticker).SetFamily(string(f.tk.Family)).
		SetAddressIn(addrIn).SetDerivationIndex(int64(index)).SetCallbackURL("https://shop.example/hook").SetCallbackKey(fmt.Sprintf("%064x", index)).
		SetDestinations([]schema.Destination{{Address: dest, Share: decimal.NewFromInt(1)}}).SetRequiredConfirmations(1)
	if invoice {
		c.SetInvoiceID(int64(index))
	}
	if _, err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	return addrIn, dest
}

// TestMerchantPaymentsBelowMinimum: a merchant address (a deposit's) takes
// two payments below btc's minimum transaction: both are credited and
// published (confirmed), neither is forwarded, both are noted held for the
// minimum and no longer watched. A third payment makes the sum forwardable:
// one forwarding transaction carries the three, each payment has its own
// Forward with the same txid_out and its proportional share, the shares add
// up to the transaction, and each publishes one Distributed change. A
// low-level address still drops a payment below the minimum: no change, not
// forwarded.
func TestMerchantPaymentsBelowMinimum(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			svc := f.service(db, chain, rec)
			w, err := svc.NewWatcher(f.tk, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			deposit, dest := merchantAddress(t, f, 1, true)
			lowLevel, _ := merchantAddress(t, f, 2, false)

			payEach(t, chain, []string{deposit, lowLevel}, "0.00004")
			poll(t, w)
			payEach(t, chain, []string{deposit}, "0.00004")
			poll(t, w)
			poll(t, w)
			if n := len(chain.Forwards()); n != 0 {
				t.Fatalf("%d forwards of payments below the minimum", n)
			}
			ps, err := db.Client.Payment.Query().WithAddress().WithForward().Order(entdb.Asc(entpayment.FieldID)).All(ctx)
			if err != nil || len(ps) != 3 {
				t.Fatalf("payments %v %v", ps, err)
			}
			for _, p := range ps {
				if p.Edges.Forward != nil || p.Status != entpayment.StatusConfirmed {
					t.Fatalf("payment %d: %s, forward %v", p.ID, p.Status, p.Edges.Forward)
				}
				if p.HoldReason != entpayment.HoldReasonBelowMinimum {
					t.Fatalf("payment below the minimum (%s) held for %q", p.Edges.Address.AddressIn, p.HoldReason)
				}
			}
			if got := strings.Join(rec.statuses(), ","); got != "confirmed:confirmed,confirmed:confirmed" {
				t.Fatalf("changes %s: want the two merchant payments confirmed, nothing of the low-level one", got)
			}
			// Held payments are not due again: polls cost nothing for them.
			if n, err := db.Client.WatchedTransfer.Query().Where(entwatched.AddressIn(deposit), entwatched.DueNotNil()).Count(ctx); err != nil || n != 0 {
				t.Fatalf("%d transfers of held payments still due (%v)", n, err)
			}

			// The third payment: the sum, 0.00013, can be forwarded.
			payEach(t, chain, []string{deposit}, "0.00005")
			poll(t, w)
			poll(t, w)
			fwds := chain.Forwards()
			if len(fwds) != 1 || fwds[0].From != deposit || len(fwds[0].Outputs) != 1 || fwds[0].Outputs[0].Address != dest {
				t.Fatalf("forwards %+v, want one from the deposit address", fwds)
			}
			plan, err := distribute.Compute(f.tk, decimal.RequireFromString("0.00013"), f.tk.NetworkFeeEstimate, []distribute.Share{{Address: dest, Share: decimal.NewFromInt(1)}})
			if err != nil {
				t.Fatal(err)
			}
			if !fwds[0].Outputs[0].Amount.Equal(plan.Forwarded) {
				t.Fatalf("forwarded %s, want %s", fwds[0].Outputs[0].Amount, plan.Forwarded)
			}
			checkGroup(t, db, deposit, 3, plan)
			var distributed int
			for _, c := range rec.changes {
				if c.Kind == Distributed {
					distributed++
					if c.Forward == nil || c.Forward.TxidOut == "" || c.Payment.Status != entpayment.StatusCompleted {
						t.Fatalf("distributed change %+v", c)
					}
				}
			}
			if distributed != 3 {
				t.Fatalf("%d distributed changes, want one per payment: %v", distributed, rec.statuses())
			}

			// Applying everything again changes nothing.
			trs, err := chain.Transfers(ctx, 0, chain.Height(), nil)
			if err != nil {
				t.Fatal(err)
			}
			before := len(rec.statuses())
			for _, tr := range trs {
				st, _ := chain.State(ctx, tr)
				if err := svc.Apply(ctx, f.tk, chains.Observation{Transfer: tr, State: st}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.out.Resume(ctx, f.tk); err != nil {
				t.Fatal(err)
			}
			if len(chain.Forwards()) != 1 || len(rec.statuses()) != before {
				t.Fatalf("applying again: %d forwards, changes %v", len(chain.Forwards()), rec.statuses())
			}
		})
	}
}

// checkGroup checks the forwards of the n payments of address addrIn, all
// carried by one transaction planned as plan: one done Forward each, one
// txid_out, an intent id of the group's key, parts adding up to the plan,
// each part adding up to its payment's value, and the payments completed
// with those amounts.
func checkGroup(t *testing.T, db *store.DB, addrIn string, n int, plan distribute.Plan) {
	t.Helper()
	ps, err := db.Client.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressIn(addrIn))).
		WithForward().Order(entdb.Asc(entpayment.FieldID)).All(context.Background())
	if err != nil || len(ps) != n {
		t.Fatalf("%d payments (%v), want %d", len(ps), err, n)
	}
	key := fmt.Sprintf("fwd-%d-%s", ps[n-1].ID, ps[n-1].TxidIn)
	fee, net, fwd := decimal.Zero, decimal.Zero, decimal.Zero
	for _, p := range ps {
		f := p.Edges.Forward
		if f == nil || f.Status != entforward.StatusDone || f.TxidOut == "" || f.TxidOut != ps[0].Edges.Forward.TxidOut || f.Held {
			t.Fatalf("payment %d: forward %+v", p.ID, f)
		}
		if o := outboundOf(t, db, f); f.IntentID != fmt.Sprintf("%s/%d", key, p.ID) || o.Key != key || o.Txid != f.TxidOut {
			t.Fatalf("payment %d: intent %s of transaction %s (%s), want of key %s", p.ID, f.IntentID, o.Key, o.Txid, key)
		}
		if !f.FeeCoin.Add(f.NetworkFee).Add(f.ValueForwardedCoin).Equal(p.ValueCoin) {
			t.Fatalf("payment %d of %s: fee %s + network %s + forwarded %s", p.ID, p.ValueCoin, f.FeeCoin, f.NetworkFee, f.ValueForwardedCoin)
		}
		if p.Status != entpayment.StatusCompleted || p.TxidOut != f.TxidOut || p.ValueForwardedCoin == nil || !p.ValueForwardedCoin.Equal(f.ValueForwardedCoin) ||
			p.FeeCoin == nil || !p.FeeCoin.Equal(f.FeeCoin) || p.NetworkFee == nil || !p.NetworkFee.Equal(f.NetworkFee) {
			t.Fatalf("payment %d: %+v, forward %+v", p.ID, p, f)
		}
		if p.HoldReason != entpayment.HoldReasonNone || !strings.Contains(p.Note, groupedNote(n)) {
			t.Fatalf("payment %d noted %q", p.ID, p.Note)
		}
		fee, net, fwd = fee.Add(f.FeeCoin), net.Add(f.NetworkFee), fwd.Add(f.ValueForwardedCoin)
	}
	if !fee.Equal(plan.Fee) || !net.Equal(plan.NetworkFee) || !fwd.Equal(plan.Forwarded) {
		t.Fatalf("parts sum to fee %s network %s forwarded %s, want %s %s %s", fee, net, fwd, plan.Fee, plan.NetworkFee, plan.Forwarded)
	}
}

// TestCrashBetweenGroupBroadcastAndRecord: the process dies after the
// transaction forwarding a merchant address's held payments was broadcast
// and before it was recorded. The restarted watcher reconciles the group
// with the chain (asking once, by the group's key): no second broadcast,
// every payment completed with the one hash, one Distributed change each.
func TestCrashBetweenGroupBroadcastAndRecord(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			svc := f.service(db, chain, rec)
			deposit, dest := merchantAddress(t, f, 1, true)
			// apply pays value to the deposit address and applies the
			// transfer (not a poll: this service never takes the lease, as
			// a process that dies would not keep it).
			apply := func(value string) {
				t.Helper()
				payEach(t, chain, []string{deposit}, value)
				trs, err := chain.Transfers(ctx, chain.Height()-1, chain.Height(), nil)
				if err != nil || len(trs) != 1 {
					t.Fatalf("transfers %v %v", trs, err)
				}
				st, _ := chain.State(ctx, trs[0])
				if err := svc.Apply(ctx, f.tk, chains.Observation{Transfer: trs[0], State: st}); err != nil {
					t.Fatal(err)
				}
			}
			apply("0.00003")
			apply("0.00003")
			crashed := 0
			crashing(svc, outbound.Faults{AfterSend: func() error { crashed++; return errCrash }})
			apply("0.00006") // credits the third, forwards the three up to the crash
			if crashed != 1 || len(chain.Forwards()) != 1 {
				t.Fatalf("%d crashes, %d broadcasts", crashed, len(chain.Forwards()))
			}
			if n, err := db.Client.Forward.Query().Where(entforward.StatusEQ(entforward.StatusIntent)).Count(ctx); err != nil || n != 3 {
				t.Fatalf("%d open intents (%v), want the group's 3", n, err)
			}

			counting := &countingBackend{Backend: chain}
			restarted := f.service(db, counting, rec)
			w2, _ := restarted.NewWatcher(f.tk, time.Second)
			for range 3 {
				poll(t, w2)
			}
			if len(chain.Forwards()) != 1 || counting.signs != 0 || counting.sends != 1 {
				t.Fatalf("%d forwards, %d signatures, %d sends after the restart", len(chain.Forwards()), counting.signs, counting.sends)
			}
			plan, err := distribute.Compute(f.tk, decimal.RequireFromString("0.00012"), f.tk.NetworkFeeEstimate, []distribute.Share{{Address: dest, Share: decimal.NewFromInt(1)}})
			if err != nil {
				t.Fatal(err)
			}
			checkGroup(t, db, deposit, 3, plan)
			if got := strings.Join(rec.statuses(), ","); got != "confirmed:confirmed,confirmed:confirmed,confirmed:confirmed,distributed:completed,distributed:completed,distributed:completed" {
				t.Fatalf("changes %s", got)
			}
		})
	}
}

// TestGroupIntentNeverBroadcastIsBroadcastOnce: the node is unreachable
// when the group's transaction is sent. Resume sends the recorded
// transaction once the node is back, as one transaction whose outputs are
// the sum of the forwards'; a second Resume does nothing.
func TestGroupIntentNeverBroadcastIsBroadcastOnce(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			failing := &failingBackend{Backend: chain, fail: true}
			svc := f.service(db, failing, rec)
			w, _ := svc.NewWatcher(f.tk, time.Second)
			deposit, _ := merchantAddress(t, f, 1, true)
			payEach(t, chain, []string{deposit}, "0.00005")
			poll(t, w)
			payEach(t, chain, []string{deposit}, "0.00007")
			poll(t, w)
			if len(chain.Forwards()) != 0 {
				t.Fatal("broadcast while the backend fails")
			}
			failing.fail = false
			for range 2 {
				if _, err := svc.out.Resume(ctx, f.tk); err != nil {
					t.Fatal(err)
				}
			}
			fw := chain.Forwards()
			if len(fw) != 1 || len(fw[0].Outputs) != 1 {
				t.Fatalf("forwards %+v", fw)
			}
			fs, err := db.Client.Forward.Query().All(ctx)
			if err != nil || len(fs) != 2 {
				t.Fatalf("forwards %v %v", fs, err)
			}
			if sum := fs[0].ValueForwardedCoin.Add(fs[1].ValueForwardedCoin); !sum.Equal(fw[0].Outputs[0].Amount) || fw[0].ID != outboundOf(t, db, fs[0]).Key {
				t.Fatalf("broadcast %+v, forwards %+v", fw[0], fs)
			}
			if got := strings.Join(rec.statuses(), ","); got != "confirmed:confirmed,confirmed:confirmed,distributed:completed,distributed:completed" {
				t.Fatalf("changes %s", got)
			}
		})
	}
}

// failingBackend fails every send while fail is set.
type failingBackend struct {
	chains.Backend
	fail bool
}

func (b *failingBackend) Send(ctx context.Context, s chains.Signed) error {
	if b.fail {
		return errors.New("node unreachable")
	}
	return b.Backend.Send(ctx, s)
}

// errCrash is what a test's afterBroadcast returns: the process dies there.
var errCrash = errors.New("killed after broadcast")
