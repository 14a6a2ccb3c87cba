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

	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
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
	pub, err := receiver.ParsePublicKeyPEM([]byte(in.Get(t, "/pubkey/", nil, "").JSON["pubkey"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	verified := make(chan []byte, 1)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := receiver.NewVerifier(pub).Verify(r)
		if err != nil {
			http.Error(w, err.Error(), 401)
			return
		}
		verified <- body
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	defer local.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--server", in.Server.GRPCAddr(), "--apikey", in.KeyA, "--forward-to", local.URL + "/hook"}, &out, &errOut)
	}()
	// The relay starts at the end of the log; wait until it is connected.
	deadline := time.After(10 * time.Second)
	for in.Server.Notifier().Watchers() == 0 {
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
	row, err := in.Server.Notifier().EnqueueNow(ctx, notifier.Envelope{
		AddressID: a.ID, APIKeyID: a.APIKeyID, Ticker: "btc", AddressIn: a.AddressIn, CallbackURL: a.CallbackURL,
		Transport: payload.TransportJSON,
		Callback: payload.Callback{AddressIn: a.AddressIn, AddressOut: []payload.Share{{Address: "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", Share: decimal.NewFromInt(1)}},
			TxidIn: "ab", Confirmations: 1, RequiredConfirmations: 1, PaymentStatus: "confirmed", Coin: "btc", Decimals: 8, ValueCoin: decimal.RequireFromString("0.1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case body := <-verified:
		if !bytes.Equal(body, row.Body) {
			t.Fatalf("relayed body differs:\n%s\n%s", body, row.Body)
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
	row, err := in.Server.Notifier().EnqueueNow(ctx, notifier.Envelope{
		AddressID: a.ID, APIKeyID: a.APIKeyID, Ticker: "btc", AddressIn: a.AddressIn, CallbackURL: a.CallbackURL,
		Transport: payload.TransportGET,
		Callback: payload.Callback{AddressIn: a.AddressIn, AddressOut: []payload.Share{{Address: "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", Share: decimal.NewFromInt(1)}},
			TxidIn: "ab", Confirmations: 0, RequiredConfirmations: 1, PaymentStatus: "pending", Coin: "btc", Decimals: 8, ValueCoin: decimal.RequireFromString("0.1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"watch", "--server", in.Server.GRPCAddr(), "--apikey", in.KeyA, "--address", a.AddressIn}, &out, &errOut)
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
