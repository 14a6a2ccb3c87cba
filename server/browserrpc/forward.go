package browserrpc

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/interceptor"
)

// forwarder is the transcoder's target: it receives each call as gRPC
// (length-prefixed binary messages, status in trailers) and makes it on
// conn with the message bytes as they are.
type forwarder struct {
	conn         grpc.ClientConnInterface
	methods      map[string]protoreflect.MethodDescriptor // by path, "/payhook.v1.X/Method"
	writeTimeout time.Duration
	maxBody      int64
	logger       *slog.Logger
}

// envelopeLen is the size of a gRPC message prefix: a flags byte and a
// big-endian length.
const envelopeLen = 5

// forwardDesc declares every call a stream both ways: the server knows the
// method's real shape, and the forwarder sends what the client sent and
// returns what the server answered, however many messages.
var forwardDesc = grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

// ServeHTTP makes the call r carries (its path names the method) and
// writes the answer as gRPC: messages, then the status in trailers.
func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{w: w, rc: http.NewResponseController(w), f: f}
	md, ok := f.methods[r.URL.Path]
	if !ok {
		// The transcoder routes only the methods it was given.
		c.fail(status.New(codes.Unimplemented, "unknown method"))
		return
	}
	c.streaming = md.IsStreamingServer()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if d, ok := grpcTimeout(r.Header.Get("Grpc-Timeout")); ok {
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	out, err := outgoingMetadata(r.Header)
	if err != nil {
		c.fail(status.New(codes.InvalidArgument, err.Error()))
		return
	}
	ctx = metadata.NewOutgoingContext(ctx, out)

	// Every message is read before the call starts: the services have no
	// client streams, and a browser's request body is complete before any
	// answer anyway (HTTP/1.1, no bidirectional streams).
	msgs, err := f.readMessages(r.Body)
	if err != nil {
		c.fail(f.requestError(err))
		return
	}
	if c.streaming {
		// The server's read deadline would end the request (the body is
		// read; the connection's background read would time out and
		// cancel it): only the client or shutdown ends a stream.
		_ = c.rc.SetReadDeadline(time.Time{})
	}
	cs, err := f.conn.NewStream(ctx, &forwardDesc, r.URL.Path, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		c.fail(status.Convert(err))
		return
	}
	for _, m := range msgs {
		if err := cs.SendMsg(&m); err != nil {
			break // the call's status comes with the first RecvMsg
		}
	}
	_ = cs.CloseSend()
	header, _ := cs.Header() // nil when the call failed before any header
	if !c.start(header) {
		return
	}
	var prefix [envelopeLen]byte
	for {
		var m frame
		err := cs.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			c.end(cs.Trailer(), nil)
			return
		}
		if err != nil {
			c.end(cs.Trailer(), status.Convert(err))
			return
		}
		c.deadline()
		binary.BigEndian.PutUint32(prefix[1:], uint32(len(m)))
		if _, err := w.Write(prefix[:]); err != nil {
			return // the client is gone; cancel ends the call
		}
		if _, err := w.Write(m); err != nil {
			return
		}
		// The transcoder flushes each message it has written.
	}
}

// call is the response side of one forwarded call.
type call struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	f         *forwarder
	streaming bool
}

// start writes the response header with the server's header metadata; a
// stream's is sent at once, so the client knows the call is accepted
// before the first message. It reports false when the response is already
// over: the transcoder answers by itself a request it cannot decode, and a
// client may be gone.
func (c *call) start(header metadata.MD) bool {
	h := c.w.Header()
	copyMetadata(h, header, "")
	h.Set("Content-Type", "application/grpc+proto")
	c.w.WriteHeader(http.StatusOK)
	if _, err := c.w.Write(nil); err != nil {
		return false
	}
	if c.streaming {
		// The transcoder flushes at message boundaries only (its Flush
		// does nothing); it has written the stream's header to the
		// writer beneath, which is flushed here. A unary answer is
		// buffered until its end and must not be.
		if u, ok := c.w.(interface{ Unwrap() http.ResponseWriter }); ok {
			c.deadline()
			return http.NewResponseController(u.Unwrap()).Flush() == nil
		}
	}
	return true
}

// fail ends a call that has no response yet with st.
func (c *call) fail(st *status.Status) {
	if c.start(nil) {
		c.end(nil, st)
	}
}

// deadline gives a stream's next write its own deadline: the HTTP server's
// write timeout bounds a whole response, which a stream has not.
func (c *call) deadline() {
	if c.streaming {
		_ = c.rc.SetWriteDeadline(clock.Now().Add(c.f.writeTimeout))
	}
}

