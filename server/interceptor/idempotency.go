package interceptor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// IdempotencyKeyMetadata is the metadata key carrying a call's
// Idempotency-Key (the REST gateway forwards the Idempotency-Key header
// under it).
const IdempotencyKeyMetadata = "idempotency-key"

// ReplayedMetadata is the response header metadata set, to "true", on a
// response replayed from an Idempotency-Key (REST: Idempotent-Replayed).
const ReplayedMetadata = "idempotent-replayed"

// MaxIdempotencyKey is the longest Idempotency-Key accepted, in bytes;
// a longer one is refused with InvalidArgument (REST 400).
const MaxIdempotencyKey = 255

// IdempotentCall is a mutating call made with an Idempotency-Key.
type IdempotentCall struct {
	// APIKeyID is the caller's API key: keys are scoped per API key, so
	// two keys (two projects) never see each other's.
	APIKeyID int64
	// Key is the Idempotency-Key, 1 to MaxIdempotencyKey bytes.
	Key string
	// Method is the gRPC full method ("/payhook.v1.CheckoutService/RequestCheckout").
	Method string
	// RequestHash is the lowercase hex SHA-256 of the method and the
	// request message (deterministic protobuf encoding): a REST call's
	// path, query and body all land in the message.
	RequestHash string
}

// IdempotencyClaim is what IdempotencyStore.Begin grants: either the right
// to run the call (Replayed false; ID names the claim for Complete or
// Release) or the stored response of the call completed before with the
// same key and request.
type IdempotencyClaim struct {
	// ID identifies the claim in the store.
	ID int64
	// Replayed reports a completed call: Response is its stored response.
	Replayed bool
	// Response is the completed call's response message, protobuf-encoded.
	Response []byte
}

// IdempotencyStore keeps the mutating calls made with an Idempotency-Key.
// The interceptor hashes the request, asks Begin, runs the call only on a
// fresh claim, then stores its response with Complete, or, when the call
// failed, forgets the claim with Release so that a retry runs it again.
//
// Begin's errors carry a kind (internal/kind) the error interceptor
// translates: Conflict (409) for a key used before with another request,
// Aborted (409) for a key whose call is still in progress.
type IdempotencyStore interface {
	// Begin claims call's key, or returns the stored response of the call
	// completed with it.
	Begin(ctx context.Context, call IdempotentCall) (IdempotencyClaim, error)
	// Complete stores the response of the claimed call.
	Complete(ctx context.Context, claim IdempotencyClaim, response []byte) error
	// Release forgets the claim of a call that failed (unless it wrote
	// something first).
	Release(ctx context.Context, claim IdempotencyClaim) error
	// Bind returns the context the claimed call runs in, which lets the
	// store know whether the call wrote anything, and the function to call
	// when the handler returns.
	Bind(ctx context.Context, claim IdempotencyClaim) (context.Context, func())
	// Lease is how long a claim in progress is honoured: after it, the
	// store takes the claim as abandoned (the instance running it
	// crashed) and gives the key to the next call. The interceptor ends a
	// claimed call's context after half of it, so no call still running
	// loses its claim.
	Lease() time.Duration
}

// finishTimeout bounds storing a call's response or releasing its claim,
// which runs even when the caller has gone (its context is done): the call
// took effect and its response must be kept for the retry.
const finishTimeout = 10 * time.Second

// idempotency is the interceptor of Idempotency-Key: it runs after
// authentication (it knows the API key) and validation (an invalid request
// claims nothing).
type idempotency struct {
	store  IdempotencyStore
	access *accessTable
	logger *slog.Logger
}

func (i *idempotency) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if i.store == nil {
		return h(ctx, req)
	}
	vals := metadata.ValueFromIncomingContext(ctx, IdempotencyKeyMetadata)
	if len(vals) == 0 {
		return h(ctx, req)
	}
	m := i.access.method(info.FullMethod)
	key, authed := KeyFrom(ctx)
	msg, isProto := req.(proto.Message)
	if !m.mutating() || !authed || !isProto || m.output == nil {
		// Reading twice is harmless: the key is ignored on reads (and on
		// methods without an API key, which have no one to scope it to).
		return h(ctx, req)
	}
	ik := vals[0]
	if ik == "" || len(ik) > MaxIdempotencyKey {
		return nil, status.Errorf(codes.InvalidArgument, "Idempotency-Key: must be 1 to %d characters", MaxIdempotencyKey)
	}
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encode request for its idempotency hash: %w", err)
	}
	sum := sha256.New()
	sum.Write([]byte(info.FullMethod))
	sum.Write([]byte{0})
	sum.Write(body)
	claim, err := i.store.Begin(ctx, IdempotentCall{
		APIKeyID: key.ID, Key: ik, Method: info.FullMethod, RequestHash: hex.EncodeToString(sum.Sum(nil)),
	})
	if err != nil {
		return nil, err
	}
	if claim.Replayed {
		resp := newMessage(m.output)
		if err := proto.Unmarshal(claim.Response, resp); err != nil {
			return nil, fmt.Errorf("decode the stored response of Idempotency-Key: %w", err)
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs(ReplayedMetadata, "true"))
		return resp, nil
	}
	// The claim is honoured for the lease: the call must end well within
	// it, so that a retry never takes over a call still running.
	hctx, cancel := context.WithTimeout(ctx, i.store.Lease()/2)
	defer cancel()
	hctx, unbind := i.store.Bind(hctx, claim)
	defer unbind()
	panicked := true
	defer func() {
		if panicked {
			// The recovery interceptor answers Internal: a failed call,
			// released like any other so that its retry runs.
			fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
			defer fcancel()
			if rerr := i.store.Release(fctx, claim); rerr != nil {
				i.logger.WarnContext(ctx, "release Idempotency-Key of a call that panicked", "method", info.FullMethod, "error", rerr)
			}
		}
	}()
	resp, err := h(hctx, req)
	unbind()
	panicked = false
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer fcancel()
	var out []byte
	if err == nil {
		if pm, ok := resp.(proto.Message); ok {
			out, err = proto.Marshal(pm)
		} else {
			err = fmt.Errorf("response %T is not a proto message", resp)
		}
		if err != nil {
			err = fmt.Errorf("encode response for Idempotency-Key: %w", err)
		}
	}
	if err != nil {
		// A failed call is forgotten: a retry runs it again (the handlers'
		// transactions rolled back what a failed call wrote).
		if rerr := i.store.Release(fctx, claim); rerr != nil {
			i.logger.WarnContext(ctx, "release Idempotency-Key of a failed call", "method", info.FullMethod, "error", rerr)
		}
		return nil, err
	}
	if cerr := i.store.Complete(fctx, claim, out); cerr != nil {
		// The call took effect: its caller gets the response. A retry
		// with the key finds it in progress until the lease ends, then
		// interrupted (its row is marked): it is never run again.
		i.logger.WarnContext(ctx, "store the response of an Idempotency-Key", "method", info.FullMethod, "error", cerr)
	}
	return resp, nil
}

// newMessage returns an empty message of md's type: the generated Go type
// when it is registered (always, for payhook's services), a dynamic message
// otherwise.
func newMessage(md protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(md)
}
