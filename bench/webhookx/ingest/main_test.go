package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestIngest sends events to a proxy that refuses the first attempt of
// every fifth event (by its txid's number), and checks that every event arrived once, well formed and distinct, and
// that the report counts the retries.
func TestIngest(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	tried := map[string]bool{}
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			EventType string `json:"event_type"`
			Data      struct {
				UUID string `json:"uuid"`
				Txid string `json:"txid_in"`
			} `json:"data"`
		}
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.EventType != "payment.confirmed" || ev.Data.UUID == "" ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("bad event: %+v, %v", ev, err)
		}
		mu.Lock()
		defer mu.Unlock()
		requests++
		if i, err := strconv.ParseInt(ev.Data.Txid[48:], 16, 64); err == nil && i%5 == 0 && !tried[ev.Data.UUID] {
			tried[ev.Data.UUID] = true
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		seen[ev.Data.UUID]++
	}))
	defer srv.Close()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--url", srv.URL, "--n", "100", "--clients", "4"}, &out); err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 100 || r.Accepted != 100 || r.Failed != 0 || r.Retries != 20 || requests != 120 || r.PerSecond <= 0 || r.BodyBytes < 300 {
		t.Errorf("%d distinct events accepted after %d requests; report %+v", len(seen), requests, r)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("event %s accepted %d times", id, k)
		}
	}
}
