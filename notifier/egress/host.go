package egress

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Rules are the one set of destination rules together with the operator's
// exceptions: CheckURL, then the host rule (CheckHost) unless the URL is
// exactly an endpoint allowed to the request's owner. A callback URL is
// checked with them when it is accepted (server/address) and at every
// attempt (Client.Do), so a URL refused at dial time is refused at creation
// too, with the same reason. The zero value has no exceptions. Safe for
// concurrent use.
type Rules struct {
	allowed []Allowance
}

// Allowance is one operator exception: requests of Owner may reach
// Endpoint although it is (or resolves to) a private or loopback address.
// Owner is the notifier's owner of a request (payhook's project id); an
// exception never applies to another owner's requests.
type Allowance struct {
	Owner    int64
	Endpoint Endpoint
}

// String returns the allowance as ParseAllowance reads it: OWNER=URL.
func (a Allowance) String() string { return strconv.FormatInt(a.Owner, 10) + "=" + a.Endpoint.String() }

// ParseAllowance parses an operator exception: OWNER=URL, where OWNER is a
// positive decimal owner id and URL an exact endpoint (ParseEndpoint), or
// URL alone, which is defaultOwner's. An entry is OWNER=URL when it has an
// "=" before any "://" (an endpoint has no query, so no "=" of its own).
// Errors wrap ErrInvalidEndpoint and quote what is wrong.
func ParseAllowance(raw string, defaultOwner int64) (Allowance, error) {
	owner, rawURL := defaultOwner, raw
	if left, right, ok := strings.Cut(raw, "="); ok && !strings.Contains(left, "://") {
		id, err := strconv.ParseInt(strings.TrimSpace(left), 10, 64)
		if err != nil || id <= 0 {
			return Allowance{}, fmt.Errorf("%w %q: %q before \"=\" is not an owner id (a positive number)", ErrInvalidEndpoint, raw, left)
		}
		owner, rawURL = id, strings.TrimSpace(right)
	}
	e, err := ParseEndpoint(rawURL)
	if err != nil {
		return Allowance{}, err
	}
	return Allowance{Owner: owner, Endpoint: e}, nil
}

// NewRules returns the rules with the operator's exceptions allowPrivate
// (OWNER=URL, or URL alone for defaultOwner; see ParseAllowance). An error
// names the bad entry.
func NewRules(allowPrivate []string, defaultOwner int64) (*Rules, error) {
	r := &Rules{}
	for i, raw := range allowPrivate {
		a, err := ParseAllowance(raw, defaultOwner)
		if err != nil {
			return nil, fmt.Errorf("%w: AllowPrivate[%d]: %w", ErrInvalidConfig, i, err)
		}
		r.allowed = append(r.allowed, a)
	}
	return r, nil
}

// Allowances returns the operator's exceptions, in the order given.
func (r *Rules) Allowances() []Allowance {
	if r == nil {
		return nil
	}
	return append([]Allowance(nil), r.allowed...)
}

// Check applies CheckURL and, unless the URL matches an operator exception
// of owner, CheckHost. It returns the URL as it is sent (see CheckURL);
// errors are a *URLError wrapping ErrInvalidURL. A URL that another owner's
// exception allows is refused exactly as any other private URL is, so the
// error says nothing of other owners' exceptions.
func (r *Rules) Check(owner int64, raw string) (string, error) {
	norm, _, _, err := r.check(owner, raw)
	return norm, err
}

// check is Check that also returns the parsed URL and whether it is an
// operator exception of owner (which then skips every address check).
func (r *Rules) check(owner int64, raw string) (norm string, u *url.URL, allowed bool, err error) {
	norm, u, err = checkURL(raw)
	if err != nil {
		return "", nil, false, err
	}
	if r != nil {
		for _, a := range r.allowed {
			if a.Owner == owner && a.Endpoint.Matches(u) {
				return norm, u, true, nil
			}
		}
	}
	if err := CheckHost(u.Hostname()); err != nil {
		return "", nil, false, err
	}
	return norm, u, false, nil
}

// CheckHost refuses a host that can never be a public address, whatever
// DNS says: the names localhost, localhost. and *.localhost (RFC 6761), an
// IP address literal that Classify blocks, written in any form a resolver
// accepts (inet_aton's decimal, octal and hex parts and short forms such
// as 2130706433, 0x7f000001, 0177.0.0.1 and 127.1; IPv6 literals,
// IPv4-mapped and zoned ones included), a host ending in a number that is
// not an IPv4 address, and a public IPv4 address written in another form
// than dotted decimal (resolvers disagree on those: getaddrinfo reads them,
// Go's own resolver sends them to DNS). Other names pass: their addresses
// are checked when dialled. host is as url.URL.Hostname returns it. The
// error is a *URLError naming the host and the rule.
func CheckHost(host string) error {
	name := strings.ToLower(host)
	if strings.Contains(name, ":") {
		ip, err := netip.ParseAddr(name)
		if err != nil {
			return urlErr("host %q is not a valid IPv6 address", host)
		}
		if blocked, reason := Classify(ip); blocked {
			return urlErr("host [%s] is %s", host, reason)
		}
		return nil
	}
	name = strings.TrimSuffix(name, ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return urlErr("host %q is a loopback name (localhost, RFC 6761)", host)
	}
	if !endsInNumber(name) {
		return nil
	}
	ip, ok := parseIPv4(name)
	if !ok {
		return urlErr("host %q ends in a number but is not an IPv4 address", host)
	}
	if blocked, reason := Classify(ip); blocked {
		if host == ip.String() {
			return urlErr("host %s is %s", host, reason)
		}
		return urlErr("host %q is the IPv4 address %s, %s", host, ip, reason)
	}
	if host != ip.String() {
		return urlErr("host %q is the IPv4 address %s written in a non-standard form; write it as %s", host, ip, ip)
	}
	return nil
}

// endsInNumber reports whether the last label of name is a number in
// inet_aton's notation (decimal digits, or 0x followed by hex digits): such
// a host is an IPv4 address literal to resolvers and URL parsers, never a
// DNS name (no top-level domain is numeric).
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return strings.Trim(last[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// parseIPv4 parses s as inet_aton(3) does: one to four parts separated by
// dots, each decimal, octal (leading 0) or hexadecimal (leading 0x, no
// digits meaning 0); the last part fills the remaining bytes (a, a.b with b
// of 24 bits, a.b.c with c of 16 bits, a.b.c.d).
func parseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		ip |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case strings.HasPrefix(p, "0x"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p[0] == '+' || p[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}
