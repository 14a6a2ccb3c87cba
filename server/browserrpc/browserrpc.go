package browserrpc

import (
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"connectrpc.com/vanguard"
	"github.com/rs/cors"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/payhook/payhook/server/interceptor"
)

// Config configures the handler.
type Config struct {
	// Conn reaches the gRPC server (the server's own client connection):
	// every call is forwarded over it.
	Conn grpc.ClientConnInterface
	// Services are the full names of the protobuf services served
	// ("payhook.v1.AddressService"); each must be linked into the binary.
	Services []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may call from another origin (--cors-origin); "*" allows every
	// origin. Empty: no cross-origin browser call is allowed, while
	// same-origin pages and non-browser clients are served as ever.
	AllowedOrigins []string
	// MaxBodyBytes caps a request body; DefaultMaxBodyBytes when 0.
	MaxBodyBytes int64
	// StreamWriteTimeout bounds writing each message of a server stream
	// (streams are exempt from the HTTP server's write timeout, which
	// bounds a whole response); DefaultStreamWriteTimeout when 0.
	StreamWriteTimeout time.Duration
}

// Defaults of Config.
const (
	// DefaultMaxBodyBytes is the REST gateway's default body limit.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultStreamWriteTimeout lets a slow network take a message's
	// time; a client that stops reading for longer is dropped.
	DefaultStreamWriteTimeout = 30 * time.Second
)

// MaxResponseBytes bounds a response message that must be held whole
// (a Connect unary answer is written once its end is known). It equals the
// largest message the gRPC client connection receives by default, so no
// answer that reached this handler is refused for its size.
const MaxResponseBytes = 4 << 20

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.StreamWriteTimeout == 0 {
		c.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	return c
}

// Validate reports the first bad setting.
func (c Config) Validate() error {
	if c.Conn == nil {
		return fmt.Errorf("browserrpc: Conn is required")
	}
	if len(c.Services) == 0 {
		return fmt.Errorf("browserrpc: Services is empty")
	}
	for _, s := range c.Services {
		if _, err := service(s); err != nil {
			return err
		}
	}
	if c.MaxBodyBytes < 0 || c.StreamWriteTimeout < 0 {
		return fmt.Errorf("browserrpc: MaxBodyBytes and StreamWriteTimeout must not be negative")
	}
	for _, o := range c.AllowedOrigins {
		if err := CheckOrigin(o); err != nil {
			return fmt.Errorf("--cors-origin: %w", err)
		}
	}
	return nil
}

// CheckOrigin accepts "*" or an origin as browsers send it in the Origin
// header: http or https, a host, an optional port, nothing else (no path,
// not even "/").
func CheckOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", o)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q must start with http:// or https://", o)
	case u.Host == "" || u.User != nil || u.Opaque != "":
		return fmt.Errorf("%q must be scheme://host[:port]", o)
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#"):
		return fmt.Errorf("%q is an origin only: scheme://host[:port], without a path or a trailing slash", o)
	case o != strings.ToLower(o):
		return fmt.Errorf("%q: write the origin in lower case, as browsers send it", o)
	}
	return nil
}

// Request and response headers of the Connect and gRPC-Web protocols that
// a cross-origin caller uses (as connectrpc.com/cors lists them), with the
// API key, the Idempotency-Key (and the header marking a replayed answer)
// and the compression negotiation headers.
var (
	allowedHeaders = []string{
		"Content-Type", "Connect-Protocol-Version", "Connect-Timeout-Ms",
		"Connect-Accept-Encoding", "Connect-Content-Encoding",
		"Grpc-Timeout", "Grpc-Accept-Encoding", "Grpc-Encoding",
		"X-Grpc-Web", "X-User-Agent", interceptor.APIKeyMetadata, interceptor.IdempotencyKeyMetadata,
	}
	exposedHeaders = []string{
		"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin",
		"Content-Encoding", "Connect-Content-Encoding", "Grpc-Encoding", "Grpc-Accept-Encoding",
		interceptor.ReplayedMetadata,
	}
)

// corsMaxAge is how long (seconds) a browser may reuse a preflight answer.
const corsMaxAge = 2 * 60 * 60

// Handler serves the Connect and gRPC-Web protocols for the configured
// services. Mount it at each of Paths.
type Handler struct {
	paths []string
	next  http.Handler
}

// New returns the handler: CORS, the protocol guard, the vanguard
// transcoder, and the forwarder to cfg.Conn.
func New(cfg Config, logger *slog.Logger) (*Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fw := &forwarder{
		conn:         cfg.Conn,
		methods:      map[string]protoreflect.MethodDescriptor{},
		writeTimeout: cfg.StreamWriteTimeout,
		maxBody:      cfg.MaxBodyBytes,
		logger:       logger,
	}
	var (
		services []*vanguard.Service
		paths    []string
	)
	for _, name := range cfg.Services {
		sd, _ := service(name)
		ms := sd.Methods()
		for i := range ms.Len() {
			fw.methods["/"+name+"/"+string(ms.Get(i).Name())] = ms.Get(i)
		}
		// The target is gRPC with binary messages and no compression: the
		// forwarder passes message bytes as they come, and the gRPC server
		// decodes them as from any client.
		services = append(services, vanguard.NewServiceWithSchema(sd, fw,
			vanguard.WithTargetProtocols(vanguard.ProtocolGRPC),
			vanguard.WithTargetCodecs(vanguard.CodecProto),
			vanguard.WithNoTargetCompression(),
			vanguard.WithMaxMessageBufferBytes(MaxResponseBytes),
		))
		paths = append(paths, "/"+name+"/")
	}
	tc, err := vanguard.NewTranscoder(services, vanguard.WithCodec(newRequestJSON))
	if err != nil {
		return nil, fmt.Errorf("browserrpc: %w", err)
	}
	origins := map[string]bool{}
	for _, o := range cfg.AllowedOrigins {
		origins[o] = true
	}
	c := cors.New(cors.Options{
		// A function, never an empty list: rs/cors reads an empty
		// AllowedOrigins as every origin.
		AllowOriginFunc: func(origin string) bool { return origins["*"] || origins[origin] },
		AllowedMethods:  []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:  allowedHeaders,
		ExposedHeaders:  exposedHeaders,
		MaxAge:          corsMaxAge,
		// The key is a header, never a cookie: no credentials.
		AllowCredentials: false,
	})
	return &Handler{paths: paths, next: c.Handler(guard(cfg.MaxBodyBytes, tc))}, nil
}

// Paths returns the path prefixes the handler serves, one per service
// ("/payhook.v1.AddressService/").
func (h *Handler) Paths() []string { return slices.Clone(h.paths) }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.next.ServeHTTP(w, r) }

// service finds the descriptor of the service named name.
func service(name string) (protoreflect.ServiceDescriptor, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("browserrpc: service %q: %w", name, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("browserrpc: %q is not a service", name)
	}
	return sd, nil
}

// guard refuses gRPC (it has its own listener), caps the body, and lets a
// plain unary POST (curl -H 'Content-Type: application/json') be read as
// Connect: at these paths nothing else is served, so the
// Connect-Protocol-Version header a Connect client adds is not required.
func guard(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnsupportedMediaType)
			_, _ = w.Write([]byte("gRPC is served on the gRPC listener; this one speaks Connect and gRPC-Web\n"))
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Connect-Protocol-Version") == "" {
			if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "application/json" || mt == "application/proto") {
				r.Header.Set("Connect-Protocol-Version", "1")
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		next.ServeHTTP(w, r)
	})
}
