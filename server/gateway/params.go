package gateway

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/payhook/payhook/server/route"
)

// familyParams are query parameters this API family's client libraries
// send that no request message has: payhook accepts them and ignores
// them, so that an unmodified client keeps working. `prices` is sent by
// the CryptAPI and BlockBee SDKs' getInfo (prices=0), and accepted on
// create as it always was (docs/decisions.md); `email` is the family's
// address-creation e-mail notification, which payhook does not send.
// apikey is read before the gateway (APIKeyFromQuery); it is known on
// every route so that a misspelt key is named as such.
var familyParams = map[protoreflect.FullName][]string{
	"payhook.v1.AddressService.GetInfo":       {"prices"},
	"payhook.v1.AddressService.CreateAddress": {"email", "prices"},
}

// params is what one REST route accepts in its query.
type params struct {
	// body is true when the route reads every field from the body: its
	// query carries nothing but the API key.
	body bool
	// path are the route's path variables.
	path map[string]bool
	// names are the parameters a client should use (proto field names and
	// the family's extras), sorted, for messages.
	names []string
	// msg is the request message.
	msg protoreflect.MessageDescriptor
	// extra are the family's extras of the route.
	extra map[string]bool
}

// paramIndex maps "VERB TEMPLATE" (`GET /{ticker}/create`) to what the
// route accepts in its query.
type paramIndex map[string]*params

// newParamIndex builds the index of every gateway route of the route
// table, reading each method's request message and HTTP rule from the
// descriptors linked into the binary.
func newParamIndex() (paramIndex, error) {
	ix := paramIndex{}
	for _, r := range route.Default().Routes() {
		if r.Kind != route.Gateway {
			continue
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(r.RPC)
		if err != nil {
			return nil, fmt.Errorf("route %s %s: %w", r.Verb, r.Path, err)
		}
		md, ok := d.(protoreflect.MethodDescriptor)
		if !ok {
			return nil, fmt.Errorf("route %s %s: %s is not a method", r.Verb, r.Path, r.RPC)
		}
		p := &params{path: map[string]bool{}, extra: map[string]bool{APIKeyParam: true}, body: bodyOf(md, r.Verb, r.Path) != ""}
		for _, seg := range strings.Split(r.Path, "/") {
			if v, ok := strings.CutPrefix(seg, "{"); ok {
				name, _, _ := strings.Cut(strings.TrimSuffix(v, "}"), "=")
				p.path[name] = true
			}
		}
		for _, e := range familyParams[r.RPC] {
			p.extra[e] = true
		}
		p.msg = md.Input()
		for i := range p.msg.Fields().Len() {
			if n := string(p.msg.Fields().Get(i).Name()); !p.path[n] {
				p.names = append(p.names, n)
			}
		}
		for e := range p.extra {
			if e != APIKeyParam {
				p.names = append(p.names, e)
			}
		}
		slices.Sort(p.names)
		ix[r.Verb+" "+r.Path] = p
	}
	return ix, nil
}

// bodyOf returns the body of md's HTTP binding for verb and path ("" when
// the binding reads the query).
func bodyOf(md protoreflect.MethodDescriptor, verb, path string) string {
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	for _, b := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
		var v, p string
		switch pat := b.GetPattern().(type) {
		case *annotations.HttpRule_Get:
			v, p = "GET", pat.Get
		case *annotations.HttpRule_Post:
			v, p = "POST", pat.Post
		}
		if v == verb && p == path {
			return b.GetBody()
		}
	}
	return ""
}

// forPattern returns the route of a gateway path pattern as the mux
// renders it (`/{ticker=*}/create`, `/{ticker=*/*}/create`).
func (ix paramIndex) forPattern(verb, pattern string) *params {
	return ix[verb+" "+strings.ReplaceAll(pattern, "=*}", "}")]
}

// pair is one query parameter in the order the client wrote it.
type pair struct {
	key string
	// raw is the value as sent, before percent-decoding.
	raw string
}

// splitPairs splits a raw query into its parameters, in order, decoding
// the names. A name that is not URL-encoded correctly is returned as bad.
func splitPairs(rawQuery string) (pairs []pair, bad string) {
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, k
		}
		pairs = append(pairs, pair{key: name, raw: v})
	}
	return pairs, ""
}

// check returns the message of a 400 for the first query parameter of
// rawQuery the route does not read, or "" when it reads every one. With
// asBody the parameters are the body of a route that takes them in the
// query or a form instead of JSON (queryAsBody), read as a GET's query.
func (p *params) check(rawQuery string, asBody bool) string {
	if rawQuery == "" {
		return ""
	}
	pairs, bad := splitPairs(rawQuery)
	if bad != "" {
		return fmt.Sprintf("query parameter %q: the name is not URL-encoded correctly", truncate(bad))
	}
	for i, q := range pairs {
		if p.extra[q.key] {
			continue
		}
		if p.path[q.key] {
			return fmt.Sprintf("%s: is part of the path, not a query parameter", truncate(q.key))
		}
		if p.body && !asBody {
			return fmt.Sprintf("%s: this endpoint reads its parameters from the JSON body, not from the query", truncate(q.key))
		}
		if known(p.msg, q.key) {
			continue
		}
		if i > 0 && isURLParam(pairs[i-1].key) && strings.Contains(pairs[i-1].raw, "?") {
			prev := pairs[i-1].key
			return fmt.Sprintf("%s: unknown parameter right after %s, whose URL has a query of its own: URL-encode the %s value (? as %%3F, & as %%26, = as %%3D) so that its parameters stay part of it, or pass them in cb_params",
				truncate(q.key), prev, prev)
		}
		return p.unknown(q.key)
	}
	return ""
}

// unknown is the message for a parameter no field or extra has: the
// closest known name when it is near, else the list of known ones.
func (p *params) unknown(name string) string {
	candidates := append(slices.Clone(p.names), APIKeyParam)
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= max(2, len(best)/4) {
		return fmt.Sprintf("%s: unknown parameter; did you mean %s?", truncate(name), best)
	}
	if len(p.names) == 0 {
		return fmt.Sprintf("%s: unknown parameter; this endpoint takes no query parameters", truncate(name))
	}
	return fmt.Sprintf("%s: unknown parameter; this endpoint's parameters are %s", truncate(name), strings.Join(p.names, ", "))
}

// known reports whether the gateway's query parser sets a field of md for
// key: a field's proto or JSON name, a dotted path into singular message
// fields (`a.b`), or a map entry (`m[k]`).
func known(md protoreflect.MessageDescriptor, key string) bool {
	if i := strings.IndexByte(key, '['); i > 0 && strings.HasSuffix(key, "]") {
		key = key[:i]
		fd := field(md, key)
		return fd != nil && fd.IsMap()
	}
	parts := strings.Split(key, ".")
	for i, part := range parts {
		fd := field(md, part)
		if fd == nil {
			return false
		}
		if i == len(parts)-1 {
			return true
		}
		if fd.Message() == nil || fd.IsList() || fd.IsMap() {
			return false
		}
		md = fd.Message()
	}
	return false
}

func field(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	if md == nil {
		return nil
	}
	if fd := md.Fields().ByTextName(name); fd != nil {
		return fd
	}
	return md.Fields().ByJSONName(name)
}

// isURLParam reports whether a parameter carries a URL (callback,
// notify_url, redirect_url, url).
func isURLParam(name string) bool {
	return name == "callback" || name == "url" || strings.HasSuffix(name, "_url")
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// truncate shortens what a client sent to at most 64 bytes (and "...")
// for an error message that names it.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
