// Command receiver is a minimal merchant endpoint for payhook's low-level
// callbacks and, given the project's IPN secret, its merchant webhooks
// (checkout, deposit, subscription, test.webhook): it pins the service's
// public key once, verifies the x-ca-signature of every callback (or the
// x-service-signature of a webhook that has none) before reading it,
// parses GET, form and JSON bodies alike, acknowledges each uuid once (and
// again, without reprocessing, on retries) and answers {"status":"ok"}.
//
//	go run ./examples/receiver --pubkey-url http://localhost:8080/pubkey/ --addr :3000 [--secret whsec_...]
package main

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/receiver"
)

func main() {
	pubkeyURL := flag.String("pubkey-url", "", "the service's GET /pubkey/ URL on an origin you trust; fetched once at start")
	pubkeyFile := flag.String("pubkey-file", "", "PEM file holding the public key (instead of --pubkey-url)")
	addr := flag.String("addr", ":3000", "address to listen on")
	baseURL := flag.String("base-url", "", "scheme://host[:port] the service calls, when a TLS-terminating proxy is in front")
	secret := flag.String("secret", os.Getenv("IPN_SECRET"), "the project's IPN secret (whsec_...), to verify merchant webhooks (x-service-signature); default $IPN_SECRET")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, *pubkeyURL, *pubkeyFile, *addr, *baseURL, *secret); err != nil {
		log.Error("receiver stopped", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, pubkeyURL, pubkeyFile, addr, baseURL, secret string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pemBytes, err := loadKey(ctx, pubkeyURL, pubkeyFile)
	if err != nil {
		return err
	}
	pub, err := receiver.ParsePublicKeyPEM(pemBytes)
	if err != nil {
		return err
	}
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	log.Info("public key pinned", "sha256", hex.EncodeToString(sum[:]))

	var opts []receiver.Option
	if baseURL != "" {
		opts = append(opts, receiver.WithBaseURL(baseURL))
	}
	h := &handler{log: log, done: map[string]bool{}}
	// Low-level callbacks carry x-ca-signature (and a project HMAC beside
	// it); merchant webhooks carry only the HMAC, verified with the secret.
	handler := receiver.NewVerifier(pub, opts...).Middleware(h)
	if secret != "" {
		callbacks, webhooks := handler, receiver.NewWebhookVerifier([]string{secret}, opts...).Middleware(h)
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Ca-Signature") != "" {
				callbacks.ServeHTTP(w, r)
				return
			}
			webhooks.ServeHTTP(w, r)
		})
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           logRequests(log, handler), // "verified" or "rejected (why)" for every request
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       20 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("listening", "addr", addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadKey reads the PEM from a file, or fetches it once from GET /pubkey/
// (JSON {"pubkey": "<PEM>"}).
func loadKey(ctx context.Context, url, file string) ([]byte, error) {
	switch {
	case file != "":
		return os.ReadFile(file)
	case url == "":
		return nil, errors.New("give --pubkey-url or --pubkey-file")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch public key: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch public key: %s", resp.Status)
	}
	var body struct {
		Pubkey string `json:"pubkey"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil || body.Pubkey == "" {
		return nil, fmt.Errorf("fetch public key: no pubkey in the response (%v)", err)
	}
	return []byte(body.Pubkey), nil
}

// handler sees only callbacks whose signature verified.
type handler struct {
	log  *slog.Logger
	mu   sync.Mutex
	done map[string]bool // processed uuids; use your database in production
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	markVerified(w)
	f, err := fields(r)
	if err != nil || f["uuid"] == "" {
		http.Error(w, "malformed callback", http.StatusBadRequest)
		return
	}
	// Holding the lock while processing keeps two deliveries of one uuid
	// from both being processed; a database would use a unique key.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done[f["uuid"]] {
		h.log.Info("callback already processed, acknowledged again", "uuid", f["uuid"])
		ack(w)
		return
	}
	if err := h.process(f); err != nil {
		h.log.Warn("callback not processed", "uuid", f["uuid"], "err", err)
		http.Error(w, "not processed", http.StatusUnprocessableEntity) // the service retries
		return
	}
	h.done[f["uuid"]] = true
	ack(w)
}

// process is where a shop credits the order. Statuses never regress and
// events may come late or twice: credit each txid_in once, at confirmed or
// completed, and check amounts against your own records.
func (h *handler) process(f map[string]string) error {
	if ev := f["event_type"]; ev != "" && !strings.HasPrefix(ev, "custom.") {
		// A merchant webhook: ship an order on invoice_status paid.
		h.log.Info("webhook", "uuid", f["uuid"], "event", ev, "payment_id", f["payment_id"],
			"invoice_status", f["invoice_status"], "paid", f["paid_amount"]+" "+f["paid_coin"],
			"value", f["value"]+" "+f["currency"], "txid_in", f["txid_in"], "confirmations", f["confirmations"])
		return nil
	}
	value, err := decimal.NewFromString(f["value_coin"]) // never float64 for money
	if err != nil {
		return fmt.Errorf("value_coin: %w", err)
	}
	var convert any // a JSON-encoded string in every transport: parse it again
	if s := f["value_coin_convert"]; s != "" {
		if err := json.Unmarshal([]byte(s), &convert); err != nil {
			return fmt.Errorf("value_coin_convert: %w", err)
		}
	}
	h.log.Info("callback",
		"uuid", f["uuid"], "status", f["payment_status"], "coin", f["coin"],
		"value_coin", value, "confirmations", f["confirmations"]+"/"+f["required_confirmations"],
		"address_in", f["address_in"], "txid_in", f["txid_in"], "txid_out", f["txid_out"],
		"value_forwarded_coin", f["value_forwarded_coin"], "fee_coin", f["fee_coin"],
		"value_coin_convert", convert, "order", f["order"])
	return nil
}

// fields returns the callback's fields as text, whatever the transport:
// strings as they are, numbers and address_out as their JSON text, nulls
// left out. The Middleware put the verified body back in r.Body.
func fields(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	switch {
	case r.Method == http.MethodGet:
		for k, v := range r.URL.Query() {
			out[k] = v[0]
		}
	case strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		var m map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			return nil, err
		}
		for k, raw := range m {
			var s string
			switch {
			case string(raw) == "null":
			case json.Unmarshal(raw, &s) == nil:
				out[k] = s
			default:
				out[k] = string(raw)
			}
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		for k, v := range r.PostForm {
			out[k] = v[0]
		}
	}
	return out, nil
}

func ack(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`)
}
