package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/interceptor"
)

// TestPublicMatchesDescriptors: an operation documented as needing no API
// key is exactly one whose method declares ACCESS_PUBLIC, and one
// documented as taking an Idempotency-Key is exactly one whose method needs
// a key and declares a scope other than read, so the document cannot drift
// from what the server enforces.
func TestPublicMatchesDescriptors(t *testing.T) {
	for op, r := range rules {
		svc, method, ok := strings.Cut(op, "_")
		if !ok {
			t.Fatalf("operation %q is not Service_Method", op)
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("payhook.v1." + svc + "." + method))
		if err != nil {
			t.Fatalf("operation %s: %v", op, err)
		}
		md := d.(protoreflect.MethodDescriptor)
		public := interceptor.MethodAccess(md) == payhookv1.Access_ACCESS_PUBLIC
		if public != r.public {
			t.Errorf("operation %s: rules say public=%v, the method's access option says %v", op, r.public, public)
		}
		scope := interceptor.ScopeName(interceptor.MethodScope(md))
		writes := !public && scope != "" && scope != interceptor.ScopeRead
		if writes != r.writes {
			t.Errorf("operation %s: rules say writes=%v, the method's scope option (%q) says %v", op, r.writes, scope, writes)
		}
	}
}
