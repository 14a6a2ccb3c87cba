package route_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/server/openapi"
	"github.com/payhook/payhook/server/route"
	"github.com/payhook/payhook/server/web"
	"github.com/payhook/payhook/server/web/dashboard"
)

// concrete returns a path of r's template: {ticker} is btc,
// {ticker=*/*} is trc20/usdt, a subtree gets an id below it.
func concrete(r route.Route) (path, ticker string) {
	path = r.Path
	switch {
	case strings.Contains(path, "{ticker=*/*}"):
		path, ticker = strings.Replace(path, "{ticker=*/*}", "trc20/usdt", 1), "trc20/usdt"
	case strings.Contains(path, "{ticker}"):
		path, ticker = strings.Replace(path, "{ticker}", "btc", 1), "btc"
	}
	switch r.Kind {
	case route.Subtree:
		path += "chk_x1/"
	case route.BrowserRPC:
		path += "Method"
	}
	return path, ticker
}

// TestEveryRouteInDerivedSets: every route of the table (each RPC's REST
// routes, read from its HTTP rule, and every path the server mounts) has a
// metric label of its own kind, reserves its first literal segment, and a
// ticker route yields its ticker: a new route cannot miss a derived set.
func TestEveryRouteInDerivedSets(t *testing.T) {
	t.Parallel()
	tb := route.Default()
	routes := tb.Routes()
	kinds := map[route.Kind]int{}
	for _, r := range routes {
		kinds[r.Kind]++
		path, ticker := concrete(r)
		label := tb.Label(path)
		first, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
		switch {
		case r.Kind == route.BrowserRPC:
			if want := "/" + string(r.RPC); label != want {
				t.Errorf("%s: label %q, want %q", path, label, want)
			}
			if !tb.Mounted(r.Path) {
				t.Errorf("%s is not mountable", r.Path)
			}
			continue
		case strings.HasPrefix(first, "{"):
			if !strings.HasPrefix(label, "/{ticker}/") {
				t.Errorf("%s (%s): label %q, want /{ticker}/ACTION", path, r.Path, label)
			}
		default:
			if !tb.Reserved(first) || label != "/"+first {
				t.Errorf("%s (%s): reserved %v, label %q, want reserved and /%s", path, r.Path, tb.Reserved(first), label, first)
			}
		}
		if label == route.OtherLabel || (ticker != "" && strings.Contains(label, ticker)) {
			t.Errorf("%s: label %q", path, label)
		}
		if got := tb.PathTicker(path); got != ticker {
			t.Errorf("PathTicker(%s) = %q, want %q", path, got, ticker)
		}
		if r.Kind != route.Gateway && !tb.Mounted(r.Path) {
			t.Errorf("%s is not mountable", r.Path)
		}
	}
	if kinds[route.Gateway] < 40 || kinds[route.BrowserRPC] < 9 || kinds[route.Endpoint] != 3 || kinds[route.Subtree] != 6 {
		t.Fatalf("route kinds %v: the table lost routes", kinds)
	}
}

// TestReservedNames pins the reserved first segments: each is a route's,
// and a change here is a change of which tickers a registry may declare.
func TestReservedNames(t *testing.T) {
	t.Parallel()
	want := []string{
		"checkout", "dashboard", "deliveries", "deposit", "devnet", "docs", "endpoint", "events", "healthz", "info", "ledger",
		"metrics", "notification", "openapi.json", "operator", "payment", "payout", "pubkey", "refund", "subscription", "wrong_asset",
	}
	if got := route.Default().ReservedNames(); !slices.Equal(got, want) {
		t.Fatalf("reserved names %q, want %q", got, want)
	}
}

