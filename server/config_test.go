package server_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/startstop"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// TestConfigValidateNamesTheFlag: each sub-config's bad setting is reported
// by the command-line flag that sets it.
func TestConfigValidateNamesTheFlag(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*server.Config)
		want   string
	}{
		{"store db", func(c *server.Config) { c.Store.DB = "mysql://x" }, "--db"},
		{"store max conns", func(c *server.Config) { c.Store.MaxConns = 1 }, "--db-max-conns"},
		{"api http addr", func(c *server.Config) { c.API.HTTPAddr = "nope" }, "--http-addr"},
		{"api same addrs", func(c *server.Config) { c.API.HTTPAddr, c.API.GRPCAddr = ":1", ":1" }, "--http-addr and --grpc-addr"},
		{"operator listen addr", func(c *server.Config) { c.API.OperatorAddr = "9091" }, "--operator-listen"},
		{"operator listen on http", func(c *server.Config) { c.API.HTTPAddr, c.API.OperatorAddr = ":8080", ":8080" }, "--operator-listen must differ"},
		{"delivery endpoint project", func(c *server.Config) {
			c.Delivery.AllowPrivateEndpoints = []string{"shop=http://127.0.0.1:3000/hook"}
		}, "--allow-private-endpoint \"shop=http://127.0.0.1:3000/hook\": want PROJECT=URL"},
		{"api shutdown", func(c *server.Config) { c.API.ShutdownTimeout = -time.Second }, "--shutdown-timeout"},
		{"api body limit", func(c *server.Config) { c.API.MaxBodyBytes = 10 }, "--max-body-bytes"},
		{"public url scheme", func(c *server.Config) { c.API.PublicURL = "ftp://pay.example" }, "--public-url"},
		{"public url relative", func(c *server.Config) { c.API.PublicURL = "pay.example.com" }, "--public-url"},
		{"public url query", func(c *server.Config) { c.API.PublicURL = "https://pay.example/?a=1" }, "--public-url"},
		{"trusted proxy", func(c *server.Config) { c.API.TrustedProxies = []string{"10.0.0.0/8", "proxy.local"} }, "--trusted-proxy"},
		{"public url userinfo", func(c *server.Config) { c.API.PublicURL = "https://u:p@pay.example" }, "--public-url"},
		{"keys bits", func(c *server.Config) { c.Keys.SigningKeyBits = 1024 }, "--signing-key-bits"},
		{"keys seed", func(c *server.Config) { c.Keys.Seed = []byte("short") }, "seed"},
		{"delivery delays", func(c *server.Config) { c.Delivery.Delays = []time.Duration{-time.Second} }, "--retry-delays"},
		{"delivery endpoint", func(c *server.Config) { c.Delivery.AllowPrivateEndpoints = []string{"ftp://x"} }, "--allow-private-endpoint"},
		{"delivery lease", func(c *server.Config) { c.Delivery.Lease = time.Second }, "--delivery-lease"},
		{"delivery workers", func(c *server.Config) { c.Delivery.Workers = -1 }, "--delivery-workers"},
		{"delivery per host", func(c *server.Config) { c.Delivery.PerHost = -1 }, "--per-host-concurrency"},
		{"chains watch", func(c *server.Config) { c.Chains.WatchInterval = -time.Second }, "--watch-interval"},
		{"chains block time", func(c *server.Config) { c.Chains.DevnetBlockTime = -time.Second }, "--devnet-block-time"},
		{"block time needs dev", func(c *server.Config) { c.Chains.DevnetBlockTime = time.Second }, "needs --dev"},
		// Without --dev and without a node nothing would watch a payment
		// address: the server refuses to start, saying what to give.
		{"no chains", func(*server.Config) {}, "--node: no chain node is configured and --dev is off"},
		{"no chains names --dev", func(*server.Config) {}, "or run with --dev"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Every case but those about --dev itself runs with the
			// devnet, so that only its own setting is wrong.
			cfg := server.Config{Dev: c.name != "block time needs dev" && !strings.HasPrefix(c.name, "no chains")}
			c.mutate(&cfg)
			err := cfg.WithDefaults().Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to name %q", err, c.want)
			}
		})
	}
	if err := (server.Config{Dev: true}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if err := (server.Config{Chains: server.ChainsConfig{Nodes: map[string]string{"ltc": "http://u:p@127.0.0.1:19443/"}}}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults with a node do not validate: %v", err)
	}
	ok := server.Config{Dev: true, API: server.APIConfig{PublicURL: "https://pay.example.com/shop/"}}
	if err := ok.WithDefaults().Validate(); err != nil {
		t.Fatalf("an https public URL with a path does not validate: %v", err)
	}
}

// TestStartOnceStopIdempotent: a server starts once, and Stop may be called
// again with the same result.
func TestStartOnceStopIdempotent(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) { c.ManualDelivery = true })
	if err := in.Server.Start(context.Background()); !errors.Is(err, startstop.ErrStarted) {
		t.Fatalf("second Start: %v, want startstop.ErrStarted", err)
	}
	if err := in.Server.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := in.Server.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := in.Server.Start(context.Background()); !errors.Is(err, startstop.ErrStarted) {
		t.Fatalf("Start after Stop: %v, want startstop.ErrStarted", err)
	}
}

// TestDeliveryDefaultsAreTheNotifiers: the server writes no delivery
// default of its own; an unset delivery part gets the notifier's.
func TestDeliveryDefaultsAreTheNotifiers(t *testing.T) {
	t.Parallel()
	got := server.Config{}.WithDefaults().Delivery
	if want := (notifier.Delivery{}).WithDefaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("server delivery defaults %+v, want the notifier's %+v", got, want)
	}
}
