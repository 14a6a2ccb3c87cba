package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/ledger/export"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// fixture is a journal of two projects: project's checkout payment
// forwarded, its refund, a payout with change, a low-level payment valued
// by a stored price and one too old for it; other's payment; a line
// before the range.
type fixture struct {
	db                  *store.DB
	project, other      int64
	want                []export.Row
	from, to            time.Time
	refundID, invoiceID string
	payoutID, refPayout int64
	forwardTx, payoutTx string
	checkoutTx, plainTx string
}

func newFixture(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	ctx := context.Background()
	c := db.Client
	btc, _ := family.DefaultRegistry().Lookup("btc")
	f := &fixture{db: db, from: t0, to: t0.Add(24 * time.Hour)}
	mk := func(name, currency string) int64 {
		p, err := c.Project.Create().SetName(name).SetCurrency(currency).SetIpnSecret("whsec_" + name).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	f.project, f.other = mk("a", "USD"), mk("b", "USD")
	key, err := c.APIKey.Create().SetName("k").SetPrefix("ph_x").SetHash(strings.Repeat("c", 64)).SetProjectID(f.project).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := c.Invoice.Create().SetProjectID(f.project).SetPublicID("chk_export").SetKind("checkout").SetNotifyURL("https://shop.example/n").
		SetCurrency("EUR").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.invoiceID = inv.PublicID
	n := int64(0)
	addr := func(project int64, invoice *int64) *entdb.Address {
		n++
		a, err := c.Address.Create().SetAPIKeyID(key.ID).SetProjectID(project).SetTicker("btc").SetFamily("utxo").
			SetAddressIn("bc1qaddr" + strconv.FormatInt(n, 10)).SetDerivationIndex(n).SetCallbackURL("https://shop.example/hook").
			SetCallbackKey(fmt.Sprintf("%064x", n)).SetDestinations([]schema.Destination{}).SetRequiredConfirmations(1).
			SetNillableInvoiceID(invoice).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	pay := func(a *entdb.Address, txid, value string, fiat *decimal.Decimal) *entdb.Payment {
		p, err := c.Payment.Create().SetAddressID(a.ID).SetAPIKeyID(key.ID).SetTicker("btc").SetTxidIn(txid).
			SetValueCoin(dec(value)).SetNillableValueFiat(fiat).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ob := func(project int64, purpose entoutbound.Purpose, txid string) *entdb.Outbound {
		o, err := c.Outbound.Create().SetKey(txid).SetTicker("btc").SetPurpose(purpose).SetProjectID(project).
			SetFromAddress("bc1qfrom").SetFromIndex(1).SetInputs([]schema.Transfer{}).SetOutputs([]schema.Output{}).
			SetNetworkFee(dec("0.0001")).SetTxid(txid).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	write := func(at time.Time, es ...ledger.Entry) {
		t.Helper()
		if err := store.WithTx(ctx, c, func(tx *entdb.Tx) error { return ledger.Write(ctx, tx, db.Dialect, at, es...) }); err != nil {
			t.Fatal(err)
		}
	}
	// Stored prices: btc at 60000 USD fetched at t0+2h (one provider for
	// the coin, two for EUR, which no line of the project's currency
	// uses).
	if _, err := c.PriceQuote.Create().SetCoin("btc").SetCurrency("USD").SetPrice(dec("60000")).SetSources([]string{"kraken"}).SetFetchedAt(t0.Add(2 * time.Hour)).Save(ctx); err != nil {
		t.Fatal(err)
	}

	// Before the range: not exported.
	early := addr(f.project, nil)
	pe := pay(early, "tx-early", "1", nil)
	write(t0.Add(-time.Second), ledger.Credit(btc, ledger.Ref{ProjectID: f.project, PaymentID: pe.ID, AddressID: early.ID}, dec("1")))

	// The checkout's payment, valued at 9000 EUR for 0.15 btc (60000 EUR
	// a coin), forwarded: 0.1 to the merchant, 0.0499 fee, 0.0001
	// network fee.
	ca := addr(f.project, &inv.ID)
	fiat := dec("9000")
	cp := pay(ca, "tx-checkout", "0.15", &fiat)
	f.checkoutTx = cp.TxidIn
	r := ledger.Ref{ProjectID: f.project, PaymentID: cp.ID, AddressID: ca.ID}
	fw := ob(f.project, entoutbound.PurposeForward, "tx-forward")
	f.forwardTx = fw.Txid
	rf := r
	rf.OutboundID = fw.ID
	write(t0, ledger.Credit(btc, r, dec("0.15")))
	write(t0.Add(time.Minute), ledger.Plan(btc, rf, dec("0.15")))
	write(t0.Add(2*time.Minute), ledger.Send(btc, rf, dec("0.1"), dec("0.0499"), dec("0.0001")))

	// A low-level payment near the stored price, then one too long
	// before it.
	pa := addr(f.project, nil)
	pp := pay(pa, "tx-plain", "0.5", nil)
	f.plainTx = pp.TxidIn
	write(t0.Add(90*time.Minute), ledger.Credit(btc, ledger.Ref{ProjectID: f.project, PaymentID: pp.ID, AddressID: pa.ID}, dec("0.5")))
	po := pay(pa, "tx-old", "0.25", nil)
	write(t0.Add(30*time.Minute), ledger.Credit(btc, ledger.Ref{ProjectID: f.project, PaymentID: po.ID, AddressID: pa.ID}, dec("0.25")))

	// A payout of 0.2 with 0.001 payout fee, 0.0002 network fee and 0.0488
	// change, spending the plain payment (held).
	pob := ob(f.project, entoutbound.PurposePayout, "tx-payout")
	f.payoutTx = pob.Txid
	pout, err := c.Payout.Create().SetProjectID(f.project).SetAPIKeyID(key.ID).SetTicker("btc").SetTotalRequested(dec("0.2")).SetOutboundID(pob.ID).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.payoutID = pout.ID
	write(t0.Add(3*time.Hour), ledger.PayoutSend(btc, ledger.Ref{ProjectID: f.project, OutboundID: pob.ID}, dec("0.25"), dec("0.2"), dec("0.001"), dec("0.0002")))

	// A refund of 0.01 of the checkout's payment: a payout of one request.
	rob := ob(f.project, entoutbound.PurposePayout, "tx-refund")
	rpo, err := c.Payout.Create().SetProjectID(f.project).SetAPIKeyID(key.ID).SetTicker("btc").SetTotalRequested(dec("0.01")).SetOutboundID(rob.ID).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.refPayout = rpo.ID
	ref, err := c.Refund.Create().SetUUID("ref_export").SetProjectID(f.project).SetInvoiceID(inv.ID).SetPaymentID(cp.ID).SetTicker("btc").
		SetAddress("bc1qpayer").SetValue(dec("0.01")).SetPayoutID(rpo.ID).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.refundID = ref.UUID
	write(t0.Add(4*time.Hour), ledger.PayoutSend(btc, ledger.Ref{ProjectID: f.project, OutboundID: rob.ID}, dec("0.0101"), dec("0.01"), decimal.Zero, dec("0.0001")))

	// The other project's payment, at the same time.
	oa := addr(f.other, nil)
	op := pay(oa, "tx-other", "3", nil)
	write(t0, ledger.Credit(btc, ledger.Ref{ProjectID: f.other, PaymentID: op.ID, AddressID: oa.ID}, dec("3")))
	// After the range.
	late := ledger.Credit(btc, ledger.Ref{ProjectID: f.project, PaymentID: po.ID, AddressID: pa.ID}, dec("0.25"))
	late.Key = "credit:late"
	write(f.to, late)

	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	pid, rid := strconv.FormatInt(f.payoutID, 10), strconv.FormatInt(f.refPayout, 10)
	f.want = []export.Row{
		{Time: at(0), Kind: "payment", Coin: "btc", Amount: "0.15", FiatValue: "9000.00", FiatCurrency: "EUR", FiatSource: "payment", TxID: "tx-checkout", InvoiceID: "chk_export"},
		{Time: at(2 * time.Minute), Kind: "forward", Coin: "btc", Amount: "-0.1", FiatValue: "-6000.00", FiatCurrency: "EUR", FiatSource: "payment", TxID: "tx-forward", InvoiceID: "chk_export"},
		{Time: at(2 * time.Minute), Kind: "fee", Coin: "btc", Amount: "-0.0499", FiatValue: "-2994.00", FiatCurrency: "EUR", FiatSource: "payment", TxID: "tx-forward", InvoiceID: "chk_export"},
		{Time: at(2 * time.Minute), Kind: "network_fee", Coin: "btc", Amount: "-0.0001", FiatValue: "-6.00", FiatCurrency: "EUR", FiatSource: "payment", TxID: "tx-forward", InvoiceID: "chk_export"},
		{Time: at(90 * time.Minute), Kind: "payment", Coin: "btc", Amount: "0.5", FiatValue: "30000.00", FiatCurrency: "USD", FiatSource: "price:kraken", TxID: "tx-plain"},
		{Time: at(30 * time.Minute), Kind: "payment", Coin: "btc", Amount: "0.25", TxID: "tx-old"},
		{Time: at(3 * time.Hour), Kind: "payout", Coin: "btc", Amount: "-0.2", FiatValue: "-12000.00", FiatCurrency: "USD", FiatSource: "price:kraken", TxID: "tx-payout", PayoutID: pid},
		{Time: at(3 * time.Hour), Kind: "fee", Coin: "btc", Amount: "-0.001", FiatValue: "-60.00", FiatCurrency: "USD", FiatSource: "price:kraken", TxID: "tx-payout", PayoutID: pid},
		{Time: at(3 * time.Hour), Kind: "network_fee", Coin: "btc", Amount: "-0.0002", FiatValue: "-12.00", FiatCurrency: "USD", FiatSource: "price:kraken", TxID: "tx-payout", PayoutID: pid},
		{Time: at(3 * time.Hour), Kind: "change", Coin: "btc", Amount: "-0.0488", FiatValue: "-2928.00", FiatCurrency: "USD", FiatSource: "price:kraken", TxID: "tx-payout", PayoutID: pid},
		{Time: at(4 * time.Hour), Kind: "refund", Coin: "btc", Amount: "-0.01", TxID: "tx-refund", PayoutID: rid, RefundID: "ref_export", InvoiceID: "chk_export"},
		{Time: at(4 * time.Hour), Kind: "network_fee", Coin: "btc", Amount: "-0.0001", TxID: "tx-refund", PayoutID: rid, RefundID: "ref_export", InvoiceID: "chk_export"},
	}
	return f
}

// export runs an export of project over [from, to) in format with cfg.
func (f *fixture) export(t *testing.T, cfg export.Config, project int64, format export.Format) []byte {
	t.Helper()
	cfg.DB = f.db.Client
	cfg.Tickers = family.DefaultRegistry().Lookup
	if cfg.MaxPriceAge == 0 {
		cfg.MaxPriceAge = time.Hour
	}
	ex, err := export.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := export.NewWriter(&buf, format)
	if _, err := ex.Export(context.Background(), project, export.Range{From: f.from, To: f.to}, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ParseCSV reads an export's CSV back, checking its header.
func parseCSV(t *testing.T, b []byte) []export.Row {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, b)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(export.Columns, ",") {
		t.Fatalf("CSV header %v, want %v", recs, export.Columns)
	}
	rows := make([]export.Row, len(recs)-1)
	for i, r := range recs[1:] {
		m := map[string]string{}
		for j, c := range export.Columns {
			m[c] = r[j]
		}
		raw, _ := json.Marshal(m)
		if err := json.Unmarshal(raw, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// checkRows compares got with want, entry ids aside, which must increase.
func checkRows(t *testing.T, got, want []export.Row) {
	t.Helper()
	last := int64(0)
	for i := range got {
		id, err := strconv.ParseInt(got[i].EntryID, 10, 64)
		if err != nil || id <= last {
			t.Errorf("row %d: entry_id %q after %d", i, got[i].EntryID, last)
		}
		last = id
		got[i].EntryID = ""
	}
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestExport exports a journal on both dialects, in both formats, in pages
// of 2 and of the default size: one row per line of an exported account,
// in id order, of the project and the range only, with each kind, amount,
// reference and valuation as the package doc says; the stored price only
// within MaxPriceAge of the line.
func TestExport(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		f := newFixture(t, db)
		for _, size := range []int{2, 0} {
			checkRows(t, parseCSV(t, f.export(t, export.Config{PageSize: size}, f.project, export.CSV)), f.want)
			var rows []export.Row
			b := f.export(t, export.Config{PageSize: size}, f.project, export.JSON)
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rows); err != nil {
				t.Fatalf("JSON: %v\n%s", err, b)
			}
			checkRows(t, rows, f.want)
		}
		other := parseCSV(t, f.export(t, export.Config{}, f.other, export.CSV))
		if len(other) != 1 || other[0].TxID != "tx-other" || other[0].Amount != "3" {
			t.Errorf("the other project's export: %+v", other)
		}
		// A price further than MaxPriceAge values nothing.
		for _, r := range parseCSV(t, f.export(t, export.Config{MaxPriceAge: time.Minute}, f.project, export.CSV)) {
			if strings.HasPrefix(r.FiatSource, "price:") {
				t.Errorf("row valued by a price fetched over a minute away: %+v", r)
			}
		}
	})
}

// TestEmptyExport: a range without lines is a whole document: the CSV
// header alone, an empty JSON array.
func TestEmptyExport(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Dialects()[0])
	f := newFixture(t, db)
	f.from, f.to = f.to.Add(time.Hour), f.to.Add(2*time.Hour)
	if got := string(f.export(t, export.Config{}, f.project, export.CSV)); got != strings.Join(export.Columns, ",")+"\n" {
		t.Errorf("empty CSV %q", got)
	}
	if got := string(f.export(t, export.Config{}, f.project, export.JSON)); got != "[]\n" {
		t.Errorf("empty JSON %q", got)
	}
}

// TestWriters pins the bytes of both formats, quoting included.
func TestWriters(t *testing.T) {
	t.Parallel()
	rows := []export.Row{
		{EntryID: "1", Time: "2026-03-01T12:00:00Z", Kind: "payment", Coin: "btc", Amount: "0.5", TxID: "a,b"},
		{EntryID: "2", Time: "2026-03-01T12:00:01Z", Kind: "fee", Coin: "btc", Amount: "-0.1", FiatValue: "-1.00", FiatCurrency: "USD", FiatSource: "price:kraken", InvoiceID: `chk_"x"`},
	}
	for _, c := range []struct {
		format export.Format
		want   string
	}{
		{export.CSV, "entry_id,time,kind,coin,amount,fiat_value,fiat_currency,fiat_source,txid,invoice_id,payout_id,refund_id\n" +
			"1,2026-03-01T12:00:00Z,payment,btc,0.5,,,,\"a,b\",,,\n" +
			"2,2026-03-01T12:00:01Z,fee,btc,-0.1,-1.00,USD,price:kraken,,\"chk_\"\"x\"\"\",,\n"},
		{export.JSON, "[\n" +
			`{"entry_id":"1","time":"2026-03-01T12:00:00Z","kind":"payment","coin":"btc","amount":"0.5","fiat_value":"","fiat_currency":"","fiat_source":"","txid":"a,b","invoice_id":"","payout_id":"","refund_id":""},` + "\n" +
			`{"entry_id":"2","time":"2026-03-01T12:00:01Z","kind":"fee","coin":"btc","amount":"-0.1","fiat_value":"-1.00","fiat_currency":"USD","fiat_source":"price:kraken","txid":"","invoice_id":"chk_\"x\"","payout_id":"","refund_id":""}` + "\n]\n"},
	} {
		var buf bytes.Buffer
		w := export.NewWriter(&buf, c.format)
		for i := range rows {
			if err := w.Write(&rows[i]); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.format, buf.String(), c.want)
		}
	}
}

// TestParseRange: dates and RFC 3339 times, [from, to), at most MaxRange;
// every refusal wraps ErrRange, is kind Invalid and names the parameter.
func TestParseRange(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		from, to string
		want     export.Range
		err      string
	}{
		"dates":          {"2026-01-01", "2027-01-01", export.Range{From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
		"a leap year":    {"2028-01-01", "2029-01-01", export.Range{From: time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
		"times":          {"2026-01-01T10:00:00+02:00", "2026-01-01T12:30:00Z", export.Range{From: time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC), To: time.Date(2026, 1, 1, 12, 30, 0, 0, time.UTC)}, ""},
		"no from":        {"", "2026-01-01", export.Range{}, "from: required"},
		"no to":          {"2026-01-01", " ", export.Range{}, "to: required"},
		"a bad date":     {"2026-13-01", "2027-01-01", export.Range{}, `from: "2026-13-01" is neither`},
		"a bad to":       {"2026-01-01", "tomorrow", export.Range{}, `to: "tomorrow" is neither`},
		"to before from": {"2026-02-01", "2026-01-01", export.Range{}, "to: must be after from"},
		"an empty range": {"2026-02-01", "2026-02-01", export.Range{}, "to: must be after from"},
		"over a year":    {"2026-01-01", "2027-01-03", export.Range{}, "to: the range is longer than 366 days"},
	} {
		got, err := export.ParseRange(c.from, c.to)
		if c.err == "" {
			if err != nil || !got.From.Equal(c.want.From) || !got.To.Equal(c.want.To) {
				t.Errorf("%s: %v %v, want %v", name, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(kind.Message(err), c.err) || !errors.Is(err, export.ErrRange) || kind.Of(err) != kind.Invalid {
			t.Errorf("%s: error %v (kind %v), want %q", name, err, kind.Of(err), c.err)
		}
	}
	if _, err := export.ParseFormat("xml"); kind.Of(err) != kind.Invalid || !strings.Contains(kind.Message(err), "format") {
		t.Errorf("format xml: %v", err)
	}
	if f, err := export.ParseFormat(""); f != export.CSV || err != nil {
		t.Errorf("no format: %v %v, want csv", f, err)
	}
}

var _ chains.Ticker
