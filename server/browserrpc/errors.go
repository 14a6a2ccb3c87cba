package browserrpc

import "errors"

// errTooLarge marks a request message over the body limit.
var errTooLarge = errors.New("request message too large")

// errCompressed marks a compressed message from the transcoder, which is
// told to send none.
var errCompressed = errors.New("compressed message from the transcoder")
