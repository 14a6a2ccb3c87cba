package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entevent "github.com/payhook/payhook/ent/db/event"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// postForm POSTs a URL-encoded form with an API key, as this API family's
// payout clients send /payout/create/, /payout/process/ and
// /payout/status/.
func (e *devEnv) postForm(t *testing.T, path string, form url.Values, key string) servertest.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.in.BaseURL+path, strings.NewReader(form.Encode()))
	req.Header.Set("apikey", key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return roundTrip(t, req)
}

// ledgerSum sums the journal's lines of account for project and ticker, in
// base units.
func ledgerSum(t *testing.T, in *servertest.Instance, project int64, ticker string, account entledger.Account) decimal.Decimal {
	t.Helper()
	ls, err := in.Server.DB().Client.LedgerEntry.Query().
		Where(entledger.ProjectID(project), entledger.Ticker(ticker), entledger.AccountEQ(account)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := decimal.Zero
	for _, l := range ls {
		sum = sum.Add(l.Amount)
	}
	return sum
}

// TestPayoutEndToEnd: on the devnet, a project's payout balance is what its
// payout wallet and its address without forwarding hold; two payout
// requests become one payout whose one transaction spends both addresses'
// outputs, pays each output exactly and returns the change to the payout
// wallet; the journal moves exactly the payout, its network fee and the
// change; the change is spendable once confirmed. A payout the balance
// does not cover is refused, naming both amounts, and records nothing; bad
// input is a 4xx naming the field; another project's payout is not found.
func TestPayoutEndToEnd(t *testing.T) {
	t.Parallel()
	tk, _ := family.DefaultRegistry().Lookup("ltc")
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			me := newMerchantEnv(t, d)
			e := me.devEnv
			ctx := context.Background()
			if err := project.SetPayoutNotify(ctx, e.in.Server.DB().Client, nil, e.in.ProjectA, me.ms.URL+"/merchant", true, clock.Now()); err != nil {
				t.Fatal(err)
			}
			r := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA)
			wantStatus(t, r, 200)
			wallet := r.JSON["address"].(string)
			if again := e.in.Get(t, "/ltc/payout/address", nil, e.in.KeyA2); again.JSON["address"] != wallet {
				t.Fatalf("a second key of the project got payout wallet %v, want %s", again.JSON["address"], wallet)
			}
			if other := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyB); other.JSON["address"] == wallet {
				t.Fatal("two projects share a payout wallet")
			}
			r = e.in.Get(t, "/ltc/create/", q("callback", e.sink.URL+"/hook"), e.in.KeyA)
			wantStatus(t, r, 200)
			held := r.JSON["address_in"].(string)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": wallet, "value_coin": "0.3"}), 200)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": held, "value_coin": "0.5"}), 200)
			e.mine(t, "ltc", 5)
			if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != "0.8" {
				t.Fatalf("balance %s, want 0.8", b.Body)
			}
			if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyB); b.JSON["balance"] != "0" {
				t.Fatalf("the other project's balance %s, want 0", b.Body)
			}

			destA, destB := destinations(t, tk)
			// An amount may be a JSON number, as this API family's libraries
			// send it: it is read as its exact text.
			r = e.postKey(t, "/ltc/payout/request/bulk/", fmt.Sprintf(`{"outputs": {%q: 0.4, %q: "0.2"}}`, destA, destB), e.in.KeyA)
			wantStatus(t, r, 200)
			ids, _ := r.JSON["request_ids"].([]any)
			if len(ids) != 2 {
				t.Fatalf("request_ids %s", r.Body)
			}
			r = e.postForm(t, "/payout/create/", url.Values{"request_ids": {fmt.Sprintf("%v,%v", ids[0], ids[1])}}, e.in.KeyA)
			wantStatus(t, r, 200)
			info := r.JSON["payout_info"].(map[string]any)
			if info["status"] != "created" || info["total_requested"] != "0.6" || info["coin"] != "ltc" {
				t.Fatalf("created payout %s", r.Body)
			}
			id := fmt.Sprint(info["id"])
			wantStatus(t, e.postForm(t, "/payout/process/", url.Values{"payout_id": {id}}, e.in.KeyB), 404)
			r = e.postForm(t, "/payout/process/", url.Values{"payout_id": {id}}, e.in.KeyA)
			wantStatus(t, r, 200)
			info = r.JSON["payout_info"].(map[string]any)
			fee := tk.NetworkFeeEstimate
			if r.JSON["queued"] != true || info["status"] != "done" || info["txid"] == "" || info["from"] != wallet ||
				info["blockchain_fee"] != fee.String() || info["fee"] != "0" || info["total_with_fee"] != decimal.RequireFromString("0.6").Add(fee).String() {
				t.Fatalf("processed payout %s", r.Body)
			}
			if reqs := info["requests"].(map[string]any); reqs[destA] != "0.4" || reqs[destB] != "0.2" {
				t.Errorf("payout requests %v", reqs)
			}
			wantStatus(t, e.postForm(t, "/payout/process/", url.Values{"payout_id": {id}}, e.in.KeyA), 400)
			// The payout webhook: one, signed with the project's secret (the
			// sink verifies it), a form POST carrying the txid.
			if err := e.in.Server.Notifier().Dispatcher.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			hooks, errs := me.ms.take()
			if len(errs) > 0 || len(hooks) != 1 {
				t.Fatalf("payout webhooks %+v, errors %v; want one that verifies", hooks, errs)
			}
			if w := hooks[0]; w.method != http.MethodPost || w.event != "payout.done" || w.form.Get("status") != "done" ||
				w.form.Get("payout_id") != id || w.form.Get("txid") != info["txid"] || w.form.Get("coin") != "ltc" ||
				w.form.Get("total_with_fee") != info["total_with_fee"] || !strings.Contains(w.form.Get("requests"), `"`+destA+`":"0.4"`) {
				t.Errorf("payout webhook %s %s %v", w.method, w.event, w.form)
			}

			c, _ := e.in.Server.Devnet().Chain("ltc")
			var sent int
			for _, f := range c.Forwards() {
				if f.ID != "payout:"+id {
					continue
				}
				sent++
				if len(f.Inputs) != 2 || f.From != wallet {
					t.Errorf("payout transaction inputs %+v from %s", f.Inputs, f.From)
				}
				change := decimal.RequireFromString("0.2").Sub(fee)
				want := map[string]decimal.Decimal{destA: decimal.RequireFromString("0.4"), destB: decimal.RequireFromString("0.2"), wallet: change}
				if len(f.Outputs) != 3 {
					t.Errorf("payout transaction outputs %+v", f.Outputs)
				}
				for _, o := range f.Outputs {
					if !o.Amount.Equal(want[o.Address]) {
						t.Errorf("output to %s: %s, want %s", o.Address, o.Amount, want[o.Address])
					}
				}
				if !f.NetworkFee.Equal(fee) {
					t.Errorf("network fee %s, want %s", f.NetworkFee, fee)
				}
			}
			if sent != 1 {
				t.Fatalf("%d payout transactions sent, want 1", sent)
			}
			if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != "0" {
				t.Errorf("balance before the change confirms: %s, want 0", b.Body)
			}
			e.mine(t, "ltc", 5)
			wantChange := decimal.RequireFromString("0.2").Sub(fee)
			if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != wantChange.String() {
				t.Errorf("balance with the change: %s, want %s", b.Body, wantChange)
			}
			units := func(s string) decimal.Decimal { return decimal.RequireFromString(s).Shift(tk.Decimals) }
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountPayout); !got.Equal(units("0.6")) {
				t.Errorf("journal: paid out %s base units, want 0.6 ltc", got)
			}
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountOutgoing); !got.IsZero() {
				t.Errorf("journal: %s base units still outgoing", got)
			}
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountHeld); !got.Equal(wantChange.Shift(tk.Decimals)) {
				t.Errorf("journal: held %s base units, want the change", got)
			}
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountReceived); !got.Equal(units("-0.8")) {
				t.Errorf("journal: received %s base units, want -0.8 ltc (the change left and came back)", got)
			}

			st := e.postForm(t, "/payout/status/", url.Values{"payout_id": {id}}, e.in.KeyA)
			wantStatus(t, st, 200)
			if st.JSON["payout_info"].(map[string]any)["txid"] != info["txid"] {
				t.Errorf("status %s", st.Body)
			}
			wantStatus(t, e.postForm(t, "/payout/status/", url.Values{"payout_id": {id}}, e.in.KeyB), 404)
			list := e.in.Get(t, "/ltc/payout/request/list/", q("status", "done"), e.in.KeyA)
			wantStatus(t, list, 200)
			if rs, _ := list.JSON["payout_requests"].([]any); len(rs) != 2 || list.JSON["num_pages"] != float64(1) {
				t.Errorf("done requests %s", list.Body)
			}
			pl := e.in.Get(t, "/ltc/payout/list/", nil, e.in.KeyA)
			if ps, _ := pl.JSON["payouts"].([]any); len(ps) != 1 || len(ps[0].(map[string]any)["requests"].(map[string]any)) != 2 {
				t.Errorf("payouts %s", pl.Body)
			}

			// Not enough balance: a 400 naming both amounts, nothing recorded.
			before, _ := e.in.Server.DB().Client.PayoutRequest.Query().Count(ctx)
			r = e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "5"}}`, destA), e.in.KeyA)
			wantStatus(t, r, 400)
			if msg := fmt.Sprint(r.JSON["error"]); !strings.Contains(msg, "balance is "+wantChange.String()) || !strings.Contains(msg, "needs 5.") {
				t.Errorf("insufficient balance: %s", r.Body)
			}
			if after, _ := e.in.Server.DB().Client.PayoutRequest.Query().Count(ctx); after != before {
				t.Errorf("a refused payout recorded %d requests", after-before)
			}

			// Bad input: each a 4xx naming the field, nothing recorded.
			for name, body := range map[string]string{
				"an address of another coin": fmt.Sprintf(`{"outputs": {%q: "0.01"}}`, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
				"a zero amount":              fmt.Sprintf(`{"outputs": {%q: "0"}}`, destA),
				"an over-precise amount":     fmt.Sprintf(`{"outputs": {%q: "0.123456789"}}`, destA),
				"an over-precise number":     fmt.Sprintf(`{"outputs": {%q: 0.123456789}}`, destA),
				"a dust amount":              fmt.Sprintf(`{"outputs": {%q: "0.00000001"}}`, destA),
				"no outputs":                 `{"outputs": {}}`,
			} {
				r := e.postKey(t, "/ltc/payout/request/bulk/", body, e.in.KeyA)
				if r.Code != 400 || !strings.Contains(fmt.Sprint(r.JSON["error"]), "outputs") {
					t.Errorf("%s: HTTP %d %s, want 400 naming outputs", name, r.Code, r.Body)
				}
			}
			dup := e.postKey(t, "/ltc/payout/request/bulk/", fmt.Sprintf(`{"outputs": {%q: "0.01", %q: "0.02"}}`, destA, destA), e.in.KeyA)
			if dup.Code != 400 || !strings.Contains(fmt.Sprint(dup.JSON["error"]), "duplicate") {
				t.Errorf("a duplicate output: HTTP %d %s", dup.Code, dup.Body)
			}
			same := e.postKey(t, "/ltc/payout/request/bulk/", fmt.Sprintf(`{"outputs": {%q: "0.01", %q: "0.02"}}`, destA, strings.ToUpper(destA)), e.in.KeyA)
			if same.Code != 400 || !strings.Contains(fmt.Sprint(same.JSON["error"]), "same destination") {
				t.Errorf("one destination spelt two ways: HTTP %d %s", same.Code, same.Body)
			}
			wantStatus(t, e.postForm(t, "/payout/create/", url.Values{"request_ids": {"12,x"}}, e.in.KeyA), 400)
			wantStatus(t, e.postForm(t, "/payout/create/", url.Values{"request_ids": {"999999"}}, e.in.KeyA), 404)
			wantStatus(t, e.postForm(t, "/payout/status/", url.Values{"payout_id": {"999999"}}, e.in.KeyA), 404)
			wantStatus(t, e.in.Get(t, "/ltc/payout/request/list/", q("status", "lost"), e.in.KeyA), 400)
			if b := e.in.Get(t, "/eth/payout/balance/", nil, e.in.KeyA); b.Code != 200 || b.JSON["balance"] != "0" {
				t.Errorf("the eth balance of a project that holds none: HTTP %d %s", b.Code, b.Body)
			}
			wantStatus(t, e.in.Get(t, "/nocoin/payout/balance/", nil, e.in.KeyA), 404)
			if n, _ := e.in.Server.DB().Client.PayoutRequest.Query().Where(payoutrequest.ProjectID(e.in.ProjectA)).Count(ctx); n != 2 {
				t.Errorf("project A has %d payout requests, want the 2 paid", n)
			}
		})
	}
}

// TestPayoutLimitsAndApproval: with the operator's limits on a project's
// ltc payouts (set over the operator API), a payout above the maximum per
// payout, or one that takes the day's payouts above the maximum per day,
// waits for approval (queued false, nothing taken from the balance, not
// processed again); a payout within both is sent at once. A dashboard user
// of the project sees the waiting payout with its outputs and the balance,
// and approving it sends it, recorded as approved by that user; another
// project's payout cannot be approved from this dashboard.
func TestPayoutLimitsAndApproval(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDevEnv(t, d)
			ctx := context.Background()
			now := clock.Now()
			operator, _, err := apikey.CreateOperator(ctx, e.in.Server.DB().Client, "ops", now)
			if err != nil {
				t.Fatal(err)
			}
			limit := fmt.Sprintf(`{"project_id": %d, "ticker": "ltc", "per_payout": "0.5", "per_day": "1"}`, e.in.ProjectA)
			wantStatus(t, e.postKey(t, "/operator/project/payout-limit/", limit, e.in.KeyA), 403)
			wantStatus(t, e.postKey(t, "/operator/project/payout-limit/", limit, operator), 200)
			bad := fmt.Sprintf(`{"project_id": %d, "ticker": "ltc", "per_payout": "-1"}`, e.in.ProjectA)
			wantStatus(t, e.postKey(t, "/operator/project/payout-limit/", bad, operator), 400)

			w := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA).JSON["address"].(string)
			for range 4 {
				wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": w, "value_coin": "1"}), 200)
			}
			e.mine(t, "ltc", 5)
			tk, _ := family.DefaultRegistry().Lookup("ltc")
			destA, destB := destinations(t, tk)
			process := func(dest, amount string) servertest.Response {
				return e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, dest, amount), e.in.KeyA)
			}

			big := process(destA, "0.6")
			wantStatus(t, big, 200)
			info := big.JSON["payout_info"].(map[string]any)
			if big.JSON["queued"] != false || info["status"] != "pending_approval" || !strings.Contains(fmt.Sprint(info["approval_reason"]), "maximum per payout of 0.5") {
				t.Fatalf("a payout above the maximum per payout: %s", big.Body)
			}
			bigID := fmt.Sprint(info["id"])
			if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != "4" {
				t.Errorf("a waiting payout took from the balance: %s", b.Body)
			}
			wantStatus(t, e.postForm(t, "/payout/process/", url.Values{"payout_id": {bigID}}, e.in.KeyA), 400)

			for _, amount := range []string{"0.4", "0.5"} { // 0.9 today
				r := process(destB, amount)
				if r.JSON["payout_info"].(map[string]any)["status"] != "done" {
					t.Fatalf("a payout of %s within the limits: %s", amount, r.Body)
				}
			}
			over := process(destB, "0.2") // 1.1 today
			if info := over.JSON["payout_info"].(map[string]any); info["status"] != "pending_approval" || !strings.Contains(fmt.Sprint(info["approval_reason"]), "maximum per day of 1") {
				t.Fatalf("a payout above the day's maximum: %s", over.Body)
			}

			// The dashboard.
			cookie := dashboardSession(t, e.in, now)
			req, _ := http.NewRequest(http.MethodGet, e.in.BaseURL+"/dashboard/payouts/", nil)
			req.Header.Set("Cookie", cookie)
			page := roundTrip(t, req)
			body := string(page.Body)
			if page.Code != 200 || !strings.Contains(body, `id="payout-`+bigID+`"`) || !strings.Contains(body, destA) || !strings.Contains(body, "maximum per payout") {
				t.Fatalf("payouts page %d:\n%s", page.Code, body)
			}
			m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
			if m == nil {
				t.Fatal("no csrf field on the payouts page")
			}
			approve := func(id, csrf string) *http.Response {
				req, _ := http.NewRequest(http.MethodPost, e.in.BaseURL+"/dashboard/payouts/"+id+"/approve", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
				req.Header.Set("Cookie", cookie)
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			if resp := approve(bigID, "forged"); resp.StatusCode != http.StatusForbidden {
				t.Errorf("an approval without the session's csrf token: HTTP %d", resp.StatusCode)
			}
			if resp := approve(bigID, m[1]); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("approve: HTTP %d", resp.StatusCode)
			}
			st := e.postForm(t, "/payout/status/", url.Values{"payout_id": {bigID}}, e.in.KeyA)
			if info := st.JSON["payout_info"].(map[string]any); info["status"] != "done" || info["txid"] == "" {
				t.Errorf("the approved payout: %s", st.Body)
			}
			id, _ := strconv.ParseInt(bigID, 10, 64)
			if p, err := e.in.Server.DB().Client.Payout.Get(ctx, id); err != nil || p.ApprovedBy != "alice@shop.example" || p.ApprovedAt == nil {
				t.Errorf("approval record: %+v, %v", p, err)
			}
			if resp := approve(bigID, m[1]); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("approving a payout that is done: HTTP %d", resp.StatusCode)
			}
			// Another project's payout is not found from this dashboard.
			other := e.postKey(t, "/ltc/payout/request/bulk/", fmt.Sprintf(`{"outputs": {%q: "0.1"}}`, destA), e.in.KeyB)
			created := e.postForm(t, "/payout/create/", url.Values{"request_ids": {fmt.Sprint(other.JSON["request_ids"].([]any)[0])}}, e.in.KeyB)
			otherID := fmt.Sprint(created.JSON["payout_info"].(map[string]any)["id"])
			if resp := approve(otherID, m[1]); resp.StatusCode != http.StatusNotFound {
				t.Errorf("approving another project's payout: HTTP %d", resp.StatusCode)
			}
			// The project has no payout_notify_url: no webhook is stored, and
			// each payout done is still in its event log (for its endpoints
			// and GET /events/).
			db := e.in.Server.DB().Client
			if n, _ := db.Notification.Query().Where(notification.EventEQ("payout.done")).Count(ctx); n != 0 {
				t.Errorf("%d payout webhooks stored without a payout_notify_url", n)
			}
			if n, _ := db.Event.Query().Where(entevent.ProjectID(e.in.ProjectA), entevent.Type("payout.done")).Count(ctx); n != 3 {
				t.Errorf("%d payout.done events logged, want 3", n)
			}
		})
	}
}
