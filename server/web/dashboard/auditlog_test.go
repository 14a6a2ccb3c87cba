package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/web/dashboard"
)

// TestAuditLog: the dashboard's changes and the management API's calls are
// in the audit log with who, what and from where; a refused form, a read
// a failed call, a read and a payment's creation (the hot path) are not; the page is an owner's
// (a developer is refused) and its CSV export is a streamed download.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		o := d.user(t)
		_, token := o.signIn(d.emailA, password)
		o.do(http.MethodPost, "/dashboard/settings/keys", url.Values{"csrf": {token}, "name": {"=shop backend"}, "scope": {"read"}}).Want(t, 200)
		o.do(http.MethodPost, "/dashboard/settings/keys", url.Values{"csrf": {token}, "name": {""}, "scope": {"read"}}).Want(t, http.StatusBadRequest)
		// The API: a management call (recorded); a refused one, a read and a
		// checkout (not).
		if r := d.in.Do(t, http.MethodPost, d.in.BaseURL+"/notification/test/?url="+url.QueryEscape("ftp://x"), d.in.KeyA); r.Code != http.StatusBadRequest {
			t.Fatalf("a bad test webhook: %d %s", r.Code, r.Body)
		}
		// A client's own X-Forwarded-For is not believed (no trusted proxy):
		// the entry has the address the server saw.
		req, _ := http.NewRequest(http.MethodPost, d.in.BaseURL+"/notification/test/?url="+url.QueryEscape(d.hook), nil)
		req.Header.Set("apikey", d.in.KeyA)
		req.Header.Set("X-Forwarded-For", "203.0.113.9")
		resp, err := http.DefaultClient.Do(req) //nolint:gosec // the test server
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("test webhook: %d", resp.StatusCode)
		}
		d.in.Do(t, http.MethodGet, d.in.BaseURL+"/notification/logs/", d.in.KeyA)
		d.in.Do(t, http.MethodGet, d.in.BaseURL+"/checkout/request/?notify_url="+url.QueryEscape(d.hook)+"&value=10", d.in.KeyA)

		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA)).Order(entdb.Asc(auditentry.FieldID)).All(ctx)
		if err != nil || len(rows) != 2 {
			t.Fatalf("audit entries %v %v", rows, err)
		}
		if e := rows[0]; e.ActorKind != audit.User || e.Actor != d.emailA || e.Action != "api_key.create" || e.Target != "=shop backend" || e.IP != "127.0.0.1" {
			t.Errorf("dashboard entry %+v", e)
		}
		if e := rows[1]; e.ActorKind != audit.APIKey || e.Actor == "" || !strings.HasSuffix(e.Action, "/TestNotification") || e.Target != d.hook || e.IP != "127.0.0.1" || e.UserAgent == "" {
			t.Errorf("API entry %+v", e)
		}

		page := o.do(http.MethodGet, "/dashboard/audit/", nil)
		page.Want(t, 200, "api_key.create", "TestNotification", "API key "+rows[1].Actor, `href="/dashboard/audit.csv"`)
		dev := d.user(t)
		dev.signIn("dev@shop.example", password)
		dev.do(http.MethodGet, "/dashboard/audit/", nil).Want(t, http.StatusForbidden)
		dev.do(http.MethodGet, "/dashboard/audit.csv", nil).Want(t, http.StatusForbidden)

		export := o.do(http.MethodGet, "/dashboard/audit.csv", nil)
		if export.Code != 200 || export.Header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.HasPrefix(export.Header.Get("Content-Disposition"), "attachment;") {
			t.Fatalf("export: %d %v", export.Code, export.Header)
		}
		recs, err := csv.NewReader(strings.NewReader(export.Body)).ReadAll()
		if err != nil || len(recs) != 3 || recs[0][0] != "id" || !strings.HasSuffix(recs[1][5], "/TestNotification") || recs[2][6] != "'=shop backend" {
			t.Fatalf("export rows %q %v", recs, err)
		}
	})
}
