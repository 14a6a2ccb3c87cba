// Command receiver is the loopback webhook receiver that bench/webhookx/run.sh
// points both payhook and WebhookX at, so that both do the same work: it
// answers every POST with 200 and {"status":"ok"} (what payhook's low-level
// callbacks need to count as acknowledged; WebhookX takes any 2xx), counts
// it, notes when it arrived and whether it carried a signature header, and
// verifies nothing (equal, cheap work for both senders). GET /stats reports
// the counts and rates as JSON; on SIGINT or SIGTERM it prints them and
// exits.
//
//	receiver [--addr 127.0.0.1:0] [--addr-file FILE]
//
// It listens on loopback only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "receiver:", err)
		}
		os.Exit(2)
	}
}

// run serves until ctx is done, then writes the final stats to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listening address (a loopback IP and a port; 0 picks a free one)")
	addrFile := fs.String("addr-file", "", "write the listening address (IP:port) to this file once listening")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr: %q is not a loopback IP", host)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
			_ = l.Close()
			return fmt.Errorf("--addr-file: %w", err)
		}
	}
	r := &receiver{}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shut)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	b, _ := json.MarshalIndent(r.stats(), "", "  ")
	_, werr := fmt.Fprintf(stdout, "%s\n", b)
	return errors.Join(err, werr)
}

// receiver counts deliveries.
type receiver struct {
	mu       sync.Mutex
	arrivals []time.Time // of every acknowledged POST
	signed   int         // POSTs with a header named *-signature
	other    int         // requests that were not POSTs (answered 405)
	bytes    int64       // request bodies
}

// stats is what GET /stats answers.
type stats struct {
	// Deliveries counts acknowledged POSTs; Signed those that carried a
	// header named *-signature (x-service-signature, Webhookx-Signature).
	Deliveries int   `json:"deliveries"`
	Signed     int   `json:"signed"`
	NotPost    int   `json:"not_post"`
	BodyBytes  int64 `json:"body_bytes"`
	// First and Last are when the first and the last delivery arrived.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// PerSecond is Deliveries-1 over the time from the first to the last;
	// Sustained the same over the middle 80% of deliveries (from the
	// 10th to the 90th percentile of arrivals), which leaves out the
	// start and the tail of a run.
	PerSecond float64 `json:"per_second"`
	Sustained float64 `json:"sustained_per_second"`
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet && req.URL.Path == "/stats" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.stats())
		return
	}
	n, _ := io.Copy(io.Discard, req.Body)
	now := clock.Now()
	signed := false
	for k := range req.Header {
		if strings.HasSuffix(strings.ToLower(k), "-signature") {
			signed = true
			break
		}
	}
	r.mu.Lock()
	if req.Method != http.MethodPost {
		r.other++
		r.mu.Unlock()
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	r.arrivals = append(r.arrivals, now)
	r.bytes += n
	if signed {
		r.signed++
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}

func (r *receiver) stats() stats {
	r.mu.Lock()
	at := slices.Clone(r.arrivals)
	s := stats{Deliveries: len(at), Signed: r.signed, NotPost: r.other, BodyBytes: r.bytes}
	r.mu.Unlock()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	if len(at) == 0 {
		return s
	}
	s.First, s.Last = at[0], at[len(at)-1]
	s.PerSecond = rate(at, 0, len(at)-1)
	s.Sustained = rate(at, len(at)/10, len(at)*9/10)
	return s
}

// rate is the deliveries per second from arrival i to arrival j of the
// sorted arrivals (j-i of them after the i-th); 0 when they span no time.
func rate(at []time.Time, i, j int) float64 {
	j = min(j, len(at)-1)
	if j <= i {
		return 0
	}
	d := at[j].Sub(at[i]).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(j-i) / d
}
