package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// bareHealth is /healthz's whole answer to anyone while the server serves.
const bareHealth = `{"status":"success","health":"serving"}` + "\n"

// deadNodeServer is a server with one ltc node that is down (nothing
// listens on its port), polled once: its health details name the node's
// host and the poll's error, and an operator listener on a free port.
func deadNodeServer(t *testing.T, d store.Dialect) *servertest.Instance {
	t.Helper()
	in := servertest.Start(t, d, func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Prices = server.PricesTable
		c.Chains.Nodes = map[string]string{"ltc": "http://u:p@127.0.0.1:1/node-path?network=regtest"}
		c.API.OperatorAddr = "127.0.0.1:0"
	})
	if err := in.Server.Watcher("ltc").PollOnce(context.Background()); err == nil {
		t.Fatal("a poll of a node that is down succeeded")
	}
	return in
}

// get requests u with the headers given (name, value pairs).
func get(t *testing.T, u string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestHealthzDetailsAreTheOperators: /healthz answers anyone the bare
// status, with no node host and no error text; an operator's key (apikey
// header, apikey query parameter or Authorization: Bearer) sees every
// chain's details; a merchant's key is 403 and an unknown one 401, rather
// than a silently bare answer.
func TestHealthzDetailsAreTheOperators(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			in := deadNodeServer(t, d)
			op := in.OperatorKey(t)
			u := in.BaseURL + "/healthz"

			code, _, body := get(t, u)
			if code != http.StatusOK || body != bareHealth {
				t.Fatalf("anonymous /healthz: HTTP %d %s, want 200 %s", code, body, bareHealth)
			}
			for _, secret := range []string{"127.0.0.1", "node-path", "ltc", "refused", "unavailable", "chains"} {
				if strings.Contains(body, secret) {
					t.Errorf("anonymous /healthz shows %q: %s", secret, body)
				}
			}

			for name, h := range map[string][]string{
				"apikey header": {"apikey", op},
				"bearer":        {"Authorization", "Bearer " + op},
			} {
				code, _, body := get(t, u, h...)
				if code != http.StatusOK || !strings.Contains(body, `"chains":{"ltc":{"healthy":false,"error":"`) || !strings.Contains(body, `"node":"http://127.0.0.1:1"`) {
					t.Errorf("/healthz with an operator's key (%s): HTTP %d %s", name, code, body)
				}
				if strings.Contains(body, "u:p@") || strings.Contains(body, "node-path") {
					t.Errorf("/healthz shows the node's credentials: %s", body)
				}
			}
			if code, _, body := get(t, u+"?apikey="+op); code != http.StatusOK || !strings.Contains(body, `"chains"`) {
				t.Errorf("/healthz?apikey=operator key: HTTP %d %s", code, body)
			}

			code, _, body = get(t, u, "apikey", in.KeyA)
			if code != http.StatusForbidden || !strings.Contains(body, "needs an operator's key") || strings.Contains(body, "chains") {
				t.Errorf("/healthz with a merchant's key: HTTP %d %s, want 403", code, body)
			}
			code, hdr, body := get(t, u, "Authorization", "Bearer ph_unknown")
			if code != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") == "" || strings.Contains(body, "chains") {
				t.Errorf("/healthz with an unknown key: HTTP %d %v %s, want 401 with a challenge", code, hdr, body)
			}
		})
	}
}

// TestMetricsAreTheOperators: /metrics on the public listener is refused
// without a key (401 with a Bearer challenge, no metric in the body) and to
// a merchant's key (403), and served to an operator's key, as an apikey
// header or as Prometheus sends it (Authorization: Bearer).
func TestMetricsAreTheOperators(t *testing.T) {
	t.Parallel()
	in := deadNodeServer(t, store.SQLite)
	op := in.OperatorKey(t)
	u := in.BaseURL + "/metrics"
	code, hdr, body := get(t, u)
	if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(body, `"status":"error"`) ||
		!strings.Contains(body, "operator") || strings.Contains(body, "payhook_") {
		t.Errorf("anonymous /metrics: HTTP %d %v %s, want 401", code, hdr, body)
	}
	if code, _, body := get(t, u, "apikey", in.KeyA); code != http.StatusForbidden || strings.Contains(body, "payhook_") {
		t.Errorf("/metrics with a merchant's key: HTTP %d %s, want 403", code, body)
	}
	if code, _, body := get(t, u, "Authorization", "Bearer ph_unknown"); code != http.StatusUnauthorized || strings.Contains(body, "payhook_") {
		t.Errorf("/metrics with an unknown key: HTTP %d %s, want 401", code, body)
	}
	for name, h := range map[string][]string{
		"apikey header":                  {"apikey", op},
		"Authorization: Bearer":          {"Authorization", "Bearer " + op},
		"Authorization: bearer (case)":   {"Authorization", "bearer " + op},
		"Bearer beside a merchant's key": {"apikey", op, "Authorization", "Bearer " + in.KeyA},
	} {
		if code, _, body := get(t, u, h...); code != http.StatusOK || !strings.Contains(body, `payhook_chain_up{ticker="ltc"} 0`) {
			t.Errorf("/metrics with an operator's key (%s): HTTP %d, body has no payhook_chain_up", name, code)
		}
	}
}

// TestOperatorListener: --operator-listen serves /healthz with the details
// and /metrics without a key, and nothing else; the public listener keeps
// refusing them.
func TestOperatorListener(t *testing.T) {
	t.Parallel()
	in := deadNodeServer(t, store.SQLite)
	base := "http://" + in.Server.OperatorAddr()
	if code, _, body := get(t, base+"/healthz"); code != http.StatusOK || !strings.Contains(body, `"node":"http://127.0.0.1:1"`) {
		t.Errorf("operator /healthz: HTTP %d %s", code, body)
	}
	if code, _, body := get(t, base+"/metrics"); code != http.StatusOK || !strings.Contains(body, `payhook_chain_up{ticker="ltc"} 0`) {
		t.Errorf("operator /metrics: HTTP %d", code)
	}
	for _, p := range []string{"/info/", "/btc/create/", "/dashboard/", "/"} {
		if code, _, _ := get(t, base+p); code != http.StatusNotFound {
			t.Errorf("operator listener %s: HTTP %d, want 404", p, code)
		}
	}
	if code, _, _ := get(t, in.BaseURL+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("public /metrics beside the operator listener: HTTP %d, want 401", code)
	}
}
