package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/watchonly"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

// The merchant's keys of the watch-only tests.
const (
	// bip84Zpub is BIP 84's account key m/84'/0'/0' of its test mnemonic;
	// its first receive addresses are btcWallet and bip84Second.
	bip84Zpub   = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	bip84Second = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
	// bip32Xprv is BIP 32's test vector 1 master key: a private key.
	bip32Xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
	// wifKey is the Bitcoin wiki's example private key in wallet import
	// format.
	wifKey = "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ"
)

// canonicalBTC is spec's descriptor as payhook stores it for btc.
func canonicalBTC(t *testing.T, spec string) string {
	t.Helper()
	tk, ok := family.DefaultRegistry().Lookup("btc")
	if !ok {
		t.Fatal("no btc in the default registry")
	}
	k, err := watchonly.Parse(tk, spec)
	if err != nil {
		t.Fatal(err)
	}
	return k.Descriptor()
}

// TestDashboardWatchOnlyWallet, on both dialects: the owner pastes the
// merchant's zpub in the wallet form with a gap limit; it is stored as its
// canonical descriptor with that gap limit, replaces the coin's payout
// wallet, and the wallets section shows the coin as watch-only with the
// descriptor, the first addresses, handed out / last used and the gap
// limit. A private key (alone, or WIF among addresses), a bad checksum, a
// bad gap limit, a key for a coin it is not, and another project's key are
// 400 pages naming the problem, never showing what was typed, and change
// nothing. Once payhook's addresses outrun the gap limit the page warns
// how far; the key set again with a larger gap limit continues at its
// index and the warning goes. A developer sees the key but no form;
// removing it (owner) sets it aside; the audit log has both.
func TestDashboardWatchOnlyWallet(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		desc := canonicalBTC(t, bip84Zpub)
		a := d.user(t)
		_, token := a.signIn(d.emailA, password)
		set := func(u *user, tok string, form url.Values) webtest.Page {
			form.Set("csrf", tok)
			return u.do(http.MethodPost, "/dashboard/settings/wallets", form)
		}

		// A payout wallet first: the key replaces it.
		set(a, token, url.Values{"ticker": {"btc"}, "addresses": {ethWallet}}).Want(t, http.StatusBadRequest)
		set(a, token, url.Values{"ticker": {"btc"}, "addresses": {btcWallet}}).Want(t, http.StatusSeeOther)

		for _, c := range []struct {
			name  string
			form  url.Values
			want  string
			never string
		}{
			{"private key", url.Values{"ticker": {"btc"}, "addresses": {bip32Xprv}}, "this is a private key (xprv): never give payhook a private key", bip32Xprv},
			{"private key in a descriptor", url.Values{"ticker": {"btc"}, "addresses": {"wpkh(" + bip32Xprv + "/0/*)"}}, "private key", bip32Xprv},
			{"WIF among addresses", url.Values{"ticker": {"btc"}, "addresses": {btcWallet + "," + wifKey}}, "this is a private key (WIF)", wifKey},
			{"bad checksum", url.Values{"ticker": {"btc"}, "addresses": {"wpkh(" + bip84Zpub + "/0/*)#aaaaaaaa"}}, "checksum", bip84Zpub},
			{"gap limit", url.Values{"ticker": {"btc"}, "addresses": {bip84Zpub}, "gap_limit": {"0"}}, "the gap limit must be a whole number from 1 to 10000", bip84Zpub},
			{"gap limit with addresses", url.Values{"ticker": {"btc"}, "addresses": {btcWallet}, "gap_limit": {"30"}}, "the gap limit is only for a key", ""},
			{"another coin", url.Values{"ticker": {"trc20/usdt"}, "addresses": {bip84Zpub}}, "watch-only keys are for UTXO coins", bip84Zpub},
			{"no coin", url.Values{"ticker": {""}, "addresses": {bip84Zpub}}, "choose a coin", bip84Zpub},
		} {
			p := set(a, token, c.form)
			p.Want(t, http.StatusBadRequest, `id="wallet-error"`, "The wallet was not saved")
			if !strings.Contains(html.UnescapeString(p.Body), c.want) {
				t.Errorf("%s: the page does not say %q\n%s", c.name, c.want, p.Body)
			}
			if c.never != "" {
				p.WantNot(t, c.never)
				p.Want(t, http.StatusBadRequest, `id="wallet-cleared"`)
			}
			if tk := c.form.Get("ticker"); tk != "" && !strings.Contains(p.Body, `<option value="`+tk+`" selected>`) {
				t.Errorf("%s: the coin chosen is not kept", c.name)
			}
		}
		if p, _ := project.Get(ctx, db, d.in.ProjectA); len(p.WatchKeys) != 0 || len(p.Wallets["btc"]) != 1 {
			t.Fatalf("a refused form changed the wallets: keys %v, wallets %v", p.WatchKeys, p.Wallets)
		}

		// Saved: canonical descriptor, gap limit, the payout wallet gone.
		p := set(a, token, url.Values{"ticker": {"btc"}, "addresses": {"  " + bip84Zpub + " "}, "gap_limit": {"25"}})
		if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=watch-saved#watch-btc" {
			t.Fatalf("set the key: %d %v\n%s", p.Code, p.Header, p.Body)
		}
		pa, _ := project.Get(ctx, db, d.in.ProjectA)
		if pa.WatchKeys["btc"] == 0 || len(pa.Wallets["btc"]) != 0 {
			t.Fatalf("stored: keys %v, wallets %v", pa.WatchKeys, pa.Wallets)
		}
		wk, err := db.WatchKey.Get(ctx, pa.WatchKeys["btc"])
		if err != nil || wk.Descriptor != desc || wk.GapLimit != 25 || wk.NextIndex != 0 || wk.ProjectID != d.in.ProjectA {
			t.Fatalf("stored key %+v %v, want %s with gap limit 25", wk, err, desc)
		}
		page := a.do(http.MethodGet, "/dashboard/settings/?done=watch-saved", nil)
		page.Want(t, 200, "The watch-only wallet is saved", `id="watch-btc"`, "watch-only (your own key)",
			`id="descriptor-btc">`+html.EscapeString(desc)+`</code>`, `id="first-btc"`, "/0/0</span> <code>"+btcWallet+"</code>",
			"/0/1</span> <code>"+bip84Second+"</code>", "0 addresses; last used: none yet", "25: your wallet must scan at least 0",
			`id="remove-watch-btc"`, `id="wallet-form"`)
		page.WantNot(t, `id="outrun-btc"`, `id="wallet-btc"`, `id="no-wallets"`)

		// Project B: sees none of it, cannot take the key (in any spelling)
		// nor remove it.
		b := d.user(t)
		_, tokenB := b.signIn(d.emailB, password)
		b.do(http.MethodGet, "/dashboard/settings/", nil).WantNot(t, html.EscapeString(desc), btcWallet, `id="watch-btc"`)
		for _, spec := range []string{bip84Zpub, desc} {
			q := set(b, tokenB, url.Values{"ticker": {"btc"}, "addresses": {spec}})
			q.Want(t, http.StatusBadRequest, "this key is another project&#39;s wallet")
			q.WantNot(t, bip84Zpub)
		}
		b.do(http.MethodPost, "/dashboard/settings/wallets/remove", url.Values{"csrf": {tokenB}, "ticker": {"btc"}}).Want(t, http.StatusBadRequest, "no payout wallet or watch-only wallet")
		if pb, _ := project.Get(ctx, db, d.in.ProjectB); len(pb.WatchKeys) != 0 {
			t.Fatalf("project B got keys %v", pb.WatchKeys)
		}

		// 30 addresses handed out, none paid: beyond the gap limit 25.
		if err := db.WatchKey.UpdateOneID(wk.ID).SetNextIndex(30).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		page = a.do(http.MethodGet, "/dashboard/settings/", nil)
		page.Want(t, 200, `id="outrun-btc"`, "run 30 past the gap limit 25", "raise your wallet's gap limit to 30", "30 addresses; last used: none yet")

		// The same key (its descriptor spelling) with gap limit 40: the
		// same row, its index kept, no warning.
		set(a, token, url.Values{"ticker": {"btc"}, "addresses": {desc}, "gap_limit": {"40"}}).Want(t, http.StatusSeeOther)
		if wk2, err := db.WatchKey.Get(ctx, wk.ID); err != nil || wk2.GapLimit != 40 || wk2.NextIndex != 30 || wk2.Descriptor != desc {
			t.Fatalf("set again: %+v %v", wk2, err)
		}
		if n, _ := db.WatchKey.Query().Count(ctx); n != 1 {
			t.Fatalf("%d watch keys, want 1", n)
		}
		a.do(http.MethodGet, "/dashboard/settings/", nil).WantNot(t, `id="outrun-btc"`)

		// A developer sees the key but not the wallet forms.
		d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		dev := d.user(t)
		_, devToken := dev.signIn("dev@shop.example", password)
		dp := dev.do(http.MethodGet, "/dashboard/settings/", nil)
		dp.Want(t, 200, `id="watch-btc"`, html.EscapeString(desc))
		dp.WantNot(t, `id="wallet-form"`, `id="remove-watch-btc"`)
		set(dev, devToken, url.Values{"ticker": {"btc"}, "addresses": {btcWallet}}).Want(t, http.StatusForbidden)

		// Removed: the key set aside, kept for a later return.
		p = a.do(http.MethodPost, "/dashboard/settings/wallets/remove", url.Values{"csrf": {token}, "ticker": {"btc"}})
		if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=watch-removed#wallets" {
			t.Fatalf("remove: %d %v\n%s", p.Code, p.Header, p.Body)
		}
		page = a.do(http.MethodGet, "/dashboard/settings/?done=watch-removed", nil)
		page.Want(t, 200, "The watch-only wallet is removed", `id="no-wallets"`)
		page.WantNot(t, `id="watch-btc"`)
		if pa, _ := project.Get(ctx, db, d.in.ProjectA); len(pa.WatchKeys) != 0 || len(pa.Wallets) != 0 {
			t.Fatalf("after the removal: keys %v, wallets %v", pa.WatchKeys, pa.Wallets)
		}
		if _, err := db.WatchKey.Get(ctx, wk.ID); err != nil {
			t.Fatalf("the removed key's row: %v", err)
		}
		a.do(http.MethodPost, "/dashboard/settings/wallets/remove", url.Values{"csrf": {token}, "ticker": {"btc"}}).Want(t, http.StatusBadRequest, "no payout wallet")

		// Audited as wallet changes on the ticker, naming no key.
		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA), auditentry.ActionHasPrefix("settings.wallet_")).Order(auditentry.ByID()).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range rows {
			actions = append(actions, e.Action+" "+e.Target)
			if strings.Contains(e.Target, "pub") {
				t.Fatalf("the audit entry names the key: %+v", e)
			}
		}
		if got := strings.Join(actions, ", "); got != "settings.wallet_set btc, settings.wallet_set btc, settings.wallet_set btc, settings.wallet_remove btc" {
			t.Fatalf("audit entries: %s", got)
		}
	})
}
