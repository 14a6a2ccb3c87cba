package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/payhook/payhook/server/interceptor"
)

// guard caps the request body and gives each response a writer that can
// turn into a stream (see beforeResponse). A body whose declared length is
// over the limit is refused before anything reads it; one without a length
// is cut at the limit, and the request is then answered 413 too.
func (g *gateway) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > g.cfg.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, g.tooLarge())
			return
		}
		b := &cappedBody{ReadCloser: http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes)}
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
		r.Body = b
		sw := &streamWriter{ResponseWriter: w, heartbeat: g.cfg.Heartbeat}
		defer sw.finish()
		next.ServeHTTP(sw, r)
	})
}

func (g *gateway) tooLarge() string {
	return fmt.Sprintf("request body: larger than the limit of %d bytes", g.cfg.MaxBodyBytes)
}

type bodyKey struct{}

// cappedBody is a request body behind http.MaxBytesReader that remembers
// whether the limit was hit, whatever the reader above made of the error.
type cappedBody struct {
	io.ReadCloser // from http.MaxBytesReader
	exceeded      atomic.Bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.exceeded.Store(true)
	}
	return n, err
}

// bodyTooLarge reports whether r's body was cut at the limit.
func bodyTooLarge(r *http.Request) bool { return bodyTooLargeCtx(r.Context()) }

func bodyTooLargeCtx(ctx context.Context) bool {
	b, ok := ctx.Value(bodyKey{}).(*cappedBody)
	return ok && b.exceeded.Load()
}

// errBodyTooLarge stops a response whose request body was cut; the error
// handler answers 413.
var errBodyTooLarge = status.Error(codes.InvalidArgument, "request body too large")

// beforeResponse runs before a unary response is written and once when a
// stream starts (with a nil message). A unary call whose body was cut (a GET
// with a body the gateway discards) is answered 413; one answered from an
// Idempotency-Key carries Idempotent-Replayed: true. A stream's headers are
// sent at once, before any event, and it gets no write deadline but a
// heartbeat.
func (g *gateway) beforeResponse(ctx context.Context, w http.ResponseWriter, resp proto.Message) error {
	if bodyTooLargeCtx(ctx) {
		return errBodyTooLarge
	}
	if resp != nil {
		if md, ok := runtime.ServerMetadataFromContext(ctx); ok && len(md.HeaderMD.Get(interceptor.ReplayedMetadata)) > 0 {
			w.Header().Set(ReplayedHeader, "true")
		}
		if _, ok := resp.(*httpbody.HttpBody); ok {
			rawMessage(ctx, w)
		}
		return nil
	}
	if rawStart(ctx, w) {
		return nil
	}
	sw, ok := w.(*streamWriter)
	if !ok {
		return nil
	}
	// The gRPC client reports a call that failed before sending headers
	// (unauthenticated, invalid) as a stream without headers whose error
	// comes with the first read: that one is answered with its own status.
	if md, ok := runtime.ServerMetadataFromContext(ctx); !ok || md.HeaderMD == nil {
		return nil
	}
	sw.start(newMarshaler().ContentType(nil))
	return nil
}

// checkParams answers 400, naming the parameter, when a path or query
// parameter is not valid UTF-8 after percent-decoding, or a header that
// travels to the gRPC server as metadata is not printable ASCII. Both
// would otherwise fail inside the gRPC client (proto strings are UTF-8,
// metadata is ASCII) as an internal error. It answers 400 as well for a
// query parameter the route does not read (the gateway would ignore it:
// a misspelt confirmations=3 would be dropped), naming the closest known
// one (params.check).
func (g *gateway) checkParams(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, pathParams map[string]string) {
		if msg := badParam(r, pathParams); msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		if pat, ok := runtime.HTTPPattern(r.Context()); ok {
			if p := g.params.forPattern(r.Method, pat.String()); p != nil {
				if msg := p.check(r.URL.RawQuery, false); msg != "" {
					writeError(w, http.StatusBadRequest, msg)
					return
				}
			}
		}
		next(w, r, pathParams)
	}
}

func badParam(r *http.Request, pathParams map[string]string) string {
	for _, name := range slices.Sorted(maps.Keys(pathParams)) {
		if !utf8.ValidString(pathParams[name]) {
			return name + ": is not valid UTF-8"
		}
	}
	// What does not parse is the gateway's to refuse (400 as well).
	q, _ := url.ParseQuery(r.URL.RawQuery)
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if !utf8.ValidString(name) {
			return fmt.Sprintf("query parameter %q: name is not valid UTF-8", name)
		}
		for _, v := range q[name] {
			if !utf8.ValidString(v) {
				return name + ": is not valid UTF-8"
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Header)) {
		if _, fwd := headerMatcher(name); !fwd {
			continue
		}
		for _, v := range r.Header[name] {
			for i := 0; i < len(v); i++ {
				if v[i] < 0x20 || v[i] > 0x7e {
					return fmt.Sprintf("header %s: must be printable ASCII", strings.ToLower(name))
				}
			}
		}
	}
	return ""
}

// streamWriter is the response writer of every gateway request. Until
// start it only passes through; after start (a streaming response) it has
// sent its headers, has no write deadline, and writes an empty line every
// heartbeat, serialised with the gateway's own writes. Empty lines between
// the stream's JSON objects are whitespace to JSON stream decoders and are
// skipped by newline-delimited JSON readers.
type streamWriter struct {
	http.ResponseWriter
	heartbeat time.Duration

	mu      sync.Mutex // guards writes once started
	started bool
	stop    chan struct{}
	done    chan struct{}
}

// start sends the headers (with contentType), lifts the server's read and
// write deadlines for this request, and starts the heartbeat.
func (s *streamWriter) start(contentType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	rc := http.NewResponseController(s.ResponseWriter)
	// The server's WriteTimeout would cut the stream; the read deadline is
	// lifted as well, so nothing but the client (or shutdown) ends it.
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	s.Header().Set("Content-Type", contentType)
	s.ResponseWriter.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.beat(rc)
}

// beat writes an empty line every heartbeat until finish, or until a write
// fails (the client is gone; the stream's own next write notices too).
func (s *streamWriter) beat(rc *http.ResponseController) {
	defer close(s.done)
	t := time.NewTicker(s.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		_, err := s.ResponseWriter.Write([]byte("\n"))
		if err == nil {
			err = rc.Flush()
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// finish stops the heartbeat and waits for it; the handler has returned.
func (s *streamWriter) finish() {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		close(s.stop)
		<-s.done
	}
}

// WriteHeader implements http.ResponseWriter; a started stream has sent
// its header already (an error after that goes into the body).
func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.ResponseWriter.WriteHeader(code)
	}
}

// Write implements http.ResponseWriter.
func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ResponseWriter.Write(p)
}

// FlushError flushes the response (http.ResponseController uses it).
func (s *streamWriter) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (s *streamWriter) Flush() { _ = s.FlushError() }

// Unwrap returns the underlying writer, for http.ResponseController.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
