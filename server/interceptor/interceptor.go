// Package interceptor holds the gRPC interceptors every request passes
// through, for gRPC clients and REST clients (through the gateway) alike:
// recovery, request logging, API key authentication, protovalidate input
// validation, and the one translation of domain errors into gRPC statuses.
package interceptor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"buf.build/go/protovalidate"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// APIKeyMetadata is the metadata key (and REST header) carrying the API key.
const APIKeyMetadata = "apikey"

// KeyResolver finds the owner id of an API key. It returns ErrUnknownKey
// for a key that does not exist or was revoked.
type KeyResolver interface {
	ResolveAPIKey(ctx context.Context, key string) (int64, error)
}

// ErrUnknownKey is returned by a KeyResolver for an unknown or revoked key.
var ErrUnknownKey = errors.New("unknown api key")

type apiKeyCtx struct{}

// WithAPIKeyID returns a context carrying the authenticated API key's id.
func WithAPIKeyID(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, apiKeyCtx{}, id)
}

// APIKeyID returns the authenticated API key's id, if the method required one.
func APIKeyID(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(apiKeyCtx{}).(int64)
	return id, ok
}

// Config configures the interceptor chain.
type Config struct {
	// Keys resolves API keys.
	Keys KeyResolver
	// Public lists the full method names that need no API key
	// (for example "/payhook.v1.AddressService/GetInfo").
	Public []string
}

// Chain returns the unary and stream interceptors, outermost first.
func Chain(cfg Config, logger *slog.Logger) ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor, error) {
	v, err := protovalidate.New()
	if err != nil {
		return nil, nil, fmt.Errorf("protovalidate: %w", err)
	}
	public := map[string]bool{}
	for _, m := range cfg.Public {
		public[m] = true
	}
	rec := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
		return status.Error(codes.Internal, "internal error")
	})
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall)}
	lg := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		logger.Log(ctx, slog.Level(lvl), msg, fields...)
	})
	a := &auth{keys: cfg.Keys, public: public}
	e := &errs{logger: logger}
	unary := []grpc.UnaryServerInterceptor{
		logging.UnaryServerInterceptor(lg, logOpts...),
		recovery.UnaryServerInterceptor(rec),
		e.unary,
		a.unary,
		validateUnary(v),
	}
	stream := []grpc.StreamServerInterceptor{
		logging.StreamServerInterceptor(lg, logOpts...),
		recovery.StreamServerInterceptor(rec),
		e.stream,
		a.stream,
		validateStream(v),
	}
	return unary, stream, nil
}

type auth struct {
	keys   KeyResolver
	public map[string]bool
}

func (a *auth) authenticate(ctx context.Context, method string) (context.Context, error) {
	if a.public[method] || strings.HasPrefix(method, "/grpc.health.v1.") || strings.HasPrefix(method, "/grpc.reflection.") {
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(APIKeyMetadata)
	if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
		return nil, status.Error(codes.Unauthenticated, "missing api key: send it in the apikey header")
	}
	id, err := a.keys.ResolveAPIKey(ctx, strings.TrimSpace(vals[0]))
	if errors.Is(err, ErrUnknownKey) {
		return nil, status.Error(codes.Unauthenticated, "unknown api key")
	}
	if err != nil {
		return nil, fmt.Errorf("resolve api key: %w", err)
	}
	return WithAPIKeyID(ctx, id), nil
}

func (a *auth) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := a.authenticate(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (a *auth) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, err := a.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return h(srv, &ctxStream{ServerStream: ss, ctx: ctx})
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// validate checks a request against its protovalidate annotations and
// returns InvalidArgument naming every violated field.
func validate(v protovalidate.Validator, req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	err := v.Validate(m)
	if err == nil {
		return nil
	}
	var ve *protovalidate.ValidationError
	if !errors.As(err, &ve) {
		// A broken rule, not bad input: the error interceptor logs the
		// cause and answers "internal error".
		return fmt.Errorf("validate request: %w", err)
	}
	parts := make([]string, 0, len(ve.Violations))
	for _, viol := range ve.Violations {
		field := protovalidate.FieldPathString(viol.Proto.GetField())
		parts = append(parts, field+": "+viol.Proto.GetMessage())
	}
	return status.Error(codes.InvalidArgument, strings.Join(parts, "; "))
}

func validateUnary(v protovalidate.Validator) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := validate(v, req); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

func validateStream(v protovalidate.Validator) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return h(srv, &validatingStream{ServerStream: ss, v: v})
	}
}

type validatingStream struct {
	grpc.ServerStream
	v protovalidate.Validator
}

func (s *validatingStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return validate(s.v, m)
}

// errs translates handler errors: statuses pass through, known domain errors
// become their status, and anything else is logged and becomes Internal
// with a message that reveals nothing of the cause.
type errs struct {
	logger *slog.Logger
}

func (e *errs) convert(ctx context.Context, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if st := Translate(err); st != nil {
		if status.Code(st) == codes.Unavailable {
			e.logger.WarnContext(ctx, "request refused: database unavailable", "method", method, "error", err)
		}
		return st
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	e.logger.ErrorContext(ctx, "request failed", "method", method, "error", err)
	return status.Error(codes.Internal, "internal error")
}

func (e *errs) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	return resp, e.convert(ctx, info.FullMethod, err)
}

func (e *errs) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return e.convert(ss.Context(), info.FullMethod, h(srv, ss))
}
