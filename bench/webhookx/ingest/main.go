// Command ingest is the load generator of bench/webhookx/run.sh: it POSTs
// --n events to WebhookX's proxy (its ingest API) from --clients concurrent
// clients, as fast as the proxy takes them, and prints what it sent as
// JSON. Each event's data is a payment callback of the shape payhook's
// engine sends (a uuid, addresses, txid, value, status), so that both
// systems carry a body of the same kind and size to the shared receiver.
// A request the proxy does not answer 2xx is tried again, up to 3 times.
//
//	ingest --url http://127.0.0.1:9600/ [--n 20000] [--clients 32] [--event-type payment.confirmed]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/payhook/payhook/internal/clock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "ingest:", err)
		}
		os.Exit(2)
	}
}

// result is what ingest prints.
type result struct {
	Sent     int     `json:"sent"`
	Accepted int     `json:"accepted"`
	Failed   int     `json:"failed"`
	Retries  int     `json:"retries"`
	Seconds  float64 `json:"seconds"`
	// PerSecond is events accepted per second.
	PerSecond float64 `json:"per_second"`
	// BodyBytes is the size of one event's body.
	BodyBytes int `json:"body_bytes"`
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	target := fs.String("url", "", "WebhookX's proxy (ingest) URL")
	n := fs.Int("n", 20000, "events to send")
	clients := fs.Int("clients", 32, "concurrent clients")
	eventType := fs.String("event-type", "payment.confirmed", "event_type of every event (the endpoint subscribes to it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *target == "" || *n < 1 || *clients < 1 {
		return errors.New("--url is required; --n and --clients must be positive")
	}
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: *clients, MaxConnsPerHost: *clients},
	}
	var next, accepted, failed, retries atomic.Int64
	var size atomic.Int64
	var wg sync.WaitGroup
	start := clock.Now()
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(*n) {
					return
				}
				body := event(*eventType, i)
				size.Store(int64(len(body)))
				ok := false
				for try := 0; try < 3 && !ok && ctx.Err() == nil; try++ {
					if try > 0 {
						retries.Add(1)
					}
					ok = post(ctx, client, *target, body)
				}
				if ok {
					accepted.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	r := result{Sent: int(accepted.Load() + failed.Load()), Accepted: int(accepted.Load()), Failed: int(failed.Load()),
		Retries: int(retries.Load()), Seconds: secs, BodyBytes: int(size.Load())}
	if secs > 0 {
		r.PerSecond = float64(r.Accepted) / secs
	}
	b, _ := json.Marshal(r)
	if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// post sends one event; true when the proxy answered 2xx.
func post(ctx context.Context, client *http.Client, target string, body []byte) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode <= 299
}

// event is the i-th event: WebhookX's ingest envelope around a payment
// callback like the ones payhook's benchmark sends.
func event(eventType string, i int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"event_type": eventType,
		"data": map[string]any{
			"uuid":                   uuid.NewString(),
			"address_in":             "bc1qjcnhwsw976enmkvdlnyas0lcpc5fcee2gkl64h",
			"address_out":            "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
			"txid_in":                fmt.Sprintf("%064x", i),
			"confirmations":          1,
			"required_confirmations": 1,
			"payment_status":         "confirmed",
			"coin":                   "btc",
			"value_coin":             fmt.Sprintf("0.%08d", 100000+i),
			"order":                  "42",
		},
	})
	return b
}
