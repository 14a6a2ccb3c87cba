package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestListenRelaysExactRequest: a developer's local server, which payhook
// itself may not reach, receives each new notification through the relay
// with the exact body and a signature that verifies against /pubkey/.
func TestListenRelaysExactRequest(t *testing.T) {
	in := servertest.Start(t, store.SQLite, func(c *server.Config) { c.ManualDelivery = true })
	r := in.Get(t, "/btc/create/", url.Values{"callback": {"https://shop.example/hook"}, "address": {"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"}, "json": {"1"}}, in.KeyA)
	if r.Code != 200 {
		t.Fatalf("create: %s", r.Body)
	}
	pub, err := receiver.ParsePublicKeyPEM([]byte(in.Get(t, "/pubkey/", nil, in.KeyA).JSON["pubkey"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	type relayed struct {
		body             []byte
		key, contentType string
	}
	verified := make(chan relayed, 1)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := receiver.NewVerifier(pub).Verify(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		verified <- relayed{body: body, key: r.Header.Get("Idempotency-Key"), contentType: r.Header.Get("Content-Type")}
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	defer local.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--server", in.BaseURL, "--apikey", in.KeyA, "--forward-to", local.URL + "/hook"}, &out, &errOut)
	}()
	// The relay starts at the end of the log; wait until it is connected.
	deadline := time.After(10 * time.Second)
	for in.Server.Notifier().Events.Watchers() == 0 {
		select {
		case <-deadline:
			t.Fatal("listen did not connect")
		case <-time.After(5 * time.Millisecond):
		}
	}

	a, err := in.Server.DB().Client.Address.Query().Where(entaddress.AddressIn(r.JSON["address_in"].(string))).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	row := in.EnqueueCallback(t, a, payAt(t, in, a, "ab", "0.1"), chains.StatusConfirmed)
	select {
	case got := <-verified:
		if !bytes.Equal(got.body, row.Body) {
			t.Fatalf("relayed body differs:\n%s\n%s", got.body, row.Body)
		}
		// The relay replays the headers of an attempt, as the dispatcher
		// sends them: the receiver can deduplicate on the uuid.
		if got.key != row.UUID || got.contentType != "application/json" {
			t.Fatalf("relayed Idempotency-Key %q and Content-Type %q, want %s and application/json", got.key, got.contentType, row.UUID)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("nothing relayed; listen said %q %q", out.String(), errOut.String())
	}
	// The relay prints the outcome once the local server answered.
	deadline = time.After(10 * time.Second)
	for !strings.Contains(out.String(), "acknowledged") {
		select {
		case <-deadline:
			t.Fatalf("listen printed %q", out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("listen: %v", err)
	}
	if !strings.Contains(out.String(), row.UUID+" confirmed -> POST") || !strings.Contains(out.String(), "HTTP 200, acknowledged") {
		t.Fatalf("listen printed %q", out.String())
	}
}

func TestWatchPrintsEvents(t *testing.T) {
	in := servertest.Start(t, store.SQLite, func(c *server.Config) { c.ManualDelivery = true })
	r := in.Get(t, "/btc/create/", url.Values{"callback": {"https://shop.example/w"}, "address": {"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"}}, in.KeyA)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := in.Server.DB().Client.Address.Query().Where(entaddress.AddressIn(r.JSON["address_in"].(string))).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	row := in.EnqueueCallback(t, a, payAt(t, in, a, "ab", "0.1"), chains.StatusPending)
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"watch", "--server", in.BaseURL, "--apikey", in.KeyA, "--address", a.AddressIn}, &out, &errOut)
	}()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(out.String(), row.UUID) {
		select {
		case <-deadline:
			t.Fatalf("watch printed %q %q", out.String(), errOut.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if line := out.String(); !strings.Contains(line, "btc "+a.AddressIn+" pending stored -> pending") {
		t.Fatalf("watch line %q", line)
	}
	if err := run(context.Background(), []string{"watch"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--apikey") {
		t.Fatalf("watch without a key: %v", err)
	}
}

// payAt records a payment of value to a, as the chain watcher would.
func payAt(t *testing.T, in *servertest.Instance, a *entdb.Address, txid, value string) *entdb.Payment {
	t.Helper()
	p, err := in.Server.DB().Client.Payment.Create().SetAddressID(a.ID).SetAPIKeyID(a.APIKeyID).SetTicker(a.Ticker).
		SetTxidIn(txid).SetValueCoin(decimal.RequireFromString(value)).Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
