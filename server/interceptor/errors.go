package interceptor

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/internal/kind"
)

// codeOf is the gRPC code of each error kind (the gateway maps codes to
// HTTP statuses).
var codeOf = map[kind.Kind]codes.Code{
	kind.Invalid:            codes.InvalidArgument,
	kind.NotFound:           codes.NotFound,
	kind.Conflict:           codes.AlreadyExists,
	kind.Forbidden:          codes.PermissionDenied,
	kind.Unauthenticated:    codes.Unauthenticated,
	kind.FailedPrecondition: codes.FailedPrecondition,
	kind.Aborted:            codes.Aborted,
	kind.Unavailable:        codes.Unavailable,
}

// Translate maps an error that carries a kind (internal/kind; the domain
// packages declare theirs in their errors.go) to a gRPC status error with
// the kind's code and the message the error gives callers (kind.Message);
// it returns nil for an error without a kind. The messages are written for
// merchants: they name what was wrong and reveal nothing internal.
func Translate(err error) error {
	code, ok := codeOf[kind.Of(err)]
	if !ok {
		return nil
	}
	return status.Error(code, kind.Message(err))
}
