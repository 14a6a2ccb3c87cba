package egress_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/payhook/payhook/notifier/egress"
)

// TestCheckHost: hosts that can never be public addresses are refused by
// name or as the IP address a resolver would read, with the reason
// Classify gives; names and public addresses pass.
func TestCheckHost(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name, host, wantErr string // wantErr: substring; empty means accepted
	}{
		{"public name", "shop.example", ""},
		{"public name with trailing dot", "shop.example.", ""},
		{"name with digits", "1.2.3.4.nip.io", ""},
		{"public IPv4", "8.8.8.8", ""},
		{"public IPv6", "2606:4700:4700::1111", ""},

		{"localhost", "localhost", `host "localhost" is a loopback name`},
		{"localhost upper case", "LocalHost", "loopback name"},
		{"localhost dot", "localhost.", "loopback name"},
		{"sub.localhost", "api.localhost", "loopback name"},
		{"sub.localhost dot", "a.b.localhost.", "loopback name"},

		{"dotted loopback", "127.0.0.1", "host 127.0.0.1 is a loopback address (RFC 1122)"},
		{"decimal", "2130706433", `host "2130706433" is the IPv4 address 127.0.0.1, a loopback address`},
		{"hex", "0x7f000001", "127.0.0.1, a loopback address"},
		{"hex upper case", "0X7F000001", "127.0.0.1, a loopback address"},
		{"octal", "0177.0.0.1", "127.0.0.1, a loopback address"},
		{"short a.b", "127.1", "127.0.0.1, a loopback address"},
		{"short a.b.c", "127.0.1", "127.0.0.1, a loopback address"},
		{"mixed parts", "0x7f.0.0.01", "127.0.0.1, a loopback address"},
		{"trailing dot", "127.0.0.1.", "127.0.0.1, a loopback address"},
		{"empty hex is zero", "0x", "0.0.0.0, the unspecified address"},
		{"private decimal", "167772161", "10.0.0.1, a private address"},
		{"metadata service", "169.254.169.254", "a link-local address"},
		{"metadata octal", "0251.0376.0251.0376", "169.254.169.254, a link-local address"},
		{"broadcast", "4294967295", "255.255.255.255, the limited broadcast address"},

		{"public in decimal", "134744072", `is the IPv4 address 8.8.8.8 written in a non-standard form; write it as 8.8.8.8`},
		{"public with leading zero", "8.8.8.010", "8.8.8.8 written in a non-standard form"},
		{"public with trailing dot", "8.8.8.8.", "write it as 8.8.8.8"},

		{"too large", "4294967296", "ends in a number but is not an IPv4 address"},
		{"part too large", "256.0.0.1", "is not an IPv4 address"},
		{"short part too large", "1.16777216", "is not an IPv4 address"},
		{"five parts", "1.2.3.4.5", "is not an IPv4 address"},
		{"bad octal", "08.0.0.1", "is not an IPv4 address"},
		{"name then number", "shop.123", "is not an IPv4 address"},
		{"empty part", "1..1", "is not an IPv4 address"},

		{"IPv6 loopback", "::1", "host [::1] is the loopback address (RFC 4291)"},
		{"IPv6 unspecified", "::", "the unspecified address"},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", "IPv4-mapped address (RFC 4291) of 127.0.0.1"},
		{"IPv6 link-local with zone", "fe80::1%eth0", "a link-local address"},
		{"IPv6 unique local", "fd00::1", "a unique local address"},
		{"NAT64", "64:ff9b::a00:1", "NAT64"},
		{"not an IPv6 address", "::g", "is not a valid IPv6 address"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			err := egress.CheckHost(r.host)
			if r.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckHost(%q) = %v; want nil", r.host, err)
				}
				return
			}
			var ue *egress.URLError
			if !errors.As(err, &ue) || !errors.Is(err, egress.ErrInvalidURL) || !strings.Contains(err.Error(), r.wantErr) {
				t.Fatalf("CheckHost(%q) = %v; want a *URLError containing %q", r.host, err, r.wantErr)
			}
		})
	}
}

