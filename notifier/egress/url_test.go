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
		{"upper-case scheme", "HTTPS://merchant.example/", ""},
		{"IPv4 literal", "http://203.0.113.7/cb", ""}, // refused at dial time, not here
		{"IPv6 literal", "https://[2606:4700:4700::1111]:8443/cb", ""},
		{"no path", "https://merchant.example", ""},
		{"encoded query", "https://merchant.example/cb?next=https%3A%2F%2Fa%2Fb%3Fc%3Dd", ""},
		{"empty", "", "empty"},
		{"blank", "   ", "empty"},
		{"relative", "/callback", "not absolute"},
		{"scheme-relative", "//merchant.example/cb", "not absolute"},
		{"ftp", "ftp://merchant.example/cb", `scheme "ftp" is not http or https`},
		{"javascript", "javascript:alert(1)", `scheme "javascript"`},
		{"file", "file:///etc/passwd", `scheme "file"`},
		{"opaque http", "http:merchant.example/cb", "no host"},
		{"no host", "http:///cb", "no host"},
		{"empty host with port", "http://:8080/cb", "no host"},
		{"userinfo", "https://user:s3cret@merchant.example/cb", "credentials"},
		{"user only", "https://user@merchant.example/cb", "credentials"},
		{"empty userinfo", "https://@merchant.example/cb", "credentials"},
		{"fragment", "https://merchant.example/cb#frag", "fragment"},
		{"empty fragment", "https://merchant.example/cb#", "fragment"},
		{"port zero", "http://merchant.example:0/", `port "0"`},
		{"port too large", "http://merchant.example:65536/", `port "65536"`},
		{"empty port", "http://merchant.example:/", `port ""`},
		{"bad port", "http://merchant.example:80a/", "does not parse"},
		{"space in host", "http://merchant .example/", "does not parse"},
		{"control character", "http://merchant.example/\x7f", "does not parse"},
		{"bad escape", "http://merchant.example/%zz", "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := egress.CheckURL(tt.raw)
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
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if egress.CheckURL(raw) != nil {
			return
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
		{"host lower-cased", "HTTP://DevBox.Local:8080/Hook", egress.Endpoint{"http", "devbox.local", "8080", "/Hook"}, ""},
		{"empty path is /", "http://10.0.0.5:8080", egress.Endpoint{"http", "10.0.0.5", "8080", "/"}, ""},
		{"IPv6 canonical", "http://[0:0::1]:9999/hook", egress.Endpoint{"http", "::1", "9999", "/hook"}, ""},
		{"escaped path kept", "http://127.0.0.1:9999/a%2Fb", egress.Endpoint{"http", "127.0.0.1", "9999", "/a%2Fb"}, ""},
		{"query refused", "http://127.0.0.1:9999/hook?x=1", egress.Endpoint{}, "query"},
		{"bare ? refused", "http://127.0.0.1:9999/hook?", egress.Endpoint{}, "query"},
		{"credentials refused", "http://u:p@127.0.0.1:9999/hook", egress.Endpoint{}, "credentials"},
		{"fragment refused", "http://127.0.0.1:9999/hook#x", egress.Endpoint{}, "fragment"},
		{"scheme refused", "tcp://127.0.0.1:9999", egress.Endpoint{}, "scheme"},
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
