// Package gateway mounts the grpc-gateway REST facade in front of payhook's
// gRPC server. REST requests are forwarded over a gRPC client connection, so
// the gRPC interceptors (auth, validation, recovery, request logs) run once
// for both transports.
//
// It adapts the gateway to this API family's REST conventions: documented
// paths end in a slash (stripped here before routing, since the gateway's
// path templates cannot end in one), the `apikey` header travels as gRPC
// metadata, JSON uses the proto field names, success bodies carry
// `"status": "success"` and errors are `{"status": "error", "error": "..."}`;
// no gRPC header or trailer reaches a REST answer but the request limit's
// (RateLimit-*, and Retry-After on a 429).
//
// In front of the mux: a body over Config.MaxBodyBytes is 413; a path or
// query parameter that is not UTF-8, or a forwarded header that is not
// printable ASCII, is 400 naming it (the gRPC client could not marshal it);
// a server-streaming response sends its headers at once, has no read or
// write deadline, and writes an empty line every Config.Heartbeat. Every
// 5xx is logged with its cause.
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/jsonbody"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/ratelimit"
	"github.com/payhook/payhook/server/route"
)

// Config configures the REST gateway.
type Config struct {
	// Devnet mounts the devnet routes (developer mode); without it they are
	// 404.
	Devnet bool
	// Tickers answers whether a ticker exists: a path naming an unknown one
	// is 404 before the gateway parses any parameter.
	Tickers interceptor.TickerChecker
	// MaxBodyBytes caps a request body; a longer one is answered 413.
	// DefaultMaxBodyBytes when 0.
	MaxBodyBytes int64
	// Heartbeat is how often a streaming response writes an empty line when
	// it has nothing else to send, so that proxies and clients see a live
	// connection. DefaultHeartbeat when 0.
	Heartbeat time.Duration
}

// Defaults of Config.
const (
	// DefaultMaxBodyBytes is 1 MiB: the largest request of the API (a
	// create with every destination) is a few kilobytes.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultHeartbeat is below the idle timeouts of common proxies (60 s).
	DefaultHeartbeat = 15 * time.Second
)

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	return c
}

// New returns the REST handler: a slash normaliser, the request guards
// (body size, UTF-8 parameters, printable headers, streams kept open) and a
// ticker check (a path naming an unknown ticker is 404 before any parameter
// is parsed) in front of a gateway mux whose services reach the gRPC server
// through conn. Every answer of 500 or above is logged with its cause.
func New(ctx context.Context, conn *grpc.ClientConn, cfg Config, logger *slog.Logger) (http.Handler, error) {
	cfg = cfg.WithDefaults()
	ix, err := newParamIndex()
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g := &gateway{cfg: cfg, logger: logger, params: ix}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, newMarshaler()),
		runtime.WithMarshalerOption(rawMIME, &rawMarshaler{marshaler: newMarshaler()}),
		runtime.WithIncomingHeaderMatcher(headerMatcher),
		// gRPC metadata is the server's business: a REST answer carries
		// none of it (by default every 200 would carry
		// Grpc-Metadata-Content-Type: application/grpc), but for the
		// request limit's RateLimit headers.
		runtime.WithOutgoingHeaderMatcher(ratelimit.HTTPHeader),
		runtime.WithOutgoingTrailerMatcher(dropMetadata),
		runtime.WithErrorHandler(g.errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithForwardResponseRewriter(rewriteResponse),
		runtime.WithForwardResponseOption(g.beforeResponse),
		runtime.WithMiddlewares(g.checkParams),
		runtime.WithDisableHTTPMethodOverride(),
	)
	if err := payhookv1.RegisterAddressServiceHandler(ctx, mux, conn); err != nil {
		return nil, fmt.Errorf("register address service: %w", err)
	}
	if err := payhookv1.RegisterDeliveryServiceHandler(ctx, mux, conn); err != nil {
		return nil, fmt.Errorf("register delivery service: %w", err)
	}
	if err := payhookv1.RegisterOperatorServiceHandler(ctx, mux, conn); err != nil {
		return nil, fmt.Errorf("register operator service: %w", err)
	}
	// Registered after the address service: of two matching routes the
	// mux takes the one registered last, so /checkout/logs is the
	// checkout's, never /{ticker}/logs with a ticker named checkout.
	for name, register := range map[string]func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error{
		"project":      payhookv1.RegisterProjectServiceHandler,
		"checkout":     payhookv1.RegisterCheckoutServiceHandler,
		"deposit":      payhookv1.RegisterDepositServiceHandler,
		"subscription": payhookv1.RegisterSubscriptionServiceHandler,
		"notification": payhookv1.RegisterNotificationServiceHandler,
		"payout":       payhookv1.RegisterPayoutServiceHandler,
		"refund":       payhookv1.RegisterRefundServiceHandler,
		"endpoint":     payhookv1.RegisterEndpointServiceHandler,
		"event":        payhookv1.RegisterEventServiceHandler,
		"export":       payhookv1.RegisterExportServiceHandler,
	} {
		if err := register(ctx, mux, conn); err != nil {
			return nil, fmt.Errorf("register %s service: %w", name, err)
		}
	}
	if cfg.Devnet {
		if err := payhookv1.RegisterDevnetServiceHandler(ctx, mux, conn); err != nil {
			return nil, fmt.Errorf("register devnet service: %w", err)
		}
	}
	return StripTrailingSlash(g.guard(checkTicker(cfg.Tickers, g.queryAsBody(outputsAsStrings(rawRoutes(mux)))))), nil
}

