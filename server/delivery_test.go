package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	fail   bool
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		fail := h.fail
		h.mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(h.Close)
	return h
}

// deliveryEnv starts a server with manual delivery on a test clock, a
// receiver it may reach, and an address of key A pointing at it.
type deliveryEnv struct {
	in    *servertest.Instance
	clock *clock.Manual
	hook  *hookReceiver
	addr  *entdb.Address
	pay   *entdb.Payment
}

func newDeliveryEnv(t *testing.T, d string, mutate ...func(*server.Config)) *deliveryEnv {
	t.Helper()
	hook := newHookReceiver(t)
	clk := clock.NewManual(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	in := servertest.Start(t, storetestDialect(d), append([]func(*server.Config){func(c *server.Config) {
		c.ManualDelivery = true
		c.Now = clk.Now
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook.URL+"/hook", servertest.A, servertest.B)
	}}, mutate...)...)
	r := in.Get(t, "/btc/create/", q("callback", hook.URL+"/hook", "cb_params", "order=7", "address", btcDest, "json", "1"), in.KeyA)
	wantStatus(t, r, 200)
	ctx := context.Background()
	a, err := in.Server.DB().Client.Address.Query().Where(entaddress.AddressIn(r.JSON["address_in"].(string))).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := in.Server.DB().Client.Payment.Create().SetAddressID(a.ID).SetAPIKeyID(a.APIKeyID).SetTxidIn("feed01").
		SetValueCoin(decimal.RequireFromString("0.002")).SetConfirmations(1).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &deliveryEnv{in: in, clock: clk, hook: hook, addr: a, pay: p}
}

func (e *deliveryEnv) enqueue(t *testing.T, a *entdb.Address, p *entdb.Payment, status string) *entdb.Notification {
	t.Helper()
	return e.in.EnqueueCallback(t, a, p, chains.Status(status))
}

func (e *deliveryEnv) deliver(t *testing.T) {
	t.Helper()
	if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func recvN(t *testing.T, s interface {
	Recv() (*payhookv1.WatchDeliveriesResponse, error)
}, n int) []*payhookv1.DeliveryEvent {
	t.Helper()
	out := make([]*payhookv1.DeliveryEvent, 0, n)
	for range n {
		r, err := s.Recv()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, r.GetEvent())
	}
	return out
}

func TestWatchDeliveries(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDeliveryEnv(t, string(d))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := payhookv1.NewDeliveryServiceClient(e.in.Conn)

			pending := e.enqueue(t, e.addr, e.pay, "pending")
			confirmed := e.enqueue(t, e.addr, e.pay, "confirmed")

			wctx, stopWatch := context.WithCancel(servertest.WithKey(ctx, e.in.KeyA))
			s, err := c.WatchDeliveries(wctx, &payhookv1.WatchDeliveriesRequest{IncludeRequest: true})
			if err != nil {
				t.Fatal(err)
			}
			first := recvN(t, s, 2)
			if first[0].GetKind() != "created" || first[0].GetUuid() != pending.UUID || first[1].GetUuid() != confirmed.UUID || first[0].GetCursor() >= first[1].GetCursor() {
				t.Fatalf("backlog %v", first)
			}
			rq := first[0].GetRequest()
			if rq.GetMethod() != "POST" || string(rq.GetBody()) != string(pending.Body) || rq.GetHeaders()[signer.SignatureHeader] == "" ||
				rq.GetHeaders()["idempotency-key"] != pending.UUID || rq.GetHeaders()["content-type"] != "application/json" {
				t.Fatalf("request in event %v", rq)
			}

			e.deliver(t)
			// The signature the event showed is the one the first attempt
			// made and stored (made once: the same bytes).
			if stored, err := e.in.Server.DB().Client.Notification.Get(ctx, pending.ID); err != nil || stored.Signature != rq.GetHeaders()[signer.SignatureHeader] {
				t.Fatalf("stored signature %q (%v), the event showed %q", stored.Signature, err, rq.GetHeaders()[signer.SignatureHeader])
			}
			live := recvN(t, s, 2)
			for _, ev := range live {
				if ev.GetKind() != "attempt" || ev.GetOutcome() != "acknowledged" || ev.GetHttpStatus() != 200 || ev.GetDeliveryStatus() != "acknowledged" || ev.GetAttempt() != 1 {
					t.Fatalf("live event %v", ev)
				}
			}
			seen := live[0].GetCursor()
			stopWatch() // the watcher drops after one of the two live events...

			e.hook.mu.Lock()
			e.hook.fail = true
			e.hook.mu.Unlock()
			completed := e.enqueue(t, e.addr, e.pay, "completed")
			e.deliver(t)

			// ... and resumes from the last cursor it saw: everything after
			// it, in order, once.
			s2, err := c.WatchDeliveries(servertest.WithKey(ctx, e.in.KeyA), &payhookv1.WatchDeliveriesRequest{AfterCursor: seen})
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.in.Server.DB().Client.DeliveryEvent.Query().Where(deliveryevent.IDGT(seen)).Order(entdb.Asc(deliveryevent.FieldID)).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 3 {
				t.Fatalf("%d events after the cursor, want 3 (ack of confirmed, created and failed attempt of completed)", len(want))
			}
			resumed := recvN(t, s2, len(want))
			for i, ev := range resumed {
				if ev.GetCursor() != want[i].ID {
					t.Fatalf("resumed event %d has cursor %d, want %d", i, ev.GetCursor(), want[i].ID)
				}
			}
			last := resumed[len(resumed)-1]
			if last.GetUuid() != completed.UUID || last.GetOutcome() != "failed" || last.GetDeliveryStatus() != "retrying" || last.GetNextAttemptAt() == nil || last.GetHttpStatus() != 502 {
				t.Fatalf("failed attempt event %v", last)
			}

			// Filters: by uuid, and by address.
			s3, err := c.WatchDeliveries(servertest.WithKey(ctx, e.in.KeyA), &payhookv1.WatchDeliveriesRequest{Uuid: completed.UUID})
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range recvN(t, s3, 2) {
				if ev.GetUuid() != completed.UUID {
					t.Fatalf("uuid filter let %s through", ev.GetUuid())
				}
			}

			// Key B sees only its own deliveries: its first event is its own.
			rb := e.in.Get(t, "/btc/create/", q("callback", e.hook.URL+"/hook", "address", btcDest), e.in.KeyB)
			wantStatus(t, rb, 200)
			bAddr, err := e.in.Server.DB().Client.Address.Query().Where(entaddress.AddressIn(rb.JSON["address_in"].(string))).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := c.WatchDeliveries(servertest.WithKey(ctx, e.in.KeyB), &payhookv1.WatchDeliveriesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			bPay, err := e.in.Server.DB().Client.Payment.Create().SetAddressID(bAddr.ID).SetAPIKeyID(bAddr.APIKeyID).SetTxidIn("feed02").
				SetValueCoin(decimal.RequireFromString("0.003")).SetConfirmations(1).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			bRow := e.enqueue(t, bAddr, bPay, "pending")
			if ev := recvN(t, sb, 1)[0]; ev.GetUuid() != bRow.UUID {
				t.Fatalf("key B saw %s (address %s), not its own notification", ev.GetUuid(), ev.GetAddressIn())
			}

			// A watch needs a key.
			s4, err := c.WatchDeliveries(ctx, &payhookv1.WatchDeliveriesRequest{})
			if err == nil {
				_, err = s4.Recv()
			}
			wantCode(t, err, 16 /* Unauthenticated */, "missing api key")
		})
	}
}

