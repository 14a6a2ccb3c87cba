package gateway

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestErrorHandlerLogsServerErrors: every answer of 500 or above is logged
// with its cause; client errors are not; the client never reads the cause
// of an internal error.
func TestErrorHandlerLogsServerErrors(t *testing.T) {
	rows := []struct {
		name     string
		err      error
		code     int
		logged   bool
		wantBody string
	}{
		{"internal from the client side", status.Error(codes.Internal, "grpc: error while marshaling: string field contains invalid UTF-8"), 500, true, "internal error"},
		{"unavailable", status.Error(codes.Unavailable, "the database is unreachable"), 503, true, "the database is unreachable"},
		{"plain error", errors.New("connection refused"), 500, true, "internal error"},
		{"invalid argument", status.Error(codes.InvalidArgument, "callback: is required"), 400, false, "callback: is required"},
		{"not found", status.Error(codes.NotFound, "no such address"), 404, false, "no such address"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var log bytes.Buffer
			g := &gateway{cfg: Config{}.WithDefaults(), logger: slog.New(slog.NewTextHandler(&log, nil))}
			w := httptest.NewRecorder()
			g.errorHandler(context.Background(), nil, nil, w, httptest.NewRequest(http.MethodGet, "/btc/logs", nil), r.err)
			if w.Code != r.code || !strings.Contains(w.Body.String(), `"error":"`+r.wantBody+`"`) {
				t.Fatalf("HTTP %d %s, want %d with %q", w.Code, w.Body, r.code, r.wantBody)
			}
			if got := log.String(); r.logged != strings.Contains(got, "REST request failed") {
				t.Fatalf("logged %q, want logged=%v", got, r.logged)
			}
			if r.logged && !strings.Contains(log.String(), status.Convert(r.err).Message()) {
				t.Fatalf("log %q does not carry the cause", log.String())
			}
		})
	}
}
