package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/ledger"
)

var btc = chains.Ticker{Ticker: "btc", Network: "btc", Coin: "btc", Decimals: 8}

// TestWriteJournalsEveryLineOnce writes lines by hand (store.InsertRows),
// so it reads every field back through ent, on both dialects: a hold's
// reason on its held line only, NULL for a missing reference, zero lines
// left out; a second write of an event fails as a constraint error and
// writes nothing; an entry that does not balance or is not whole base units
// is refused before anything is written.
func TestWriteJournalsEveryLineOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
		r := ledger.Ref{ProjectID: 7, PaymentID: 11, AddressID: 13}
		sent := r
		sent.OutboundID = 17
		entries := []ledger.Entry{
			ledger.Credit(btc, r, decimal.RequireFromString("0.00123456")),
			ledger.Hold(btc, r, decimal.RequireFromString("0.00123456"), "below_dust"),
			ledger.Send(btc, sent, decimal.RequireFromString("0.001"), decimal.Zero, decimal.RequireFromString("0.00023456")),
		}
		write := func(es ...ledger.Entry) error {
			return store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error { return ledger.Write(ctx, tx, db.Dialect, at, es...) })
		}
		if err := write(entries...); err != nil {
			t.Fatal(err)
		}
		lines, err := db.Client.LedgerEntry.Query().Order(entdb.Asc(entledger.FieldID)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		type line struct {
			event, account, amount, key, reason string
			outbound                            int64
		}
		want := []line{
			{"credit", "received", "-123456", "credit:11", "", 0},
			{"credit", "pending", "123456", "credit:11", "", 0},
			{"hold", "pending", "-123456", "hold:11", "", 0},
			{"hold", "held", "123456", "hold:11", "below_dust", 0},
			{"send", "outgoing", "-123456", "send:11:17", "", 17},
			{"send", "forwarded", "100000", "send:11:17", "", 17},
			{"send", "network_fee", "23456", "send:11:17", "", 17}, // the fee of 0 writes no line
		}
		if len(lines) != len(want) {
			t.Fatalf("%d lines journaled, want %d: %v", len(lines), len(want), lines)
		}
		for i, l := range lines {
			got := line{string(l.Event), string(l.Account), l.Amount.String(), l.Key, "", 0}
			if l.HoldReason != nil {
				got.reason = string(*l.HoldReason)
			}
			if l.OutboundID != nil {
				got.outbound = *l.OutboundID
			}
			if got != want[i] {
				t.Errorf("line %d = %+v, want %+v", i, got, want[i])
			}
			if l.ProjectID != 7 || l.Ticker != "btc" || l.PaymentID == nil || *l.PaymentID != 11 || l.AddressID == nil || *l.AddressID != 13 || !l.CreatedAt.Equal(at) {
				t.Errorf("line %d: project %d ticker %q payment %v address %v at %v", i, l.ProjectID, l.Ticker, l.PaymentID, l.AddressID, l.CreatedAt)
			}
		}

		again := ledger.Credit(btc, r, decimal.RequireFromString("0.00123456"))
		other := ledger.Credit(btc, ledger.Ref{ProjectID: 7, PaymentID: 12}, decimal.RequireFromString("1"))
		if err := write(other, again); !store.IsConstraintError(err) {
			t.Fatalf("an event journaled twice: err = %v, want a constraint error", err)
		}
		bad := ledger.Entry{Event: entledger.EventCredit, Key: "credit:99", Ticker: btc, Ref: r,
			Lines: []ledger.Line{{Account: ledger.Received, Amount: decimal.RequireFromString("-1")}, {Account: ledger.Pending, Amount: decimal.RequireFromString("0.5")}}}
		if err := write(other, bad); err == nil {
			t.Fatal("an entry whose lines do not sum to zero was journaled")
		}
		if err := write(ledger.Credit(btc, ledger.Ref{ProjectID: 7, PaymentID: 98}, decimal.RequireFromString("0.000000001"))); err == nil {
			t.Fatal("a line of a tenth of a satoshi was journaled")
		}
		if n := db.Client.LedgerEntry.Query().CountX(ctx); n != len(want) {
			t.Fatalf("%d lines after the refused writes, want %d", n, len(want))
		}
	})
}