func TestLogsShowDeliveries(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDeliveryEnv(t, string(d))
			e.hook.fail = true
			n := e.enqueue(t, e.addr, e.pay, "confirmed")
			e.deliver(t)
			e.clock.Advance(time.Minute)
			e.hook.mu.Lock()
			e.hook.fail = false
			e.hook.mu.Unlock()
			e.deliver(t)

			r := e.in.Get(t, "/btc/logs/", q("callback", e.addr.CallbackURL), e.in.KeyA)
			wantStatus(t, r, 200)
			cbs := r.JSON["callbacks"].([]any)
			if len(cbs) != 1 {
				t.Fatalf("callbacks %s", r.Body)
			}
			cb := cbs[0].(map[string]any)
			logs := cb["logs"].([]any)
			dels := cb["deliveries"].([]any)
			if len(logs) != 2 || len(dels) != 1 {
				t.Fatalf("logs %d deliveries %d: %s", len(logs), len(dels), r.Body)
			}
			l0, l1 := logs[0].(map[string]any), logs[1].(map[string]any)
			if l0["outcome"] != "failed" || l0["response_status"].(float64) != 502 || l0["next_attempt_at"] == nil || l1["outcome"] != "acknowledged" || l0["uuid"] != n.UUID {
				t.Fatalf("logs %s", r.Body)
			}
			del := dels[0].(map[string]any)
			if del["status"] != "acknowledged" || del["attempts"].(float64) != 2 || del["uuid"] != n.UUID || del["expires_at"] == nil {
				t.Fatalf("delivery %s", r.Body)
			}
			if _, has := del["next_attempt_at"]; has {
				t.Fatalf("an acknowledged delivery shows a next attempt: %s", r.Body)
			}
		})
	}
}

func storetestDialect(d string) store.Dialect { return store.Dialect(d) }

// TestSlowWatcherNeverSlowsDelivery: a watcher that stops reading (its
// stream's flow-control window fills up) delays only itself; when it reads
// again it gets every event, in order.
func TestSlowWatcherNeverSlowsDelivery(t *testing.T) {
	t.Parallel()
	e := newDeliveryEnv(t, "sqlite")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := payhookv1.NewDeliveryServiceClient(e.in.Conn).WatchDeliveries(servertest.WithKey(ctx, e.in.KeyA), &payhookv1.WatchDeliveriesRequest{IncludeRequest: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for range n {
		e.enqueue(t, e.addr, e.pay, "pending")
	}
	e.deliver(t) // returns only when all n attempts are recorded
	acked, err := e.in.Server.DB().Client.Notification.Query().Count(ctx)
	if err != nil || acked != n {
		t.Fatalf("%d notifications, %v", acked, err)
	}
	evs := recvN(t, s, 2*n)
	for i := 1; i < len(evs); i++ {
		if evs[i].GetCursor() <= evs[i-1].GetCursor() {
			t.Fatalf("event %d out of order", i)
		}
	}
	attempts := 0
	for _, ev := range evs {
		if ev.GetKind() == "attempt" && ev.GetOutcome() == "acknowledged" {
			attempts++
		}
	}
	if attempts != n {
		t.Fatalf("%d acknowledged attempt events, want %d", attempts, n)
	}
}
