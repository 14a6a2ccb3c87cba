package dashboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardWatchOnly signs in to the dashboard in a real
// browser at a phone's width, pastes the merchant's descriptor in the
// wallet form with a gap limit, submits, and sees the coin as watch-only
// with the descriptor and its first addresses; once payhook's addresses
// have outrun the gap limit, the page shows the warning.
func TestBrowserDashboardWatchOnly(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t)
	desc := canonicalBTC(t, bip84Zpub)
	var shown, first, facts string
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/settings/"),
		chromedp.WaitVisible(chromedp.CSS(`#no-wallets`)),
		chromedp.SetValue(chromedp.CSS(`#wallet-ticker`), "btc"),
		chromedp.SendKeys(chromedp.CSS(`#wallet-addresses`), desc),
		chromedp.SendKeys(chromedp.CSS(`#wallet-gap`), "5"),
		chromedp.Click(chromedp.CSS(`#set-wallet`)),
		chromedp.WaitVisible(chromedp.CSS(`#watch-btc`)),
		webtest.Into(&shown, chromedp.Evaluate[string](`document.querySelector("#descriptor-btc").innerText`)),
		webtest.Into(&first, chromedp.Evaluate[string](`document.querySelector("#first-btc").innerText`)),
		webtest.Into(&facts, chromedp.Evaluate[string](`document.querySelector("#watch-btc").innerText`)),
	); err != nil {
		t.Fatalf("set the key: %v", err)
	}
	if strings.TrimSpace(shown) != desc {
		t.Fatalf("descriptor shown %q, want %q", shown, desc)
	}
	if !strings.Contains(first, "/0/0 "+btcWallet) || !strings.Contains(first, bip84Second) {
		t.Fatalf("first addresses shown %q, want %s and %s", first, btcWallet, bip84Second)
	}
	if !strings.Contains(facts, "watch-only (your own key)") || !strings.Contains(facts, "Gap limit") || !strings.Contains(facts, "5: your wallet must scan") {
		t.Fatalf("the wallet shown: %q", facts)
	}

	// Eight addresses handed out, none paid: past the gap limit 5.
	bg := context.Background()
	db := d.in.Server.DB().Client
	p, err := project.Get(bg, db, d.in.ProjectA)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.WatchKey.UpdateOneID(p.WatchKeys["btc"]).SetNextIndex(8).Exec(bg); err != nil {
		t.Fatal(err)
	}
	var warning string
	if err := chromedp.Do(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#outrun-btc`)),
		webtest.Into(&warning, chromedp.Evaluate[string](`document.querySelector("#outrun-btc").innerText`)),
		webtest.Shot("dashboard-watch-only.png"),
	); err != nil {
		t.Fatalf("the warning: %v", err)
	}
	if !strings.Contains(warning, "run 8 past the gap limit 5") || !strings.Contains(warning, "raise your wallet's gap limit to 8") {
		t.Fatalf("warning %q", warning)
	}
}
