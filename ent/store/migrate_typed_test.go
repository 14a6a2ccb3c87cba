package store_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestMigrationTypesPaymentState writes payments, forwards and addresses
// as the schema of 20261124225328 held them — state in notes, sending
// columns on forwards, one address per (API key, ticker, callback) — then
// migrates, and reads them back typed: every hold reason and reorganisation
// the notes said, one outgoing transaction per forwarding transaction (a
// group's two forwards share one, with both inputs and the outputs summed)
// in the state its forwards were in, and the second of two addresses a
// project's two keys made for one callback given a key of its own so the
// unique index holds. Nothing else changes.
func TestMigrationTypesPaymentState(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.OpenEmpty(t, d)
			if _, err := store.MigrateFS(ctx, db, migrationsUpTo(t, d, "20261124225328")); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			cb := strings.Repeat("b", 64)
			raw := []byte{0x02, 0x00, 0xff}
			const (
				belowMin = "not forwarded: below the minimum transaction of 0.0001 BTC; no callbacks"
				held     = "held on address_in: the address has no forwarding address; the operator's payhook funds lists it for sweeping"
				waiting  = "held for the minimum: credited, too small to forward alone, forwarded with the address's next payments once their sum can be"
				reorged  = "left the chain after it was credited (reorganisation); recorded, not reversed"
				grouped  = "forwarded in one transaction with 1 other payment(s) of this address, its amounts its share of that transaction in proportion to its value"
			)
			dest := `[{"address":"bc1qdest","share":"1"}]`
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.SQL.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			exec(`INSERT INTO projects (id, created_at, updated_at, name, currency, ipn_secret, wallets, confirmations, tickers) VALUES (1, $1, $1, 'p', 'USD', 's', '{}', '{}', '[]')`, at)
			for _, k := range []int{7, 8} {
				exec(`INSERT INTO api_keys (id, created_at, name, prefix, hash, project_id) VALUES ($1, $2, 'k', 'ph_k', $3, 1)`, k, at, strings.Repeat(string(rune('a'+k)), 64))
			}
			address := func(id, key int, addr string, index int, callbackKey, dests string, invoice any) {
				exec(`INSERT INTO addresses (id, created_at, updated_at, api_key_id, project_id, ticker, family, address_in, derivation_index,
						callback_url, callback_key, destinations, custom_params, required_confirmations, invoice_id)
					VALUES ($1, $2, $2, $3, 1, 'btc', 'utxo', $4, $5, 'https://shop.example/cb', $6, $7, '[]', 1, $8)`,
					id, at, key, addr, index, callbackKey, dests, invoice)
			}
			address(1, 7, "bc1qone", 1, cb, dest, nil)
			address(2, 8, "bc1qtwo", 2, cb, dest, nil) // the same callback through the project's other key
			address(3, 7, "bc1qheld", 3, strings.Repeat("c", 64), `[]`, nil)
			address(4, 7, "bc1qdeposit", 4, strings.Repeat("d", 64), dest, 99)
			payment := func(id, addr int, txid, value, status, note string) {
				exec(`INSERT INTO payments (id, created_at, updated_at, address_id, api_key_id, ticker, txid_in, value_coin, confirmations, status, note)
					VALUES ($1, $2, $2, $3, 7, 'btc', $4, $5, 1, $6, $7)`, id, at, addr, txid, value, status, note)
			}
			payment(1, 1, "tx1", "0.00005", "confirmed", belowMin)
			payment(2, 3, "tx2", "0.5", "completed", held)
			payment(3, 4, "tx3", "0.00004", "confirmed", waiting)
			payment(4, 4, "tx4", "0.00004", "completed", grouped+"; "+reorged)
			payment(5, 4, "tx5", "0.001", "completed", grouped)
			payment(6, 1, "tx6", "0.5", "confirmed", "")
			payment(7, 1, "tx7", "0.25", "confirmed", "")
			// fee + network fee + forwarded = the payment's value.
			forward := func(id, pay int, intent, status, fwd, fee, netFee, txid string, signed []byte, landed any, isHeld bool) {
				outputs := `[]`
				if !isHeld {
					outputs = `[{"address":"bc1qdest","amount":"` + fwd + `"}]`
				}
				exec(`INSERT INTO forwards (id, created_at, updated_at, payment_id, intent_id, status, outputs, fee_coin, network_fee,
						value_forwarded_coin, txid_out, signed_tx, landed_at, held)
					VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
					id, at, pay, intent, status, outputs, fee, netFee, fwd, txid, signed, landed, isHeld)
			}
			forward(2, 2, "held-2-tx2", "done", "0.5", "0", "0", "", nil, nil, true)
			forward(4, 4, "fwd-5-tx5/4", "done", "0.00003", "0", "0.00001", "out45", raw, at, false)
			forward(5, 5, "fwd-5-tx5/5", "done", "0.00097", "0.00002", "0.00001", "out45", raw, at, false)
			forward(6, 6, "fwd-6-tx6", "intent", "0.49", "0.005", "0.005", "out6", raw, nil, false)
			forward(7, 7, "fwd-7-tx7", "intent", "0.24", "0.005", "0.005", "", nil, nil, false)

			if _, err := store.Migrate(ctx, db); err == nil || !strings.Contains(err.Error(), "registry") {
				t.Fatalf("migrating payments without the ticker registry: %v; want the ledger's opening to ask for it", err)
			}
			decimals := func(ticker string) (int32, bool) { return 8, ticker == "btc" }
			if _, err := store.Migrate(ctx, db, store.WithDecimals(decimals)); err != nil {
				t.Fatal(err)
			}

			ps, err := db.Client.Payment.Query().Order(entdb.Asc(entpayment.FieldID)).All(ctx)
			if err != nil || len(ps) != 7 {
				t.Fatalf("%d payments (%v)", len(ps), err)
			}
			want := []struct {
				reason  entpayment.HoldReason
				reorged bool
			}{
				{entpayment.HoldReasonBelowMinimum, false},
				{entpayment.HoldReasonNoWallet, false},
				{entpayment.HoldReasonBelowMinimum, false},
				{entpayment.HoldReasonNone, true},
				{entpayment.HoldReasonNone, false},
				{entpayment.HoldReasonNone, false},
				{entpayment.HoldReasonNone, false},
			}
			for i, p := range ps {
				if p.HoldReason != want[i].reason || p.Reorged != want[i].reorged || p.ReorgCount != map[bool]int64{true: 1}[want[i].reorged] {
					t.Errorf("payment %d (%q): hold %s, reorged %v (%d); want %s, %v", p.ID, p.Note, p.HoldReason, p.Reorged, p.ReorgCount, want[i].reason, want[i].reorged)
				}
			}
			if !ps[3].ValueCoin.Equal(decimal.RequireFromString("0.00004")) || ps[3].Note != grouped+"; "+reorged {
				t.Errorf("payment 4 changed beyond its typed columns: %+v", ps[3])
			}

			os, err := db.Client.Outbound.Query().Order(entdb.Asc(entoutbound.FieldKey)).All(ctx)
			if err != nil || len(os) != 3 {
				t.Fatalf("%d outgoing transactions (%v): want one per forwarding transaction", len(os), err)
			}
			group, signed, planned := os[0], os[1], os[2]
			if group.Key != "fwd-5-tx5" || group.State != entoutbound.StateLanded || group.Txid != "out45" || group.LandedAt == nil || group.SentAt == nil ||
				group.Sends != 1 || group.Purpose != entoutbound.PurposeForward || group.ProjectID != 1 || group.FromAddress != "bc1qdeposit" || group.FromIndex != 4 ||
				!bytes.Equal(*group.SignedTx, raw) || !group.NetworkFee.Equal(decimal.RequireFromString("0.00002")) {
				t.Errorf("group's transaction: %+v", group)
			}
			if len(group.Inputs) != 2 || group.Inputs[0] != (schema.Transfer{TxID: "tx4", To: "bc1qdeposit", Value: group.Inputs[0].Value}) ||
				!group.Inputs[0].Value.Equal(decimal.RequireFromString("0.00004")) || group.Inputs[1].TxID != "tx5" {
				t.Errorf("group's inputs: %+v", group.Inputs)
			}
			if len(group.Outputs) != 1 || group.Outputs[0].Address != "bc1qdest" || !group.Outputs[0].Amount.Equal(decimal.RequireFromString("0.001")) {
				t.Errorf("group's outputs: %+v; want one, the sum", group.Outputs)
			}
			if signed.Key != "fwd-6-tx6" || signed.State != entoutbound.StateSigned || signed.Txid != "out6" || signed.SentAt != nil || signed.Sends != 0 {
				t.Errorf("signed transaction: %+v", signed)
			}
			if planned.Key != "fwd-7-tx7" || planned.State != entoutbound.StatePlanned || planned.SignedTx != nil && len(*planned.SignedTx) > 0 || planned.Txid != "" {
				t.Errorf("planned transaction: %+v", planned)
			}
			fs, err := db.Client.Forward.Query().Order(entdb.Asc(entforward.FieldID)).All(ctx)
			if err != nil || len(fs) != 5 {
				t.Fatalf("%d forwards (%v)", len(fs), err)
			}
			wantOutbound := []*int64{nil, &group.ID, &group.ID, &signed.ID, &planned.ID}
			for i, f := range fs {
				w := wantOutbound[i]
				if (w == nil) != (f.OutboundID == nil) || w != nil && *w != *f.OutboundID {
					t.Errorf("forward %d carried by %v, want %v", f.ID, f.OutboundID, w)
				}
			}

			// The oldest address keeps the callback; the other its own key.
			as, err := db.Client.Address.Query().Where(entaddress.IDIn(1, 2)).Order(entdb.Asc(entaddress.FieldID)).All(ctx)
			if err != nil || len(as) != 2 || as[0].CallbackKey != cb || as[1].CallbackKey == cb || len(as[1].CallbackKey) != 64 || as[1].CallbackURL != as[0].CallbackURL {
				t.Fatalf("addresses sharing a callback after migrating: %+v (%v)", as, err)
			}
			if _, err := db.Client.Address.Create().SetAPIKeyID(8).SetProjectID(1).SetTicker("btc").SetFamily("utxo").SetAddressIn("bc1qthree").
				SetDerivationIndex(5).SetCallbackURL("https://shop.example/cb").SetCallbackKey(cb).SetDestinations([]schema.Destination{}).
				SetRequiredConfirmations(1).Save(ctx); !entdb.IsConstraintError(err) {
				t.Errorf("a third address for the project's callback: %v, want a constraint error", err)
			}
			if drift := schemaDrift(t, db); drift != "" {
				t.Errorf("after migrating, the schema drifts:\n%s", drift)
			}

			// The ledger's opening entries, in satoshis: every credit, hold,
			// plan, send and reversal the rows imply, once each.
			lines, err := db.Client.LedgerEntry.Query().All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sums := map[string]int64{}
			keys := map[string]bool{}
			for _, l := range lines {
				if l.Ticker != "btc" || l.ProjectID != 1 || !l.Amount.Equal(l.Amount.Truncate(0)) {
					t.Errorf("line %+v", l)
				}
				sums[string(l.Account)] += l.Amount.IntPart()
				k := l.Key + "/" + string(l.Account)
				if keys[k] {
					t.Errorf("line %s twice", k)
				}
				keys[k] = true
			}
			wantSums := map[string]int64{
				"received":    -(5000 + 50_000_000 + 4000 + 4000 + 100_000 + 50_000_000 + 25_000_000) + 4000,
				"held":        5000 + 50_000_000 + 4000,
				"outgoing":    50_000_000 + 25_000_000,
				"forwarded":   3000 + 97_000,
				"fee":         2000,
				"network_fee": 2000,
				"loss":        -4000,
			}
			for a, v := range wantSums {
				if sums[a] != v {
					t.Errorf("%s balance %d sat, want %d (all: %v)", a, sums[a], v, sums)
				}
			}
			if sums["pending"] != 0 || len(sums) != len(wantSums)+1 {
				t.Errorf("balances %v", sums)
			}
		})
	}
}
