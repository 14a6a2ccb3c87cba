package project

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
)

func TestParseWallet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, ticker, want, err string
	}{
		{in: "btc=bc1qa", ticker: "btc", want: "bc1qa@1"},
		{in: "BTC = bc1qa , bc1qb", ticker: "btc", want: "bc1qa@0.5 bc1qb@0.5"},
		{in: "eth=0xa,0xb@0.2", ticker: "eth", want: "0xa@0.8 0xb@0.2"},
		{in: "eth=0xa@0.25,0xb@0.75", ticker: "eth", want: "0xa@0.25 0xb@0.75"},
		{in: "btc=a,b,c", ticker: "btc", want: "a@0.33333334 b@0.33333333 c@0.33333333"},
		{in: "btc=a@0.1,b,c,d,e,f,g", ticker: "btc", want: "a@0.1 b@0.15 c@0.15 d@0.15 e@0.15 f@0.15 g@0.15"},
		{in: "btc=a@0.123456789", err: "at most 8 decimals"},
		{in: "eth=0xa@0.5", err: "add up"},
		{in: "eth=0xa@0.6,0xb@0.6", err: "add up"},
		{in: "eth=0xa@1,0xb", err: "no share left"},
		{in: "eth=0xa@-1", err: "above 0"},
		{in: "eth=0xa@x", err: "above 0"},
		{in: "eth=", err: "want TICKER"},
		{in: "0xa", err: "want TICKER"},
		{in: "eth=0xa,,0xb", err: "empty address"},
	} {
		ticker, ds, err := ParseWallet(c.in)
		if c.err != "" {
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error containing %q", c.in, err, c.err)
			}
			continue
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Address+"@"+d.Share.String())
		}
		if err != nil || ticker != c.ticker || strings.Join(got, " ") != c.want {
			t.Errorf("%q: %s %v %v, want %s %s", c.in, ticker, got, err, c.ticker, c.want)
		}
	}
}

func TestSecretsDuringAndAfterTheGrace(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	p := &entdb.Project{IpnSecret: "whsec_new", PreviousIpnSecret: "whsec_old", PreviousSecretUntil: &until}
	if s := Secrets(p, until.Add(-time.Second)); len(s) != 2 || s[0] != "whsec_new" || s[1] != "whsec_old" {
		t.Errorf("during the grace: %v", s)
	}
	if s := Secrets(p, until); len(s) != 1 || s[0] != "whsec_new" {
		t.Errorf("at its end: %v", s)
	}
	if id, err := ParseKeyRef(KeyRef(42)); err != nil || id != 42 {
		t.Errorf("key ref round trip: %d %v", id, err)
	}
	for _, bad := range []string{"", "project:", "project:0", "project:x", "rsa:1"} {
		if _, err := ParseKeyRef(bad); err == nil {
			t.Errorf("key ref %q accepted", bad)
		}
	}
	s, err := NewSecret()
	if err != nil || !strings.HasPrefix(s, SecretPrefix) || len(s) != len(SecretPrefix)+44 {
		t.Errorf("new secret %d chars, %v", len(s), err)
	}
}

// TestRingKeepsSecretsForItsTTL: a Ring made by NewRing reads a project's
// secrets once per TTL: within it a rotation is not seen yet (the previous
// secret, still valid for the grace, keeps signing), after it the new
// secret signs. A zero Ring reads them at every call.
func TestRingKeepsSecretsForItsTTL(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
		p, err := Create(ctx, db.Client, Params{Name: "ring"}, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		ring := NewRing(db.Client, time.Second, clk.Now)
		key := KeyRef(p.ID)
		first, err := ring.Secrets(ctx, key, clk.Now())
		if err != nil || len(first) != 1 {
			t.Fatalf("secrets %v, %v", first, err)
		}
		rotated, err := RotateSecret(ctx, db.Client, p.ID, time.Hour, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := ring.Secrets(ctx, key, clk.Now()); len(got) != 1 || got[0] != first[0] {
			t.Fatalf("within the TTL: %v, want the secrets read before the rotation", got)
		}
		if got, _ := (Ring{DB: db.Client}).Secrets(ctx, key, clk.Now()); len(got) != 2 || got[0] != rotated || got[1] != first[0] {
			t.Fatalf("a Ring without a cache: %v, want the new secret then the previous", got)
		}
		clk.Advance(time.Second)
		if got, _ := ring.Secrets(ctx, key, clk.Now()); len(got) != 2 || got[0] != rotated || got[1] != first[0] {
			t.Fatalf("after the TTL: %v, want the new secret then the previous", got)
		}
	})
}
