package dashboard_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/ledger/export"
	"github.com/payhook/payhook/server/web/webtest"
)

// payWallet pays project A's ltc payout wallet each value on the devnet
// and confirms the payments: each is a payment row of A's export.
func (d *dash) payWallet(t *testing.T, values ...string) {
	t.Helper()
	wallet := d.in.Get(t, "/ltc/payout/address/", nil, d.in.KeyA).JSON["address"].(string)
	for _, v := range values {
		if r := d.in.PostJSON(t, "/devnet/ltc/pay/", fmt.Sprintf(`{"address_in": %q, "value_coin": %q}`, wallet, v), ""); r.Code != 200 {
			t.Fatalf("pay: %d %s", r.Code, r.Body)
		}
	}
	if r := d.in.PostJSON(t, "/devnet/ltc/mine/", `{"blocks": 6}`, ""); r.Code != 200 {
		t.Fatalf("mine: %d %s", r.Code, r.Body)
	}
}

// csvRows reads a CSV export, checking its header.
func csvRows(t *testing.T, b []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 || !slices.Equal(recs[0], export.Columns) {
		t.Fatalf("export CSV (%v):\n%s", err, b)
	}
	return recs[1:]
}

// TestDashboardExport: the Export page offers this month up to today; its
// download is an attachment named for the range, CSV or JSON, with the
// signed-in user's project's rows only; a bad range or format shows the
// page again with the reason (400); a visitor who is not signed in is
// sent to sign in.
func TestDashboardExport(t *testing.T) {
	t.Parallel()
	d := newDash(t, func(c *server.Config) { c.Dev = true })
	d.payWallet(t, "0.5", "0.25")

	if p := webtest.Fetch(t, http.MethodGet, d.in.BaseURL+"/dashboard/export/download?from=2026-11-01&through=2026-11-24", nil); p.Code != http.StatusSeeOther {
		t.Errorf("signed out: HTTP %d, want a redirect to sign in", p.Code)
	}
	u := d.user(t)
	u.signIn(d.emailA, password)
	u.do(http.MethodGet, "/dashboard/export/", nil).Want(t, 200, `href="/dashboard/export/" aria-current="page"`,
		`id="from" value="2026-11-01"`, `id="through" value="2026-11-24"`, `id="download"`)

	q := url.Values{"from": {"2026-11-01"}, "through": {"2026-11-24"}, "format": {"csv"}}
	p := u.do(http.MethodGet, "/dashboard/export/download?"+q.Encode(), nil)
	if p.Code != 200 || p.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		p.Header.Get("Content-Disposition") != `attachment; filename=ledger-2026-11-01-2026-11-25.csv` {
		t.Fatalf("CSV download: HTTP %d %v\n%s", p.Code, p.Header, p.Body)
	}
	rows := csvRows(t, []byte(p.Body))
	var amounts []string
	for _, r := range rows {
		if r[2] != "payment" || r[3] != "ltc" {
			t.Errorf("row %v: want an ltc payment", r)
		}
		amounts = append(amounts, r[4])
	}
	if !slices.Equal(amounts, []string{"0.5", "0.25"}) {
		t.Errorf("amounts %v, want the two payments in order", amounts)
	}

	q.Set("format", "json")
	p = u.do(http.MethodGet, "/dashboard/export/download?"+q.Encode(), nil)
	var jrows []export.Row
	if err := json.Unmarshal([]byte(p.Body), &jrows); err != nil || p.Code != 200 || len(jrows) != 2 || jrows[1].Amount != "0.25" ||
		p.Header.Get("Content-Disposition") != `attachment; filename=ledger-2026-11-01-2026-11-25.json` {
		t.Errorf("JSON download: HTTP %d %v %v\n%s", p.Code, p.Header, err, p.Body)
	}

	// The day after: nothing.
	if rows := csvRows(t, []byte(u.do(http.MethodGet, "/dashboard/export/download?from=2026-11-25&through=2026-11-30", nil).Body)); len(rows) != 0 {
		t.Errorf("rows after the payments: %v", rows)
	}
	for name, c := range map[string]struct{ query, want string }{
		"through before from": {"from=2026-11-24&through=2026-11-01", "must be after from"},
		"a bad date":          {"from=2026-11-31&through=2026-12-01", "from: &#34;2026-11-31&#34; is neither"},
		"a bad through":       {"from=2026-11-01&through=soon", "through: soon is not a date"},
		"over a year":         {"from=2025-01-01&through=2026-11-24", "longer than 366 days"},
		"an xml format":       {"from=2026-11-01&through=2026-11-24&format=xml", "format: must be csv or json"},
	} {
		p := u.do(http.MethodGet, "/dashboard/export/download?"+c.query, nil)
		if p.Code != http.StatusBadRequest || p.Header.Get("Content-Disposition") != "" {
			t.Errorf("%s: HTTP %d %v", name, p.Code, p.Header)
		}
		p.Want(t, http.StatusBadRequest, `id="refused"`, c.want, `id="download"`)
	}

	// Project B's user: none of A's rows.
	b := d.user(t)
	b.signIn(d.emailB, password)
	if rows := csvRows(t, []byte(b.do(http.MethodGet, "/dashboard/export/download?from=2026-11-01&through=2026-11-24", nil).Body)); len(rows) != 0 {
		t.Errorf("project B's export: %v", rows)
	}
}
