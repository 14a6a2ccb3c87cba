package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/api/httpbody"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// rawPaths are the routes whose RPC streams google.api.HttpBody messages:
// a file (the accounting export), written as the messages' bytes, under
// their content type, without a delimiter between messages or the
// stream's heartbeat, with the Content-Disposition the server names in
// its header metadata.
var rawPaths = map[string]bool{"/ledger/export": true}

// rawMIME selects rawMarshaler for a raw path's request (set by
// rawRoutes; no client sends it).
const rawMIME = "application/x-payhook-raw"

// contentDispositionMetadata is the header metadata a raw stream's server
// names its file in.
const contentDispositionMetadata = "content-disposition"

// rawRoutes makes the mux answer a raw path's request with rawMarshaler,
// whatever the client's Accept header says.
func rawRoutes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && rawPaths[r.URL.Path] {
			r = r.Clone(r.Context())
			r.Header.Set("Accept", rawMIME)
		}
		next.ServeHTTP(w, r)
	})
}

// rawMarshaler is the outbound marshaler of raw paths: a message's content
// type is its HttpBody's, messages follow each other with no delimiter,
// and an error (before the first message: with its HTTP status; after it,
// the file is cut short and this line ends it) is the family's error body.
type rawMarshaler struct {
	*marshaler
}

// ContentType implements runtime.Marshaler.
func (m *rawMarshaler) ContentType(v any) string {
	if b, ok := v.(*httpbody.HttpBody); ok && b.GetContentType() != "" {
		return b.GetContentType()
	}
	return "application/json"
}

// Delimiter implements runtime.Delimited: none, the messages are parts of
// one file.
func (m *rawMarshaler) Delimiter() []byte { return nil }

// Marshal implements runtime.Marshaler: the gateway's error chunk
// ({"error": status}) becomes the family's error body.
func (m *rawMarshaler) Marshal(v any) ([]byte, error) {
	if chunk, ok := v.(map[string]proto.Message); ok {
		if st, ok := chunk["error"].(*spb.Status); ok {
			msg := st.GetMessage()
			switch codes.Code(st.GetCode()) {
			case codes.InvalidArgument:
				msg = parseErrorMessage(msg)
			case codes.Internal, codes.Unknown:
				msg = "internal error"
			}
			return errorJSON(msg), nil
		}
	}
	return m.marshaler.Marshal(v)
}

// rawStart prepares a raw path's response when its stream starts: no
// write or read deadline (a year of rows takes a while), but headers only
// with the first message, so that an error before it keeps its status.
func rawStart(ctx context.Context, w http.ResponseWriter) bool {
	path, ok := runtime.HTTPPathPattern(ctx)
	if !ok || !rawPaths[path] {
		return false
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	return true
}

// rawMessage sets a raw stream's Content-Disposition from the server's
// header metadata, before the first message's bytes are written.
func rawMessage(ctx context.Context, w http.ResponseWriter) {
	if w.Header().Get("Content-Disposition") != "" {
		return
	}
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		if v := md.HeaderMD.Get(contentDispositionMetadata); len(v) > 0 {
			w.Header().Set("Content-Disposition", v[0])
		}
	}
}
