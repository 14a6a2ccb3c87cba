// Package deploy_test checks the operator files in deploy/: the alert
// rules and the Grafana dashboard use only metrics payhook exports, the
// rules pass promtool (syntax and their unit tests), and the systemd unit
// and Dockerfile keep the settings docs/operations.md promises.
package deploy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/metrics"
	"github.com/payhook/payhook/server/servertest"
)

// metricName finds payhook's metric names in PromQL.
var metricName = regexp.MustCompile(`\bpayhook_[a-z0-9_]+`)

// rules is the shape of a Prometheus rule file.
type rules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// exported returns every metric name a running dev server exposes on
// /metrics (samples and families: a histogram gives NAME, NAME_bucket,
// NAME_sum and NAME_count), after one REST and one gRPC request so the
// request metrics have series. It scrapes the operator listener, as
// prometheus/prometheus.yml does. The price ages exist only with live prices
// (no network here), the last-poll time once a watcher polled: they come
// from payhook's own collectors observing a fake coin and watcher.
func exported(t *testing.T) map[string]bool {
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.API.OperatorAddr = "127.0.0.1:0"
	})
	if r := in.Get(t, "/info/", nil, ""); r.Code != http.StatusOK {
		t.Fatalf("/info/: %d", r.Code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := payhookv1.NewAddressServiceClient(in.Conn).GetInfo(ctx, &payhookv1.GetInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	read := func(body io.Reader) {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
				names[f[2]] = true
				continue
			}
			if line == "" || line[0] == '#' {
				continue
			}
			names[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
		}
	}
	resp, err := http.Get("http://" + in.Server.OperatorAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	read(resp.Body)

	m := metrics.New(nil, nil)
	m.ObservePrices(func() metrics.PriceStats {
		return metrics.PriceStats{Ages: map[string]time.Duration{"btc": time.Minute}, MaxAge: time.Hour,
			Providers: []metrics.PriceProvider{{Name: "kraken", Up: true}}}
	})
	// A watcher that has polled (the dev server's watchers poll only when
	// asked here, so its last-poll time is not exported yet).
	m.ObserveChains(func() []metrics.ChainStat {
		return []metrics.ChainStat{{Ticker: "btc", Up: true, Head: 2, Cursor: 1, LastPoll: time.Unix(1700000000, 0)}}
	})
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for _, want := range []string{"payhook_build_info", "payhook_http_requests_total", "payhook_grpc_requests_total", "payhook_chain_lag_blocks"} {
		if !names[want] {
			t.Fatalf("a dev server does not export %s: the check below would prove nothing", want)
		}
	}
	return names
}

// TestDeployFilesUseExportedMetrics parses the alert rules, their unit
// tests and the dashboard, and checks each payhook metric they name is
// one payhook exports.
func TestDeployFilesUseExportedMetrics(t *testing.T) {
	names := exported(t)
	uses := map[string][]string{} // metric -> where

	b, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var r rules
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	var alerts []string
	for _, g := range r.Groups {
		for _, rule := range g.Rules {
			alerts = append(alerts, rule.Alert)
			if rule.Alert == "" || strings.TrimSpace(rule.Expr) == "" || rule.Labels["severity"] == "" || rule.Annotations["summary"] == "" {
				t.Errorf("rule %q: wants alert, expr, labels.severity and annotations.summary", rule.Alert)
			}
			for _, n := range metricName.FindAllString(rule.Expr, -1) {
				uses[n] = append(uses[n], "alert "+rule.Alert)
			}
		}
	}
	// What the issues ask alerts for: the delivery queue, failures, chain
	// lag and chain down, stale prices, checkouts failing for want of one.
	for _, want := range []string{"PayhookDeliveryQueueGrowing", "PayhookDeliveryFailureRate", "PayhookNotificationsFailedPermanently",
		"PayhookChainDown", "PayhookChainLagging", "PayhookPriceStale", "PayhookPricesUnavailable", "PayhookPriceProviderDown", "PayhookWebhookEndpointPaused"} {
		if !contains(alerts, want) {
			t.Errorf("alerts.yml lacks %s", want)
		}
	}
	b, err = os.ReadFile("prometheus/alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range metricName.FindAllString(string(b), -1) {
		uses[n] = append(uses[n], "alerts_test.yml")
	}

	b, err = os.ReadFile("grafana/payhook-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var titles []string
	for _, p := range dash.Panels {
		titles = append(titles, p.Title)
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range metricName.FindAllString(tg.Expr, -1) {
				uses[n] = append(uses[n], "panel "+p.Title)
			}
		}
	}
	for _, want := range []string{"Delivery queue depth", "Attempts by outcome", "Notifications finished", "Delivery attempt latency",
		"Chain lag", "HTTP requests by route", "HTTP errors (4xx, 5xx)", "gRPC calls by method", "gRPC errors by code"} {
		if !contains(titles, want) {
			t.Errorf("dashboard lacks panel %q", want)
		}
	}

	if len(uses) < 10 {
		t.Fatalf("only %d metric names found in deploy/: the parsing is broken", len(uses))
	}
	var used []string
	for n := range uses {
		used = append(used, n)
	}
	sort.Strings(used)
	for _, n := range used {
		if !names[n] {
			t.Errorf("%s (used by %s) is not a metric payhook exports", n, strings.Join(uses[n], ", "))
		}
	}
}

// TestAlertRulesPromtool runs promtool's syntax check of the rules and of
// the example configuration, and the rules' unit tests
// (prometheus/alerts_test.yml: each alert fires on the series it is for,
// with its annotations).
func TestAlertRulesPromtool(t *testing.T) {
	promtool := nodetest.Need(t, "promtool", "apt-get install prometheus (Debian's package provides promtool)")
	for _, args := range [][]string{
		{"check", "rules", "prometheus/alerts.yml"},
		{"check", "config", "prometheus/prometheus.yml"},
		{"test", "rules", "prometheus/alerts_test.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestSystemdUnitHardening keeps the unit's promises: a dynamic user, a
// read-only system, a state directory, no privilege gain.
func TestSystemdUnitHardening(t *testing.T) {
	b, err := os.ReadFile("systemd/payhook.service")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			set[k] = v
		}
	}
	for k, v := range map[string]string{
		"DynamicUser": "yes", "ProtectSystem": "strict", "StateDirectory": "payhook", "NoNewPrivileges": "yes",
		"ProtectHome": "yes", "PrivateTmp": "yes", "CapabilityBoundingSet": "", "ExecStart": "/usr/local/bin/payhook serve",
	} {
		if got, ok := set[k]; !ok || got != v {
			t.Errorf("payhook.service: %s=%q, want %q", k, got, v)
		}
	}
	if path, err := exec.LookPath("systemd-analyze"); err == nil {
		// Only where systemd is installed (not needed in CI): verify
		// catches unknown directives.
		out, err := exec.Command(path, "verify", "--man=no", "systemd/payhook.service").CombinedOutput()
		if err != nil && strings.Contains(string(out), "Unknown key") {
			t.Errorf("systemd-analyze verify: %s", out)
		}
	}
}

// TestDockerfile keeps the image's promises: a static build, a non-root
// user, the version stamped.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"CGO_ENABLED=0", "USER 65532:65532", "-X main.version=${VERSION}", "./cmd/payhook", "distroless/static", "AS build"} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