// TestRulesCheck: the host rule applies to every URL except an operator's
// exact exception for the request's owner, which is how a development
// receiver on loopback is accepted; anything else on the same host is not,
// and neither is the same endpoint for another owner.
func TestRulesCheck(t *testing.T) {
	t.Parallel()
	const owner, other = 2, 3
	rules, err := egress.NewRules([]string{"http://127.0.0.1:3000/hook", "2=http://localhost:4000/", "3=http://127.0.0.1:5000/three"}, owner)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name    string
		owner   int64
		url     string
		wantErr string
	}{
		{"public", owner, "https://shop.example/hook?x=1", ""},
		{"public, any owner", 99, "https://shop.example/hook?x=1", ""},
		{"exception", owner, "http://127.0.0.1:3000/hook", ""},
		{"exception with a query", owner, "http://127.0.0.1:3000/hook?order=1", ""},
		{"exception by name", owner, "http://localhost:4000", ""},
		{"another owner's exception", other, "http://127.0.0.1:3000/hook", "127.0.0.1 is a loopback address"},
		{"another owner's exception by name", other, "http://localhost:4000/", "loopback name"},
		{"own exception of the other owner", other, "http://127.0.0.1:5000/three", ""},
		{"the other owner's exception", owner, "http://127.0.0.1:5000/three", "loopback address"},
		{"owner 0 has none", 0, "http://127.0.0.1:3000/hook", "loopback address"},
		{"other path", owner, "http://127.0.0.1:3000/other", "loopback address"},
		{"other port", owner, "http://127.0.0.1:3001/hook", "loopback address"},
		{"same address in another form", owner, "http://2130706433:3000/hook", "127.0.0.1, a loopback address"},
		{"localhost on another port", owner, "http://localhost:4001/", "loopback name"},
		{"URL rules first", owner, "http://127.0.0.1:3000/hook#x", "fragment"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			_, err := rules.Check(r.owner, r.url)
			if r.wantErr == "" {
				if err != nil {
					t.Fatalf("Check(%d, %q) = %v; want nil", r.owner, r.url, err)
				}
				return
			}
			if err == nil || !errors.Is(err, egress.ErrInvalidURL) || !strings.Contains(err.Error(), r.wantErr) {
				t.Fatalf("Check(%d, %q) = %v; want ErrInvalidURL containing %q", r.owner, r.url, err, r.wantErr)
			}
			// The refusal of another owner's endpoint is the refusal of
			// any private URL: it says nothing of the exception.
			if strings.Contains(err.Error(), "operator") || strings.Contains(err.Error(), "exception") {
				t.Errorf("Check(%d, %q) = %v; tells of an exception", r.owner, r.url, err)
			}
		})
	}
	var none *egress.Rules
	if _, err := none.Check(owner, "http://127.0.0.1:3000/hook"); err == nil {
		t.Fatal("nil rules accepted a loopback URL")
	}
	if _, err := egress.NewRules([]string{"ftp://x/"}, owner); !errors.Is(err, egress.ErrInvalidConfig) {
		t.Fatalf("NewRules with a bad endpoint: %v", err)
	}
	got := rules.Allowances()
	if len(got) != 3 || got[0].String() != "2=http://127.0.0.1:3000/hook" || got[1].String() != "2=http://localhost:4000/" || got[2].String() != "3=http://127.0.0.1:5000/three" {
		t.Errorf("Allowances = %v", got)
	}
}

// TestParseAllowance: OWNER=URL binds an endpoint to one owner, URL alone
// to the default owner; the owner is a positive number, and a "=" in an
// endpoint's query is never read as an owner.
func TestParseAllowance(t *testing.T) {
	t.Parallel()
	rows := []struct {
		raw     string
		want    string // Allowance.String
		wantErr string
	}{
		{"http://127.0.0.1:3000/hook", "9=http://127.0.0.1:3000/hook", ""},
		{"4=http://127.0.0.1:3000/hook", "4=http://127.0.0.1:3000/hook", ""},
		{" 4 = http://127.0.0.1/hook", "4=http://127.0.0.1:80/hook", ""},
		{"12=https://[::1]/", "12=https://[::1]:443/", ""},
		{"0=http://127.0.0.1/", "", `"0" before "=" is not an owner id`},
		{"-1=http://127.0.0.1/", "", "not an owner id"},
		{"shop=http://127.0.0.1/", "", `"shop" before "=" is not an owner id`},
		{"=http://127.0.0.1/", "", "not an owner id"},
		{"http://127.0.0.1/hook?x=1", "", "query"},
		{"4=http://127.0.0.1/hook?x=1", "", "query"},
		{"4=127.0.0.1:3000", "", "invalid private endpoint"},
		{"4=", "", "invalid private endpoint"},
	}
	for _, r := range rows {
		a, err := egress.ParseAllowance(r.raw, 9)
		if r.wantErr != "" {
			if err == nil || !errors.Is(err, egress.ErrInvalidEndpoint) || !strings.Contains(err.Error(), r.wantErr) {
				t.Errorf("ParseAllowance(%q) = %v, %v; want ErrInvalidEndpoint containing %q", r.raw, a, err, r.wantErr)
			}
			continue
		}
		if err != nil || a.String() != r.want {
			t.Errorf("ParseAllowance(%q) = %v, %v; want %s", r.raw, a, err, r.want)
		}
	}
}

func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{
		"shop.example", "localhost", "localhost.", "a.localhost", "2130706433", "0x7f000001", "0177.0.0.1", "127.1",
		"8.8.8.8", "134744072", "0x", "1..1", "::1", "fe80::1%eth0", "::ffff:10.0.0.1", "4294967296", "08.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		err := egress.CheckHost(host)
		if err != nil {
			var ue *egress.URLError
			if !errors.As(err, &ue) {
				t.Fatalf("CheckHost(%q) = %v (%T), want a *URLError", host, err, err)
			}
			return
		}
		if ip, perr := netip.ParseAddr(host); perr == nil {
			if blocked, reason := egress.Classify(ip); blocked {
				t.Fatalf("CheckHost accepted %q, which is %s", host, reason)
			}
		}
		name := strings.TrimSuffix(strings.ToLower(host), ".")
		if name == "localhost" || strings.HasSuffix(name, ".localhost") {
			t.Fatalf("CheckHost accepted the loopback name %q", host)
		}
	})
}
