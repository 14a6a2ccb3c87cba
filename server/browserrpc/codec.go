package browserrpc

import (
	"fmt"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/protobuf/proto"
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
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("request body: %w", err))
	}
	return nil
}
