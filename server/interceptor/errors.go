package interceptor

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// Translate maps payhook's domain errors to gRPC status errors; it returns
// nil for errors it does not know. The messages are written for merchants:
// they name what was wrong and reveal nothing internal.
func Translate(err error) error {
	var inv *address.InvalidError
	var conflict *address.ConflictError
	switch {
	case errors.As(err, &inv):
		return status.Error(codes.InvalidArgument, inv.Error())
	case errors.Is(err, invoice.ErrNotFound), errors.Is(err, project.ErrNotFound), errors.Is(err, subscription.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, notifier.ErrNotFound):
		return status.Error(codes.NotFound, "uuid: no notification of this project has this uuid")
	case errors.Is(err, notifier.ErrInvalidFilter):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, project.ErrConcurrent):
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, project.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.As(err, &conflict):
		return status.Error(codes.AlreadyExists, conflict.Error())
	case errors.Is(err, chains.ErrUnknownTicker):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, chains.ErrInvalidAddress):
		return status.Error(codes.InvalidArgument, "address: "+err.Error())
	case errors.Is(err, devnet.ErrInvalidPayment), errors.Is(err, devnet.ErrInvalidCount),
		errors.Is(err, devnet.ErrInvalidRange), errors.Is(err, devnet.ErrInvalidForward):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, address.ErrChainNotReady):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, address.ErrNotFound):
		return status.Error(codes.NotFound, "no address was created with this callback URL for this ticker")
	}
	if why := store.Unavailable(err); why != "" {
		return status.Error(codes.Unavailable, why)
	}
	return nil
}
