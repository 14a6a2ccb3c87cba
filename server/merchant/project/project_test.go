package project

import (
	"errors"
	"strings"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
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
