package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	entidem "github.com/payhook/payhook/ent/db/idempotencykey"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/idempotency"
	"github.com/payhook/payhook/server/servertest"
)

// idemResponse is a REST answer with its headers.
type idemResponse struct {
	code   int
	body   string
	header http.Header
}

// restWithKey sends method path?query (and body, as JSON, when not empty)
// with the apikey header and, unless idemKey is "", Idempotency-Key.
func restWithKey(t *testing.T, in *servertest.Instance, method, path string, query url.Values, body, key, idemKey string) idemResponse {
	t.Helper()
	u := in.BaseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("apikey", key)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return idemResponse{code: resp.StatusCode, body: string(b), header: resp.Header}
}

// TestIdempotencyKey (issue 24, finding 6): a mutating call repeated with
// its Idempotency-Key answers the first call's status and body (marked
// Idempotent-Replayed) and makes nothing twice, over REST, gRPC and
// Connect alike; the key with another request is 409; keys are per API
// key; a failed call runs again on retry; reads ignore the header; a key
// over 255 characters is 400; a call whose instance crashed (its key left
// in progress) is 409 until the lease ends, and then, if it had committed
// a write (its row marked in that write's transaction), 409 interrupted
// until the key expires, or, if it had written nothing, run on retry; a
// key is honoured 24 hours, then forgotten and deleted.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
			in := servertest.Start(t, d, func(c *server.Config) { c.Now = clk.Now })
			ctx := context.Background()
			db := in.Server.DB().Client
			const hook = "https://shop.example/hook"
			checkouts := func() int {
				t.Helper()
				n, err := db.Invoice.Query().Where(entinvoice.ProjectID(in.ProjectA)).Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			order := url.Values{"notify_url": {hook}, "value": {"10"}, "currency": {"USD"}}

			// REST: the retry answers the same status and body, and no
			// second checkout exists.
			first := restWithKey(t, in, http.MethodGet, "/checkout/request/", order, "", in.KeyA, "order-42")
			if first.code != 200 || !strings.Contains(first.body, `"payment_id":"chk_`) || first.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("first call: %d %v %s", first.code, first.header, first.body)
			}
			for range 2 {
				again := restWithKey(t, in, http.MethodGet, "/checkout/request/", order, "", in.KeyA, "order-42")
				if again.code != first.code || again.body != first.body || again.header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("retry: %d %v %s\nfirst: %s", again.code, again.header, again.body, first.body)
				}
			}
			if n := checkouts(); n != 1 {
				t.Fatalf("%d checkouts after three calls with one key", n)
			}
			// Another body with the key is a 409; so is another method.
			other := url.Values{"notify_url": {hook}, "value": {"11"}, "currency": {"USD"}}
			if r := restWithKey(t, in, http.MethodGet, "/checkout/request/", other, "", in.KeyA, "order-42"); r.code != 409 ||
				!strings.Contains(r.body, "Idempotency-Key reused with a different request") {
				t.Fatalf("another body: %d %s", r.code, r.body)
			}
			if r := restWithKey(t, in, http.MethodGet, "/deposit/request/", url.Values{"notify_url": {hook}}, "", in.KeyA, "order-42"); r.code != 409 {
				t.Fatalf("another method: %d %s", r.code, r.body)
			}
			// A POST body: the same JSON twice is one test webhook.
			tw := restWithKey(t, in, http.MethodPost, "/notification/test/", nil, `{"url":"`+hook+`"}`, in.KeyA, "test-1")
			tw2 := restWithKey(t, in, http.MethodPost, "/notification/test/", nil, `{"url":"`+hook+`"}`, in.KeyA, "test-1")
			if tw.code != 200 || tw2.body != tw.body || tw2.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("test webhook twice: %d %s / %s", tw.code, tw.body, tw2.body)
			}
			// The project's other key, and another project's key, have keys
			// of their own.
			for _, k := range []string{in.KeyA2, in.KeyB} {
				r := restWithKey(t, in, http.MethodGet, "/checkout/request/", order, "", k, "order-42")
				if r.code != 200 || r.body == first.body || r.header.Get("Idempotent-Replayed") != "" {
					t.Fatalf("another API key's order-42: %d %s", r.code, r.body)
				}
			}
			if n := checkouts(); n != 2 {
				t.Fatalf("%d checkouts of project A, want 2", n)
			}
			// A failed call keeps nothing: its retry runs (and fails) again.
			bad := url.Values{"notify_url": {hook}, "value": {"10"}, "currency": {"XYZ"}}
			for range 2 {
				if r := restWithKey(t, in, http.MethodGet, "/checkout/request/", bad, "", in.KeyA, "bad-1"); r.code != 400 {
					t.Fatalf("a failing call: %d %s", r.code, r.body)
				}
			}
			if n, _ := db.IdempotencyKey.Query().Where(entidem.Key("bad-1")).Count(ctx); n != 0 {
				t.Fatalf("a failed call left %d keys", n)
			}
			// Reads ignore the header; a key over 255 characters is refused.
			var created struct {
				PaymentID string `json:"payment_id"`
			}
			if err := json.Unmarshal([]byte(first.body), &created); err != nil {
				t.Fatal(err)
			}
			payment := created.PaymentID
			for range 2 {
				if r := restWithKey(t, in, http.MethodGet, "/checkout/logs/", url.Values{"payment_id": {payment}}, "", in.KeyA, "read-1"); r.code != 200 || r.header.Get("Idempotent-Replayed") != "" {
					t.Fatalf("a read with a key: %d %s", r.code, r.body)
				}
			}
			if n, _ := db.IdempotencyKey.Query().Where(entidem.Key("read-1")).Count(ctx); n != 0 {
				t.Fatal("a read stored its key")
			}
			if r := restWithKey(t, in, http.MethodGet, "/checkout/request/", order, "", in.KeyA, strings.Repeat("k", 256)); r.code != 400 || !strings.Contains(r.body, "Idempotency-Key") {
				t.Fatalf("a 256-character key: %d %s", r.code, r.body)
			}
			if r := restWithKey(t, in, http.MethodGet, "/checkout/request/", order, "", in.KeyA, strings.Repeat("k", 255)); r.code != 200 {
				t.Fatalf("a 255-character key: %d %s", r.code, r.body)
			}

			// gRPC: the idempotency-key metadata, the same resource back,
			// the idempotent-replayed header.
			deposits := payhookv1.NewDepositServiceClient(in.Conn)
			gctx := metadata.AppendToOutgoingContext(servertest.WithKey(ctx, in.KeyA), "idempotency-key", "deposit-7")
			dreq := &payhookv1.RequestDepositRequest{NotifyUrl: hook}
			var h1, h2 metadata.MD
			d1, err := deposits.RequestDeposit(gctx, dreq, grpc.Header(&h1))
			if err != nil {
				t.Fatal(err)
			}
			d2, err := deposits.RequestDeposit(gctx, dreq, grpc.Header(&h2))
			if err != nil || d2.GetPaymentId() != d1.GetPaymentId() || !proto.Equal(d1, d2) {
				t.Fatalf("gRPC retry: %v %v, first %v", d2, err, d1)
			}
			if len(h1.Get("idempotent-replayed")) != 0 || strings.Join(h2.Get("idempotent-replayed"), "") != "true" {
				t.Fatalf("headers: first %v, retry %v", h1, h2)
			}
			if _, err := deposits.RequestDeposit(gctx, &payhookv1.RequestDepositRequest{NotifyUrl: hook + "?other"}); status.Code(err) != codes.AlreadyExists {
				t.Fatalf("gRPC, another request: %v", err)
			}
			// The same key over REST is the same call.
			rd := restWithKey(t, in, http.MethodGet, "/deposit/request/", url.Values{"notify_url": {hook}}, "", in.KeyA, "deposit-7")
			if rd.code != 200 || !strings.Contains(rd.body, d1.GetPaymentId()) || rd.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("REST after gRPC: %d %s", rd.code, rd.body)
			}
			// And over Connect (browsers).
			creq, err := http.NewRequest(http.MethodPost, in.BaseURL+"/payhook.v1.DepositService/RequestDeposit", strings.NewReader(`{"notifyUrl":"`+hook+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			creq.Header.Set("Content-Type", "application/json")
			creq.Header.Set("Connect-Protocol-Version", "1")
			creq.Header.Set("apikey", in.KeyA)
			creq.Header.Set("Idempotency-Key", "deposit-7")
			cresp, err := http.DefaultClient.Do(creq)
			if err != nil {
				t.Fatal(err)
			}
			cbody, _ := io.ReadAll(cresp.Body)
			cresp.Body.Close()
			if cresp.StatusCode != 200 || !strings.Contains(string(cbody), d1.GetPaymentId()) || cresp.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("Connect after gRPC: %d %v %s", cresp.StatusCode, cresp.Header, cbody)
			}

			// A crash: the instance that ran the call died after claiming
			// the key (its row stays in progress). Retries are 409 until
			// the lease ends, then the call runs and its answer is kept.
			keyA, err := (apikey.Resolver{DB: db}).ResolveAPIKey(ctx, in.KeyA)
			if err != nil {
				t.Fatal(err)
			}
			chk := &payhookv1.RequestCheckoutRequest{NotifyUrl: hook, Value: "25", Currency: "USD"}
			const method = "/payhook.v1.CheckoutService/RequestCheckout"
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(chk)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(append([]byte(method+"\x00"), b...))
			// crashed-1 committed its checkout (its row is marked);
			// crashed-2 died before it wrote anything.
			if err := db.IdempotencyKey.Create().SetAPIKeyID(keyA.ID).SetKey("crashed-1").SetMethod(method).
				SetRequestHash(hex.EncodeToString(sum[:])).SetCreatedAt(clk.Now()).SetCommittedAt(clk.Now()).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if err := db.IdempotencyKey.Create().SetAPIKeyID(keyA.ID).SetKey("crashed-2").SetMethod(method).
				SetRequestHash(hex.EncodeToString(sum[:])).SetCreatedAt(clk.Now()).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			before := checkouts()
			cctx := metadata.AppendToOutgoingContext(servertest.WithKey(ctx, in.KeyA), "idempotency-key", "crashed-1")
			checkoutClient := payhookv1.NewCheckoutServiceClient(in.Conn)
			_, err = checkoutClient.RequestCheckout(cctx, chk)
			if status.Code(err) != codes.Aborted || !strings.Contains(status.Convert(err).Message(), "a call with this Idempotency-Key is in progress") {
				t.Fatalf("within the lease: %v", err)
			}
			if r := restWithKey(t, in, http.MethodGet, "/checkout/request/", url.Values{"notify_url": {hook}, "value": {"25"}, "currency": {"USD"}}, "", in.KeyA, "crashed-1"); r.code != 409 || !strings.Contains(r.body, "in progress") {
				t.Fatalf("REST within the lease: %d %s", r.code, r.body)
			}
			// After the lease the call that committed is never run again
			// under its key.
			clk.Advance(idempotency.DefaultLease)
			_, err = checkoutClient.RequestCheckout(cctx, chk)
			if status.Code(err) != codes.AlreadyExists || !strings.Contains(status.Convert(err).Message(), "was interrupted") {
				t.Fatalf("after the lease: %v; want the call reported interrupted", err)
			}
			if r := restWithKey(t, in, http.MethodGet, "/checkout/request/", url.Values{"notify_url": {hook}, "value": {"25"}, "currency": {"USD"}}, "", in.KeyA, "crashed-1"); r.code != 409 || !strings.Contains(r.body, "look up what it did") {
				t.Fatalf("REST after the lease: %d %s", r.code, r.body)
			}
			if checkouts() != before {
				t.Fatalf("an interrupted call ran again: %d checkouts, %d before", checkouts(), before)
			}
			// The call that wrote nothing runs on retry, once, and its
			// answer is kept.
			c2ctx := metadata.AppendToOutgoingContext(servertest.WithKey(ctx, in.KeyA), "idempotency-key", "crashed-2")
			rerun, err := checkoutClient.RequestCheckout(c2ctx, chk)
			if err != nil || checkouts() != before+1 {
				t.Fatalf("retry of a call that wrote nothing: %v; %d checkouts, %d before", err, checkouts(), before)
			}
			replay, err := checkoutClient.RequestCheckout(c2ctx, chk)
			if err != nil || replay.GetPaymentId() != rerun.GetPaymentId() || checkouts() != before+1 {
				t.Fatalf("replay of the rerun: %v %v", replay, err)
			}
			// A real call's write marked its row in its transaction.
			row, err := db.IdempotencyKey.Query().Where(entidem.Key("crashed-2")).Only(ctx)
			if err != nil || row.CommittedAt == nil || row.Status != 200 {
				t.Fatalf("the rerun's row: %+v %v", row, err)
			}

			// 24 hours on, the key is forgotten: the call runs afresh, and
			// the collector's sweep deletes what expired.
			clk.Advance(idempotency.DefaultTTL)
			late := restWithKey(t, in, http.MethodGet, "/checkout/request/", order, "", in.KeyA, "order-42")
			if late.code != 200 || late.body == first.body || late.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("24 hours on: %d %s", late.code, late.body)
			}
			n, err := idempotency.New(db, idempotency.Config{Now: clk.Now}).Expire(ctx)
			if err != nil || n == 0 {
				t.Fatalf("expire: %d %v", n, err)
			}
			left, err := db.IdempotencyKey.Query().All(ctx)
			if err != nil || len(left) != 1 || left[0].Key != "order-42" {
				t.Fatalf("keys left after the sweep: %v %v", left, err)
			}
		})
	}
}
