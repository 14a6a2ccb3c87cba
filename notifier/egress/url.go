package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// URLError is a URL the destination rules refuse. Reason says which rule
// failed, phrased to follow the name of whatever holds the URL ("callback:
// must have a host"); it never repeats credentials.
type URLError struct {
	// Reason is the rule that failed, e.g. "must not contain a fragment (#...)".
	Reason string
}

// Error returns "URL " and the reason.
func (e *URLError) Error() string { return "URL " + e.Reason }

// Unwrap makes every URLError match ErrInvalidURL.
func (e *URLError) Unwrap() error { return ErrInvalidURL }

func urlErr(format string, args ...any) error {
	return &URLError{Reason: fmt.Sprintf(format, args...)}
}

// CheckURL applies the one set of destination URL rules, used when a
// callback URL is accepted (server/address), when a request is encoded
// (notifier/payload) and at every attempt (Client.Do): an absolute http or
// https URL (scheme in lower case) with a host, without credentials
// (user:password@) or fragment (#...), any port a number from 1 to 65535,
// made of printable ASCII only, and written exactly as an HTTP client puts
// it on the wire (scheme, host, then the request target; an empty path
// counts as "/"). The last two rules are what lets a receiver verify a GET
// signature: it rebuilds the URL from the request line it received, so a
// URL a client would re-encode (a raw space, non-ASCII, "/a%zz") could
// never verify. The host is not resolved: addresses are checked when
// dialled.
//
// It returns the URL as it is sent: raw, with an empty path written as "/"
// ("https://shop.example?x=1" becomes "https://shop.example/?x=1"); the
// query is kept byte for byte. Errors are a *URLError (wrapping
// ErrInvalidURL).
func CheckURL(raw string) (string, error) {
	norm, _, err := checkURL(raw)
	return norm, err
}

func checkURL(raw string) (string, *url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil, urlErr("is required")
	}
	for i := 0; i < len(raw); i++ {
		if b := raw[i]; b <= ' ' || b >= 0x7f {
			return "", nil, urlErr("has a space, control or non-ASCII byte at offset %d; percent-encode it", i)
		}
	}
	if strings.Contains(raw, "#") {
		return "", nil, urlErr("must not contain a fragment (#...)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL; keep only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", nil, urlErr("is not a valid URL: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Opaque != "":
		return "", nil, urlErr("must be an absolute http or https URL")
	case !strings.HasPrefix(raw, u.Scheme+"://"):
		return "", nil, urlErr("scheme must be written in lower case")
	case u.User != nil:
		return "", nil, urlErr("must not contain credentials (user:password@)")
	case u.Host == "" || u.Hostname() == "":
		return "", nil, urlErr("must have a host")
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", nil, urlErr("port %q is not valid", p)
		}
	}
	norm := raw
	if u.Path == "" {
		rest := raw[len(u.Scheme)+3:]
		end := len(rest)
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			end = i
		}
		norm = raw[:len(u.Scheme)+3+end] + "/" + rest[end:]
	}
	if wire := u.Scheme + "://" + u.Host + u.RequestURI(); wire != norm {
		return "", nil, urlErr("is not written as an HTTP client sends it (%s); a signature over it could not be verified", wire)
	}
	return norm, u, nil
}

// Endpoint is an exact destination the operator allows to reach private or
// loopback addresses: scheme, host, port and path. Host is lower case (an
// IP address in its canonical form), Port is always explicit and Path is
// the escaped path, "/" when the URL has none.
type Endpoint struct{ Scheme, Host, Port, Path string }

// ParseEndpoint parses an operator exception such as
// http://127.0.0.1:9999/hook. It must pass CheckURL and have no query; the
// port is made explicit from the scheme's default (80 or 443). Errors wrap
// ErrInvalidEndpoint and quote the entry.
func ParseEndpoint(raw string) (Endpoint, error) {
	_, u, err := checkURL(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%w %q: %w", ErrInvalidEndpoint, raw, err)
	}
	if u.RawQuery != "" || u.ForceQuery {
		return Endpoint{}, fmt.Errorf("%w %q: a query is not part of an endpoint (queries are ignored when matching)", ErrInvalidEndpoint, raw)
	}
	return endpointOf(u), nil
}

// endpointOf returns the canonical endpoint of a URL that passed CheckURL.
func endpointOf(u *url.URL) Endpoint {
	e := Endpoint{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Hostname()), Port: u.Port(), Path: u.EscapedPath()}
	if ip, err := netip.ParseAddr(e.Host); err == nil {
		e.Host = ip.String()
	}
	if e.Port == "" {
		e.Port = "80"
		if e.Scheme == "https" {
			e.Port = "443"
		}
	}
	if e.Path == "" {
		e.Path = "/"
	}
	return e
}

// Matches reports whether u addresses exactly this endpoint: same scheme,
// host (case-insensitive; IP addresses compared as addresses), port (the
// scheme's default when u has none) and escaped path (an empty path is
// "/"). The query is ignored; a URL with credentials or a fragment never
// matches.
func (e Endpoint) Matches(u *url.URL) bool {
	if u == nil || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	return endpointOf(u) == e
}

// String returns the endpoint as a URL.
func (e Endpoint) String() string {
	host := e.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return e.Scheme + "://" + host + ":" + e.Port + e.Path
}
