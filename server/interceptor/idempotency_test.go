package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/payhook/payhook/server/interceptor"
)

// memStore is an IdempotencyStore in memory: enough to see what the
// interceptor asks of a store (server/idempotency is the real one, tested
// on both databases).
type memStore struct {
	mu       sync.Mutex
	next     int64
	rows     map[string]*memRow // api key id + key
	begun    []interceptor.IdempotentCall
	released int
	lease    time.Duration
}

type memRow struct {
	id       int64
	call     interceptor.IdempotentCall
	response []byte
	done     bool
}

var errMemMismatch = errors.New("mismatch")

func newMemStore() *memStore { return &memStore{rows: map[string]*memRow{}, lease: time.Minute} }

func (m *memStore) Begin(_ context.Context, c interceptor.IdempotentCall) (interceptor.IdempotencyClaim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begun = append(m.begun, c)
	k := fmt.Sprint(c.APIKeyID, "/", c.Key)
	if r, ok := m.rows[k]; ok {
		switch {
		case r.call.RequestHash != c.RequestHash:
			return interceptor.IdempotencyClaim{}, status.Error(codes.AlreadyExists, errMemMismatch.Error())
		case !r.done:
			return interceptor.IdempotencyClaim{}, status.Error(codes.Aborted, "in progress")
		}
		return interceptor.IdempotencyClaim{ID: r.id, Replayed: true, Response: r.response}, nil
	}
	m.next++
	m.rows[k] = &memRow{id: m.next, call: c}
	return interceptor.IdempotencyClaim{ID: m.next}, nil
}

func (m *memStore) find(id int64) (string, *memRow) {
	for k, r := range m.rows {
		if r.id == id {
			return k, r
		}
	}
	return "", nil
}

func (m *memStore) Complete(_ context.Context, c interceptor.IdempotencyClaim, response []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, r := m.find(c.ID)
	r.response, r.done = response, true
	return nil
}

func (m *memStore) Release(_ context.Context, c interceptor.IdempotencyClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, _ := m.find(c.ID)
	delete(m.rows, k)
	m.released++
	return nil
}

func (m *memStore) Lease() time.Duration { return m.lease }

func (m *memStore) Bind(ctx context.Context, _ interceptor.IdempotencyClaim) (context.Context, func()) {
	return ctx, func() {}
}

func (m *memStore) calls() []interceptor.IdempotentCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]interceptor.IdempotentCall(nil), m.begun...)
}

// TestIdempotencyInterceptor: a mutating call with an Idempotency-Key is
// run once and replayed after (with the idempotent-replayed header); the
// key is scoped to the API key and hashes the method and the request; a
// failed or panicking call is released and runs again; a read method, a
// call without a key and a method without an API key ignore the store; a
// key longer than 255 bytes, or empty, is InvalidArgument.
func TestIdempotencyInterceptor(t *testing.T) {
	t.Parallel()
	mem := newMemStore()
	conn := probeServer(t, mem)
	call := func(t *testing.T, apikey, ikey, method, value string) (string, metadata.MD, error) {
		t.Helper()
		ctx := metadata.AppendToOutgoingContext(t.Context(), interceptor.APIKeyMetadata, apikey)
		if ikey != "-" {
			ctx = metadata.AppendToOutgoingContext(ctx, interceptor.IdempotencyKeyMetadata, ikey)
		}
		var header metadata.MD
		resp := &wrapperspb.StringValue{}
		err := conn.Invoke(ctx, "/payhook.test.v1.Probe/"+method, wrapperspb.String(value), resp, grpc.Header(&header))
		return resp.GetValue(), header, err
	}
	replayed := func(h metadata.MD) bool { return strings.Join(h.Get(interceptor.ReplayedMetadata), "") == "true" }

	first, h, err := call(t, "project", "order-1", "Create", "a")
	if err != nil || replayed(h) {
		t.Fatalf("first call: %q %v %v", first, h, err)
	}
	for range 2 {
		again, h, err := call(t, "project", "order-1", "Create", "a")
		if err != nil || again != first || !replayed(h) {
			t.Fatalf("retry: %q (first %q), header %v, %v", again, first, h, err)
		}
	}
	// Another body, or the same body to another method, with the key.
	if _, _, err := call(t, "project", "order-1", "Create", "b"); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("another body: %v", err)
	}
	if _, _, err := call(t, "project", "order-1", "Pay", "a"); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("another method: %v", err)
	}
	// Another API key's key of the same name is its own.
	other, h, err := call(t, "creator", "order-1", "Create", "a")
	if err != nil || other == first || replayed(h) {
		t.Fatalf("another API key: %q %v %v", other, h, err)
	}
	// Without a key, every call runs.
	x, _, _ := call(t, "project", "-", "Create", "a")
	y, _, _ := call(t, "project", "-", "Create", "a")
	if x == y || x == first {
		t.Fatalf("calls without a key answered %q and %q", x, y)
	}

	cs := mem.calls()
	if len(cs) != 6 {
		t.Fatalf("%d calls reached the store: %+v", len(cs), cs)
	}
	if cs[0].APIKeyID != 1 || cs[0].Key != "order-1" || cs[0].Method != "/payhook.test.v1.Probe/Create" || len(cs[0].RequestHash) != 64 {
		t.Fatalf("first call as the store saw it: %+v", cs[0])
	}
	if cs[0].RequestHash != cs[1].RequestHash || cs[0].RequestHash == cs[3].RequestHash || cs[0].RequestHash == cs[4].RequestHash {
		t.Fatalf("hashes: %+v", cs)
	}

	// A failed call is released: its retry runs (and fails) again.
	for range 2 {
		if _, _, err := call(t, "project", "order-2", "Create", "fail"); status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("failing call: %v", err)
		}
	}
	if mem.released != 2 {
		t.Fatalf("%d claims released after two failed calls", mem.released)
	}
	// So is a call that panicked (answered Internal by the recovery).
	for range 2 {
		if _, _, err := call(t, "project", "order-3", "Create", "panic"); status.Code(err) != codes.Internal {
			t.Fatalf("panicking call: %v", err)
		}
	}
	if mem.released != 4 {
		t.Fatalf("%d claims released after two panics too", mem.released)
	}

	// Keys that are not 1 to 255 bytes.
	if _, _, err := call(t, "project", strings.Repeat("k", 256), "Create", "a"); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(status.Convert(err).Message(), "Idempotency-Key") {
		t.Fatalf("a 256-byte key: %v", err)
	}
	if _, _, err := call(t, "project", "", "Create", "a"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("an empty key: %v", err)
	}
	if _, _, err := call(t, "project", strings.Repeat("k", 255), "Create", "a"); err != nil {
		t.Fatalf("a 255-byte key: %v", err)
	}

	// Reads and methods without a key never reach the store.
	before := len(mem.calls())
	ctx := metadata.AppendToOutgoingContext(t.Context(), interceptor.APIKeyMetadata, "project", interceptor.IdempotencyKeyMetadata, "read-1")
	for _, m := range []string{"Project", "Public", "Devnet"} {
		for range 2 {
			if err := conn.Invoke(ctx, "/payhook.test.v1.Probe/"+m, &emptypb.Empty{}, &emptypb.Empty{}); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
		}
	}
	if n := len(mem.calls()); n != before {
		t.Fatalf("reads reached the store: %+v", mem.calls()[before:])
	}
}
