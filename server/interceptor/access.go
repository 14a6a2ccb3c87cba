package interceptor

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
)

// ExemptServices are the services outside payhook's contract that carry no
// (payhook.v1.access) option and are served without an API key: the standard
// health check (load balancers, `payhook healthcheck`) and server reflection
// (grpcurl). They are exempted by name, whole services, so no method of
// payhook's own can ever be reached without declaring its access.
var ExemptServices = []string{
	"grpc.health.v1.Health",
	"grpc.reflection.v1.ServerReflection",
	"grpc.reflection.v1alpha.ServerReflection",
}

// DescriptorResolver finds descriptors by full name;
// *protoregistry.Files is one.
type DescriptorResolver interface {
	FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error)
}

// AccessOf returns the access a method declares with the (payhook.v1.access)
// option, or ACCESS_UNSPECIFIED when it declares none. fullMethod is gRPC's
// "/package.Service/Method".
func AccessOf(files DescriptorResolver, fullMethod string) (payhookv1.Access, error) {
	md, err := methodDescriptor(files, fullMethod)
	if err != nil {
		return payhookv1.Access_ACCESS_UNSPECIFIED, err
	}
	return MethodAccess(md), nil
}

// MethodAccess returns the access md declares, or ACCESS_UNSPECIFIED.
func MethodAccess(md protoreflect.MethodDescriptor) payhookv1.Access {
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil || !proto.HasExtension(opts, payhookv1.E_Access) {
		return payhookv1.Access_ACCESS_UNSPECIFIED
	}
	return proto.GetExtension(opts, payhookv1.E_Access).(payhookv1.Access)
}

// MethodScope returns the scope md declares with the (payhook.v1.scope)
// option, or SCOPE_UNSPECIFIED when it declares none.
func MethodScope(md protoreflect.MethodDescriptor) payhookv1.Scope {
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil || !proto.HasExtension(opts, payhookv1.E_Scope) {
		return payhookv1.Scope_SCOPE_UNSPECIFIED
	}
	return proto.GetExtension(opts, payhookv1.E_Scope).(payhookv1.Scope)
}

// The names of the scopes as keys store them (ent/schema's Scope
// constants) and as people type them (`payhook apikey create --scope`).
const (
	ScopeRead       = "read"
	ScopeCreate     = "create"
	ScopePayouts    = "payouts"
	ScopeManagement = "management"
)

// ScopeName returns the name of scope s ("read", "create", "payouts",
// "management"), or "" for SCOPE_UNSPECIFIED and unknown values.
func ScopeName(s payhookv1.Scope) string {
	switch s {
	case payhookv1.Scope_SCOPE_READ:
		return ScopeRead
	case payhookv1.Scope_SCOPE_CREATE:
		return ScopeCreate
	case payhookv1.Scope_SCOPE_PAYOUTS:
		return ScopePayouts
	case payhookv1.Scope_SCOPE_MANAGEMENT:
		return ScopeManagement
	}
	return ""
}

func methodDescriptor(files DescriptorResolver, fullMethod string) (protoreflect.MethodDescriptor, error) {
	svc, method, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok || svc == "" || method == "" {
		return nil, fmt.Errorf("method %q is not /package.Service/Method", fullMethod)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(svc + "." + method))
	if err != nil {
		return nil, fmt.Errorf("method %q: %w", fullMethod, err)
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return nil, fmt.Errorf("%q names a %T, not a method", fullMethod, d)
	}
	return md, nil
}

// rule is what the auth interceptor requires of a call.
type rule int

const (
	// deny refuses every call: the method declares no access, or is not
	// known to the descriptor registry.
	deny rule = iota
	// open needs no API key (PUBLIC, DEVNET, the exempt services).
	open
	// projectKey needs a valid key of any project.
	projectKey
	// operatorKey needs a valid operator's key.
	operatorKey
)

// method is what the interceptors need to know of a method, resolved once
// from its descriptor.
type method struct {
	rule rule
	// scope is the scope a key needs ("" for methods without a key, and
	// for denied ones).
	scope string
	// output is the response message's descriptor (nil without a
	// descriptor): a replayed response is decoded into it.
	output protoreflect.MessageDescriptor
}

// mutating reports whether a call of the method may change something: a
// method that needs a key and whose scope is not read. Idempotency-Key is
// honoured on these.
func (m method) mutating() bool {
	return (m.rule == projectKey || m.rule == operatorKey) && m.scope != "" && m.scope != ScopeRead
}

// accessTable resolves each method's rule once, from its descriptor, and
// keeps it: descriptors do not change while the process runs.
type accessTable struct {
	files   DescriptorResolver
	exempt  map[string]bool
	logger  *slog.Logger
	methods sync.Map // full method -> method
}

func newAccessTable(files DescriptorResolver, logger *slog.Logger) *accessTable {
	if files == nil {
		files = protoregistry.GlobalFiles
	}
	t := &accessTable{files: files, exempt: map[string]bool{}, logger: logger}
	for _, s := range ExemptServices {
		t.exempt[s] = true
	}
	return t
}

func (t *accessTable) rule(fullMethod string) rule { return t.method(fullMethod).rule }

func (t *accessTable) method(fullMethod string) method {
	if m, ok := t.methods.Load(fullMethod); ok {
		return m.(method)
	}
	m := t.resolve(fullMethod)
	t.methods.Store(fullMethod, m)
	return m
}

func (t *accessTable) resolve(fullMethod string) method {
	svc, _, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if t.exempt[svc] {
		return method{rule: open}
	}
	md, err := methodDescriptor(t.files, fullMethod)
	if err != nil {
		t.logger.Error("method refused: its descriptor is not registered", "method", fullMethod, "error", err)
		return method{rule: deny}
	}
	access := MethodAccess(md)
	m := method{output: md.Output()}
	switch access {
	case payhookv1.Access_ACCESS_PUBLIC, payhookv1.Access_ACCESS_DEVNET:
		// DEVNET needs no key; that the devnet is served only with --dev
		// is decided by registering its service, not here.
		m.rule = open
		return m
	case payhookv1.Access_ACCESS_PROJECT:
		m.rule = projectKey
	case payhookv1.Access_ACCESS_OPERATOR:
		m.rule = operatorKey
	default:
		// Logged once (the rule is cached): a defect of the contract,
		// which TestEveryMethodDeclaresAccess catches before it ships.
		t.logger.Error("method refused: it declares no (payhook.v1.access) option", "method", fullMethod, "access", access.String())
		return method{rule: deny}
	}
	if m.scope = ScopeName(MethodScope(md)); m.scope == "" {
		// The same defect for the key's scope: a method that needs a key
		// but does not say which scope is refused for every key.
		t.logger.Error("method refused: it needs an API key but declares no (payhook.v1.scope) option", "method", fullMethod)
		return method{rule: deny}
	}
	return m
}
