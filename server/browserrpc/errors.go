package browserrpc

import "errors"

// errManyMessages marks a request of more than one message (no payhook
// method takes a client stream).
var errManyMessages = errors.New("more than one request message")

// errTooLarge marks a request message over the body limit.
var errTooLarge = errors.New("request message too large")

// errCompressed marks a compressed message from the transcoder, which is
// told to send none.
var errCompressed = errors.New("compressed message from the transcoder")
