package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/servertest"
)

// hitCounter is a loopback webhook receiver that acknowledges everything
// and counts what reached it.
type hitCounter struct {
	*httptest.Server
	hits atomic.Int64
}

func newHitCounter(t *testing.T) *hitCounter {
	h := &hitCounter{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.hits.Add(1)
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(h.Close)
	return h
}

// TestPrivateEndpointIsOneProjects: --allow-private-endpoint PROJECT=URL
// lets one project's webhooks reach a loopback receiver. Another project
// cannot name that endpoint anywhere a destination is accepted: an
// address's callback, a checkout's, deposit's or subscription's
// notify_url, a test webhook, the payout webhook the operator sets for it.
// Each refusal is a 400 naming the parameter and the host rule, as for any
// private URL; the project the endpoint is allowed to is accepted
// everywhere.
func TestPrivateEndpointIsOneProjects(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			recv := newHitCounter(t)
			hook := recv.URL + "/hook"
			in := servertest.Start(t, d, func(c *server.Config) {
				c.ManualDelivery = true
				c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook, servertest.A)
			})
			opKey, _, err := apikey.CreateOperator(context.Background(), in.Server.DB().Client, "ops", clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name, path, param string
				query             url.Values
				post              bool
			}{
				{"address callback", "/btc/create/", "callback", q("callback", hook, "address", btcDest), false},
				{"checkout notify_url", "/checkout/request/", "notify_url", q("notify_url", hook, "value", "10", "currency", "USD"), false},
				{"deposit notify_url", "/deposit/request/", "notify_url", q("notify_url", hook, "currency", "USD"), false},
				{"subscription notify_url", "/subscription/create/", "notify_url", q("notify_url", hook, "currency", "USD", "option", "1m:50.00"), false},
				{"test webhook", "/notification/test/", "url", q("url", hook), true},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					call := func(key string) servertest.Response {
						if c.post {
							return in.Do(t, http.MethodPost, in.BaseURL+c.path+"?"+c.query.Encode(), key)
						}
						return in.Get(t, c.path, c.query, key)
					}
					r := call(in.KeyB)
					wantStatus(t, r, http.StatusBadRequest)
					if msg := fmt.Sprint(r.JSON["error"]); !strings.HasPrefix(msg, c.param+": ") || !strings.Contains(msg, "host 127.0.0.1 is a loopback address") {
						t.Fatalf("project B: error %q; want it to name %s and the host rule", msg, c.param)
					}
					wantStatus(t, call(in.KeyA), http.StatusOK)
				})
			}
			t.Run("payout webhook", func(t *testing.T) {
				set := func(projectID int64) servertest.Response {
					return in.PostJSON(t, "/operator/project/payout-notify/", fmt.Sprintf(`{"project_id":%d,"payout_notify_url":%q}`, projectID, hook), opKey)
				}
				r := set(in.ProjectB)
				wantStatus(t, r, http.StatusBadRequest)
				if msg := fmt.Sprint(r.JSON["error"]); !strings.Contains(msg, "payout_notify_url") || !strings.Contains(msg, "127.0.0.1 is a loopback address") {
					t.Fatalf("project B: error %q", msg)
				}
				wantStatus(t, set(in.ProjectA), http.StatusOK)
			})
			// Nothing of B's was stored: the receiver is reached by A's
			// webhooks only.
			n, err := in.Server.DB().Client.Notification.Query().Where(notification.OwnerID(in.ProjectB)).Count(context.Background())
			if err != nil || n != 0 {
				t.Fatalf("project B has %d notifications (%v)", n, err)
			}
		})
	}
}

// TestPrivateEndpointOfAnotherProjectRefusedAtDelivery: the exception is
// checked for the notification's project at every attempt, not only when
// its URL was accepted. Project B's test webhook was stored while the
// endpoint was B's; after a restart that gives the endpoint to project A
// only, B's notification is refused before anything is sent (blocked,
// with the host rule), and A's webhook to it is delivered.
func TestPrivateEndpointOfAnotherProjectRefusedAtDelivery(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			recv := newHitCounter(t)
			hook := recv.URL + "/hook"
			first := servertest.Start(t, d, func(c *server.Config) {
				c.ManualDelivery = true
				c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook, servertest.B)
			})
			r := first.Do(t, http.MethodPost, first.BaseURL+"/notification/test/?url="+url.QueryEscape(hook), first.KeyB)
			wantStatus(t, r, http.StatusOK)
			stored, _ := r.JSON["uuid"].(string)
			if err := first.Server.Stop(); err != nil {
				t.Fatal(err)
			}
			// The same database, the endpoint now project A's (the flag
			// names the first server's project A by its id).
			second := servertest.Start(t, d, func(c *server.Config) {
				c.Store.DB = first.DSN
				c.ManualDelivery = true
				c.Delivery.AllowPrivateEndpoints = []string{fmt.Sprintf("%d=%s", first.ProjectA, hook)}
			})
			run := func() {
				t.Helper()
				if err := second.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			run()
			if n := recv.hits.Load(); n != 0 {
				t.Fatalf("the receiver got %d requests of project B", n)
			}
			ctx := context.Background()
			row, err := second.Server.DB().Client.Notification.Query().Where(notification.UUID(stored)).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			at, err := row.QueryDeliveryAttempts().All(ctx)
			if err != nil || len(at) != 1 || at[0].Outcome != deliveryattempt.OutcomeBlocked || !strings.Contains(at[0].Error, "127.0.0.1 is a loopback address") {
				t.Fatalf("attempts of B's notification: %+v %v", at, err)
			}
			keyA, _, err := apikey.CreateInProject(ctx, second.Server.DB().Client, "first A", first.ProjectA, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, second.Do(t, http.MethodPost, second.BaseURL+"/notification/test/?url="+url.QueryEscape(hook), keyA), http.StatusOK)
			run()
			if n := recv.hits.Load(); n != 1 {
				t.Fatalf("the receiver got %d requests, want project A's one", n)
			}
		})
	}
}

// TestPrivateEndpointFlag: PROJECT must be the id of an existing project;
// a URL alone is the default project's (created when there is none), whose
// keys may then use it while other projects may not.
func TestPrivateEndpointFlag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct{ entry, want string }{
		{"shop=http://127.0.0.1:3000/hook", `want PROJECT=URL`},
		{"0=http://127.0.0.1:3000/hook", `"0" before "=" is not an owner id`},
		{"999=http://127.0.0.1:3000/hook", "there is no project 999"},
	} {
		cfg := server.Config{
			Store:    server.StoreConfig{DB: storetest.DSN(t, store.SQLite)},
			API:      server.APIConfig{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"},
			Keys:     server.KeysConfig{Seed: servertest.Seed},
			Delivery: notifier.Delivery{AllowPrivateEndpoints: []string{c.entry}},
			Out:      io.Discard,
			Dev:      true,
		}
		s, err := server.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			_ = s.Stop()
			t.Errorf("%s: the server started", c.entry)
			continue
		}
		if !strings.Contains(err.Error(), "--allow-private-endpoint") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to name the flag and %q", c.entry, err, c.want)
		}
	}

	recv := newHitCounter(t)
	hook := recv.URL + "/hook"
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.ManualDelivery = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook, servertest.Default)
	})
	key, _, err := apikey.Create(ctx, in.Server.DB().Client, "default", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, in.Get(t, "/btc/create/", q("callback", hook, "address", btcDest), key), http.StatusOK)
	wantStatus(t, in.Get(t, "/btc/create/", q("callback", hook, "address", btcDest), in.KeyA), http.StatusBadRequest)
}
