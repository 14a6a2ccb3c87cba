package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReceiver runs the receiver, sends it signed and unsigned POSTs and a
// GET, and checks what /stats and the final report count.
func TestReceiver(t *testing.T) {
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--addr-file", addrFile}, &out) }()
	var addr string
	deadline := clock.Now().Add(10 * time.Second)
	for addr == "" {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
			addr = strings.TrimSpace(string(b))
			break
		}
		if clock.Now().After(deadline) {
			t.Fatal("the receiver wrote no address")
		}
		select {
		case err := <-done:
			t.Fatalf("the receiver stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	base := "http://" + addr
	post := func(signature string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/hook", strings.NewReader(`{"a":1}`))
		if signature != "" {
			req.Header.Set(signature, "v1,abc")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		// payhook's acknowledgement rule for low-level callbacks.
		if ok, why := egress.Acknowledged(resp.StatusCode, body); err != nil || !ok {
			t.Fatalf("POST: HTTP %d %q (%s), %v", resp.StatusCode, body, why, err)
		}
	}
	post("X-Service-Signature")
	post("Webhookx-Signature")
	post("")
	resp, err := http.Get(base + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /hook: HTTP %d, want 405", resp.StatusCode)
	}
	resp, err = http.Get(base + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var s stats
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s.Deliveries != 3 || s.Signed != 2 || s.NotPost != 1 || s.BodyBytes != 21 || s.First.IsZero() || s.Last.Before(s.First) {
		t.Errorf("/stats: %+v", s)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var final stats
	if err := json.Unmarshal(out.Bytes(), &final); err != nil || final.Deliveries != 3 || final.Signed != 2 {
		t.Errorf("final report %q: %+v, %v", out.String(), final, err)
	}
}

// TestReceiverLoopbackOnly refuses an address that is not loopback.
func TestReceiverLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "localhost:0"} {
		if err := run(context.Background(), []string{"--addr", addr}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("--addr %s: %v, want a loopback error", addr, err)
		}
	}
}

// TestRate checks the rates /stats reports from arrival times.
func TestRate(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	every := func(n int, d time.Duration) []time.Time {
		at := make([]time.Time, n)
		for i := range at {
			at[i] = t0.Add(time.Duration(i) * d)
		}
		return at
	}
	// A slow start and tail around a steady middle of 1,000 per second.
	ramp := every(101, time.Millisecond)
	ramp = append([]time.Time{t0.Add(-5 * time.Second)}, ramp...)
	ramp = append(ramp, ramp[len(ramp)-1].Add(5*time.Second))
	for _, tc := range []struct {
		name    string
		at      []time.Time
		i, j    int
		want    float64
		allowed float64
	}{
		{"empty span", every(1, time.Millisecond), 0, 0, 0, 0},
		{"no time", []time.Time{t0, t0}, 0, 1, 0, 0},
		{"1000/s", every(1001, time.Millisecond), 0, 1000, 1000, 1e-6},
		{"j past the end", every(11, 100*time.Millisecond), 0, 50, 10, 1e-6},
		{"whole ramp", ramp, 0, len(ramp) - 1, 102.0 / 10.1, 1e-6},
		{"middle 80% of the ramp", ramp, len(ramp) / 10, len(ramp) * 9 / 10, 1000, 1e-6},
	} {
		if got := rate(tc.at, tc.i, tc.j); got < tc.want-tc.allowed || got > tc.want+tc.allowed {
			t.Errorf("%s: rate %v, want %v", tc.name, got, tc.want)
		}
	}
}
