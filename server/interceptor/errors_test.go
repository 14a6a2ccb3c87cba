package interceptor

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestConvertLogsServerFaults: an error answered as a server fault is
// logged with its cause, whether the handler returned a plain error or a
// status of its own; client errors are not logged.
func TestConvertLogsServerFaults(t *testing.T) {
	rows := []struct {
		name   string
		err    error
		code   codes.Code
		logged string
	}{
		{"plain error", errors.New("disk on fire"), codes.Internal, "disk on fire"},
		{"handler's internal status", status.Error(codes.Internal, "render info"), codes.Internal, "render info"},
		{"unimplemented", status.Error(codes.Unimplemented, "not here"), codes.Unimplemented, "not here"},
		{"invalid argument", status.Error(codes.InvalidArgument, "callback: is required"), codes.InvalidArgument, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var log bytes.Buffer
			e := &errs{logger: slog.New(slog.NewTextHandler(&log, nil))}
			got := e.convert(context.Background(), "/m", r.err)
			if status.Code(got) != r.code {
				t.Fatalf("code %v, want %v", status.Code(got), r.code)
			}
			if r.logged == "" && log.Len() > 0 {
				t.Fatalf("logged %q for a client error", log.String())
			}
			if r.logged != "" && !strings.Contains(log.String(), r.logged) {
				t.Fatalf("log %q does not carry the cause %q", log.String(), r.logged)
			}
		})
	}
}
