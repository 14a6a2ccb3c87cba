package interceptor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/lib/pq"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// TestDomainErrorsKeepTheirAnswers: every domain error the interceptor
// answered before kinds existed (when it matched each package's sentinels)
// gets the same code and the same message, byte for byte, now that the
// domain packages declare kinds and the interceptor knows none of them.
// Errors are built as their packages build them.
func TestDomainErrorsKeepTheirAnswers(t *testing.T) {
	t.Parallel()
	btc, _ := family.DefaultRegistry().Lookup("btc")
	addrErr := chains.ValidateAddress(btc, "not-an-address")
	if !errors.Is(addrErr, chains.ErrInvalidAddress) {
		t.Fatalf("ValidateAddress = %v", addrErr)
	}
	rows := []struct {
		name string
		err  error
		code codes.Code
		msg  string
	}{
		{"invalid parameter: its own text", fmt.Errorf("create address: %w", address.Invalid("callback", "must be at most %d characters", 2048)),
			codes.InvalidArgument, "callback: must be at most 2048 characters"},
		{"invoice not found", fmt.Errorf("%w: no checkout with payment_id %q", invoice.ErrNotFound, "chk_x"),
			codes.NotFound, `invoice not found: no checkout with payment_id "chk_x"`},
		{"project not found", fmt.Errorf("%w: %d", project.ErrNotFound, 7), codes.NotFound, "project not found: 7"},
		{"subscription not found", fmt.Errorf("%w: no subscription with token %s", subscription.ErrNotFound, `"sub_x"`),
			codes.NotFound, `subscription not found: no subscription with token "sub_x"`},
		{"notification not found: one fixed text", fmt.Errorf("resend %s: %w", "uuid-of-another-project", notifier.ErrNotFound),
			codes.NotFound, "uuid: no notification of this project has this uuid"},
		{"list filter", fmt.Errorf("%w: cursor: not one List returned", notifier.ErrInvalidFilter),
			codes.InvalidArgument, "invalid list filter: cursor: not one List returned"},
		{"project raced", fmt.Errorf("%w: the secret of project %d was rotated by another request; try again", project.ErrConcurrent, 3),
			codes.Aborted, "changed concurrently: the secret of project 3 was rotated by another request; try again"},
		{"project setting", fmt.Errorf("%w: %s", project.ErrInvalid, "name: must not be empty"),
			codes.InvalidArgument, "invalid project setting: name: must not be empty"},
		{"conflict: its own text", fmt.Errorf("create: %w", &address.ConflictError{Fields: []string{"confirmations", "json"}}),
			codes.AlreadyExists, (&address.ConflictError{Fields: []string{"confirmations", "json"}}).Error()},
		{"unknown ticker", fmt.Errorf("%w: %s", chains.ErrUnknownTicker, "doge/usdt"), codes.NotFound, "unknown ticker: doge/usdt"},
		{"invalid address: named", fmt.Errorf("destination: %w", addrErr), codes.InvalidArgument, "address: destination: " + addrErr.Error()},
		{"devnet payment to an invalid address: the address decides", fmt.Errorf("%w: pay %s: %w", devnet.ErrInvalidPayment, "btc", addrErr),
			codes.InvalidArgument, "address: invalid payment: pay btc: " + addrErr.Error()},
		{"devnet payment", fmt.Errorf("%w: pay btc to x: value must be positive", devnet.ErrInvalidPayment),
			codes.InvalidArgument, "invalid payment: pay btc to x: value must be positive"},
		{"devnet count", fmt.Errorf("%w: mine %d blocks of %s: want 1 to %d", devnet.ErrInvalidCount, 0, "btc", devnet.MaxMine),
			codes.InvalidArgument, fmt.Sprintf("invalid block count: mine 0 blocks of btc: want 1 to %d", devnet.MaxMine)},
		{"devnet range", fmt.Errorf("%w: x", devnet.ErrInvalidRange), codes.InvalidArgument, "invalid block range: x"},
		{"devnet forward", fmt.Errorf("%w: btc: not a transaction signed by this devnet", devnet.ErrInvalidForward),
			codes.InvalidArgument, "invalid forward: btc: not a transaction signed by this devnet"},
		{"chain not ready", fmt.Errorf("create: %w", address.ErrChainNotReady), codes.Unavailable,
			"create: the chain node of this ticker has not been reached yet; try again shortly"},
		{"address not found: one fixed text", fmt.Errorf("logs: %w", address.ErrNotFound), codes.NotFound,
			"no address was created with this callback URL for this ticker"},
		{"database unavailable: why, not the driver's text", fmt.Errorf("find address: %w", &pq.Error{Code: "57P03", Message: "the database system is starting up"}),
			codes.Unavailable, "the database is unavailable (restarting or overloaded); nothing was stored, try again later"},
		{"database read-only", fmt.Errorf("store: %w", &pq.Error{Code: "25006", Message: "read-only"}),
			codes.Unavailable, "the database is read-only; nothing was stored, try again later"},
		{"a domain kind beats the database", fmt.Errorf("%w: %w", invoice.ErrNotFound, &pq.Error{Code: "57P03", Message: "starting up"}),
			codes.NotFound, "invoice not found: pq: starting up (57P03)"},
		{"no kind: internal", fmt.Errorf("%w: entry 1", chains.ErrInvalidRegistry), codes.Internal, "internal error"},
		{"plain: internal", errors.New("disk on fire"), codes.Internal, "internal error"},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), codes.Canceled, "request canceled"},
	}
	e := &errs{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), classify: store.Classify}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			st := status.Convert(e.convert(context.Background(), "/m", r.err))
			if st.Code() != r.code || st.Message() != r.msg {
				t.Fatalf("%v %q, want %v %q", st.Code(), st.Message(), r.code, r.msg)
			}
		})
	}
}
