package browserrpc

import (
	"errors"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/protobuf/proto"

	"github.com/payhook/payhook/internal/jsonbody"
)

// requestJSON is vanguard's JSON codec whose decoding errors are the
// client's: invalid_argument, as a REST body that does not parse is 400.
// (Vanguard reports a codec's plain error as unknown, HTTP 500.) JSON is
// only ever decoded from clients here: the gRPC server answers in binary.
type requestJSON struct {
	*vanguard.JSONCodec
}

func newRequestJSON(res vanguard.TypeResolver) vanguard.Codec {
	return requestJSON{JSONCodec: vanguard.NewJSONCodec(res)}
}

// Unmarshal implements vanguard.Codec.
func (c requestJSON) Unmarshal(data []byte, msg proto.Message) error {
	if err := c.JSONCodec.Unmarshal(data, msg); err != nil {
		// In the API's words (the field and the type it expects), never
		// protojson's (the parser, a line and column, the JSON name).
		p := jsonbody.Problem(data, msg.ProtoReflect().Descriptor())
		if p == "" {
			p = "request body: does not fit the request's fields; see /docs/ for their types"
		}
		return connect.NewError(connect.CodeInvalidArgument, errors.New(p))
	}
	return nil
}
