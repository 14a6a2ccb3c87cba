package jsonbody_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/payhook/payhook/internal/jsonbody"
)

// testMessage builds, at run time, a message with a field of every shape
// the API's requests use.
func testMessage(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	f := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label *descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label}
		if typeName != "" {
			fd.TypeName = proto.String(typeName)
		}
		return fd
	}
	T := descriptorpb.FieldDescriptorProto_TYPE_STRING
	oneofField := f("by_id", 14, T, opt, "")
	oneofField.OneofIndex = proto.Int32(0)
	oneofOther := f("by_name", 15, T, opt, "")
	oneofOther.OneofIndex = proto.Int32(0)
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("jsonbody_test.proto"),
		Package:    proto.String("jsonbodytest"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto", "google/protobuf/duration.proto", "google/protobuf/wrappers.proto", "google/protobuf/struct.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Color"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Req"),
			Field: []*descriptorpb.FieldDescriptorProto{
				f("value_coin", 1, T, opt, ""),
				f("blocks", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt, ""),
				f("amount", 3, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, ""),
				f("count", 4, descriptorpb.FieldDescriptorProto_TYPE_UINT32, opt, ""),
				f("post", 5, descriptorpb.FieldDescriptorProto_TYPE_BOOL, opt, ""),
				f("share", 6, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, opt, ""),
				f("color", 7, descriptorpb.FieldDescriptorProto_TYPE_ENUM, opt, ".jsonbodytest.Color"),
				f("tickers", 8, T, rep, ""),
				f("outputs", 9, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".jsonbodytest.Req.OutputsEntry"),
				f("wallets", 10, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".jsonbodytest.Wallet"),
				f("at", 11, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Timestamp"),
				f("grace", 12, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Duration"),
				f("note", 13, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.StringValue"),
				oneofField, oneofOther,
				f("data", 16, descriptorpb.FieldDescriptorProto_TYPE_BYTES, opt, ""),
				f("limits", 17, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".jsonbodytest.Req.LimitsEntry"),
				f("meta", 18, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Struct"),
			},
			OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("which")}},
			NestedType: []*descriptorpb.DescriptorProto{
				{
					Name:    proto.String("OutputsEntry"),
					Field:   []*descriptorpb.FieldDescriptorProto{f("key", 1, T, opt, ""), f("value", 2, T, opt, "")},
					Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				},
				{
					Name:    proto.String("LimitsEntry"),
					Field:   []*descriptorpb.FieldDescriptorProto{f("key", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt, ""), f("value", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, "")},
					Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				},
			},
		}, {
			Name:  proto.String("Wallet"),
			Field: []*descriptorpb.FieldDescriptorProto{f("ticker", 1, T, opt, ""), f("address", 2, T, opt, "")},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Req")
}

// TestProblem: each body names the field (its proto name) and the type
// it expects, and Problem finds a problem exactly when protojson (with
// the gateway's options) refuses the body.
func TestProblem(t *testing.T) {
	md := testMessage(t)
	rows := []struct{ name, body, want string }{
		{"empty object", `{}`, ""},
		{"everything right", `{"value_coin":"0.5","blocks":3,"amount":"12","count":1,"post":true,"share":0.5,"color":"COLOR_RED","tickers":["btc"],"outputs":{"a":"1"},"wallets":[{"ticker":"btc","address":"x"}],"at":"2025-01-31T12:00:00Z","grace":"90s","note":"n","by_id":"1","data":"aGk=","limits":{"1":"2"},"meta":{"a":[1,null]}}`, ""},
		{"JSON names", `{"valueCoin":"0.5","byId":"x"}`, ""},
		{"unknown fields are skipped", `{"nope":{"deep":[1]},"value_coin":"1"}`, ""},
		{"null is the default", `{"value_coin":null,"tickers":null,"wallets":null,"blocks":null}`, ""},
		{"integral number forms", `{"blocks":1.0,"amount":1e3,"count":"7"}`, ""},
		{"decimal as a number", `{"address_in":"x","value_coin":0.5}`, `value_coin: must be a string, e.g. "0.5"`},
		{"decimal as a number, JSON name", `{"valueCoin":12}`, `value_coin: must be a string, e.g. "12"`},
		{"bool for a string", `{"value_coin":true}`, `value_coin: must be a string, e.g. "true"`},
		{"object for a string", `{"value_coin":{}}`, `value_coin: must be a string, e.g. "text"`},
		{"string for an int", `{"blocks":"many"}`, "blocks: must be an integer, e.g. 1"},
		{"fraction for an int", `{"blocks":1.5}`, "blocks: must be an integer, e.g. 1"},
		{"int32 overflow", `{"blocks":3000000000}`, "blocks: must be an integer from -2147483648 to 2147483647"},
		{"negative uint", `{"count":-1}`, "count: must be an integer from 0 to 4294967295"},
		{"quoted bool", `{"post":"true"}`, "post: must be true or false"},
		{"number bool", `{"post":1}`, "post: must be true or false"},
		{"string double", `{"share":"half"}`, "share: must be a number"},
		{"bool enum", `{"color":true}`, "color: must be one of COLOR_UNSPECIFIED, COLOR_RED"},
		{"string for a list", `{"tickers":"btc"}`, `tickers: must be a JSON array, e.g. ["text"]`},
		{"number in a list", `{"tickers":["btc",5]}`, `tickers[1]: must be a string, e.g. "5"`},
		{"null in a list", `{"tickers":[null]}`, "tickers[0]: must not be null"},
		{"number in a map", `{"outputs":{"addr":0.5}}`, `outputs["addr"]: must be a string, e.g. "0.5"`},
		{"map key not an integer", `{"limits":{"x":"1"}}`, `limits["x"]: the key must be an integer`},
		{"list for a map", `{"outputs":[]}`, "outputs: must be a JSON object"},
		{"number in a nested message", `{"wallets":[{"ticker":"btc","address":7}]}`, `wallets[0].address: must be a string, e.g. "7"`},
		{"string for a message", `{"wallets":["btc"]}`, "wallets[0]: must be a JSON object"},
		{"number for a timestamp", `{"at":1700000000}`, "at: must be a timestamp string"},
		{"number for a duration", `{"grace":90}`, "grace: must be a duration string"},
		{"number for a wrapper", `{"note":1}`, `note: must be a string, e.g. "1"`},
		{"two of a oneof", `{"by_id":"1","by_name":"x"}`, "by_name: only one of by_id and by_name may be given"},
		{"a field twice by two names", `{"value_coin":"1","valueCoin":"2"}`, "value_coin: given twice (as value_coin and valueCoin)"},
		{"a member twice", `{"blocks":1,"blocks":2}`, `request body: duplicate member: "blocks" is given twice`},
		{"bytes not base64", `{"data":"***"}`, "data: must be base64"},
		{"array body", `[1]`, "request body: must be a JSON object"},
		{"string body", `"x"`, "request body: must be a JSON object"},
		{"syntax", `{"blocks":}`, "request body: not valid JSON (at offset 10)"},
		{"cut", `{"blocks":1`, "request body: not valid JSON (it ends early)"},
		{"not UTF-8", "{\"value_coin\":\"\xff\"}", "request body: not valid UTF-8"},
	}
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := jsonbody.Problem([]byte(r.body), md)
			if (r.want == "") != (got == "") || !strings.HasPrefix(got, r.want) {
				t.Fatalf("Problem = %q, want %q", got, r.want)
			}
			if strings.Contains(got, "proto") || strings.Contains(got, "line 1") {
				t.Fatalf("Problem = %q names parser internals", got)
			}
			err := opts.Unmarshal([]byte(r.body), dynamicpb.NewMessage(md))
			if (err == nil) != (got == "") {
				t.Fatalf("protojson: %v; Problem: %q (they must agree)", err, got)
			}
		})
	}
}
