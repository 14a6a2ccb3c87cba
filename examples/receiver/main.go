// Command receiver is a minimal merchant endpoint for payhook's low-level
// callbacks and, given the project's IPN secret, its merchant webhooks
// (checkout, deposit, subscription, test.webhook): it pins the project's
// public key once (fetched from /pubkey/ with the project's API key), and
// verifies every request before reading it: the x-ca-signature of a
// callback and, with --secret, the project's x-service-signature of every
// request too (a webhook carries only that one). It parses GET, form and
// JSON bodies alike, acknowledges each uuid once (and again, without
// reprocessing, on retries) and answers {"status":"ok"}.
//
//	go run ./examples/receiver --pubkey-url http://localhost:8080/pubkey/ --apikey $PAYHOOK_API_KEY --addr :3000 [--secret whsec_...]
package main

import (
	"context"
	"crypto/rsa"
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

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/receiver"
)

func main() {
	pubkeyURL := flag.String("pubkey-url", "", "the service's GET /pubkey/ URL on an origin you trust; fetched once at start")
	pubkeyFile := flag.String("pubkey-file", "", "PEM file holding the public key (instead of --pubkey-url)")
	apiKey := flag.String("apikey", "", "the project's API key, sent to --pubkey-url to get the project's callback key; default $PAYHOOK_API_KEY")
	addr := flag.String("addr", ":3000", "address to listen on")
	baseURL := flag.String("base-url", "", "scheme://host[:port] the service calls, when a TLS-terminating proxy is in front")
	secret := flag.String("secret", "", "the project's IPN secret (whsec_...): every request must then carry the project's x-service-signature (callbacks their x-ca-signature as well); default $IPN_SECRET")
	flag.Parse()
	// Defaults from the environment are read after parsing, so -h never
	// prints a key or a secret.
	if *apiKey == "" {
		*apiKey = os.Getenv("PAYHOOK_API_KEY")
	}
	if *secret == "" {
		*secret = os.Getenv("IPN_SECRET")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, *pubkeyURL, *pubkeyFile, *apiKey, *addr, *baseURL, *secret); err != nil {
		log.Error("receiver stopped", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, pubkeyURL, pubkeyFile, apiKey, addr, baseURL, secret string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	keys, err := loadKeys(ctx, pubkeyURL, pubkeyFile, apiKey, clock.Now())
	if err != nil {
		return err
	}
	log.Info("public key pinned", "sha256", fingerprint(keys.pub))
	if keys.prev != nil {
		log.Info("previous public key pinned", "sha256", fingerprint(keys.prev), "until", keys.prevUntil)
	}
	if pubkeyURL != "" && apiKey == "" {
		log.Warn("no --apikey: /pubkey/ gave the server's key, which verifies only the default project's callbacks")
	}
	if secret == "" {
		log.Warn("no --secret: only x-ca-signature is checked; merchant webhooks are refused")
	}

	var opts []receiver.Option
	if baseURL != "" {
		opts = append(opts, receiver.WithBaseURL(baseURL))
	}
	h := &handler{log: log, done: map[string]bool{}}
	srv := &http.Server{
		Addr:              addr,
		Handler:           logRequests(log, verified(h, keys, secret, opts, clock.Now)), // "verified" or "rejected (why)" for every request
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

// verified passes to next only the requests whose signatures verify.
// Without a secret: x-ca-signature against the pinned key. With a secret,
// every request must carry the project's HMAC (x-service-signature): a
// callback (it has x-ca-signature) must pass both checks, a merchant
// webhook (it has none) the HMAC. The RSA key proves payhook sent a
// callback; the HMAC that it was sent for this project: another project
// can make payhook call this URL too. The previous key, if pinned, is
// accepted until its time is up. now is the clock of that and of the
// HMAC's timestamp check.
func verified(next http.Handler, keys pinned, secret string, opts []receiver.Option, now func() time.Time) http.Handler {
	if secret != "" {
		opts = append(append([]receiver.Option(nil), opts...), receiver.WithClock(now))
	}
	callbacks := func(prev *rsa.PublicKey) http.Handler {
		o := append([]receiver.Option(nil), opts...)
		if prev != nil {
			o = append(o, receiver.WithPreviousKey(prev))
		}
		if secret != "" {
			o = append(o, receiver.WithSecrets(secret))
		}
		return receiver.NewVerifier(keys.pub, o...).Middleware(next)
	}
	current, rotating := callbacks(nil), http.Handler(nil)
	if keys.prev != nil {
		rotating = callbacks(keys.prev)
	}
	var webhooks http.Handler
	if secret != "" {
		webhooks = receiver.NewWebhookVerifier([]string{secret}, opts...).Middleware(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case webhooks != nil && r.Header.Get(receiver.SignatureHeader) == "":
			webhooks.ServeHTTP(w, r)
		case rotating != nil && (keys.prevUntil.IsZero() || now().Before(keys.prevUntil)):
			rotating.ServeHTTP(w, r)
		default:
			current.ServeHTTP(w, r)
		}
	})
}

// pinned are the callback keys this receiver accepts: the project's, and
// during a rotation the one it replaced, until prevUntil (zero: no end
// given).
type pinned struct {
	pub, prev *rsa.PublicKey
	prevUntil time.Time
}

func fingerprint(pub *rsa.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// loadKeys reads the PEM from a file, or fetches the keys once from
// GET /pubkey/ with the project's API key (JSON {"pubkey": "<PEM>",
// "previous_pubkey": "<PEM>", "previous_until": "<RFC 3339>"}; the
// previous key only during a rotation's grace). A previous key whose time
// is already up at now is not pinned.
func loadKeys(ctx context.Context, url, file, apiKey string, now time.Time) (pinned, error) {
	var keys pinned
	switch {
	case file != "":
		pemBytes, err := os.ReadFile(file)
		if err != nil {
			return keys, err
		}
		keys.pub, err = receiver.ParsePublicKeyPEM(pemBytes)
		return keys, err
	case url == "":
		return keys, errors.New("give --pubkey-url or --pubkey-file")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return keys, err
	}
	if apiKey != "" {
		req.Header.Set("apikey", apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return keys, fmt.Errorf("fetch public key: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return keys, fmt.Errorf("fetch public key: %s", resp.Status)
	}
	var body struct {
		Pubkey         string    `json:"pubkey"`
		PreviousPubkey string    `json:"previous_pubkey"`
		PreviousUntil  time.Time `json:"previous_until"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil || body.Pubkey == "" {
		return keys, fmt.Errorf("fetch public key: no pubkey in the response (%v)", err)
	}
	if keys.pub, err = receiver.ParsePublicKeyPEM([]byte(body.Pubkey)); err != nil {
		return keys, fmt.Errorf("fetch public key: %w", err)
	}
	if body.PreviousPubkey != "" && (body.PreviousUntil.IsZero() || now.Before(body.PreviousUntil)) {
		if keys.prev, err = receiver.ParsePublicKeyPEM([]byte(body.PreviousPubkey)); err != nil {
			return keys, fmt.Errorf("fetch public key: previous_pubkey: %w", err)
		}
		keys.prevUntil = body.PreviousUntil
	}
	return keys, nil
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
