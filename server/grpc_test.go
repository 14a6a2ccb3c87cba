package server_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

func wantCode(t *testing.T, err error, code codes.Code, msgPart string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code || !strings.Contains(st.Message(), msgPart) {
		t.Fatalf("got %v %q, want %v containing %q", st.Code(), st.Message(), code, msgPart)
	}
}

func TestGRPC(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		ctx := context.Background()
		c := payhookv1.NewAddressServiceClient(in.Conn)
		a := servertest.WithKey(ctx, in.KeyA)
		b := servertest.WithKey(ctx, in.KeyB)
		req := &payhookv1.CreateAddressRequest{Ticker: "trc20/usdt", Callback: "https://shop.example/grpc", Address: trxDest}

		created, err := c.CreateAddress(a, req)
		if err != nil {
			t.Fatal(err)
		}
		if created.GetAddressOut()[trxDest] != 1 || created.GetCallbackUrl() != req.Callback || created.GetAddressIn() == "" {
			t.Fatalf("created %v", created)
		}
		// REST and gRPC are one API: REST sees the address gRPC created.
		r := in.Get(t, "/trc20/usdt/logs/", q("callback", req.Callback), in.KeyA)
		wantStatus(t, r, 200)
		if r.JSON["address_in"] != created.GetAddressIn() {
			t.Fatalf("REST logs %s, gRPC created %s", r.Body, created.GetAddressIn())
		}

		again, err := c.CreateAddress(a, req)
		if err != nil || again.GetAddressIn() != created.GetAddressIn() {
			t.Fatalf("second create: %v %v", again, err)
		}

		t.Run("authentication", func(t *testing.T) {
			_, err := c.CreateAddress(ctx, req)
			wantCode(t, err, codes.Unauthenticated, "missing api key")
			_, err = c.CreateAddress(servertest.WithKey(ctx, "ph_bogus"), req)
			wantCode(t, err, codes.Unauthenticated, "unknown api key")
			_, err = c.GetLogs(ctx, &payhookv1.GetLogsRequest{Ticker: "btc", Callback: "https://x.example"})
			wantCode(t, err, codes.Unauthenticated, "missing api key")
			if _, err := c.GetPublicKey(ctx, &payhookv1.GetPublicKeyRequest{}); err != nil {
				t.Fatalf("pubkey needs no key: %v", err)
			}
			if _, err := c.GetInfo(ctx, &payhookv1.GetInfoRequest{}); err != nil {
				t.Fatalf("info needs no key: %v", err)
			}
		})

		t.Run("validation runs for gRPC as for REST", func(t *testing.T) {
			bad := proto.Clone(req).(*payhookv1.CreateAddressRequest)
			bad.Callback = "https://u:p@shop.example/x"
			_, err := c.CreateAddress(a, bad)
			wantCode(t, err, codes.InvalidArgument, "callback: must not contain credentials")
			bad = proto.Clone(req).(*payhookv1.CreateAddressRequest)
			n := int32(0)
			bad.Confirmations = &n
			_, err = c.CreateAddress(a, bad)
			wantCode(t, err, codes.InvalidArgument, "confirmations: must be greater than or equal to 1")
			bad = proto.Clone(req).(*payhookv1.CreateAddressRequest)
			bad.Address = "0.5@" + trxDest
			_, err = c.CreateAddress(a, bad)
			wantCode(t, err, codes.InvalidArgument, "address: shares must sum to exactly 1")
			bad = proto.Clone(req).(*payhookv1.CreateAddressRequest)
			bad.Ticker = "doge/usdt"
			_, err = c.CreateAddress(a, bad)
			wantCode(t, err, codes.NotFound, "unknown ticker")
		})

		t.Run("one key never reads another key's address", func(t *testing.T) {
			_, err := c.GetLogs(b, &payhookv1.GetLogsRequest{Ticker: "trc20/usdt", Callback: req.Callback})
			wantCode(t, err, codes.NotFound, "no address was created with this callback URL")
			own, err := c.GetLogs(a, &payhookv1.GetLogsRequest{Ticker: "trc20/usdt", Callback: req.Callback})
			if err != nil || own.GetAddressIn() != created.GetAddressIn() {
				t.Fatalf("owner's logs: %v %v", own, err)
			}
			// Creating with B's key makes B its own address; A's is untouched.
			theirs, err := c.CreateAddress(b, req)
			if err != nil || theirs.GetAddressIn() == created.GetAddressIn() {
				t.Fatalf("B's create: %v %v", theirs, err)
			}
		})

		t.Run("info", func(t *testing.T) {
			all, err := c.GetInfo(ctx, &payhookv1.GetInfoRequest{})
			if err != nil || len(all.GetCoins()) < 13 {
				t.Fatalf("info: %d coins, %v", len(all.GetCoins()), err)
			}
			one, err := c.GetInfo(ctx, &payhookv1.GetInfoRequest{Ticker: "sol/usdc"})
			if err != nil || len(one.GetCoins()) != 1 || one.GetCoins()[0].GetTickerPath() != "sol/usdc" || one.GetCoins()[0].GetFamily() != "solana" {
				t.Fatalf("sol/usdc info: %v %v", one, err)
			}
			_, err = c.GetInfo(ctx, &payhookv1.GetInfoRequest{Ticker: "nope"})
			wantCode(t, err, codes.NotFound, "unknown ticker")
		})

		t.Run("health and reflection", func(t *testing.T) {
			h, err := healthpb.NewHealthClient(in.Conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("health: %v %v", h, err)
			}
			rc, err := reflectionpb.NewServerReflectionClient(in.Conn).ServerReflectionInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
				t.Fatal(err)
			}
			resp, err := rc.Recv()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range resp.GetListServicesResponse().GetService() {
				names = append(names, s.GetName())
			}
			if !strings.Contains(strings.Join(names, ","), "payhook.v1.AddressService") {
				t.Fatalf("reflection lists %v", names)
			}
			_ = rc.CloseSend()
		})
	})
}

