package dashboard_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/watchonly"
	"github.com/payhook/payhook/ent/db/auditentry"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

// psbtDash is a dashboard on litecoind (regtest) whose project A's ltc
// wallet is the merchant's key, its private keys held by the node's
// wallet "merchant" (the merchant's own wallet, which signs).
type psbtDash struct {
	*dash
	n *nodetest.Litecoind
}

// newPSBTDash starts litecoind (skipping with the install hint where it
// is absent, failing under PAYHOOK_CI=1) and a dashboard on it, with a
// database of dialect.
func newPSBTDash(t *testing.T, dialect store.Dialect) *psbtDash {
	t.Helper()
	n := nodetest.StartLitecoind(t, 110)
	d := newDash(t, liveDatabase(t, dialect), func(c *server.Config) {
		c.Now = clock.Now // the node's blocks carry the real time
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = map[string]string{"ltc": n.URL + "?network=regtest"}
		c.Chains.Prices = server.PricesTable // no network beyond the node
	})
	reg, _ := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	tk, _ := reg.Lookup("ltc")
	key, err := watchonly.Parse(tk, n.MerchantWallet(t, "merchant", []byte(strings.Repeat("dashpsbt", 4))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := project.SetWatchKey(context.Background(), d.in.Server.DB().Client, d.in.ProjectA, project.WatchKeyParams{Ticker: tk, Key: key}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	e := &psbtDash{dash: d, n: n}
	e.poll(t) // where watching starts; addresses are handed out after it
	return e
}

// poll has the server read the node twice (the second sees what the
// first recorded).
func (e *psbtDash) poll(t *testing.T) {
	t.Helper()
	for range 2 {
		if err := e.in.Server.Watcher("ltc").PollOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// payout pays 1 LTC to an address payhook hands out of the merchant's key,
// confirms it, and asks for a payout of value to a new address of the
// node: it waits for the merchant's signature. It returns its id.
func (e *psbtDash) payout(t *testing.T, value string) int64 {
	t.Helper()
	r := e.in.Get(t, "/ltc/create/", url.Values{"callback": {"https://shop.example/cb?psbt=1"}, "confirmations": {"1"}}, e.in.KeyA)
	if r.Code != 200 {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	e.n.Must(nil, "sendtoaddress", r.JSON["address_in"], json.Number("1"))
	var a, dest string
	e.n.Must(&a, "getnewaddress")
	e.n.Must(nil, "generatetoaddress", 1, a)
	e.poll(t)
	e.n.Must(&dest, "getnewaddress")
	p := e.in.PostJSON(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, dest, value), e.in.KeyA)
	info, _ := p.JSON["payout_info"].(map[string]any)
	if p.Code != 200 || info["status"] != "processing" {
		t.Fatalf("a payout from the merchant's key: %d %s", p.Code, p.Body)
	}
	id, err := strconv.ParseInt(fmt.Sprint(info["id"]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// unsigned is payout id's PSBT as payout.Service.GetPSBT gives it.
func (e *psbtDash) unsigned(t *testing.T, id int64) []byte {
	t.Helper()
	got, err := e.in.Server.Payouts().GetPSBT(context.Background(), payout.Caller{ProjectID: e.in.ProjectA}, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Signed {
		t.Fatalf("payout %d is signed already", id)
	}
	return got.PSBT
}

// sign has the merchant's wallet sign psbt (walletprocesspsbt), returning
// the signed one in base64.
func (e *psbtDash) sign(t *testing.T, psbt []byte) string {
	t.Helper()
	var signed struct {
		PSBT     string `json:"psbt"`
		Complete bool   `json:"complete"`
	}
	if err := e.n.CallWallet("merchant", &signed, "walletprocesspsbt", base64.StdEncoding.EncodeToString(psbt)); err != nil || !signed.Complete {
		t.Fatalf("walletprocesspsbt: %+v %v", signed, err)
	}
	return signed.PSBT
}

// uploadPSBT posts the PSBT form of payout id as a browser does
// (multipart/form-data): file as psbt_file when not nil, pasted as psbt.
func (u *user) uploadPSBT(id int64, token string, file []byte, pasted string) webtest.Page {
	u.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", token)
	part, err := mw.CreateFormFile("psbt_file", fmt.Sprintf("payout-%d.psbt", id))
	if err != nil {
		u.t.Fatal(err)
	}
	_, _ = part.Write(file)
	_ = mw.WriteField("psbt", pasted)
	if err := mw.Close(); err != nil {
		u.t.Fatal(err)
	}
	path := fmt.Sprintf("/dashboard/payouts/%d/psbt", id)
	req, err := http.NewRequest(http.MethodPost, u.base+path, &body)
	if err != nil {
		u.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return webtest.Page{Code: resp.StatusCode, Header: resp.Header, Body: string(raw), URL: path}
}

// textarea returns the text of p's textarea id, unescaped.
func textarea(t *testing.T, p webtest.Page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<textarea[^>]* id="` + regexp.QuoteMeta(id) + `"[^>]*>(.*?)</textarea>`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("%s: no textarea %s", p.URL, id)
	}
	return html.UnescapeString(m[1])
}

// TestDashboardPSBTPayout, on both dialects with litecoind: a payout from
// the merchant's key shows on the payouts page waiting for the signature,
// with its PSBT to download (exactly the bytes GetPSBT gives, as
// payout-ID.psbt, an attachment) and as base64. An unsigned PSBT, a file
// that is no PSBT, text that is not base64 and both a file and text are
// refused with why on the page (400, the form and what was pasted kept),
// and change nothing. The merchant's wallet's signed PSBT, uploaded as a
// binary file, makes the payout done; the page shows its transaction,
// which is the payout's; the upload is audited. A second upload is a 409
// shown on the page. A viewer downloads but sees no form and is refused a
// POST (403); an upload without the CSRF token is 403; another project's
// user gets 404 for both and sees nothing of it.
func TestDashboardPSBTPayout(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		e := newPSBTDash(t, dialect)
		ctx := context.Background()
		db := e.in.Server.DB().Client
		id := e.payout(t, "0.4")
		unsigned := e.unsigned(t, id)
		sid := strconv.FormatInt(id, 10)
		pagePath, downloadPath := "/dashboard/payouts/", "/dashboard/payouts/"+sid+"/psbt"

		owner := e.user(t)
		_, token := owner.signIn(e.emailA, password)
		p := owner.do(http.MethodGet, pagePath, nil)
		p.Want(t, 200, `id="psbt-`+sid+`"`, "waiting for your signature", `href="`+downloadPath+`"`, `id="psbt-form-`+sid+`"`)
		if got := textarea(t, p, "psbt-base64-"+sid); got != base64.StdEncoding.EncodeToString(unsigned) {
			t.Errorf("the page's base64 %q is not the PSBT GetPSBT gives", got)
		}

		dl := owner.do(http.MethodGet, downloadPath, nil)
		if dl.Code != 200 || dl.Body != string(unsigned) {
			t.Fatalf("download: HTTP %d, %d bytes; want the %d bytes GetPSBT gives", dl.Code, len(dl.Body), len(unsigned))
		}
		if ct, cd := dl.Header.Get("Content-Type"), dl.Header.Get("Content-Disposition"); ct != "application/octet-stream" || cd != `attachment; filename=payout-`+sid+`.psbt` {
			t.Errorf("download headers: Content-Type %q, Content-Disposition %q", ct, cd)
		}
		owner.do(http.MethodGet, "/dashboard/payouts/999999/psbt", nil).Want(t, 404)

		// Refusals: 400, the reason on the page, the form and the pasted
		// text kept, nothing changed and nothing audited.
		for _, c := range []struct {
			name   string
			file   []byte
			pasted string
			want   string
		}{
			{"unsigned, as a file", unsigned, "", "signed"},
			{"unsigned, pasted", nil, base64.StdEncoding.EncodeToString(unsigned), "signed"},
			{"a file that is no PSBT", []byte("\x00\x01garbage, not a PSBT\xff"), "", "neither a PSBT"},
			{"base64 of no PSBT", []byte(base64.StdEncoding.EncodeToString([]byte("hello"))), "", "psbt"},
			{"pasted text that is not base64", nil, "not base64!", "not base64"},
			{"a file and text", unsigned, "cHNidP8=", "not both"},
			{"nothing", nil, "", "choose the signed PSBT"},
		} {
			r := owner.uploadPSBT(id, token, c.file, c.pasted)
			r.Want(t, http.StatusBadRequest, `id="psbt-error-`+sid+`"`, c.want, `id="psbt-form-`+sid+`"`)
			if got := textarea(t, r, "psbt-signed-"+sid); got != c.pasted {
				t.Errorf("%s: the form keeps %q, want what was pasted", c.name, got)
			}
		}
		// A body over MaxUploadBytes is a 413, read no further; a URL-encoded
		// one is not an upload (415).
		if r := owner.uploadPSBT(id, token, bytes.Repeat([]byte("x"), dashboard.MaxUploadBytes+1), ""); r.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("an upload over %d bytes: HTTP %d", dashboard.MaxUploadBytes, r.Code)
		}
		owner.do(http.MethodPost, downloadPath, url.Values{"csrf": {token}, "psbt": {"cHNidP8="}}).Want(t, http.StatusUnsupportedMediaType, "multipart/form-data")
		if p, err := db.Payout.Get(ctx, id); err != nil || p.Status != entpayout.StatusProcessing {
			t.Fatalf("after the refusals the payout is %v (%v), want processing", p.Status, err)
		}

		// A viewer: the download, no form, and a POST refused.
		viewer := e.user(t)
		e.addUser(t, "vera@shop.example", dashboard.RoleViewer)
		_, vtoken := viewer.signIn("vera@shop.example", password)
		vp := viewer.do(http.MethodGet, pagePath, nil)
		vp.Want(t, 200, `href="`+downloadPath+`"`, "waiting for your signature")
		vp.WantNot(t, `id="psbt-form-`, `name="psbt_file"`)
		if v := viewer.do(http.MethodGet, downloadPath, nil); v.Code != 200 || v.Body != string(unsigned) {
			t.Errorf("a viewer's download: HTTP %d", v.Code)
		}
		signed, err := base64.StdEncoding.DecodeString(e.sign(t, unsigned))
		if err != nil {
			t.Fatal(err)
		}
		viewer.uploadPSBT(id, vtoken, signed, "").Want(t, http.StatusForbidden)
		if p, _ := db.Payout.Get(ctx, id); p.Status != entpayout.StatusProcessing {
			t.Fatalf("a viewer's upload changed the payout: %s", p.Status)
		}

		// Without the session's CSRF token, or from another project: refused.
		owner.uploadPSBT(id, "not-the-token", signed, "").Want(t, http.StatusForbidden)
		other := e.user(t)
		_, otoken := other.signIn(e.emailB, password)
		other.do(http.MethodGet, downloadPath, nil).Want(t, http.StatusNotFound)
		other.uploadPSBT(id, otoken, signed, "").Want(t, http.StatusNotFound)
		other.do(http.MethodGet, pagePath, nil).WantNot(t, `id="psbt-`+sid+`"`)
		if p, _ := db.Payout.Get(ctx, id); p.Status != entpayout.StatusProcessing {
			t.Fatalf("a refused upload changed the payout: %s", p.Status)
		}

		// The signed one, as a binary file: done, its transaction shown.
		r := owner.uploadPSBT(id, token, signed, "")
		if r.Code != http.StatusSeeOther || r.Header.Get("Location") != pagePath+"?signed="+sid+"#signed" {
			t.Fatalf("the signed PSBT: HTTP %d %v\n%s", r.Code, r.Header, r.Body)
		}
		st := e.in.PostJSON(t, "/payout/status/", fmt.Sprintf(`{"payout_id": %d}`, id), e.in.KeyA)
		info, _ := st.JSON["payout_info"].(map[string]any)
		txid, _ := info["txid"].(string)
		if info["status"] != "done" || len(txid) != 64 {
			t.Fatalf("the payout after its signed PSBT: %s", st.Body)
		}
		done := owner.do(http.MethodGet, pagePath+"?signed="+sid, nil)
		done.Want(t, 200, `id="signed"`, "Payout "+sid+" is signed and done", txid, `id="signed-`+sid+`"`, "No payout waits for your signature")
		var mempool []string
		e.n.Must(&mempool, "getrawmempool")
		if len(mempool) != 1 || mempool[0] != txid {
			t.Errorf("the node's mempool %v, want the payout's %s", mempool, txid)
		}

		// Again: 409, shown on the page.
		again := owner.uploadPSBT(id, token, signed, "")
		again.Want(t, http.StatusConflict, `id="refused"`, "Payout "+sid+": the PSBT is refused", "signed already")

		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(e.in.ProjectA), auditentry.Action("payout.psbt_submit")).All(ctx)
		if err != nil || len(rows) != 1 || rows[0].Target != sid || rows[0].Actor != e.emailA {
			t.Fatalf("audit entries of the upload: %+v %v; want one, by %s, of payout %s", rows, err, e.emailA, sid)
		}
	})
}
