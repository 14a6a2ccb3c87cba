package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/backend"
	"github.com/payhook/payhook/internal/clock"
)

// splitNodeURL reads payhook's network option off a node URL and returns
// the URL without it (the family's own options stay for its backend).
func splitNodeURL(raw string) (endpoint string, net chains.Net, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", errors.New("want an http(s) URL such as http://user:pass@127.0.0.1:19443/?network=regtest")
	}
	q := u.Query()
	net = chains.Net(strings.ToLower(q.Get("network")))
	if !net.Valid() {
		return "", "", fmt.Errorf("network %q: want mainnet, testnet or regtest", q.Get("network"))
	}
	if net == "" {
		net = chains.Mainnet
	}
	q.Del("network")
	u.RawQuery = q.Encode()
	return u.String(), net, nil
}

// redactURL returns the node URL as scheme://host:port only, for logs and
// /healthz: userinfo, query and path may all hold credentials (hosted
// providers put their API key in the path).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// node is one configured chain node.
type node struct {
	ticker   string
	endpoint string // redacted
	net      chains.Net
	backend  chains.Backend
}

// withNodeNetworks returns registry with each node's ticker on its
// network, failing on a node of an unknown ticker.
func withNodeNetworks(registry *chains.Registry, nodes map[string]string) (*chains.Registry, error) {
	tickers := make([]string, 0, len(nodes))
	for t := range nodes {
		tickers = append(tickers, t)
	}
	sort.Strings(tickers)
	for _, t := range tickers {
		if _, ok := registry.Lookup(t); !ok {
			return nil, fmt.Errorf("--node %s: %w: %q is not in the ticker registry", t, chains.ErrUnknownTicker, t)
		}
		_, net, err := splitNodeURL(nodes[t])
		if err != nil {
			return nil, fmt.Errorf("--node %s: %w", t, err)
		}
		if registry, err = registry.WithNet(t, net); err != nil {
			return nil, fmt.Errorf("--node %s: %w", t, err)
		}
	}
	return registry, nil
}

// buildNodes builds the backend of every configured node. It does no I/O:
// nodes are probed when the server starts (probeNodes).
// Each backend signs through signer (nil: watch-only).
func buildNodes(registry *chains.Registry, cfg ChainsConfig, signer chains.Signer, client func(ticker string) *http.Client) ([]node, error) {
	tickers := make([]string, 0, len(cfg.Nodes))
	for t := range cfg.Nodes {
		tickers = append(tickers, t)
	}
	sort.Strings(tickers)
	var out []node
	for _, name := range tickers {
		t, _ := registry.Lookup(name)
		endpoint, _, err := splitNodeURL(cfg.Nodes[name])
		if err != nil {
			return nil, fmt.Errorf("--node %s: %w", name, err)
		}
		b, err := backend.New(t, backend.Config{URL: endpoint, Signer: signer, Timeout: cfg.NodeTimeout,
			FallbackFee: cfg.FallbackFees[t.Ticker], Client: client(t.Ticker)})
		if err != nil {
			return nil, fmt.Errorf("--node %s: %w", name, err)
		}
		out = append(out, node{ticker: t.Ticker, endpoint: redactURL(endpoint), net: t.Net, backend: b})
	}
	for t := range cfg.FallbackFees {
		if _, ok := cfg.Nodes[t]; !ok {
			return nil, fmt.Errorf("--fallback-fee %s: no --node for %s", t, t)
		}
	}
	return out, nil
}

// timedTransport observes each node request's latency.
type timedTransport struct {
	base    http.RoundTripper
	observe func(d time.Duration, ok bool)
}

func (t timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := clock.Now()
	resp, err := t.base.RoundTrip(r)
	t.observe(time.Since(start), err == nil && resp.StatusCode < 500)
	return resp, err
}
