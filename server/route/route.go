// Package route is the one table of what payhook's HTTP listener serves:
// the REST routes of the gateway, read from the google.api.http rule of
// every method of payhook.v1 (devnet included), the paths the server mounts
// beside them (health, metrics, the OpenAPI document and page, the hosted
// pages, the dashboard) and the Connect and gRPC-Web paths of each service.
//
// Everything else that needs route knowledge derives it from this table:
// the first path segments no ticker may take (ReservedNames, passed to
// chains.LoadRegistry), the ticker a REST path names (PathTicker, for the
// gateway's unknown-ticker check) and the bounded metric label of a request
// (Label). A new RPC with an HTTP rule enters every derived set on its own;
// a path the server mounts must be added here, or the server refuses to
// start (Mounted).
//
// The table is immutable and built once from the descriptors linked into
// the binary; Default panics only when a descriptor's HTTP rule is one the
// table cannot represent, which this package's tests rule out.
package route

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// Links the payhook.v1 descriptors the table reads.
	_ "github.com/payhook/payhook/gen/payhook/v1"
)

// The paths the server mounts beside the gateway.
const (
	// Healthz is the health check (GET /healthz).
	Healthz = "/healthz"
	// Metrics is the Prometheus exposition.
	Metrics = "/metrics"
	// OpenAPIDocument is the REST contract as OpenAPI 3.1.
	OpenAPIDocument = "/openapi.json"
	// Docs is the API reference page and its stylesheet.
	Docs = "/docs/"
	// Dashboard is the merchants' dashboard (and /dashboard, redirected).
	Dashboard = "/dashboard/"
	// Assets are the hosted pages' embedded scripts and styles, under the
	// checkout page's segment (no payment id is named "assets").
	Assets = "/payment/assets/"
)

// Package is the protobuf package whose services the table serves.
const Package = "payhook.v1"

// Kind is what serves a route.
type Kind int

const (
	// Gateway is a REST route of an RPC, from its google.api.http rule.
	Gateway Kind = iota + 1
	// Endpoint is an exact path the server mounts.
	Endpoint
	// Subtree is a path prefix (ending in "/") the server mounts.
	Subtree
	// BrowserRPC is the Connect and gRPC-Web path prefix of a service,
	// "/payhook.v1.Service/".
	BrowserRPC
)

// Route is one route of the table.
type Route struct {
	// Kind is what serves the route.
	Kind Kind
	// Verb is a Gateway route's HTTP method (GET, POST); empty otherwise.
	Verb string
	// Path is the template (`/{ticker}/create`, `/{ticker=*/*}/create`,
	// `/checkout/request`), the exact path (Endpoint) or the prefix
	// (Subtree, BrowserRPC).
	Path string
	// RPC is the method a Gateway route reaches, or a BrowserRPC route's
	// service.
	RPC protoreflect.FullName
	// segs are Path's segments; a variable is "{name}" (one segment) or
	// "{name=*/*}" (two).
	segs []string
}

// HostedPage is a payer page: /SEGMENT/{id}/, where the id starts with
// IDPrefix. Its segment is shared with REST routes (/deposit/request), so
// the id prefix is what tells a page from an API call.
type HostedPage struct {
	// Segment is the first path segment.
	Segment string
	// IDPrefix starts every id the page serves.
	IDPrefix string
}

// HostedPages are the payer pages: checkout, deposit and subscription.
func HostedPages() []HostedPage {
	return []HostedPage{{"payment", "chk_"}, {"deposit", "dep_"}, {"subscription", "sub_"}}
}

// mounted are the non-gateway routes, in the order the server mounts them.
func mounted() []Route {
	rs := []Route{
		{Kind: Endpoint, Path: Healthz},
		{Kind: Endpoint, Path: Metrics},
		{Kind: Endpoint, Path: OpenAPIDocument},
		{Kind: Subtree, Path: Docs},
		{Kind: Subtree, Path: Dashboard},
		{Kind: Subtree, Path: Assets},
	}
	for _, p := range HostedPages() {
		rs = append(rs, Route{Kind: Subtree, Path: "/" + p.Segment + "/"})
	}
	return rs
}

