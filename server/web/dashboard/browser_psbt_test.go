package dashboard_test

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardPSBT: a payout from the merchant's key (litecoind)
// waits for the signature; the owner opens the payouts page in a real
// browser at a phone's width (the page fits it), finds the download link (payout-ID.psbt) and the PSBT's base64,
// has their wallet sign it, pastes the signed base64 into the form,
// submits, and sees the payout done with its transaction's id, which is
// the payout's.
func TestBrowserDashboardPSBT(t *testing.T) {
	t.Parallel()
	ctx := webtest.PhoneBrowser(t)
	e := newPSBTDash(t, store.SQLite)
	id := e.payout(t, "0.25")
	sid := strconv.FormatInt(id, 10)
	var href, name, shown, status string
	if err := chromedp.Do(ctx,
		signIn(e.in.BaseURL, e.emailA),
		chromedp.Navigate(e.in.BaseURL+"/dashboard/payouts/"),
		chromedp.WaitVisible(chromedp.CSS(`#psbt-`+sid)),
		webtest.Into(&href, chromedp.Evaluate[string](`document.querySelector("#download-`+sid+`").getAttribute("href")`)),
		webtest.Into(&name, chromedp.Evaluate[string](`document.querySelector("#download-`+sid+`").getAttribute("download")`)),
		webtest.Into(&shown, chromedp.Evaluate[string](`document.querySelector("#psbt-base64-`+sid+`").value`)),
		webtest.Into(&status, chromedp.Evaluate[string](`document.querySelector("#psbt-status-`+sid+`").innerText`)),
		webtest.Shot("dashboard-psbt.png"),
	); err != nil {
		t.Fatalf("the payouts page: %v", err)
	}
	webtest.FitsWidth(t, ctx, e.in.BaseURL+"/dashboard/payouts/", "#psbt-"+sid)
	unsigned := e.unsigned(t, id)
	if href != "/dashboard/payouts/"+sid+"/psbt" || name != "payout-"+sid+".psbt" {
		t.Fatalf("download link %q (%q)", href, name)
	}
	if shown != base64.StdEncoding.EncodeToString(unsigned) || status != "waiting for your signature" {
		t.Fatalf("the page shows %q, %q; want the PSBT GetPSBT gives, waiting for your signature", shown, status)
	}

	signed := e.sign(t, unsigned)
	var said, txid string
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#psbt-signed-`+sid), signed),
		chromedp.Click(chromedp.CSS(`#submit-psbt-`+sid)),
		chromedp.WaitVisible(chromedp.CSS(`#signed`)),
		webtest.Until(`(document.querySelector("#signed")?.innerText ?? "").includes("done")`, 30*time.Second),
		webtest.Into(&said, chromedp.Text(chromedp.CSS(`#signed`))),
		webtest.Into(&txid, chromedp.Text(chromedp.CSS(`#signed-txid`))),
		chromedp.WaitVisible(chromedp.CSS(`#no-signature`)),
		webtest.Shot("dashboard-psbt-done.png"),
	); err != nil {
		t.Fatalf("submit the signed PSBT: %v", err)
	}
	st := e.in.PostJSON(t, "/payout/status/", `{"payout_id": `+sid+`}`, e.in.KeyA)
	info, _ := st.JSON["payout_info"].(map[string]any)
	if info["status"] != "done" || info["txid"] != strings.TrimSpace(txid) || !strings.Contains(said, "Payout "+sid+" is signed and done") {
		t.Fatalf("the page says %q (txid %q); the API: %s", said, txid, st.Body)
	}
	webtest.FitsWidth(t, ctx, e.in.BaseURL+"/dashboard/payouts/?signed="+sid, "#signed-"+sid)
}
