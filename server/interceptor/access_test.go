package interceptor_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/payhook/payhook/ent/schema"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/interceptor"
)

// TestEveryMethodDeclaresAccess walks every service of payhook.v1 as
// generated into gen/payhook/v1 and fails for a method without a
// (payhook.v1.access) option: the interceptor would refuse it for everyone.
// It also pins the access of the methods whose answer is not "a project's
// key", so a change of who may call them is deliberate.
func TestEveryMethodDeclaresAccess(t *testing.T) {
	notProject := map[protoreflect.FullName]payhookv1.Access{
		"payhook.v1.AddressService.GetPublicKey":         payhookv1.Access_ACCESS_PUBLIC,
		"payhook.v1.AddressService.GetInfo":              payhookv1.Access_ACCESS_PUBLIC,
		"payhook.v1.AddressService.EstimateFee":          payhookv1.Access_ACCESS_PUBLIC,
		"payhook.v1.AddressService.Convert":              payhookv1.Access_ACCESS_PUBLIC,
		"payhook.v1.EventService.ListEventTypes":         payhookv1.Access_ACCESS_PUBLIC,
		"payhook.v1.DevnetService.Pay":                   payhookv1.Access_ACCESS_DEVNET,
		"payhook.v1.DevnetService.Mine":                  payhookv1.Access_ACCESS_DEVNET,
		"payhook.v1.DevnetService.Reorg":                 payhookv1.Access_ACCESS_DEVNET,
		"payhook.v1.OperatorService.ListHeldFunds":       payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.OperatorService.ListPayoutRequests":  payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.CreateProject":        payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.ListProjects":         payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.RotateSecret":         payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.SetWallet":            payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.RemoveWallet":         payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.SetPayoutNotify":      payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.SetPayoutLimit":       payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.SetPaymentExceptions": payhookv1.Access_ACCESS_OPERATOR,
		"payhook.v1.ProjectService.SetRateLimit":         payhookv1.Access_ACCESS_OPERATOR,
	}
	// The scope each authenticated method declares (payhook.v1.scope):
	// pinned, so that what a restricted key may do changes only on
	// purpose. Methods without a key declare none.
	scopes := map[string][]protoreflect.Name{
		interceptor.ScopeRead: {
			"GetLogs", "GetQrCode", "WatchDeliveries", "GetCheckoutLogs", "GetDepositLogs", "ListNotifications",
			"ListHeldFunds", "ListPayoutRequests", "GetPayoutWallet", "GetPayoutBalance", "ListPayoutRequestPage",
			"ListPayouts", "GetPayoutStatus", "ListProjects", "GetRefund", "FetchSubscription", "ListSubscriptions",
			"ListEndpoints", "GetEndpoint", "ListEvents", "ExportLedger", "GetPayoutPSBT",
		},
		interceptor.ScopeCreate: {
			"CreateAddress", "RequestCheckout", "GetCheckoutAddress", "RequestDeposit", "GetDepositAddress",
			"CreateSubscription", "GetSubscriptionAddress",
		},
		interceptor.ScopePayouts: {
			"CreatePayout", "CreatePayoutRequests", "ProcessPayoutRequests", "CreatePayoutFromRequests", "ProcessPayout",
			"RefundCheckout", "RefundDeposit", "ApproveRefund", "ForwardWrongAsset", "RefundWrongAsset",
			"SubmitPayoutPSBT",
		},
		interceptor.ScopeManagement: {
			"ResendNotification", "TestNotification", "CreateProject", "RotateSecret", "SetWallet", "SetPayoutNotify",
			"SetPayoutLimit", "SetPaymentExceptions", "SetRateLimit", "RemoveWallet",
			"CreateEndpoint", "UpdateEndpoint", "DeleteEndpoint", "RotateEndpointSecret", "TestEndpoint",
			"PauseEndpoint", "ResumeEndpoint", "ReplayEndpoint",
		},
	}
	wantScope := map[protoreflect.Name]string{}
	for scope, names := range scopes {
		for _, n := range names {
			if _, dup := wantScope[n]; dup {
				t.Fatalf("%s pinned to two scopes", n)
			}
			wantScope[n] = scope
		}
	}
	methods := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("payhook.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				methods++
				got := interceptor.MethodAccess(md)
				if got == payhookv1.Access_ACCESS_UNSPECIFIED {
					t.Errorf("%s (%s) declares no access: add option (payhook.v1.access)", md.FullName(), fd.Path())
					continue
				}
				want, ok := notProject[md.FullName()]
				if !ok {
					want = payhookv1.Access_ACCESS_PROJECT
				}
				if got != want {
					t.Errorf("%s declares %s, want %s", md.FullName(), got, want)
				}
				delete(notProject, md.FullName())
				scope := interceptor.ScopeName(interceptor.MethodScope(md))
				needsKey := got == payhookv1.Access_ACCESS_PROJECT || got == payhookv1.Access_ACCESS_OPERATOR
				switch {
				case needsKey && scope == "":
					t.Errorf("%s (%s) needs an API key but declares no scope: add option (payhook.v1.scope)", md.FullName(), fd.Path())
				case !needsKey && interceptor.MethodScope(md) != payhookv1.Scope_SCOPE_UNSPECIFIED:
					t.Errorf("%s needs no API key but declares scope %s", md.FullName(), interceptor.MethodScope(md))
				case needsKey && scope != wantScope[md.Name()]:
					t.Errorf("%s declares scope %q, pinned here as %q", md.FullName(), scope, wantScope[md.Name()])
				}
				delete(wantScope, md.Name())
			}
		}
		return true
	})
	if methods < 30 {
		t.Fatalf("walked %d methods of payhook.v1: the generated package is not registered", methods)
	}
	for name := range notProject {
		t.Errorf("%s is pinned here but no longer exists", name)
	}
	for name := range wantScope {
		t.Errorf("%s has a pinned scope but no longer exists", name)
	}
}

