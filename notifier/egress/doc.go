// Package egress is the one outbound HTTP client for merchant callbacks,
// and the rules that decide where it may connect and what counts as an
// acknowledgement.
//
// Guarantees of Client.Do:
//   - URL rules first (CheckURL): http or https, a host, no credentials, no
//     fragment; then the host rule (CheckHost): localhost, localhost. and
//     *.localhost, and IP literals in any form a resolver reads (2130706433,
//     0x7f000001, 0177.0.0.1, 127.1, IPv6 literals) that Classify blocks,
//     are refused before any dial. Rules holds both with the operator's
//     exceptions, each bound to one owner; server/address refuses such
//     callbacks at creation with the same Rules and the same owner. A refused URL is a *BlockedError; nothing is sent.
//   - The address actually dialled is checked in net.Dialer.Control, after
//     DNS resolution, so hostnames, DNS answers and DNS rebinding cannot
//     reach a blocked address. Blocked: the IANA IPv4 and IPv6
//     special-purpose ranges and multicast (code.dny.dev/ssrf), everything
//     outside IPv6 global unicast, and the IPv6 forms embedding an IPv4
//     address (IPv4-mapped judged as its IPv4; NAT64, 6to4 and Teredo always
//     refused). See Classify. A refused dial is a *BlockedError that names
//     the address and the range.
//   - Any port; tcp4 and tcp6 only.
//   - No proxy (never from the environment), redirects are returned (a 3xx
//     is a failed attempt, not followed), TLS certificates are verified.
//   - One attempt is bounded by Config.Timeout end to end; at most
//     Config.MaxBody bytes of the answer are kept.
//   - The body is sent byte for byte and the URL exactly as given, so
//     signatures over either stay valid.
//   - Operator exceptions (Config.AllowPrivate) apply only to a request
//     of the exception's owner (Request.Owner) whose scheme, host, port and
//     path equal the configured endpoint. Such requests go through a
//     separate transport without the address check; all others, another
//     owner's request to the same endpoint included, never do.
//
// Failure modes: a refused destination (*BlockedError), a timeout
// (ErrTimeout), the caller's context ending (its error), or another network
// or TLS error. Errors never contain the URL, so they can be stored in
// attempt logs that merchants read. An HTTP answer of any status is not an
// error: Acknowledged judges it.
package egress
