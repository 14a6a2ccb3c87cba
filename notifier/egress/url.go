package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckURL applies the URL rules of every destination: the URL parses, is
// absolute with scheme http or https, names a host, has no user
// credentials (user:password@) and no fragment (#...), and any port is a
// number from 1 to 65535. It does not resolve the host: addresses are
// checked when dialled. Errors wrap ErrInvalidURL and say which rule failed.
func CheckURL(raw string) error {
	_, err := checkURL(raw)
	return err
}

func checkURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL; keep only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: does not parse: %v", ErrInvalidURL, err)
	}
	switch {
	case u.Scheme == "":
		return nil, fmt.Errorf("%w: not absolute (want http:// or https://)", ErrInvalidURL)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: scheme %q is not http or https", ErrInvalidURL, u.Scheme)
	case u.Opaque != "":
		return nil, fmt.Errorf("%w: no host (want %s://host/...)", ErrInvalidURL, u.Scheme)
	case u.User != nil:
		return nil, fmt.Errorf("%w: user credentials (user:password@) are not accepted", ErrInvalidURL)
	case strings.Contains(raw, "#"):
		return nil, fmt.Errorf("%w: a fragment (#...) is not accepted", ErrInvalidURL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%w: no host", ErrInvalidURL)
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: port %q is not a number from 1 to 65535", ErrInvalidURL, p)
		}
	}
	return u, nil
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
	u, err := checkURL(raw)
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
