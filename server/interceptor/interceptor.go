// Package interceptor holds the gRPC interceptors every request passes
// through, for gRPC clients and REST clients (through the gateway) alike:
// recovery, request logging, API key authentication by each method's
// declared (payhook.v1.access) and (payhook.v1.scope) options, protovalidate
// input validation, Idempotency-Key replay of mutating calls, and the one
// translation of domain errors into gRPC statuses.
package interceptor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"buf.build/go/protovalidate"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/payhook/payhook/internal/kind"
)

// APIKeyMetadata is the metadata key (and REST header) carrying the API key.
const APIKeyMetadata = "apikey"

// KeyResolver finds an API key. It returns ErrUnknownKey for a key that
// does not exist or was revoked.
type KeyResolver interface {
	ResolveAPIKey(ctx context.Context, key string) (Key, error)
}

// Key is an authenticated API key.
type Key struct {
	// ID is the key's id.
	ID int64
	// ProjectID is the key's project, the owner of what it creates and
	// reads.
	ProjectID int64
	// Operator marks an operator's key, which alone may call the Operator
	// methods.
	Operator bool
	// Scopes are what the key may do (ScopeRead, ScopeCreate, ScopePayouts,
	// ScopeManagement): a method whose (payhook.v1.scope) is not among
	// them is refused with PermissionDenied naming it. Operator keys are
	// bound by theirs too.
	Scopes []string
}

// Has reports whether the key has scope.
func (k Key) Has(scope string) bool { return slices.Contains(k.Scopes, scope) }

// ErrUnknownKey is returned by a KeyResolver for an unknown or revoked key.
var ErrUnknownKey = errors.New("unknown api key")

type apiKeyCtx struct{}

// WithKey returns a context carrying the authenticated API key.
func WithKey(ctx context.Context, k Key) context.Context {
	return context.WithValue(ctx, apiKeyCtx{}, k)
}

// KeyFrom returns the authenticated API key, if the method required one.
func KeyFrom(ctx context.Context) (Key, bool) {
	k, ok := ctx.Value(apiKeyCtx{}).(Key)
	return k, ok
}

// APIKeyID returns the authenticated API key's id, if the method required one.
func APIKeyID(ctx context.Context) (int64, bool) {
	k, ok := KeyFrom(ctx)
	return k.ID, ok
}

// ProjectID returns the authenticated API key's project, if the method
// required a key.
func ProjectID(ctx context.Context) (int64, bool) {
	k, ok := KeyFrom(ctx)
	return k.ProjectID, ok
}

// TickerChecker tells whether a ticker exists. CheckTicker returns an error
// wrapping chains.ErrUnknownTicker for a ticker that does not.
type TickerChecker interface {
	CheckTicker(ticker string) error
}

// tickerFormat is the syntax of a ticker (`btc`, `trc20/usdt`), as the
// protos' rules state it. A ticker that breaks it is a parameter error for
// validation to name; one that keeps it but is unknown is not found.
var tickerFormat = regexp.MustCompile(`^[A-Za-z0-9]{1,32}(/[A-Za-z0-9]{1,32})?$`)

// UnknownTicker returns the error of CheckTicker when ticker is well formed
// (at most 32 characters, `btc` or `trc20/usdt`) and unknown, and nil
// otherwise: for a ticker it knows, or one validation will refuse. Both the
// gRPC chain and the REST gateway ask it before anything else about a
// request, so an unknown ticker is not found whatever else is wrong.
func UnknownTicker(tc TickerChecker, ticker string) error {
	if tc == nil || len(ticker) > 32 || !tickerFormat.MatchString(ticker) {
		return nil
	}
	return tc.CheckTicker(ticker)
}

// Config configures the interceptor chain.
type Config struct {
	// Keys resolves API keys.
	Keys KeyResolver
	// Tickers, when set, makes a unary request whose ticker field names an
	// unknown ticker fail with NotFound before authentication and
	// validation.
	Tickers TickerChecker
	// Descriptors, when set, resolves method descriptors instead of
	// protoregistry.GlobalFiles (a test's own services). Each method's
	// (payhook.v1.access) option, read from its descriptor, decides who
	// may call it; see Chain.
	Descriptors DescriptorResolver
	// Classify, when set, gives a kind to a handler's error that has none
	// (the server passes store.Classify: the database's refusals become
	// Unavailable), before Translate reads it.
	Classify func(error) error
	// LimitUnary and LimitStream, when set, run right after
	// authentication (the key is in the context) and before validation:
	// the request limits (server/ratelimit), so a refused call costs no
	// more than its key's lookup.
	LimitUnary  grpc.UnaryServerInterceptor
	LimitStream grpc.StreamServerInterceptor
	// Idempotency, when set, keeps the calls made with an Idempotency-Key
	// (see IdempotencyStore); without it the header is ignored.
	Idempotency IdempotencyStore
	// Audit, when set, records each successful unary call of a mutating
	// method whose scope is Audited, innermost (a call answered from the
	// idempotency store changed nothing and is not recorded again).
	Audit AuditRecorder
	// ClientAddr, when set, is the address of a call's client for the
	// audit log (ratelimit.Limiter.CallerAddr: only the server's own
	// gateway connection may name one).
	ClientAddr func(ctx context.Context) (netip.Addr, bool)
}