// queryBodyPaths are the POST methods whose parameters may come in the
// query instead of a JSON body (`POST /notification/resend/?uuid=...`), as
// this API family's GET-shaped clients send them, or in a form body
// (`POST /payout/process/` with `payout_id=...`), as its payout clients
// send them.
var queryBodyPaths = map[string]bool{
	"/notification/resend": true, "/notification/test": true,
	"/payout/create": true, "/payout/process": true, "/payout/status": true,
	"/checkout/refund": true, "/deposit/refund": true, "/refund/approve": true,
	"/wrong_asset/forward": true, "/wrong_asset/refund": true,
}

// queryAsBody turns the query of a body-less POST, or its URL-encoded form
// body, to a queryBodyPaths path into the JSON body the gateway binds (a
// JSON body, when there is one, wins).
func (g *gateway) queryAsBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !queryBodyPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		raw := r.URL.RawQuery
		form := false
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				writeError(w, http.StatusBadRequest, "the form body could not be read")
				return
			}
			raw, form = string(b), true
		} else if raw == "" || r.ContentLength > 0 {
			next.ServeHTTP(w, r)
			return
		}
		q, err := url.ParseQuery(raw)
		if err != nil {
			writeError(w, http.StatusBadRequest, "the parameters are not URL-encoded correctly")
			return
		}
		// The parameters become the body: they are checked as a GET's
		// query is (an unknown JSON field would be discarded).
		if p := g.params["POST "+r.URL.Path]; p != nil {
			if msg := p.check(raw, true); msg != "" {
				writeError(w, http.StatusBadRequest, msg)
				return
			}
		}
		fields := make(map[string]string, len(q))
		for k, vs := range q {
			if len(vs) > 1 {
				writeError(w, http.StatusBadRequest, k+": given more than once")
				return
			}
			if k == APIKeyParam && form {
				continue // the key travels in the query or the header
			}
			fields[k] = vs[0]
		}
		body, _ := json.Marshal(fields)
		r2 := r.Clone(r.Context())
		if !form {
			r2.URL.RawQuery = ""
		}
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		r2.Header.Set("Content-Type", "application/json")
		next.ServeHTTP(w, r2)
	})
}

// outputsAsStrings turns the JSON number amounts of a payout bulk
// request's "outputs" object (`{"outputs": {"ADDRESS": 0.5}}`, as this API
// family's libraries send them) into strings holding the number's exact
// text, which the proto's decimal-string field takes: no amount is ever a
// float. Everything else, duplicate keys included, passes unchanged; a
// body that is not JSON is left for the gateway to refuse.
func outputsAsStrings(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if r.Method != http.MethodPost || !(strings.HasSuffix(p, "/payout/request/bulk") || strings.HasSuffix(p, "/payout/request/bulk/process")) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "the body could not be read")
			return
		}
		if out, err := numbersAsStrings(body, "outputs"); err == nil {
			body = out
		}
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		next.ServeHTTP(w, r2)
	})
}

