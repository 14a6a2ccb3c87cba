// Package gateway mounts the grpc-gateway REST facade in front of payhook's
// gRPC server. REST requests are forwarded over a gRPC client connection, so
// the gRPC interceptors (auth, validation, recovery, request logs) run once
// for both transports.
//
// It adapts the gateway to this API family's REST conventions: documented
// paths end in a slash (stripped here before routing, since the gateway's
// path templates cannot end in one), the `apikey` header travels as gRPC
// metadata, JSON uses the proto field names, success bodies carry
// `"status": "success"` and errors are `{"status": "error", "error": "..."}`.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/interceptor"
)

// New returns the REST handler: a slash normaliser in front of a gateway mux
// whose services reach the gRPC server through conn. The devnet routes exist
// only when devnet is set (developer mode); otherwise they are 404.
func New(ctx context.Context, conn *grpc.ClientConn, devnet bool) (http.Handler, error) {
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, newMarshaler()),
		runtime.WithIncomingHeaderMatcher(headerMatcher),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithForwardResponseRewriter(rewriteResponse),
		runtime.WithDisableHTTPMethodOverride(),
	)
	if err := payhookv1.RegisterAddressServiceHandler(ctx, mux, conn); err != nil {
		return nil, fmt.Errorf("register address service: %w", err)
	}
	if err := payhookv1.RegisterDeliveryServiceHandler(ctx, mux, conn); err != nil {
		return nil, fmt.Errorf("register delivery service: %w", err)
	}
	if devnet {
		if err := payhookv1.RegisterDevnetServiceHandler(ctx, mux, conn); err != nil {
			return nil, fmt.Errorf("register devnet service: %w", err)
		}
	}
	return StripTrailingSlash(mux), nil
}

// StripTrailingSlash removes one trailing slash from the request path, so
// that `/btc/create/` (the documented form) and `/btc/create` reach the same
// route.
func StripTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimSuffix(p, "/")
			if rp := r.URL.RawPath; rp != "" {
				r2.URL.RawPath = strings.TrimSuffix(rp, "/")
			}
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// headerMatcher forwards the apikey header as gRPC metadata, besides the
// gateway's default set of permanent headers.
func headerMatcher(key string) (string, bool) {
	if strings.EqualFold(key, interceptor.APIKeyMetadata) {
		return interceptor.APIKeyMetadata, true
	}
	return runtime.DefaultHeaderMatcher(key)
}

// errorBody is the REST error shape of this API family.
type errorBody struct {
	Status string `json:"status"`
	Error  string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Trailer")
	w.Header().Del("Transfer-Encoding")
	w.WriteHeader(code)
	b, _ := json.Marshal(errorBody{Status: "error", Error: msg})
	_, _ = w.Write(b)
}

// errorHandler renders a gRPC status as the family's error body with the
// HTTP status matching the gRPC code.
func errorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
	st := status.Convert(err)
	msg := st.Message()
	code := runtime.HTTPStatusFromCode(st.Code())
	switch st.Code() {
	case codes.InvalidArgument:
		msg = parseErrorMessage(msg)
	case codes.Internal, codes.Unknown:
		if msg == "" {
			msg = "internal error"
		}
	}
	if msg == "" {
		msg = strings.ToLower(strings.ReplaceAll(st.Code().String(), "_", " "))
	}
	writeError(w, code, msg)
}

// gatewayParseError matches the gateway's own query parsing errors, which
// arrive before any handler runs.
var gatewayParseError = regexp.MustCompile(`^parsing field "([^"]+)": strconv\.Parse(Int|Uint|Bool|Float): parsing "(.*)": `)

// parseErrorMessage rewrites a gateway parsing error into the API's
// "param: what is wrong" form; other messages pass unchanged.
func parseErrorMessage(msg string) string {
	m := gatewayParseError.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	kind := map[string]string{"Int": "an integer", "Uint": "an integer", "Bool": "a boolean (1 or 0)", "Float": "a number"}[m[2]]
	return fmt.Sprintf("%s: %q is not %s", m[1], m[3], kind)
}

