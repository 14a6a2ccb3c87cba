package payment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// TestLedgerMatchesChain is the journal's property test: for random
// sequences of payments (some below the minimum, to addresses with and
// without forwarding, low-level and merchant), blocks, reorganisations,
// failed sends and crashes between sending and recording, on a UTXO coin, an
// account chain's native coin and a token, after every step the journal's
// lines sum to zero on every account set, no event is journaled twice, and
// what the journal says each address holds equals what the devnet's chain
// holds on it (chains.devnet Balance): pending + held + outgoing + loss,
// plus the fees a forward leaves on an account chain's address.
func TestLedgerMatchesChain(t *testing.T) {
	t.Parallel()
	for _, ticker := range []string{"btc", "eth", "erc20/usdt"} {
		for _, d := range storetest.Dialects() {
			t.Run(ticker+"/"+string(d), func(t *testing.T) {
				t.Parallel()
				db := storetest.Open(t, d)
				f := newFixture(t, db, ticker)
				for seed := range uint64(3) {
					ledgerProperty(t, db, f, seed)
				}
				// The sequences went through every event the code journals
				// (a release needs a merchant group below the minimum).
				events := map[entledger.Event]int{}
				lines, err := db.Client.LedgerEntry.Query().All(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range lines {
					events[l.Event]++
				}
				for _, e := range []entledger.Event{entledger.EventCredit, entledger.EventHold, entledger.EventRelease, entledger.EventPlan, entledger.EventSend, entledger.EventReversal} {
					if events[e] == 0 {
						t.Errorf("no %s in the random sequences (%v): they prove less than they claim", e, events)
					}
				}
			})
		}
	}
}

// ledgerProperty runs one random sequence on f's ticker.
func ledgerProperty(t *testing.T, db *store.DB, f *fixture, seed uint64) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 22))
	chain := devnet.NewChain(f.tk, devnet.Options{Seed: []byte{byte(seed)}})
	b := &failingBackend{Backend: chain}
	svc := f.service(db, b, &recorder{})
	w, err := svc.NewWatcher(f.tk, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Addresses: low-level forwarding, low-level held (no wallet), merchant
	// forwarding (groups below the minimum).
	var addrs []string
	base := f.next + 1000*uint32(seed+1)
	for i := range uint32(4) {
		idx := base + i
		a, _ := f.der.Address(f.tk, idx)
		dest, _ := f.der.Address(f.tk, idx+500)
		c := db.Client.Address.Create().SetAPIKeyID(f.keyID).SetProjectID(1).SetTicker(f.tk.Ticker).SetFamily(string(f.tk.Family)).
			SetAddressIn(a).SetDerivationIndex(int64(idx)).SetCallbackURL("https://shop.example/p").SetCallbackKey(fmt.Sprintf("%064x", idx)).
			SetDestinations([]schema.Destination{{Address: dest, Share: decimal.NewFromInt(1)}}).SetRequiredConfirmations(1)
		switch i {
		case 1:
			c.SetDestinations([]schema.Destination{})
		case 2, 3:
			c.SetInvoiceID(int64(idx))
		}
		if err := c.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	minimum := f.tk.MinTransaction
	for step := range 40 {
		switch op := r.IntN(10); {
		case op < 5:
			// A payment: below the minimum a third of the time.
			v := minimum.Mul(decimal.NewFromInt(int64(1 + r.IntN(50))))
			if r.IntN(3) == 0 {
				v = minimum.Div(decimal.NewFromInt(int64(2 + r.IntN(3)))).Truncate(f.tk.Decimals)
			}
			if _, err := chain.Pay(addrs[r.IntN(len(addrs))], v, false); err != nil {
				t.Fatal(err)
			}
		case op < 7:
			if _, err := chain.Mine(1 + r.IntN(2)); err != nil {
				t.Fatal(err)
			}
		case op < 8:
			if h := chain.Height(); h > 0 {
				if _, err := chain.Reorg(1 + r.IntN(int(min(h, 2)))); err != nil {
					t.Fatal(err)
				}
			}
		case op < 9:
			b.fail = !b.fail
		default:
			// The process dies between a send and its record.
			crashing(svc, outbound.Faults{AfterSend: func() error { return errCrash }})
			_ = w.PollOnce(ctx)
			crashing(svc, outbound.Faults{})
		}
		poll(t, w)
		checkLedger(t, db, f.tk, chain, addrs, fmt.Sprintf("seed %d step %d", seed, step))
	}
	// Settle: the node back, everything mined and forwarded.
	b.fail = false
	for range 3 {
		if _, err := chain.Mine(1); err != nil {
			t.Fatal(err)
		}
		poll(t, w)
	}
	checkLedger(t, db, f.tk, chain, addrs, fmt.Sprintf("seed %d settled", seed))
	if open, err := svc.out.Resume(ctx, f.tk); err != nil || open {
		t.Fatalf("seed %d: transactions still open after settling (%v)", seed, err)
	}
}

// checkLedger checks the journal against the chain for addrs.
func checkLedger(t *testing.T, db *store.DB, tk chains.Ticker, chain *devnet.Chain, addrs []string, when string) {
	t.Helper()
	ctx := context.Background()
	lines, err := db.Client.LedgerEntry.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	as, err := db.Client.Address.Query().Where(entaddress.AddressInIn(addrs...)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]string{}
	for _, a := range as {
		byID[a.ID] = a.AddressIn
	}
	total := decimal.Zero
	onChain := map[string]decimal.Decimal{}
	seen := map[string]bool{}
	for _, l := range lines {
		total = total.Add(l.Amount)
		k := l.Key + "/" + string(l.Account)
		if seen[k] {
			t.Fatalf("%s: %s journaled twice", when, k)
		}
		seen[k] = true
		if l.AddressID == nil {
			t.Fatalf("%s: line %+v has no address", when, l)
		}
		addr, ok := byID[*l.AddressID]
		if !ok {
			continue // another run's address
		}
		switch l.Account {
		case ledger.Pending, ledger.Held, ledger.Outgoing, ledger.Loss:
			onChain[addr] = onChain[addr].Add(l.Amount)
		case ledger.Fee:
			if tk.Family != chains.FamilyUTXO {
				onChain[addr] = onChain[addr].Add(l.Amount)
			}
		case ledger.NetworkFee:
			if tk.Token {
				onChain[addr] = onChain[addr].Add(l.Amount)
			}
		}
	}
	if !total.IsZero() {
		t.Fatalf("%s: the journal sums to %s base units, not zero", when, total)
	}
	for _, a := range addrs {
		got := ledger.Coins(tk, onChain[a])
		if want := chain.Balance(a); !got.Equal(want) {
			t.Fatalf("%s: the journal says %s holds %s %s; the chain %s", when, a, got, tk.Ticker, want)
		}
	}
	// Every credited payment of these addresses is journaled credited once.
	n, err := db.Client.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressInIn(addrs...)),
		entpayment.StatusIn(entpayment.StatusConfirmed, entpayment.StatusCompleted)).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	credits := 0
	for _, l := range lines {
		if _, ours := byID[*l.AddressID]; ours && l.Event == entledger.EventCredit && l.Account == ledger.Pending {
			credits++
		}
	}
	if credits != n {
		t.Fatalf("%s: %d credits journaled for %d credited payments", when, credits, n)
	}
}