// Table is the route table. It is immutable and safe for concurrent use.
type Table struct {
	routes []Route
	// reserved are the first literal segments of every route but the
	// browser RPC ones.
	reserved map[string]bool
	// tickerRoutes are the routes with a {ticker} variable.
	tickerRoutes []Route
	// services are the full names of the services with BrowserRPC routes.
	services map[string]bool
	// paths are the Endpoint, Subtree and BrowserRPC paths.
	paths map[string]bool
}

// Default returns the table of the descriptors linked into the binary.
var Default = sync.OnceValue(func() *Table {
	t, err := Build(protoregistry.GlobalFiles)
	if err != nil {
		panic("route: " + err.Error())
	}
	return t
})

// Build builds the table from the services of package payhook.v1 in files.
// It fails for an HTTP rule the table cannot represent: a verb other than
// GET or POST, a template that is not absolute, or one whose first segment
// is a variable other than {ticker}.
func Build(files *protoregistry.Files) (*Table, error) {
	t := &Table{reserved: map[string]bool{}, services: map[string]bool{}, paths: map[string]bool{}}
	var rpcs []Route
	var err error
	files.RangeFilesByPackage(Package, func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			t.routes = append(t.routes, Route{Kind: BrowserRPC, Path: "/" + string(sd.FullName()) + "/", RPC: sd.FullName()})
			for j := range sd.Methods().Len() {
				var rs []Route
				if rs, err = gatewayRoutes(sd.Methods().Get(j)); err != nil {
					return false
				}
				rpcs = append(rpcs, rs...)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	t.routes = append(t.routes, rpcs...)
	t.routes = append(t.routes, mounted()...)
	slices.SortStableFunc(t.routes, func(a, b Route) int { return strings.Compare(a.Path, b.Path) })
	for i := range t.routes {
		r := &t.routes[i]
		r.segs = templateSegments(r.Path)
		switch r.Kind {
		case BrowserRPC:
			t.services[string(r.RPC)] = true
			t.paths[r.Path] = true
			continue
		case Endpoint, Subtree:
			t.paths[r.Path] = true
		}
		first := r.segs[0]
		switch {
		case strings.HasPrefix(first, "{ticker"):
		case strings.HasPrefix(first, "{"):
			return nil, fmt.Errorf("%s %s (%s): a route starting with a variable other than {ticker} cannot be told from the others", r.Verb, r.Path, r.RPC)
		default:
			t.reserved[first] = true
		}
		if slices.ContainsFunc(r.segs, func(s string) bool { return strings.HasPrefix(s, "{ticker") }) {
			t.tickerRoutes = append(t.tickerRoutes, *r)
		}
	}
	if len(t.services) == 0 {
		return nil, fmt.Errorf("no service of %s is registered", Package)
	}
	return t, nil
}

// gatewayRoutes are md's REST routes: its HTTP rule and the rule's
// additional bindings.
func gatewayRoutes(md protoreflect.MethodDescriptor) ([]Route, error) {
	rule, ok := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if !ok || rule == nil {
		return nil, nil // not on the REST facade (reachable over gRPC and Connect)
	}
	var out []Route
	for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
		var verb, path string
		switch p := r.GetPattern().(type) {
		case *annotations.HttpRule_Get:
			verb, path = "GET", p.Get
		case *annotations.HttpRule_Post:
			verb, path = "POST", p.Post
		default:
			return nil, fmt.Errorf("%s: HTTP rule %v: only GET and POST routes are in the table", md.FullName(), r)
		}
		if !strings.HasPrefix(path, "/") || path == "/" {
			return nil, fmt.Errorf("%s: HTTP path %q is not an absolute path below /", md.FullName(), path)
		}
		out = append(out, Route{Kind: Gateway, Verb: verb, Path: path, RPC: md.FullName()})
	}
	return out, nil
}

// Routes returns every route, in path order.
func (t *Table) Routes() []Route { return slices.Clone(t.routes) }

// ReservedNames returns the first path segments of payhook's own routes,
// sorted: no ticker may start with one, so `/checkout/logs/` is never read
// as the logs of a ticker named checkout.
func (t *Table) ReservedNames() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for n := range t.reserved {
			if !yield(n) {
				return
			}
		}
	})
}