// end sets the call's end as gRPC trailers: the status (OK when st is nil)
// and the trailer metadata. The transcoder writes them, in the client's
// protocol, when the handler returns.
func (c *call) end(trailer metadata.MD, st *status.Status) {
	if st == nil {
		st = status.New(codes.OK, "")
	}
	c.deadline()
	h := c.w.Header()
	copyMetadata(h, trailer, http.TrailerPrefix)
	h.Set(http.TrailerPrefix+"Grpc-Status", strconv.Itoa(int(st.Code())))
	if msg := st.Message(); msg != "" {
		h.Set(http.TrailerPrefix+"Grpc-Message", percentEncode(msg))
	}
	if p := st.Proto(); len(p.GetDetails()) > 0 {
		if b, err := proto.Marshal(p); err == nil {
			h.Set(http.TrailerPrefix+"Grpc-Status-Details-Bin", base64.RawStdEncoding.EncodeToString(b))
		}
	}
}

// readMessages reads the gRPC-framed messages of body until its end. No
// payhook method takes a client stream, so a request is one message: a
// second one is refused at its first byte, before anything more is read
// (the transcoder decompresses each message it hands over, so a small
// body of many compressed frames must not be read to its end).
func (f *forwarder) readMessages(body io.Reader) ([]frame, error) {
	var (
		msgs   []frame
		prefix [envelopeLen]byte
	)
	for {
		if _, err := io.ReadFull(body, prefix[:]); errors.Is(err, io.EOF) {
			return msgs, nil
		} else if err != nil {
			return nil, err
		}
		if len(msgs) == 1 {
			return nil, errManyMessages
		}
		if prefix[0] != 0 {
			return nil, errCompressed
		}
		n := binary.BigEndian.Uint32(prefix[1:])
		if int64(n) > f.maxBody {
			return nil, errTooLarge
		}
		m := make(frame, n)
		if _, err := io.ReadFull(body, m); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
}

// requestError is the status of a failure to read the request.
func (f *forwarder) requestError(err error) *status.Status {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, errTooLarge) || errors.As(err, &mbe):
		return status.Newf(codes.ResourceExhausted, "request body: larger than the limit of %d bytes", f.maxBody)
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, "request canceled")
	case errors.Is(err, errManyMessages):
		return status.New(codes.InvalidArgument, "request body: more than one message; every payhook method takes exactly one")
	case errors.Is(err, errCompressed):
		f.logger.Error("browser RPC refused", "error", err)
		return status.New(codes.Internal, "internal error")
	}
	if st, ok := status.FromError(err); ok {
		return st // the transcoder's own (a message that does not decode)
	}
	return status.New(codes.InvalidArgument, "request body: cannot be read")
}

// outgoingMetadata is the metadata a call carries: the API key and the
// Idempotency-Key, the headers the API reads. Each must be printable ASCII,
// as metadata is.
func outgoingMetadata(h http.Header) (metadata.MD, error) {
	md := metadata.MD{}
	for _, name := range []string{interceptor.APIKeyMetadata, interceptor.IdempotencyKeyMetadata} {
		for _, v := range h.Values(name) {
			for i := 0; i < len(v); i++ {
				if v[i] < 0x20 || v[i] > 0x7e {
					return nil, fmt.Errorf("header %s: must be printable ASCII", name)
				}
			}
			md.Append(name, v)
		}
	}
	return md, nil
}

// copyMetadata adds the server's custom metadata to h, each key with
// prefix ("" for headers, http.TrailerPrefix for trailers); the gRPC
// protocol's own keys are the transcoder's business.
func copyMetadata(h http.Header, md metadata.MD, prefix string) {
	for k, vs := range md {
		if strings.HasPrefix(k, "grpc-") || strings.HasPrefix(k, ":") || k == "content-type" || k == "te" {
			continue
		}
		for _, v := range vs {
			if strings.HasSuffix(k, "-bin") {
				v = base64.RawStdEncoding.EncodeToString([]byte(v))
			}
			h.Add(prefix+k, v)
		}
	}
}

// grpcTimeout parses a grpc-timeout header ("250m": digits and a unit).
func grpcTimeout(v string) (time.Duration, bool) {
	if len(v) < 2 || len(v) > 9 {
		return 0, false
	}
	n, err := strconv.ParseInt(v[:len(v)-1], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	unit := map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second,
		'm': time.Millisecond, 'u': time.Microsecond, 'n': time.Nanosecond}[v[len(v)-1]]
	if unit == 0 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// percentEncode encodes a grpc-message value: bytes outside printable
// ASCII, and '%', as %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// frame is one message's bytes, as they travel.
type frame []byte

// rawCodec passes frames as they are: the gRPC server, not the forwarder,
// decodes messages. Its name makes the call application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("browserrpc: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*f)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("browserrpc: cannot unmarshal into %T", v)
	}
	*f = data.Materialize()
	return nil
}
