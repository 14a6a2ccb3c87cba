package server_test

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha512"
	"net/url"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/watchonly"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/merchant/project"
)

// TestAnvilWatchOnly: a project whose eth wallet is the merchant's account
// xpub (m/44'/60'/0' of anvil's mnemonic: their accounts are anvil's dev
// accounts) hands out the key's /0/i, which are anvil's accounts in order;
// a payment to one is credited and completed with nothing sent: the
// merchant's account keeps exactly what it received.
func TestAnvilWatchOnly(t *testing.T) {
	t.Parallel()
	e := newAnvilEnv(t, store.SQLite, "eth")
	ctx := context.Background()
	seed, err := pbkdf2.Key(sha512.New, "test test test test test test test test test test test junk", []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []uint32{44, 60, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + s); err != nil {
			t.Fatal(err)
		}
	}
	pub, _ := k.Neuter()
	key, err := watchonly.Parse(e.tk, pub.String())
	if err != nil {
		t.Fatal(err)
	}
	db := e.in.Server.DB().Client
	if _, err := project.SetWatchKey(ctx, db, e.in.ProjectA, project.WatchKeyParams{Ticker: e.tk, Key: key}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i, cb := range []string{"https://shop.example/a", "https://shop.example/b"} {
		r := e.in.Get(t, "/eth/create/", url.Values{"callback": {cb}, "confirmations": {"3"}}, e.in.KeyA)
		wantStatus(t, r, 200)
		addrs = append(addrs, r.JSON["address_in"].(string))
		if i == 0 && !sameAddress(addrs[0], nodetest.AnvilDev0) {
			t.Fatalf("the key's /0/0 is %s, want anvil's first account %s", addrs[0], nodetest.AnvilDev0)
		}
	}
	before := e.onChain(t, addrs[1])
	v := decimal.RequireFromString("1.5")
	e.pay(t, addrs[1], v)
	for range 6 {
		e.step(t, 1)
	}
	p, err := db.Payment.Query().Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != entpayment.StatusCompleted || !p.ValueCoin.Equal(v) || !p.ValueForwardedCoin.Equal(v) {
		t.Fatalf("payment %s, value %s, forwarded %v; want completed 1.5, 1.5", p.Status, p.ValueCoin, p.ValueForwardedCoin)
	}
	if n, _ := db.Outbound.Query().Count(ctx); n > 0 {
		t.Fatalf("%d outgoing transactions: nothing may be sent from the merchant's account", n)
	}
	if after := e.onChain(t, addrs[1]); !after.Sub(before).Equal(v) {
		t.Fatalf("the merchant's account went from %s to %s: want exactly %s more", before, after, v)
	}
}
