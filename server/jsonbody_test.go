package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/route"
	"github.com/payhook/payhook/server/servertest"
)

// wrongJSON is a JSON value of the wrong type for fd: a number where a
// string is expected (a decimal sent as a JSON number), a string where a
// number or boolean is.
func wrongJSON(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return `[0.5]`
	case fd.IsList() && fd.Kind() == protoreflect.StringKind:
		return `[0.5]`
	case fd.IsList():
		return `0.5`
	}
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.MessageKind, protoreflect.BytesKind:
		return `0.5`
	case protoreflect.BoolKind:
		return `"yes"`
	case protoreflect.EnumKind:
		return `true`
	}
	return `"many"`
}

// TestJSONBodyTypes: every JSON-bodied REST route (and its Connect twin)
// answers a field of the wrong type (a number where a string is expected,
// ...) with a 400 naming the field by its documented name, and no message
// shows parser internals (protojson's "proto:", line and column, JSON
// names).
func TestJSONBodyTypes(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		n := 0
		for _, r := range route.Default().Routes() {
			if r.Kind != route.Gateway || r.Verb != http.MethodPost {
				continue
			}
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(r.RPC)
			if err != nil {
				t.Fatal(err)
			}
			md := d.(protoreflect.MethodDescriptor)
			path := strings.ReplaceAll(r.Path, "{ticker=*/*}", "trc20/usdt")
			path = strings.ReplaceAll(path, "{ticker}", "btc") + "/"
			fields := md.Input().Fields()
			for i := range fields.Len() {
				fd := fields.Get(i)
				if strings.Contains(r.Path, "{"+string(fd.Name())) {
					continue // a path variable
				}
				n++
				body := `{"` + string(fd.Name()) + `":` + wrongJSON(fd) + `}`
				got := in.PostJSON(t, path, body, in.KeyA)
				msg, _ := got.JSON["error"].(string)
				if got.Code != http.StatusBadRequest || !strings.HasPrefix(msg, string(fd.Name())) {
					t.Errorf("POST %s %s: HTTP %d %q, want 400 naming %s", path, body, got.Code, msg, fd.Name())
				}
				noInternals(t, "POST "+path+" "+body, msg)
				// The same body over Connect.
				code, cmsg := connectCall(t, in, md, body)
				if code != http.StatusBadRequest || !strings.HasPrefix(cmsg, string(fd.Name())) {
					t.Errorf("Connect %s %s: HTTP %d %q, want 400 naming %s", md.FullName(), body, code, cmsg, fd.Name())
				}
				noInternals(t, "Connect "+string(md.FullName())+" "+body, cmsg)
			}
		}
		if n < 40 {
			t.Fatalf("only %d fields of JSON-bodied routes checked", n)
		}
		// The devnet example of the issue: a decimal as a JSON number.
		got := in.PostJSON(t, "/devnet/btc/pay/", `{"address_in":"`+btcDest+`","value_coin":0.5}`, "")
		if msg, _ := got.JSON["error"].(string); got.Code != 400 || msg != `value_coin: must be a string, e.g. "0.5"` {
			t.Fatalf("devnet pay: HTTP %d %s", got.Code, got.Body)
		}
		got = in.PostJSON(t, "/devnet/btc/pay/", `{"address_in":`, "")
		if msg, _ := got.JSON["error"].(string); got.Code != 400 || msg != "request body: not valid JSON (it ends early)" {
			t.Fatalf("devnet pay, cut body: HTTP %d %s", got.Code, got.Body)
		}
	}, func(c *server.Config) { c.Dev = true })
}

func noInternals(t *testing.T, what, msg string) {
	t.Helper()
	for _, bad := range []string{"proto:", "line 1:", "(line", "protojson", "syntax error"} {
		if strings.Contains(msg, bad) {
			t.Errorf("%s: error %q shows parser internals (%s)", what, msg, bad)
		}
	}
}

// connectCall posts body to md over the Connect protocol (JSON) and
// returns the HTTP status and the error message.
func connectCall(t *testing.T, in *servertest.Instance, md protoreflect.MethodDescriptor, body string) (int, string) {
	t.Helper()
	u := in.BaseURL + "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("apikey", in.KeyA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct{ Message string }
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Message
}
