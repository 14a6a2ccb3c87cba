package server_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
)

// newLiveDevEnv is a --dev server with its background loops on (the
// watchers poll only when woken: their interval is an hour) and a verifying
// sink.
func newLiveDevEnv(t *testing.T, d store.Dialect) *devEnv {
	t.Helper()
	return newDevEnv(t, d, func(c *server.Config) {
		c.ManualDelivery = false
		c.Chains.WatchInterval = time.Hour
	})
}

// minedHeight mines blocks through the REST API and returns the new height.
func (e *devEnv) minedHeight(t *testing.T, ticker string, blocks int) int64 {
	t.Helper()
	r := e.post(t, "/devnet/"+ticker+"/mine/", map[string]any{"blocks": blocks})
	wantStatus(t, r, 200)
	h, err := strconv.ParseInt(fmt.Sprint(r.JSON["height"]), 10, 64)
	if err != nil {
		t.Fatalf("mine answered %s", r.Body)
	}
	return h
}

// TestDevnetMineWakesTheWatcher: with the background loops on, mine answers
// once the block exists and wakes the chain's watcher, the one poller of the
// chain; waiting on the watcher's WaitHeight (not on the clock) then finds
// every payment of the block credited, forwarded and its callbacks stored.
func TestDevnetMineWakesTheWatcher(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			e := newLiveDevEnv(t, d)
			tk, _ := family.DefaultRegistry().Lookup("btc")
			dest, _ := destinations(t, tk)
			var callbacks []string
			for i := range 3 {
				cb := fmt.Sprintf("%s/hook?n=%d", e.sink.URL, i)
				r := e.in.Get(t, "/btc/create/", q("callback", cb, "address", dest, "confirmations", "1", "json", "1"), e.in.KeyA)
				wantStatus(t, r, 200)
				wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": r.JSON["address_in"], "value_coin": "0.01"}), 200)
				callbacks = append(callbacks, cb)
			}
			h := e.minedHeight(t, "btc", 1)
			if err := e.in.Server.Watcher("btc").WaitHeight(ctx, h); err != nil {
				t.Fatal(err)
			}
			for _, cb := range callbacks {
				r := e.in.Get(t, "/btc/logs/", q("callback", cb), e.in.KeyA)
				wantStatus(t, r, 200)
				cbs, _ := r.JSON["callbacks"].([]any)
				if len(cbs) != 1 || cbs[0].(map[string]any)["payment_status"] != "completed" {
					t.Fatalf("logs of %s after WaitHeight(%d): %s", cb, h, r.Body)
				}
			}
		})
	}
}

// TestMeasureMineRPC measures, on PostgreSQL, how long POST
// /devnet/btc/mine takes to answer for a block paying PAYHOOK_MEASURE
// addresses (2,000 when it is 1), and how long until the watcher has stored
// every payment and callback. Skipped unless the variable is set.
func TestMeasureMineRPC(t *testing.T) {
	v := os.Getenv("PAYHOOK_MEASURE")
	if v == "" {
		t.Skip("set PAYHOOK_MEASURE to measure")
	}
	n := 2000
	if m, err := strconv.Atoi(v); err == nil && m > 1 {
		n = m
	}
	ctx := context.Background()
	e := newLiveDevEnv(t, store.Postgres)
	tk, _ := family.DefaultRegistry().Lookup("btc")
	dest, _ := destinations(t, tk)
	for i := range n {
		cb := fmt.Sprintf("%s/hook?n=%d", e.sink.URL, i)
		r := e.in.Get(t, "/btc/create/", q("callback", cb, "address", dest, "confirmations", "1", "json", "1"), e.in.KeyA)
		wantStatus(t, r, 200)
		wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": r.JSON["address_in"], "value_coin": "0.01"}), 200)
	}
	start := clock.Now()
	h := e.minedHeight(t, "btc", 1)
	answered := time.Since(start)
	if err := e.in.Server.Watcher("btc").WaitHeight(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d payments: mine answered in %v; the watcher stored every payment and callback after %v",
		n, answered.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