// TestScopeNames: the scopes the interceptor names are the ones keys store
// (ent/schema), every enum value but UNSPECIFIED has one, in order.
func TestScopeNames(t *testing.T) {
	var names []string
	for i := range payhookv1.Scope(0).Descriptor().Values().Len() {
		v := payhookv1.Scope(payhookv1.Scope(0).Descriptor().Values().Get(i).Number())
		if v == payhookv1.Scope_SCOPE_UNSPECIFIED {
			if interceptor.ScopeName(v) != "" {
				t.Errorf("SCOPE_UNSPECIFIED is named %q", interceptor.ScopeName(v))
			}
			continue
		}
		names = append(names, interceptor.ScopeName(v))
	}
	if !slices.Equal(names, schema.AllScopes) {
		t.Fatalf("scope names %v, keys store %v", names, schema.AllScopes)
	}
}

// probeFile is a test-only service, payhook.test.v1.Probe, with one method
// per access and two that declare none (no option; ACCESS_UNSPECIFIED);
// the methods that need a key declare the read scope, except Unscoped
// (none) and Create and Pay (create and payouts scopes), whose request and
// response are a google.protobuf.StringValue.
func probeFile(t *testing.T) *protoregistry.Files {
	t.Helper()
	method := func(name string, access *payhookv1.Access, scope ...payhookv1.Scope) *descriptorpb.MethodDescriptorProto {
		m := &descriptorpb.MethodDescriptorProto{
			Name:       proto.String(name),
			InputType:  proto.String(".google.protobuf.Empty"),
			OutputType: proto.String(".google.protobuf.Empty"),
		}
		if access != nil {
			m.Options = &descriptorpb.MethodOptions{}
			proto.SetExtension(m.Options, payhookv1.E_Access, *access)
		}
		for _, s := range scope {
			proto.SetExtension(m.Options, payhookv1.E_Scope, s)
			if s != payhookv1.Scope_SCOPE_READ {
				m.InputType = proto.String(".google.protobuf.StringValue")
				m.OutputType = proto.String(".google.protobuf.StringValue")
			}
		}
		return m
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("payhook/test/v1/probe.proto"),
		Package:    proto.String("payhook.test.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/empty.proto", "google/protobuf/wrappers.proto"},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("Probe"),
			Method: []*descriptorpb.MethodDescriptorProto{
				method("Bare", nil),
				method("Unspecified", payhookv1.Access_ACCESS_UNSPECIFIED.Enum()),
				method("Public", payhookv1.Access_ACCESS_PUBLIC.Enum()),
				method("Devnet", payhookv1.Access_ACCESS_DEVNET.Enum()),
				method("Project", payhookv1.Access_ACCESS_PROJECT.Enum(), payhookv1.Scope_SCOPE_READ),
				method("Operator", payhookv1.Access_ACCESS_OPERATOR.Enum(), payhookv1.Scope_SCOPE_READ),
				method("Unscoped", payhookv1.Access_ACCESS_PROJECT.Enum()),
				method("Create", payhookv1.Access_ACCESS_PROJECT.Enum(), payhookv1.Scope_SCOPE_CREATE),
				method("Pay", payhookv1.Access_ACCESS_PROJECT.Enum(), payhookv1.Scope_SCOPE_PAYOUTS),
			},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	files := &protoregistry.Files{}
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	return files
}

// keys knows a project's key and an operator's key, with every scope, a
// project's key with the read scope alone (reader), one with create alone
// (creator), and an operator's key with read alone (auditor).
type keys struct{}

func (keys) ResolveAPIKey(_ context.Context, key string) (interceptor.Key, error) {
	all := schema.AllScopes
	switch key {
	case "project":
		return interceptor.Key{ID: 1, ProjectID: 1, Scopes: all}, nil
	case "operator":
		return interceptor.Key{ID: 2, ProjectID: 1, Operator: true, Scopes: all}, nil
	case "reader":
		return interceptor.Key{ID: 3, ProjectID: 1, Scopes: []string{interceptor.ScopeRead}}, nil
	case "creator":
		return interceptor.Key{ID: 4, ProjectID: 1, Scopes: []string{interceptor.ScopeCreate}}, nil
	case "auditor":
		return interceptor.Key{ID: 5, ProjectID: 1, Operator: true, Scopes: []string{interceptor.ScopeRead}}, nil
	}
	return interceptor.Key{}, interceptor.ErrUnknownKey
}

// probeServer serves payhook.test.v1.Probe (every method answers Empty,
// but Create and Pay, which answer "made N" for their Nth successful call,
// or fail with FailedPrecondition for the request "fail", or panic for
// "panic") and one service
// absent from the descriptors, payhook.test.v1.Ghost, plus the standard
// health service, behind payhook's interceptor chain with idem (nil: none)
// keeping Idempotency-Keys.
func probeServer(t *testing.T, idem interceptor.IdempotencyStore) *grpc.ClientConn {
	t.Helper()
	unary, stream, err := interceptor.Chain(interceptor.Config{Keys: keys{}, Descriptors: probeFile(t), Idempotency: idem},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	var made atomic.Int64
	answer := func(name string, makes bool) grpc.MethodDesc {
		return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			var req proto.Message = &emptypb.Empty{}
			h := func(context.Context, any) (any, error) { return &emptypb.Empty{}, nil }
			if makes {
				req = &wrapperspb.StringValue{}
				h = func(_ context.Context, r any) (any, error) {
					switch r.(*wrapperspb.StringValue).GetValue() {
					case "fail":
						return nil, status.Error(codes.FailedPrecondition, "failed as asked")
					case "panic":
						panic("as asked")
					}
					return wrapperspb.String(fmt.Sprintf("made %d", made.Add(1))), nil
				}
			}
			if err := dec(req); err != nil {
				return nil, err
			}
			if in == nil {
				return h(ctx, req)
			}
			return in(ctx, req, &grpc.UnaryServerInfo{FullMethod: "/" + name}, h)
		}}
	}
	probe := grpc.ServiceDesc{ServiceName: "payhook.test.v1.Probe", HandlerType: (*any)(nil)}
	for _, m := range []string{"Bare", "Unspecified", "Public", "Devnet", "Project", "Operator", "Unscoped", "Create", "Pay"} {
		d := answer("payhook.test.v1.Probe/"+m, m == "Create" || m == "Pay")
		d.MethodName = m
		probe.Methods = append(probe.Methods, d)
	}
	ghost := grpc.ServiceDesc{ServiceName: "payhook.test.v1.Ghost", HandlerType: (*any)(nil)}
	d := answer("payhook.test.v1.Ghost/Call", false)
	d.MethodName = "Call"
	ghost.Methods = append(ghost.Methods, d)
	gs.RegisterService(&probe, struct{}{})
	gs.RegisterService(&ghost, struct{}{})
	healthpb.RegisterHealthServer(gs, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		gs.Stop()
		<-done
	})
	return conn
}