// routingErrorHandler renders unknown paths and wrong methods in the same
// error shape.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	switch httpStatus {
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
	case http.StatusBadRequest:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed request path %s", r.URL.Path))
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
	}
}

// marshaler renders proto messages with protojson using the proto field
// names; scalar fields are always present, unset optional and message fields
// are left out. Success bodies get `"status": "success"` first.
type marshaler struct {
	runtime.JSONPb
}

func newMarshaler() *marshaler {
	return &marshaler{JSONPb: runtime.JSONPb{
		MarshalOptions: protojson.MarshalOptions{
			UseProtoNames:     true,
			EmitDefaultValues: true,
		},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
	}}
}

// Marshal implements runtime.Marshaler.
func (m *marshaler) Marshal(v any) ([]byte, error) {
	switch t := v.(type) {
	case rawBody:
		return t, nil
	case proto.Message:
		b, err := m.MarshalOptions.Marshal(t)
		if err != nil {
			return nil, err
		}
		return withSuccess(b), nil
	}
	return m.JSONPb.Marshal(v)
}

// rawBody is a response already rendered by rewriteResponse.
type rawBody []byte

// withSuccess inserts "status":"success" as the first member of a JSON object.
func withSuccess(obj []byte) []byte {
	const head = `{"status":"success"`
	if len(obj) < 2 || obj[0] != '{' {
		return obj
	}
	out := make([]byte, 0, len(obj)+len(head)+1)
	out = append(out, head...)
	if rest := obj[1:]; len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, obj[1:]...)
}

// rewriteResponse gives GetInfoResponse the family's REST shape.
func rewriteResponse(ctx context.Context, resp proto.Message) (any, error) {
	info, ok := resp.(*payhookv1.GetInfoResponse)
	if !ok {
		return resp, nil
	}
	path, _ := runtime.HTTPPathPattern(ctx)
	b, err := infoBody(info, strings.Contains(path, "{ticker"))
	if err != nil {
		grpclog.Errorf("render info: %v", err)
		return nil, status.Error(codes.Internal, "render info")
	}
	return rawBody(b), nil
}

// infoBody renders /info/ as an object keyed by network, each base coin an
// object carrying its ticker and each token nested under its network key;
// for /{ticker}/info/ it renders the single coin object with status success.
func infoBody(info *payhookv1.GetInfoResponse, single bool) ([]byte, error) {
	opts := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}
	coin := func(c *payhookv1.CoinInfo) (map[string]json.RawMessage, error) {
		b, err := opts.Marshal(c)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		return m, json.Unmarshal(b, &m)
	}
	if single {
		if len(info.GetCoins()) != 1 {
			return nil, fmt.Errorf("single ticker info with %d coins", len(info.GetCoins()))
		}
		m, err := coin(info.GetCoins()[0])
		if err != nil {
			return nil, err
		}
		m["status"] = json.RawMessage(`"success"`)
		return json.Marshal(m)
	}
	// A network key that also has tokens (sol and sol/usdc) nests its base
	// coin under itself (sol.sol), as every token network does.
	hasTokens := map[string]bool{}
	for _, c := range info.GetCoins() {
		if strings.Contains(c.GetTickerPath(), "/") {
			hasTokens[c.GetNetwork()] = true
		}
	}
	out := map[string]any{}
	for _, c := range info.GetCoins() {
		m, err := coin(c)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(c.GetTickerPath(), "/") && !hasTokens[c.GetNetwork()] {
			out[c.GetTickerPath()] = m
			continue
		}
		nested, _ := out[c.GetNetwork()].(map[string]any)
		if nested == nil {
			nested = map[string]any{}
			out[c.GetNetwork()] = nested
		}
		nested[c.GetTicker()] = m
	}
	return json.Marshal(out)
}