// Reserved reports whether name is the first segment of one of payhook's
// own routes.
func (t *Table) Reserved(name string) bool { return t.reserved[name] }

// Mounted reports whether the server may mount pattern: it is one of the
// table's exact paths, subtrees or browser RPC prefixes.
func (t *Table) Mounted(pattern string) bool { return t.paths[pattern] }

// match returns the ticker segs name when they fit r's template, and
// whether they do. A template starting with the variable does not match a
// path whose first segment is reserved.
func (t *Table) match(r Route, segs []string) (string, bool) {
	var ticker string
	i := 0
	for _, s := range r.segs {
		switch {
		case strings.HasPrefix(s, "{"):
			n := 1 + strings.Count(s, "/")
			if i+n > len(segs) {
				return "", false
			}
			v := strings.Join(segs[i:i+n], "/")
			if strings.HasPrefix(s, "{ticker") {
				ticker = v
			}
			i += n
		case i < len(segs) && segs[i] == s:
			i++
		default:
			return "", false
		}
	}
	if i != len(segs) || (strings.HasPrefix(r.segs[0], "{") && t.reserved[segs[0]]) {
		return "", false
	}
	return ticker, true
}

// templateSegments splits a template at the slashes outside its variables
// (`/{ticker=*/*}/create` -> `{ticker=*/*}`, `create`).
func templateSegments(path string) []string {
	var segs []string
	depth, start := 0, 0
	p := strings.Trim(path, "/")
	for i, c := range p {
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '/' && depth == 0:
			segs = append(segs, p[start:i])
			start = i + 1
		}
	}
	return append(segs, p[start:])
}

// split returns path's segments without leading and trailing slashes.
func split(path string) []string { return strings.Split(strings.Trim(path, "/"), "/") }

// PathTicker returns the ticker a REST path names (`/trc20/usdt/logs/` ->
// `trc20/usdt`, `/devnet/btc/pay` -> `btc`), or "" when the path is no
// ticker route's.
func (t *Table) PathTicker(path string) string {
	segs := split(path)
	for _, r := range t.tickerRoutes {
		if ticker, ok := t.match(r, segs); ok {
			return ticker
		}
	}
	return ""
}

// OtherLabel is the label of a path outside the table (scanners, typos), so
// no request can add a metric series of its own.
const OtherLabel = "other"

// Label returns the bounded metric label of a request path: "/" for the
// root, "/SEGMENT" for a path under one of the reserved first segments,
// "/{ticker}/ACTION" for a per-ticker route, "/SERVICE" for a Connect or
// gRPC-Web call to a payhook service, and OtherLabel for anything else.
// Ids, keys and tickers never reach a label.
func (t *Table) Label(path string) string {
	segs := split(path)
	if len(segs) == 1 && segs[0] == "" {
		return "/"
	}
	if t.reserved[segs[0]] {
		return "/" + segs[0]
	}
	for _, r := range t.tickerRoutes {
		if _, ok := t.match(r, segs); ok && strings.HasPrefix(r.segs[0], "{") {
			return "/{ticker}/" + strings.Join(r.segs[1:], "/")
		}
	}
	if len(segs) == 2 && t.services[segs[0]] {
		return "/" + segs[0]
	}
	return OtherLabel
}
