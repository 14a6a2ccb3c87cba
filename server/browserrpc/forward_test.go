package browserrpc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/payhook/payhook/ent/schema"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/browserrpc"
	"github.com/payhook/payhook/server/interceptor"
)

// keyLog is a KeyResolver that knows one key and records every key asked.
type keyLog struct {
	mu   sync.Mutex
	seen []string
}

func (k *keyLog) ResolveAPIKey(_ context.Context, key string) (interceptor.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seen = append(k.seen, key)
	if key != "good-key" {
		return interceptor.Key{}, interceptor.ErrUnknownKey
	}
	return interceptor.Key{ID: 1, ProjectID: 1, Scopes: schema.AllScopes}, nil
}

// panicky answers GetQrCode (a method needing a project's key) and panics
// in GetInfo (a public one).
type panicky struct {
	payhookv1.UnimplementedAddressServiceServer
}

func (panicky) GetQrCode(context.Context, *payhookv1.GetQrCodeRequest) (*payhookv1.GetQrCodeResponse, error) {
	return &payhookv1.GetQrCodeResponse{}, nil
}

// qrBody is a GetQrCode request that passes validation.
const qrBody = `{"ticker":"btc","address":"bc1q"}`

func (panicky) GetInfo(context.Context, *payhookv1.GetInfoRequest) (*payhookv1.GetInfoResponse, error) {
	panic("handler bug")
}

// unitServer is a gRPC server with payhook's interceptor chain and the
// panicky address service, and the browser handler in front of it; it
// returns the handler's base URL and the key log.
func unitServer(t *testing.T) (string, *keyLog) {
	t.Helper()
	keys := &keyLog{}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	unary, stream, err := interceptor.Chain(interceptor.Config{
		Keys: keys,
	}, logger)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	payhookv1.RegisterAddressServiceServer(gs, panicky{})
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
	h, err := browserrpc.New(browserrpc.Config{Conn: conn, Services: []string{"payhook.v1.AddressService"}, MaxBodyBytes: unitMaxBody}, logger)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		_ = conn.Close()
		gs.Stop()
		<-done
	})
	return hs.URL, keys
}

// unitMaxBody is the body limit of unitServer.
const unitMaxBody = 1024

// connectError is the Connect protocol's error body.
type connectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// postJSON makes a Connect unary call with a JSON body, as curl would (no
// Connect-Protocol-Version header), with header set on the request.
func postJSON(t *testing.T, url, body string, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// TestForwarderUnit: behind the browser handler, the gRPC server's own
// interceptors answer: recovery turns a handler's panic into internal
// (and the server goes on serving), auth receives the apikey header as
// metadata, and a key that is not printable ASCII is refused before the
// call.
func TestForwarderUnit(t *testing.T) {
	t.Parallel()
	base, keys := unitServer(t)
	cases := []struct {
		name     string
		method   string
		body     string
		header   http.Header
		wantCode int
		wantErr  connectError
		wantKeys []string
	}{
		{name: "panic recovered", method: "GetInfo", wantCode: 500,
			wantErr: connectError{Code: "internal", Message: "internal error"}},
		{name: "served after the panic", method: "GetQrCode", body: qrBody, header: http.Header{"Apikey": {"good-key"}}, wantCode: 200,
			wantKeys: []string{"good-key"}},
		{name: "unknown key", method: "GetQrCode", body: qrBody, header: http.Header{"Apikey": {"other"}}, wantCode: 401,
			wantErr: connectError{Code: "unauthenticated", Message: "unknown api key"}, wantKeys: []string{"other"}},
		{name: "no key", method: "GetQrCode", body: qrBody, wantCode: 401,
			wantErr: connectError{Code: "unauthenticated", Message: "missing api key: send it in the apikey header or query parameter"}},
		{name: "key not ASCII", method: "GetQrCode", body: qrBody, header: http.Header{"Apikey": {"cl\xc3\xa9"}}, wantCode: 400,
			wantErr: connectError{Code: "invalid_argument", Message: "header apikey: must be printable ASCII"}},
		{name: "unknown method", method: "Nope", wantCode: 404},
		{name: "body over the limit", method: "GetInfo", body: `{"ticker":"` + strings.Repeat("a", unitMaxBody) + `"}`, wantCode: 429,
			wantErr: connectError{Code: "resource_exhausted", Message: "request body: larger than the limit of 1024 bytes"}},
		{name: "gRPC-Web message over the limit", method: "GetInfo",
			body:   string([]byte{0, 0, 0, 0x10, 0}) + strings.Repeat("a", 0x1000),
			header: http.Header{"Content-Type": {"application/grpc-web+proto"}}, wantCode: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys.mu.Lock()
			keys.seen = nil
			keys.mu.Unlock()
			if c.body == "" {
				c.body = "{}"
			}
			code, h, body := postJSON(t, base+"/payhook.v1.AddressService/"+c.method, c.body, c.header)
			if code != c.wantCode {
				t.Fatalf("HTTP %d, want %d: %s", code, c.wantCode, body)
			}
			if strings.HasPrefix(h.Get("Content-Type"), "application/grpc-web") {
				_, trailer := grpcWebFrames(t, body)
				if !strings.Contains(strings.ToLower(trailer), "grpc-status: 8\r\n") {
					t.Fatalf("trailer %q, want resource exhausted", trailer)
				}
				return
			}
			if c.wantErr.Code != "" {
				var got connectError
				if err := json.Unmarshal(body, &got); err != nil || got != c.wantErr {
					t.Fatalf("error body %s, want %+v", body, c.wantErr)
				}
			}
			keys.mu.Lock()
			defer keys.mu.Unlock()
			if strings.Join(keys.seen, ",") != strings.Join(c.wantKeys, ",") {
				t.Fatalf("the auth interceptor saw keys %q, want %q", keys.seen, c.wantKeys)
			}
		})
	}
}

// TestCheckOrigin: an origin as a browser sends it, or "*"; the server's
// configuration refuses anything else naming --cors-origin.
func TestCheckOrigin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		origin string
		ok     bool
	}{
		{"https://app.example", true},
		{"http://localhost:5173", true},
		{"*", true},
		{"https://app.example/", false},
		{"https://app.example/path", false},
		{"app.example", false},
		{"ftp://app.example", false},
		{"https://user@app.example", false},
		{"https://App.example", false},
		{"https://app.example?x", false},
		{"", false},
	} {
		if err := browserrpc.CheckOrigin(c.origin); (err == nil) != c.ok {
			t.Errorf("CheckOrigin(%q) = %v, want ok=%v", c.origin, err, c.ok)
		}
		cfg := server.Config{Dev: true, API: server.APIConfig{CORSOrigins: []string{c.origin}}}
		if err := cfg.WithDefaults().Validate(); (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "--cors-origin")) {
			t.Errorf("server config with origin %q: %v, want ok=%v", c.origin, err, c.ok)
		}
	}
}
