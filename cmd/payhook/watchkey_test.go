package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/merchant/project"
)

// bip84Zpub is BIP 84's account key m/84'/0'/0' of its test mnemonic; its
// first receive address is bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu.
const bip84Zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"

// TestProjectWatchKeyCommands: project wallet set takes the merchant's key
// as its one argument, stores it in canonical form with its gap limit,
// replaces the ticker's payout wallets, and prints the descriptor and the
// first addresses to compare with the merchant's wallet; show prints the
// same; a private key, a bad checksum, another project's key and --gap
// with addresses are refused, naming what is wrong.
func TestProjectWatchKeyCommands(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "watch.db")
	var out, errOut bytes.Buffer
	create := func(name string) string {
		out.Reset()
		if err := run(ctx, []string{"project", "create", "--db", dsn, "--name", name, "--wallet", "btc=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "--json"}, &out, &errOut); err != nil {
			t.Fatal(err, errOut.String())
		}
		i := strings.Index(out.String(), `"project_id":`)
		rest := strings.TrimLeft(out.String()[i+len(`"project_id":`):], ` "`)
		n := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		return rest[:n]
	}
	id, other := create("shop"), create("other")

	out.Reset()
	if err := run(ctx, []string{"project", "wallet", "set", "--db", dsn, "--project", id, "--gap", "50", "btc=" + bip84Zpub}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	for _, want := range []string{"btc: watch-only, key wpkh(xpub", "/0/*)#", "/0/0 bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "/0/1 bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g", "gap limit 50"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("wallet set printed %q, want %q in it", out.String(), want)
		}
	}
	db, err := admin.Open(ctx, dsn, store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pid, _ := strconv.ParseInt(id, 10, 64)
	p, err := project.Get(ctx, db.Client, pid)
	if err != nil || p.WatchKeys["btc"] == 0 || len(p.Wallets["btc"]) != 0 {
		t.Fatalf("stored project: watch keys %v, wallets %v, %v", p.WatchKeys, p.Wallets, err)
	}
	wk, err := db.Client.WatchKey.Get(ctx, p.WatchKeys["btc"])
	if err != nil || wk.GapLimit != 50 || wk.NextIndex != 0 || !strings.HasPrefix(wk.Descriptor, "wpkh(xpub") {
		t.Fatalf("stored key %+v, %v", wk, err)
	}

	out.Reset()
	if err := run(ctx, []string{"project", "wallet", "show", "--db", dsn, "--project", id}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu") || !strings.Contains(out.String(), "handed out 0") {
		t.Fatalf("show printed %q", out.String())
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--project", id, "btc=xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"}, "private"},
		{[]string{"--project", id, "btc=wpkh(" + bip84Zpub + "/0/*)#aaaaaaaa"}, "checksum"},
		{[]string{"--project", other, "btc=" + bip84Zpub}, "another project"},
		{[]string{"--project", id, "--gap", "5", "btc=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}, "--gap"},
		{[]string{"--project", id, "--gap", "100000", "btc=" + bip84Zpub}, "gap"},
		{[]string{"--project", id, "trx=" + bip84Zpub}, "trx"},
	} {
		err := run(ctx, append([]string{"project", "wallet", "set", "--db", dsn}, c.args...), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("wallet set %v: %v, want an error naming %q", c.args, err, c.want)
		}
		if strings.Contains(err.Error(), "xprv9s21") {
			t.Fatalf("the error repeats the private key: %v", err)
		}
	}
	if p, _ = project.Get(ctx, db.Client, pid); p.WatchKeys["btc"] != wk.ID {
		t.Fatalf("a refused set changed the wallet: %v", p.WatchKeys)
	}

	// Addresses again: the key is set aside, the seed serves.
	if err := run(ctx, []string{"project", "wallet", "set", "--db", dsn, "--project", id, "btc=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if p, _ = project.Get(ctx, db.Client, pid); len(p.WatchKeys) != 0 || len(p.Wallets["btc"]) != 1 {
		t.Fatalf("after setting addresses: watch keys %v, wallets %v", p.WatchKeys, p.Wallets)
	}
}

// TestProjectFeesAndSettle: the fees a project's payments to its own key
// owe are listed per coin, accrued in a period and outstanding; settle
// records part of them as paid under a reference, once; more than is owed,
// a reference used twice and bad amounts are refused, naming the flag.
func TestProjectFeesAndSettle(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "fees.db")
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"project", "create", "--db", dsn, "--name", "shop"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	db, err := admin.Open(ctx, dsn, store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ps, err := project.List(ctx, db.Client)
	if err != nil || len(ps) == 0 {
		t.Fatal(ps, err)
	}
	pid := ps[len(ps)-1].ID
	id := strconv.FormatInt(pid, 10)
	tk, _ := family.DefaultRegistry().Lookup("ltc")
	// Two payments to the merchant's key, 10 and 2 LTC, a day apart.
	day := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for i, v := range []string{"10", "2"} {
		value := decimal.RequireFromString(v)
		err := store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
			r := ledger.Ref{ProjectID: pid, PaymentID: int64(100 + i)}
			return ledger.Write(ctx, tx, db.Dialect, day.AddDate(0, 0, i), ledger.Credit(tk, r, value), ledger.Direct(tk, r, value, distribute.Fee(tk, value)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fee10, fee2 := distribute.Fee(tk, decimal.NewFromInt(10)), distribute.Fee(tk, decimal.NewFromInt(2))
	if !fee10.IsPositive() {
		t.Fatalf("ltc has no service fee to owe (%s)", tk.FeeRate)
	}
	fees := func(args ...string) string {
		t.Helper()
		out.Reset()
		if err := run(ctx, append([]string{"project", "fees", "--db", dsn, "--project", id}, args...), &out, &errOut); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(out.String()), " ")
	}
	if got, want := fees(), fmt.Sprintf("COIN ACCRUED SETTLED OUTSTANDING ltc %s 0 %s", fee10.Add(fee2), fee10.Add(fee2)); got != want {
		t.Fatalf("fees printed %q, want %q", got, want)
	}
	if got, want := fees("--since", "2026-11-21"), fmt.Sprintf("ltc %s 0 %s", fee2, fee10.Add(fee2)); !strings.HasSuffix(got, want) {
		t.Fatalf("fees since the 21st printed %q, want it to end %q", got, want)
	}
	settle := func(amount, ref string) error {
		return run(ctx, []string{"project", "settle", "--db", dsn, "--project", id, "--ticker", "ltc", "--amount", amount, "--reference", ref}, &out, &errOut)
	}
	if err := settle(fee10.String(), "INV-1"); err != nil {
		t.Fatal(err)
	}
	if got, want := fees(), fmt.Sprintf("ltc %s %s %s", fee10.Add(fee2), fee10, fee2); !strings.HasSuffix(got, want) {
		t.Fatalf("fees after settling printed %q, want it to end %q", got, want)
	}
	for _, c := range []struct{ amount, ref, want string }{
		{fee2.String(), "INV-1", "--reference"},
		{fee2.Add(fee10).String(), "INV-2", "--amount"},
		{"-1", "INV-3", "--amount"},
		{"0.000000001", "INV-4", "--amount"},
		{fee2.String(), "", "--reference"},
	} {
		if err := settle(c.amount, c.ref); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("settle %s %q: %v, want an error naming %s", c.amount, c.ref, err, c.want)
		}
	}
	if got := fees(); !strings.HasSuffix(got, fee2.String()) {
		t.Fatalf("refused settlements changed the outstanding fees: %q", got)
	}
}