// numbersAsStrings re-encodes the JSON document doc token by token, the
// numbers that are values of the object under the top-level key field
// written as strings of their literal text.
func numbersAsStrings(doc []byte, field string) ([]byte, error) {
	type level struct {
		object, wantKey bool
		n               int
		key, under      string
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	var stack []*level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			out.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				parent.n++
				parent.wantKey = parent.object
			}
			continue
		}
		if top != nil && top.object && top.wantKey {
			if top.n > 0 {
				out.WriteByte(',')
			}
			k, _ := json.Marshal(tok)
			out.Write(k)
			top.key, top.wantKey = tok.(string), false
			continue
		}
		if top != nil {
			if top.object {
				out.WriteByte(':')
			} else if top.n > 0 {
				out.WriteByte(',')
			}
		}
		if d, ok := tok.(json.Delim); ok {
			out.WriteByte(byte(d))
			under := ""
			if top != nil {
				under = top.key
			}
			stack = append(stack, &level{object: d == '{', wantKey: d == '{', under: under})
			continue
		}
		if num, ok := tok.(json.Number); ok && len(stack) == 2 && stack[0].object && top.object && top.under == field {
			tok = num.String()
		}
		v, err := json.Marshal(tok)
		if err != nil {
			return nil, err
		}
		out.Write(v)
		if top != nil {
			top.n++
			top.wantKey = top.object
		}
	}
	if len(stack) > 0 {
		return nil, io.ErrUnexpectedEOF
	}
	return out.Bytes(), nil
}

// gateway holds what the handlers around the mux share.
type gateway struct {
	cfg    Config
	logger *slog.Logger
	// params is what each route accepts in its query.
	params paramIndex
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

// IdempotencyKeyHeader is the REST header of a mutating call's
// Idempotency-Key, forwarded as the interceptor's idempotency-key metadata.
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is set to "true" on a response answered from a stored
// Idempotency-Key rather than by running the call again.
const ReplayedHeader = "Idempotent-Replayed"

// headerMatcher forwards the apikey and Idempotency-Key headers as gRPC
// metadata, besides the gateway's default set of permanent headers.
func headerMatcher(key string) (string, bool) {
	if strings.EqualFold(key, interceptor.APIKeyMetadata) {
		return interceptor.APIKeyMetadata, true
	}
	if strings.EqualFold(key, IdempotencyKeyHeader) {
		return interceptor.IdempotencyKeyMetadata, true
	}
	return runtime.DefaultHeaderMatcher(key)
}

// dropMetadata keeps every gRPC header and trailer out of REST answers.
func dropMetadata(string) (string, bool) { return "", false }

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
	_, _ = w.Write(errorJSON(msg))
}