// Chain returns the unary and stream interceptors, outermost first.
//
// Authentication follows each method's (payhook.v1.access) option, read
// once per method from its descriptor: PUBLIC and DEVNET need no key,
// PROJECT a valid key, OPERATOR a valid operator's key (PermissionDenied
// otherwise), and a method that needs a key also needs the key to have the
// method's (payhook.v1.scope) (PermissionDenied naming the scope
// otherwise). A method with no option, ACCESS_UNSPECIFIED, no descriptor,
// or a key but no scope is refused with PermissionDenied for everyone (deny
// by default); only the services named in ExemptServices are served
// without one.
//
// A unary call of a mutating method (one that needs a key and whose scope
// is not read) made with the idempotency-key metadata (the REST header
// Idempotency-Key) is kept by cfg.Idempotency and answered from it when
// repeated: see IdempotencyStore.
func Chain(cfg Config, logger *slog.Logger) ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor, error) {
	v, err := protovalidate.New()
	if err != nil {
		return nil, nil, fmt.Errorf("protovalidate: %w", err)
	}
	rec := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
		return status.Error(codes.Internal, "internal error")
	})
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall)}
	lg := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		logger.Log(ctx, slog.Level(lvl), msg, fields...)
	})
	a := &auth{keys: cfg.Keys, access: newAccessTable(cfg.Descriptors, logger)}
	e := &errs{logger: logger, classify: cfg.Classify}
	idem := &idempotency{store: cfg.Idempotency, access: a.access, logger: logger}
	aud := &auditor{rec: cfg.Audit, access: a.access, client: cfg.ClientAddr, logger: logger}
	unary := []grpc.UnaryServerInterceptor{
		logging.UnaryServerInterceptor(lg, logOpts...),
		recovery.UnaryServerInterceptor(rec),
		e.unary,
		tickerUnary(cfg.Tickers),
		a.unary,
		orPassUnary(cfg.LimitUnary),
		validateUnary(v),
		idem.unary,
		aud.unary,
	}
	stream := []grpc.StreamServerInterceptor{
		logging.StreamServerInterceptor(lg, logOpts...),
		recovery.StreamServerInterceptor(rec),
		e.stream,
		a.stream,
		orPassStream(cfg.LimitStream),
		validateStream(v),
	}
	return unary, stream, nil
}

// orPassUnary and orPassStream return i, or an interceptor that only calls
// the handler when i is nil.
func orPassUnary(i grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if i != nil {
		return i
	}
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	}
}

func orPassStream(i grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	if i != nil {
		return i
	}
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return h(srv, ss)
	}
}

type auth struct {
	keys   KeyResolver
	access *accessTable
}

// LacksScopeMessage is the message of the PermissionDenied status that
// refuses a key without scope: `this API key lacks the "payouts" scope`,
// and how a key gets scopes.
func LacksScopeMessage(scope string) string {
	return fmt.Sprintf("this API key lacks the %q scope (a key's scopes are chosen when it is created)", scope)
}

// NoAccessMessage is the message of the PermissionDenied status that
// refuses every call of a method declaring no (payhook.v1.access) option.
const NoAccessMessage = "this method declares no access and is refused"

func (a *auth) authenticate(ctx context.Context, method string) (context.Context, error) {
	r := a.access.rule(method)
	switch r {
	case deny:
		// PermissionDenied rather than Unimplemented: the method exists and
		// is registered, but nobody was granted it; and a 4xx is not logged
		// as a server fault on every call (the table logged it once).
		return nil, status.Error(codes.PermissionDenied, NoAccessMessage)
	case open:
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(APIKeyMetadata)
	if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
		return nil, status.Error(codes.Unauthenticated, "missing api key: send it in the apikey header or query parameter")
	}
	key, err := a.keys.ResolveAPIKey(ctx, strings.TrimSpace(vals[0]))
	if errors.Is(err, ErrUnknownKey) {
		return nil, status.Error(codes.Unauthenticated, "unknown api key")
	}
	if err != nil {
		return nil, fmt.Errorf("resolve api key: %w", err)
	}
	if r == operatorKey && !key.Operator {
		return nil, status.Error(codes.PermissionDenied, "this method needs an operator's key (payhook apikey create --operator)")
	}
	if scope := a.access.method(method).scope; !key.Has(scope) {
		return nil, status.Error(codes.PermissionDenied, LacksScopeMessage(scope))
	}
	return WithKey(ctx, key), nil
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

// tickerUnary refuses a request naming an unknown ticker (see
// UnknownTicker); the error interceptor translates the domain error.
func tickerUnary(tc TickerChecker) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if r, ok := req.(interface{ GetTicker() string }); ok && tc != nil {
			if err := UnknownTicker(tc, r.GetTicker()); err != nil {
				return nil, err
			}
		}
		return h(ctx, req)
	}
}

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

// errs translates handler errors: statuses pass through, errors with a kind
// (internal/kind) become their status, and anything else is logged and
// becomes Internal with a message that reveals nothing of the cause.
type errs struct {
	logger   *slog.Logger
	classify func(error) error
}

func (e *errs) convert(ctx context.Context, method string, err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		if serverFault(st.Code()) {
			// A status made by a handler rather than translated here: its
			// message is the cause.
			e.logger.ErrorContext(ctx, "request failed", "method", method, "code", st.Code().String(), "error", err)
		}
		return err
	}
	if e.classify != nil && kind.Of(err) == kind.Unknown {
		err = e.classify(err)
	}
	if st := Translate(err); st != nil {
		if status.Code(st) == codes.Unavailable {
			e.logger.WarnContext(ctx, "request refused: a dependency is unavailable (the database, a chain node or the signer)", "method", method, "error", err)
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

// serverFault reports whether code is answered with a 5xx status and says
// the server, not the request, failed.
func serverFault(code codes.Code) bool {
	switch code {
	case codes.Internal, codes.Unknown, codes.DataLoss, codes.Unimplemented:
		return true
	}
	return false
}

func (e *errs) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	return resp, e.convert(ctx, info.FullMethod, err)
}

func (e *errs) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return e.convert(ss.Context(), info.FullMethod, h(srv, ss))
}
