package server_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/ledger/export"
	"github.com/payhook/payhook/server/servertest"
)

// getRaw GETs path with query and key, returning the response and its
// whole body.
func getRaw(t *testing.T, in *servertest.Instance, path string, query url.Values, key string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, in.BaseURL+path+"?"+query.Encode(), nil)
	if key != "" {
		req.Header.Set("apikey", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// exportRows reads a CSV export into rows (checking its header).
func exportRows(t *testing.T, b []byte) []export.Row {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 || !slices.Equal(recs[0], export.Columns) {
		t.Fatalf("export CSV (%v):\n%s", err, b)
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

// TestExportReconcilesWithTheChain builds a devnet history of ltc for
// project A (a payment forwarded to the merchant's wallet, a checkout
// payment held and refunded in part, a payout from the payout wallet with
// its change) and exports it over REST: per kind, the sums equal what the
// devnet's chain shows (the transfers to payhook's addresses, the outputs
// of its transactions to the merchant, the payout and refund
// destinations and back to the wallet, their network fees, and what the
// forward left to the operator), and all rows sum to what payhook's
// addresses still hold on the chain. The JSON export and the gRPC stream
// carry the same rows; project B's export has none; bad parameters are
// 400 naming them, no key is 401.
func TestExportReconcilesWithTheChain(t *testing.T) {
	t.Parallel()
	tk, _ := family.DefaultRegistry().Lookup("ltc")
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			ctx := context.Background()
			merchant, refundTo := destinations(t, tk)

			// A payment forwarded to the merchant's wallet.
			r := e.in.Get(t, "/ltc/create/", q("callback", e.sink.URL+"/hook", "address", merchant), e.in.KeyA)
			wantStatus(t, r, 200)
			forwarding := r.JSON["address_in"].(string)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": forwarding, "value_coin": "1"}), 200)

			// A checkout payment, held (the project has no ltc wallet), then
			// refunded in part.
			r = e.in.Get(t, "/checkout/request/", q("notify_url", e.ms.URL+"/merchant", "value", "100", "currency", "USD", "post", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			invoiceID := r.JSON["payment_id"].(string)
			a := e.in.Get(t, "/checkout/address/", q("payment_id", invoiceID, "coin", "ltc"), e.in.KeyA)
			wantStatus(t, a, 200)
			checkout := a.JSON["address_in"].(string)
			paid := decimal.RequireFromString(a.JSON["value_coin"].(string)).Add(decimal.RequireFromString("0.5"))
			p := e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": checkout, "value_coin": paid.String()})
			wantStatus(t, p, 200)
			txidIn := p.JSON["txid_in"].(string)

			// The payout wallet's own funds.
			r = e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA)
			wantStatus(t, r, 200)
			wallet := r.JSON["address"].(string)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": wallet, "value_coin": "0.3"}), 200)
			e.mine(t, "ltc", 6)

			r = e.postForm(t, "/checkout/refund/", url.Values{"payment_id": {invoiceID}, "txid_in": {txidIn}, "address": {refundTo}, "value": {"0.5"}}, e.in.KeyA)
			wantStatus(t, r, 200)
			refundID := r.JSON["refund"].(map[string]any)["refund_id"].(string)

			r = e.postKey(t, "/ltc/payout/request/bulk/", fmt.Sprintf(`{"outputs": {%q: "0.2"}}`, merchant), e.in.KeyA)
			wantStatus(t, r, 200)
			ids, _ := r.JSON["request_ids"].([]any)
			r = e.postForm(t, "/payout/create/", url.Values{"request_ids": {fmt.Sprint(ids[0])}}, e.in.KeyA)
			wantStatus(t, r, 200)
			payoutID := fmt.Sprint(r.JSON["payout_info"].(map[string]any)["id"])
			r = e.postForm(t, "/payout/process/", url.Values{"payout_id": {payoutID}}, e.in.KeyA)
			wantStatus(t, r, 200)
			if st := r.JSON["payout_info"].(map[string]any)["status"]; st != "done" {
				t.Fatalf("payout %s", r.Body)
			}
			// The change confirms and is credited to the wallet.
			e.mine(t, "ltc", 6)

			// The chain's side.
			c, _ := e.in.Server.Devnet().Chain("ltc")
			ours := map[string]bool{forwarding: true, checkout: true, wallet: true}
			trs, err := c.Transfers(ctx, 0, c.Height(), func(a string) bool { return ours[a] })
			if err != nil {
				t.Fatal(err)
			}
			chain := map[string]decimal.Decimal{}
			add := func(k string, v decimal.Decimal) { chain[k] = chain[k].Add(v) }
			for _, tr := range trs {
				add(export.KindPayment, tr.Value)
			}
			var refundTx, payoutTx string
			forwards := 0
			for _, f := range c.Forwards() {
				in := decimal.Zero
				for _, i := range f.Inputs {
					in = in.Add(i.Value)
				}
				add(export.KindNetworkFee, f.NetworkFee.Neg())
				switch {
				case f.From == forwarding:
					forwards++
					// What the forward neither sends to the merchant nor
					// pays the network is the operator's service fee.
					sent := decimal.Zero
					for _, o := range f.Outputs {
						if o.Address == merchant {
							sent = sent.Add(o.Amount)
						}
					}
					add(export.KindFee, in.Sub(sent).Sub(f.NetworkFee).Neg())
					add(export.KindForward, sent.Neg())
				case slices.ContainsFunc(f.Outputs, func(o chains.Output) bool { return o.Address == refundTo }):
					refundTx = f.ID
					for _, o := range f.Outputs {
						if o.Address == refundTo {
							add(export.KindRefund, o.Amount.Neg())
						} else {
							add(export.KindChange, o.Amount.Neg())
						}
					}
				default:
					payoutTx = f.ID
					for _, o := range f.Outputs {
						if o.Address == wallet {
							add(export.KindChange, o.Amount.Neg())
						} else {
							add(export.KindPayout, o.Amount.Neg())
						}
					}
				}
			}
			if forwards != 1 || refundTx == "" || payoutTx == "" {
				t.Fatalf("devnet transactions: %d forwards, refund %q, payout %q: %+v", forwards, refundTx, payoutTx, c.Forwards())
			}
			held := c.Balance(forwarding).Add(c.Balance(checkout)).Add(c.Balance(wallet))

			// The export's side.
			now := clock.Now().UTC()
			rng := q("from", now.AddDate(0, 0, -1).Format(time.DateOnly), "to", now.AddDate(0, 0, 2).Format(time.DateOnly))
			resp, body := getRaw(t, e.in, "/ledger/export/", rng, e.in.KeyA)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
				!strings.HasPrefix(resp.Header.Get("Content-Disposition"), `attachment; filename=ledger-`) {
				t.Fatalf("export: HTTP %d %v\n%s", resp.StatusCode, resp.Header, body)
			}
			rows := exportRows(t, body)
			got := map[string]decimal.Decimal{}
			total := decimal.Zero
			for _, row := range rows {
				if row.Coin != "ltc" {
					t.Errorf("row of coin %q: %+v", row.Coin, row)
				}
				v := decimal.RequireFromString(row.Amount)
				got[row.Kind] = got[row.Kind].Add(v)
				total = total.Add(v)
				switch {
				case row.Kind == export.KindRefund && (row.RefundID != refundID || row.InvoiceID != invoiceID):
					t.Errorf("refund row %+v, want refund %s of invoice %s", row, refundID, invoiceID)
				case row.Kind == export.KindPayout && row.PayoutID != payoutID:
					t.Errorf("payout row %+v, want payout %s", row, payoutID)
				case row.TxID == txidIn && row.Kind == export.KindPayment && (row.InvoiceID != invoiceID || row.FiatSource != "payment" || row.FiatCurrency != "USD" || row.FiatValue == ""):
					t.Errorf("checkout payment row %+v: want its invoice and its valuation", row)
				}
			}
			kinds := slices.Sorted(func(yield func(string) bool) {
				for k := range chain {
					if !yield(k) {
						return
					}
				}
			})
			for _, k := range kinds {
				if !got[k].Equal(chain[k]) {
					t.Errorf("%s: the export sums to %s, the chain to %s", k, got[k], chain[k])
				}
			}
			for k := range got {
				if _, ok := chain[k]; !ok && !got[k].IsZero() {
					t.Errorf("%s rows sum to %s, the chain shows none", k, got[k])
				}
			}
			if !total.Equal(held) {
				t.Errorf("the rows sum to %s; payhook's addresses hold %s on the chain", total, held)
			}

			// JSON and gRPC carry the same rows.
			jq := q("from", rng.Get("from"), "to", rng.Get("to"), "format", "json")
			resp, jb := getRaw(t, e.in, "/ledger/export", jq, e.in.KeyA)
			var jrows []export.Row
			if err := json.Unmarshal(jb, &jrows); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || err != nil {
				t.Fatalf("JSON export: HTTP %d %v %v\n%s", resp.StatusCode, resp.Header, err, jb)
			}
			if !slices.Equal(jrows, rows) {
				t.Errorf("JSON rows differ from CSV rows:\n%+v\n%+v", jrows, rows)
			}
			var hdr metadata.MD
			stream, err := payhookv1.NewExportServiceClient(e.in.Conn).ExportLedger(servertest.WithKey(ctx, e.in.KeyA),
				&payhookv1.ExportLedgerRequest{From: rng.Get("from"), To: rng.Get("to")})
			if err != nil {
				t.Fatal(err)
			}
			var grpcBody []byte
			for {
				m, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if m.GetContentType() != "text/csv; charset=utf-8" {
					t.Errorf("gRPC message content type %q", m.GetContentType())
				}
				grpcBody = append(grpcBody, m.GetData()...)
			}
			if hdr, err = stream.Header(); err != nil || !strings.HasPrefix(strings.Join(hdr.Get("content-disposition"), ""), "attachment") {
				t.Errorf("gRPC header %v %v", hdr, err)
			}
			if !bytes.Equal(grpcBody, body) {
				t.Errorf("the gRPC stream differs from the REST body:\n%s\n%s", grpcBody, body)
			}

			// Project B sees none of it.
			if _, b := getRaw(t, e.in, "/ledger/export/", rng, e.in.KeyB); len(exportRows(t, b)) != 0 {
				t.Errorf("project B's export: %s", b)
			}
			for name, c := range map[string]struct {
				query url.Values
				key   string
				code  int
				want  string
			}{
				"a bad date":     {q("from", "2026-02-30", "to", "2026-03-01"), e.in.KeyA, 400, "from:"},
				"to before from": {q("from", "2026-03-01", "to", "2026-02-01"), e.in.KeyA, 400, "to: must be after from"},
				"over a year":    {q("from", "2025-01-01", "to", "2026-03-01"), e.in.KeyA, 400, "to: the range is longer"},
				"no to":          {q("from", "2026-03-01"), e.in.KeyA, 400, "to"},
				"an xml format":  {q("from", "2026-03-01", "to", "2026-03-02", "format", "xml"), e.in.KeyA, 400, "format"},
				"no key":         {q("from", "2026-03-01", "to", "2026-03-02"), "", 401, ""},
			} {
				resp, b := getRaw(t, e.in, "/ledger/export/", c.query, c.key)
				var eb struct{ Status, Error string }
				_ = json.Unmarshal(b, &eb)
				if resp.StatusCode != c.code || eb.Status != "error" || !strings.Contains(eb.Error, c.want) || resp.Header.Get("Content-Disposition") != "" {
					t.Errorf("%s: HTTP %d %s (%v), want %d naming %q", name, resp.StatusCode, b, resp.Header, c.code, c.want)
				}
			}
			// Over gRPC, a bad range is the stream's InvalidArgument.
			bad, err := payhookv1.NewExportServiceClient(e.in.Conn).ExportLedger(servertest.WithKey(ctx, e.in.KeyA),
				&payhookv1.ExportLedgerRequest{From: "2026-03-01", To: "2026-02-01"})
			if err == nil {
				_, err = bad.Recv()
			}
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "to: must be after from") {
				t.Errorf("gRPC export of a reversed range: %v", err)
			}
		})
	}
}
