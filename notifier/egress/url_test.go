package egress_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/payhook/payhook/notifier/egress"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		wantErr string // substring; empty means accepted
	}{
		{"https", "https://merchant.example/ipn", ""},
		{"http with port and query", "http://merchant.example:8080/cb?order=1&secret=x", ""},
		{"IPv4 literal", "http://203.0.113.7/cb", ""}, // refused at dial time, not here
		{"IPv6 literal", "https://[2606:4700:4700::1111]:8443/cb", ""},
		{"no path", "https://merchant.example", ""},
		{"encoded query", "https://merchant.example/cb?next=https%3A%2F%2Fa%2Fb%3Fc%3Dd", ""},
		{"query bytes are the merchant's", "https://shop.example/cb?x=a%zz", ""},
		{"upper-case scheme", "HTTPS://merchant.example/", "scheme must be written in lower case"},
		{"empty", "", "is required"},
		{"blank", "   ", "is required"},
		{"relative", "/callback", "must be an absolute http or https URL"},
		{"scheme-relative", "//merchant.example/cb", "must be an absolute http or https URL"},
		{"ftp", "ftp://merchant.example/cb", "must be an absolute http or https URL"},
		{"javascript", "javascript:alert(1)", "must be an absolute http or https URL"},
		{"file", "file:///etc/passwd", "must be an absolute http or https URL"},
		{"opaque http", "http:merchant.example/cb", "must be an absolute http or https URL"},
		{"no host", "http:///cb", "must have a host"},
		{"empty host with port", "http://:8080/cb", "must have a host"},
		{"userinfo", "https://user:s3cret@merchant.example/cb", "credentials"},
		{"user only", "https://user@merchant.example/cb", "credentials"},
		{"empty userinfo", "https://@merchant.example/cb", "credentials"},
		{"fragment", "https://merchant.example/cb#frag", "fragment"},
		{"empty fragment", "https://merchant.example/cb#", "fragment"},
		{"port zero", "http://merchant.example:0/", `port "0" is not valid`},
		{"port too large", "http://merchant.example:65536/", `port "65536"`},
		{"empty port", "http://merchant.example:/", `port "" is not valid`},
		{"bad port", "http://merchant.example:80a/", "is not a valid URL"},
		{"space in host", "http://merchant .example/", "has a space, control or non-ASCII byte at offset 15"},
		{"trailing space", "https://shop.example/cb ", "offset 23"},
		{"control character", "http://merchant.example/\x7f", "non-ASCII byte"},
		{"non-ASCII path", "https://shop.example/caf\u00e9", "non-ASCII byte"},
		{"bad escape", "http://merchant.example/%zz", "is not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := egress.CheckURL(tt.raw)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v; want nil", tt.raw, err)
				}
				return
			}
			if err == nil || !errors.Is(err, egress.ErrInvalidURL) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckURL(%q) = %v; want ErrInvalidURL containing %q", tt.raw, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q repeats the credentials", err)
			}
		})
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://merchant.example/ipn?x=1", "http://127.0.0.1:9999/hook", "http://[::1]:80/", "https://u:p@h/",
		"https://h/#f", "ftp://h/", "http:h", "http://:80", "http://h:0/", "HTTP://H/", "http://h/%zz", "http://[fe80::1%25eth0]/",
		"http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://localhost./", "http://a.localhost:1/",
		"http://[::ffff:127.0.0.1]/", "http://134744072/",
	} {
		f.Add(s)
	}
	rules, err := egress.NewRules([]string{"http://127.0.0.1:9999/hook"}, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// The rules with the host rule accept a subset of what CheckURL
		// accepts, written the same way; what they accept beyond the host
		// rule is exactly the operator's exception.
		checked, rerr := rules.Check(1, raw)
		norm, err := egress.CheckURL(raw)
		if rerr == nil && (err != nil || checked != norm) {
			t.Fatalf("rules accepted %q as %q, CheckURL says %q, %v", raw, checked, norm, err)
		}
		if err != nil {
			return
		}
		if rerr == nil {
			u, _ := url.Parse(raw)
			if herr := egress.CheckHost(u.Hostname()); herr != nil {
				if e, _ := egress.ParseEndpoint("http://127.0.0.1:9999/hook"); !e.Matches(u) {
					t.Fatalf("rules accepted %q, whose host is refused (%v), without the exception", raw, herr)
				}
			}
		}
		if again, err := egress.CheckURL(norm); err != nil || again != norm {
			t.Fatalf("CheckURL(%q) = %q, which does not check as itself: %q, %v", raw, norm, again, err)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", raw, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if u.User != nil {
			t.Fatalf("accepted %q with userinfo", raw)
		}
		if u.Fragment != "" || strings.Contains(raw, "#") {
			t.Fatalf("accepted %q with a fragment", raw)
		}
		if u.Hostname() == "" || u.Opaque != "" {
			t.Fatalf("accepted %q without a host", raw)
		}
		if _, err := egress.ParseEndpoint(raw); err != nil && u.RawQuery == "" && !u.ForceQuery {
			t.Fatalf("accepted %q but ParseEndpoint refuses it: %v", raw, err)
		}
	})
}

func TestParseEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		want    egress.Endpoint
		wantErr string
	}{
		{"loopback with port", "http://127.0.0.1:9999/hook", egress.Endpoint{"http", "127.0.0.1", "9999", "/hook"}, ""},
		{"default http port", "http://devbox.local/hook", egress.Endpoint{"http", "devbox.local", "80", "/hook"}, ""},
		{"default https port", "https://devbox.local/hook", egress.Endpoint{"https", "devbox.local", "443", "/hook"}, ""},
		{"host lower-cased", "http://DevBox.Local:8080/Hook", egress.Endpoint{"http", "devbox.local", "8080", "/Hook"}, ""},
		{"empty path is /", "http://10.0.0.5:8080", egress.Endpoint{"http", "10.0.0.5", "8080", "/"}, ""},
		{"IPv6 canonical", "http://[0:0::1]:9999/hook", egress.Endpoint{"http", "::1", "9999", "/hook"}, ""},
		{"escaped path kept", "http://127.0.0.1:9999/a%2Fb", egress.Endpoint{"http", "127.0.0.1", "9999", "/a%2Fb"}, ""},
		{"query refused", "http://127.0.0.1:9999/hook?x=1", egress.Endpoint{}, "query"},
		{"bare ? refused", "http://127.0.0.1:9999/hook?", egress.Endpoint{}, "query"},
		{"credentials refused", "http://u:p@127.0.0.1:9999/hook", egress.Endpoint{}, "credentials"},
		{"fragment refused", "http://127.0.0.1:9999/hook#x", egress.Endpoint{}, "fragment"},
		{"scheme refused", "tcp://127.0.0.1:9999", egress.Endpoint{}, "http or https"},
		{"not a URL", "127.0.0.1:9999", egress.Endpoint{}, "127.0.0.1:9999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := egress.ParseEndpoint(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, egress.ErrInvalidEndpoint) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.raw) {
					t.Fatalf("ParseEndpoint(%q) = %v; want ErrInvalidEndpoint naming the entry and containing %q", tt.raw, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseEndpoint(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestEndpointMatches(t *testing.T) {
	t.Parallel()
	hook, err := egress.ParseEndpoint("http://127.0.0.1:9999/hook")
	if err != nil {
		t.Fatal(err)
	}
	root, err := egress.ParseEndpoint("https://dev.local")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		e    egress.Endpoint
		url  string
		want bool
	}{
		{"exact", hook, "http://127.0.0.1:9999/hook", true},
		{"query ignored", hook, "http://127.0.0.1:9999/hook?uuid=1&x=2", true},
		{"upper-case scheme", hook, "HTTP://127.0.0.1:9999/hook", true},
		{"other path", hook, "http://127.0.0.1:9999/other", false},
		{"trailing slash", hook, "http://127.0.0.1:9999/hook/", false},
		{"path prefix", hook, "http://127.0.0.1:9999/hook/more", false},
		{"path case", hook, "http://127.0.0.1:9999/HOOK", false},
		{"dot segment", hook, "http://127.0.0.1:9999/x/../hook", false},
		{"encoded path", hook, "http://127.0.0.1:9999/%68ook", false},
		{"other port", hook, "http://127.0.0.1:9998/hook", false},
		{"default port", hook, "http://127.0.0.1/hook", false},
		{"other host", hook, "http://127.0.0.2:9999/hook", false},
		{"localhost is another host", hook, "http://localhost:9999/hook", false},
		{"other scheme", hook, "https://127.0.0.1:9999/hook", false},
		{"credentials never match", hook, "http://u@127.0.0.1:9999/hook", false},
		{"fragment never matches", hook, "http://127.0.0.1:9999/hook#x", false},
		{"default port explicit", root, "https://dev.local:443/", true},
		{"default port implicit, no path", root, "https://dev.local", true},
		{"host case-insensitive", root, "https://DEV.local/", true},
		{"http on 443 is another scheme", root, "http://dev.local:443/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.e.Matches(u); got != tt.want {
				t.Errorf("%v.Matches(%s) = %v, want %v", tt.e, tt.url, got, tt.want)
			}
		})
	}
}

func TestCheckURLNormalises(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://shop.example/cb":           "https://shop.example/cb",
		"https://shop.example/cb?a=1&b=%2F": "https://shop.example/cb?a=1&b=%2F",
		"https://shop.example":              "https://shop.example/",
		"https://shop.example?x=1":          "https://shop.example/?x=1",
		"http://127.0.0.1:8080/a%2Fb?":      "http://127.0.0.1:8080/a%2Fb?",
		"http://[::1]:3000/cb":              "http://[::1]:3000/cb",
	} {
		got, err := egress.CheckURL(raw)
		if err != nil || got != want {
			t.Errorf("CheckURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}