func TestDevModeCreatesOneKey(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			dsn := storetest.DSN(t, d)
			dev := func(c *server.Config) { c.Store.DB = dsn; c.Dev = true }
			// servertest adds its own two keys after start; the first start
			// sees an empty database and prints a key.
			in := servertest.Start(t, store.Dialect(d), dev)
			key := regexp.MustCompile(`ph_[a-z0-9]+`).FindString(in.Out.String())
			if key == "" {
				t.Fatalf("no key printed: %q", in.Out.String())
			}
			r := in.Get(t, "/btc/create/", q("callback", "https://shop.example/dev", "address", btcDest), key)
			wantStatus(t, r, 200)
			if err := in.Server.Stop(); err != nil {
				t.Fatal(err)
			}
			// A second start on the same database, which now has keys, prints
			// none (only hashes are stored) but the command that creates one,
			// as the README's walk-through says.
			again := servertest.Start(t, store.Dialect(d), dev)
			if bytes.Contains(again.Out.Bytes(), []byte("ph_")) {
				t.Fatalf("second start printed a key: %q", again.Out.String())
			}
			if want := "payhook apikey create --name dev --db '" + dsn + "'"; !strings.Contains(again.Out.String(), want) {
				t.Fatalf("second start printed %q, want the command %q", again.Out.String(), want)
			}
			r = again.Get(t, "/btc/create/", q("callback", "https://shop.example/dev", "address", btcDest), key)
			wantStatus(t, r, 200)
		})
	}
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDeliveryEnv(t, string(d))
			metrics := func() string {
				t.Helper()
				r := e.in.Get(t, "/metrics", nil, e.in.OperatorKey(t))
				if r.Code != 200 {
					t.Fatalf("HTTP %d", r.Code)
				}
				return string(r.Body)
			}
			expect := func(body string, lines ...string) {
				t.Helper()
				for _, want := range lines {
					if !strings.Contains(body, want+"\n") {
						t.Fatalf("metrics lack %q", want)
					}
				}
			}
			e.enqueue(t, e.addr, e.pay, "confirmed")
			// Stored, not yet attempted: in the queue.
			expect(metrics(),
				`payhook_notifications{status="pending"} 1`,
				`payhook_notifications{status="retrying"} 0`,
				`payhook_notifications_finished_total{status="acknowledged"} 0`,
			)
			e.deliver(t)
			// Acknowledged: out of the queue, counted as finished.
			body := metrics()
			expect(body,
				`payhook_deliveries_total{outcome="acknowledged",transport="json"} 1`,
				`payhook_notifications{status="pending"} 0`,
				`payhook_notifications{status="retrying"} 0`,
				`payhook_notifications_finished_total{status="acknowledged"} 1`,
				`payhook_notifications_finished_total{status="failed"} 0`,
				"payhook_oldest_due_notification_age_seconds 0",
				"payhook_watchers 0",
			)
			if !strings.Contains(body, "payhook_delivery_attempt_duration_seconds_count") {
				t.Fatal("metrics lack the attempt duration histogram")
			}
			if strings.Contains(body, `payhook_notifications{status="acknowledged"}`) {
				t.Fatal("the queue gauge reports acknowledged notifications, which have left the queue")
			}
		})
	}
}