// errorJSON is the family's error body saying msg.
func errorJSON(msg string) []byte {
	// Without HTML escaping: an error that says "& as %26" reads so in
	// a terminal.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(errorBody{Status: "error", Error: msg})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// errorHandler renders a gRPC status as the family's error body with the
// HTTP status matching the gRPC code. A body cut at the size limit is 413
// whatever the decoder made of it; every 5xx is logged with its cause.
func (g *gateway) errorHandler(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if bodyTooLarge(r) {
		writeError(w, http.StatusRequestEntityTooLarge, g.tooLarge())
		return
	}
	st := status.Convert(err)
	msg := st.Message()
	code := runtime.HTTPStatusFromCode(st.Code())
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok && st.Code() == codes.ResourceExhausted {
		// A refusal of the request limits: 429 with Retry-After and the
		// RateLimit headers, which the server put in the trailer.
		if !ratelimit.CopyHeaders(w.Header(), md.TrailerMD) {
			ratelimit.CopyHeaders(w.Header(), md.HeaderMD)
		}
	}
	if code >= 500 {
		g.logger.ErrorContext(ctx, "REST request failed", "method", r.Method, "path", r.URL.Path,
			"http_status", code, "grpc_code", st.Code().String(), "cause", err)
	}
	switch st.Code() {
	case codes.InvalidArgument:
		msg = parseErrorMessage(msg)
	case codes.Internal, codes.Unknown:
		// The cause is in the log (here, and in the server's for errors of
		// its own); it is not the client's to read.
		msg = "internal error"
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

// NewDecoder implements runtime.Marshaler: a request body that does not
// fit its message is refused in the API's words (jsonbody.Problem: the
// field by its documented name and the type it expects), never in
// protojson's, which name the parser, a line and column, and the field's
// JSON name.
func (m *marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		msg, ok := v.(proto.Message)
		if !ok {
			return m.JSONPb.NewDecoder(r).Decode(v)
		}
		// One JSON value, as the gateway's own decoder reads it: an empty
		// body is io.EOF (no fields), what follows the value is not read.
		b, err := io.ReadAll(r)
		if err != nil {
			return err // a cut body: the error handler answers 413
		}
		var raw json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return err
			}
			return errors.New(bodyProblem(b, msg))
		}
		if err := m.UnmarshalOptions.Unmarshal(raw, msg); err != nil {
			return errors.New(bodyProblem(raw, msg))
		}
		return nil
	})
}

// bodyProblem says what is wrong with b as a body of msg, in general
// words when jsonbody finds nothing it models.
func bodyProblem(b []byte, msg proto.Message) string {
	if p := jsonbody.Problem(b, msg.ProtoReflect().Descriptor()); p != "" {
		return p
	}
	return "request body: does not fit the request's fields; see /docs/ for their types"
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

// checkTicker answers 404 for a path naming an unknown ticker, in the same
// words as the gRPC interceptor, before the gateway parses the query.
func checkTicker(tickers interceptor.TickerChecker, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := route.Default().PathTicker(r.URL.Path); t != "" {
			if err := interceptor.UnknownTicker(tickers, t); err != nil {
				st := status.Convert(interceptor.Translate(err))
				writeError(w, runtime.HTTPStatusFromCode(st.Code()), st.Message())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// APIKeyFromQuery moves an `apikey` query parameter (this API family's
// client libraries send the key there) into the apikey header and removes
// it from the query, before anything else sees the request: the key never
// reaches request logs, the gateway's query parser or a stored URL. The
// other query parameters are kept byte for byte. A key given twice with
// different values (in the query, or in the query and the header) is a 400.
func APIKeyFromQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.URL.RawQuery
		if !strings.Contains(raw, APIKeyParam) && !strings.Contains(raw, "%") {
			next.ServeHTTP(w, r)
			return
		}
		kept := make([]string, 0, strings.Count(raw, "&")+1)
		var keys []string
		for part := range strings.SplitSeq(raw, "&") {
			k, v, _ := strings.Cut(part, "=")
			if name, err := url.QueryUnescape(k); err != nil || name != APIKeyParam {
				kept = append(kept, part)
				continue
			}
			val, err := url.QueryUnescape(v)
			if err != nil {
				writeError(w, http.StatusBadRequest, APIKeyParam+": the query parameter is not URL-encoded correctly")
				return
			}
			keys = append(keys, strings.TrimSpace(val))
		}
		if len(keys) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if h := strings.TrimSpace(r.Header.Get(interceptor.APIKeyMetadata)); h != "" {
			keys = append(keys, h)
		}
		for _, k := range keys[1:] {
			if k != keys[0] {
				writeError(w, http.StatusBadRequest, APIKeyParam+": given more than once with different values")
				return
			}
		}
		r2 := r.Clone(r.Context())
		r2.URL.RawQuery = strings.Join(kept, "&")
		r2.RequestURI = r2.URL.RequestURI()
		r2.Form, r2.PostForm = nil, nil
		r2.Header.Set(interceptor.APIKeyMetadata, keys[0])
		next.ServeHTTP(w, r2)
	})
}

// APIKeyParam is the query parameter that may carry the API key.
const APIKeyParam = "apikey"