// TestAccessFromDescriptor: the interceptor grants each method what its
// descriptor declares, and refuses with PermissionDenied, whatever the key,
// a method that declares no access or has no descriptor at all; the
// standard health service stays reachable without a key.
func TestAccessFromDescriptor(t *testing.T) {
	t.Parallel()
	conn := probeServer(t, nil)
	denied := codes.PermissionDenied
	rows := []struct {
		name   string
		method string
		want   map[string]codes.Code // key ("" for none) -> code
	}{
		{"no option", "/payhook.test.v1.Probe/Bare",
			map[string]codes.Code{"": denied, "unknown": denied, "project": denied, "operator": denied}},
		{"unspecified", "/payhook.test.v1.Probe/Unspecified",
			map[string]codes.Code{"": denied, "unknown": denied, "project": denied, "operator": denied}},
		{"no descriptor", "/payhook.test.v1.Ghost/Call",
			map[string]codes.Code{"": denied, "project": denied, "operator": denied}},
		{"public", "/payhook.test.v1.Probe/Public",
			map[string]codes.Code{"": codes.OK, "unknown": codes.OK, "project": codes.OK}},
		{"devnet", "/payhook.test.v1.Probe/Devnet",
			map[string]codes.Code{"": codes.OK, "unknown": codes.OK, "operator": codes.OK}},
		{"project", "/payhook.test.v1.Probe/Project",
			map[string]codes.Code{"": codes.Unauthenticated, "unknown": codes.Unauthenticated, "project": codes.OK, "operator": codes.OK}},
		{"operator", "/payhook.test.v1.Probe/Operator",
			map[string]codes.Code{"": codes.Unauthenticated, "unknown": codes.Unauthenticated, "project": denied, "operator": codes.OK,
				"reader": denied, "auditor": codes.OK}},
		{"no scope", "/payhook.test.v1.Probe/Unscoped",
			map[string]codes.Code{"": denied, "project": denied, "operator": denied}},
	}
	for _, r := range rows {
		for key, want := range r.want {
			t.Run(r.name+"/key="+key, func(t *testing.T) {
				ctx := t.Context()
				if key != "" {
					ctx = metadata.AppendToOutgoingContext(ctx, interceptor.APIKeyMetadata, key)
				}
				// Twice: the second answer comes from the cached rule.
				for range 2 {
					err := conn.Invoke(ctx, r.method, &emptypb.Empty{}, &emptypb.Empty{})
					if got := status.Code(err); got != want {
						t.Fatalf("%s with key %q: %v, want %v", r.method, key, err, want)
					}
					noAccess := r.name == "no option" || r.name == "unspecified" || r.name == "no descriptor" || r.name == "no scope"
					if noAccess && status.Convert(err).Message() != interceptor.NoAccessMessage {
						t.Fatalf("message %q, want %q", status.Convert(err).Message(), interceptor.NoAccessMessage)
					}
				}
			})
		}
	}
	t.Run("health needs no key", func(t *testing.T) {
		if _, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestScopes: a key may call a method only with the method's scope; the
// refusal is PermissionDenied naming the scope. Operator keys are bound by
// their scopes too.
func TestScopes(t *testing.T) {
	t.Parallel()
	conn := probeServer(t, nil)
	rows := []struct {
		key, method string
		lacks       string // "" when the call is allowed
	}{
		{"reader", "Project", ""},
		{"reader", "Create", interceptor.ScopeCreate},
		{"reader", "Pay", interceptor.ScopePayouts},
		{"creator", "Create", ""},
		{"creator", "Pay", interceptor.ScopePayouts},
		{"creator", "Project", interceptor.ScopeRead},
		{"project", "Pay", ""},
		{"auditor", "Operator", ""},
		{"auditor", "Create", interceptor.ScopeCreate},
	}
	for _, r := range rows {
		t.Run(r.key+"/"+r.method, func(t *testing.T) {
			ctx := metadata.AppendToOutgoingContext(t.Context(), interceptor.APIKeyMetadata, r.key)
			var req, resp proto.Message = &emptypb.Empty{}, &emptypb.Empty{}
			if r.method == "Create" || r.method == "Pay" {
				req, resp = wrapperspb.String("x"), &wrapperspb.StringValue{}
			}
			err := conn.Invoke(ctx, "/payhook.test.v1.Probe/"+r.method, req, resp)
			if r.lacks == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			want := fmt.Sprintf("this API key lacks the %q scope", r.lacks)
			if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), want) {
				t.Fatalf("%v, want PermissionDenied with %q", err, want)
			}
		})
	}
}
