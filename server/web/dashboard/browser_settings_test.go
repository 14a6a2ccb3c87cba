package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	entapikey "github.com/payhook/payhook/ent/db/apikey"
	phkey "github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardSettings signs in to the dashboard in a real browser
// at a phone's width and, on the settings page, sets two payout wallets
// (one split by shares), creates an API key without the payouts and
// management scopes and sees it once, revokes it
// (the API then refuses it), and sends a test webhook, whose acknowledged
// attempt appears on the notification's page and in the latest tests.
func TestBrowserDashboardSettings(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d, rc := newDashReceiving(t)
	settings := d.in.BaseURL + "/dashboard/settings/"
	var saved string
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Navigate(settings),
		chromedp.WaitVisible(chromedp.CSS(`#no-wallets`)),
		chromedp.SetValue(chromedp.CSS(`#wallet-ticker`), "btc"),
		chromedp.SendKeys(chromedp.CSS(`#wallet-addresses`), btcWallet),
		chromedp.Click(chromedp.CSS(`#set-wallet`)),
		chromedp.WaitVisible(chromedp.CSS(`#wallet-btc`)),
		chromedp.SetValue(chromedp.CSS(`#wallet-ticker`), "eth"),
		chromedp.SendKeys(chromedp.CSS(`#wallet-addresses`), ethWallet+"@0.7,"+ethWallet2+"@0.3"),
		chromedp.Click(chromedp.CSS(`#set-wallet`)),
		chromedp.WaitVisible(chromedp.CSS(`#wallet-eth`)),
		webtest.Into(&saved, chromedp.Text(chromedp.CSS(`#wallet-list`))),
	); err != nil {
		t.Fatalf("set wallets: %v", err)
	}
	if !strings.Contains(saved, btcWallet) || !strings.Contains(saved, ethWallet2) || !strings.Contains(saved, "0.3") {
		t.Fatalf("wallets listed: %q", saved)
	}

	var key string
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#key-name`), "shop backend"),
		// Every scope is checked: this key pays nothing out.
		chromedp.Click(chromedp.CSS(`#scope-payouts`)),
		chromedp.Click(chromedp.CSS(`#scope-management`)),
		chromedp.Click(chromedp.CSS(`#create-key`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key`)),
		webtest.Into(&key, chromedp.Text(chromedp.CSS(`#new-key`))),
		webtest.Shot("dashboard-apikey.png"),
	); err != nil {
		t.Fatalf("create a key: %v", err)
	}
	if r := d.in.Get(t, "/notification/list/", nil, key); r.Code != http.StatusOK {
		t.Fatalf("the new key %q on the API: %d", key, r.Code)
	}
	row, err := d.in.Server.DB().Client.APIKey.Query().Where(entapikey.Hash(phkey.Hash(key))).Only(context.Background())
	if err != nil || strings.Join(row.Scopes, ",") != "read,create" {
		t.Fatalf("the new key %+v %v, want scopes read and create", row, err)
	}
	var shownAgain bool
	if err := chromedp.Do(ctx,
		chromedp.Navigate(settings),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#key-%d`, row.ID))),
		webtest.Into(&shownAgain, chromedp.Evaluate[bool](fmt.Sprintf(`document.body.textContent.includes(%q)`, key))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#revoke-%d`, row.ID))),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
		chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(`#revoke-%d`, row.ID))),
	); err != nil {
		t.Fatalf("revoke the key: %v", err)
	}
	if shownAgain {
		t.Fatal("the key is shown again")
	}
	if r := d.in.Get(t, "/notification/list/", nil, key); r.Code != http.StatusUnauthorized {
		t.Fatalf("the revoked key on the API: %d", r.Code)
	}

	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#test-url`), rc.url),
		chromedp.Click(chromedp.CSS(`#send-test`)),
		chromedp.WaitVisible(chromedp.CSS(`#uuid`)),
	); err != nil {
		t.Fatalf("send a test webhook: %v", err)
	}
	d.runDue(t)
	var attempt, tests string
	if err := chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#attempt-1`)),
		// The row's text once the reloaded page has laid it out (read at
		// once, a loaded machine has answered "").
		webtest.Until(`(document.querySelector("#attempt-1")?.innerText ?? "").includes("acknowledged")`, 30*time.Second),
		// Read by script, not by node: a node id fetched before the page
		// settled is gone after it did ("No node with given id found" on a
		// loaded machine).
		webtest.Into(&attempt, chromedp.Evaluate[string](`document.querySelector("#attempt-1").innerText`)),
		chromedp.Navigate(settings),
		webtest.Until(`(document.querySelector("#tests")?.innerText ?? "").includes("acknowledged")`, 30*time.Second),
		webtest.Into(&tests, chromedp.Evaluate[string](`document.querySelector("#tests").innerText`)),
		webtest.Shot("dashboard-settings.png"),
	); err != nil {
		t.Fatalf("the test's outcome: %v", err)
	}
	if !strings.Contains(attempt, "acknowledged") || !strings.Contains(attempt, "200") || !strings.Contains(tests, "acknowledged") {
		t.Fatalf("attempt %q; latest tests %q", attempt, tests)
	}
	if got := rc.requests(); len(got) != 1 || got[0].verifyErr != nil {
		t.Fatalf("the receiver got %d requests: %+v", len(got), got)
	}
}