// TestMountedPathsAreTheTables: the constants the mounting packages use
// are the table's, and the embedded ticker registry takes no reserved name.
func TestMountedPathsAreTheTables(t *testing.T) {
	t.Parallel()
	tb := route.Default()
	for _, p := range []string{openapi.DocumentPath, openapi.DocsPath, dashboard.Prefix, web.AssetPrefix, route.Healthz, route.Metrics} {
		if !tb.Mounted(p) {
			t.Errorf("%s is mounted by the server but not in the table", p)
		}
	}
	if tb.Mounted("/nothing/") || tb.Mounted("/") {
		t.Error("Mounted accepts a path outside the table")
	}
	for _, tk := range family.DefaultRegistry().All() {
		if first, _, _ := strings.Cut(tk.Ticker, "/"); tb.Reserved(first) {
			t.Errorf("embedded ticker %s starts with the reserved %q", tk.Ticker, first)
		}
	}
}

func TestPathTicker(t *testing.T) {
	t.Parallel()
	rows := []struct{ path, want string }{
		{"/btc/create", "btc"},
		{"/btc/create/", "btc"},
		{"/trc20/usdt/qrcode", "trc20/usdt"},
		{"/xyz/estimate", "xyz"},
		{"/sol/sol/convert", "sol/sol"},
		{"/devnet/btc/pay", "btc"},
		{"/devnet/trc20/usdt/reorg", "trc20/usdt"},
		{"/info", ""},
		{"/info/create", ""},
		{"/pubkey", ""},
		{"/deliveries/watch", ""},
		{"/a/b/c/create", ""},
		{"/btc/nothing", ""},
		{"/metrics", ""},
		{"/devnet/a/b/c/pay", ""},
	}
	for _, r := range rows {
		if got := route.Default().PathTicker(r.path); got != r.want {
			t.Errorf("%s: %q, want %q", r.path, got, r.want)
		}
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	rows := []struct{ name, path, want string }{
		{"root", "/", "/"},
		{"ticker route", "/ltc/info/", "/{ticker}/info"},
		{"two-segment ticker", "/trc20/usdt/logs", "/{ticker}/logs"},
		{"global info", "/info", "/info"},
		{"operator project route", "/operator/project/create/", "/operator"},
		{"hosted page", "/deposit/dep_1/status.json", "/deposit"},
		{"connect call", "/payhook.v1.DevnetService/Pay", "/payhook.v1.DevnetService"},
		{"unknown action", "/btc/steal", route.OtherLabel},
		{"three-segment ticker", "/a/b/c/create", route.OtherLabel},
		{"service not of the table", "/grpc.health.v1.Health/Check", route.OtherLabel},
	}
	for _, r := range rows {
		if got := route.Default().Label(r.path); got != r.want {
			t.Errorf("%s: Label(%q) = %q, want %q", r.name, r.path, got, r.want)
		}
	}
}

// TestBuildRefuses: an HTTP rule the table cannot represent fails the
// build instead of being labelled or reserved wrongly.
func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name string
		rule *annotations.HttpRule
		want string
	}{
		{"leading variable not a ticker", &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: "/{id}/show"}}, "variable other than {ticker}"},
		{"verb outside the table", &annotations.HttpRule{Pattern: &annotations.HttpRule_Delete{Delete: "/thing"}}, "only GET and POST"},
		{"relative path", &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: "thing"}}, "not an absolute path"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			opts := &descriptorpb.MethodOptions{}
			proto.SetExtension(opts, annotations.E_Http, r.rule)
			fdp := &descriptorpb.FileDescriptorProto{
				Name: proto.String("payhook/v1/probe.proto"), Package: proto.String("payhook.v1"), Syntax: proto.String("proto3"),
				Dependency: []string{"google/protobuf/empty.proto"},
				Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Probe"), Method: []*descriptorpb.MethodDescriptorProto{{
					Name: proto.String("Call"), InputType: proto.String(".google.protobuf.Empty"), OutputType: proto.String(".google.protobuf.Empty"), Options: opts,
				}}}},
			}
			fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
			if err != nil {
				t.Fatal(err)
			}
			files := &protoregistry.Files{}
			if err := files.RegisterFile(fd); err != nil {
				t.Fatal(err)
			}
			if _, err := route.Build(files); err == nil || !strings.Contains(err.Error(), r.want) {
				t.Fatalf("Build = %v, want an error containing %q", err, r.want)
			}
		})
	}
}
