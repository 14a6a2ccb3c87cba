package interceptor

import (
	"context"
	"log/slog"
	"net/netip"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// AuditedCall is one successful call of a method the audit log records.
type AuditedCall struct {
	// Key is the API key that made it.
	Key Key
	// Method is the full gRPC method (/payhook.v1.ProjectService/SetWallet).
	Method string
	// ProjectID is the project changed: the request's project_id when it
	// has one (an operator's key acting on a project), else the key's.
	ProjectID int64
	// Target names what was changed: the request's first set field among
	// auditTargets ("" when none).
	Target string
	// IP and UserAgent are the client's (Config.ClientAddr: through the
	// REST gateway, the HTTP request's client behind the trusted proxies).
	IP, UserAgent string
}

// AuditRecorder writes the audit log's entry of a call (server/audit).
type AuditRecorder interface {
	RecordCall(ctx context.Context, call AuditedCall) error
}

// Audited reports whether calls of a method with scope are recorded in the
// audit log: the management and payouts scopes (settings, secrets,
// endpoints, webhooks; payouts and refunds). Reads and the create scope
// (addresses, checkouts, deposits, subscriptions: the payments' hot path,
// each already a row of its own) are not.
func Audited(scope string) bool { return scope == ScopeManagement || scope == ScopePayouts }

// auditTargets are the request fields that name what a call changes, in
// the order they are looked for.
var auditTargets = []protoreflect.Name{"id", "endpoint_id", "payout_id", "refund_id", "payment_id", "uuid", "ticker", "name", "url"}

type auditor struct {
	rec    AuditRecorder
	access *accessTable
	client func(ctx context.Context) (netip.Addr, bool)
	logger *slog.Logger
}

// unary records a successful call of an audited method. A failure to
// record is logged: the change was made, and its caller is told so.
func (a *auditor) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil || a.rec == nil {
		return resp, err
	}
	m := a.access.method(info.FullMethod)
	key, authed := KeyFrom(ctx)
	if !authed || !m.mutating() || !Audited(m.scope) {
		return resp, err
	}
	call := AuditedCall{Key: key, Method: info.FullMethod, ProjectID: key.ProjectID}
	if msg, ok := req.(proto.Message); ok {
		r := msg.ProtoReflect()
		fields := r.Descriptor().Fields()
		if f := fields.ByName("project_id"); f != nil && r.Has(f) && f.Kind() == protoreflect.Int64Kind {
			call.ProjectID = r.Get(f).Int()
		}
		for _, name := range auditTargets {
			if f := fields.ByName(name); f != nil && f.Cardinality() != protoreflect.Repeated && f.Message() == nil && r.Has(f) {
				call.Target = r.Get(f).String()
				break
			}
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("grpcgateway-user-agent"); len(v) > 0 {
		call.UserAgent = v[0]
	} else if v := md.Get("user-agent"); len(v) > 0 {
		call.UserAgent = v[0]
	}
	if a.client != nil {
		if ip, ok := a.client(ctx); ok {
			call.IP = ip.String()
		}
	}
	if rerr := a.rec.RecordCall(ctx, call); rerr != nil {
		a.logger.ErrorContext(ctx, "the call succeeded but its audit entry is not written", "method", info.FullMethod, "err", rerr)
	}
	return resp, err
}
