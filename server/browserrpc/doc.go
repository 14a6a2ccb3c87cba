// Package browserrpc serves payhook's gRPC services to browsers and other
// HTTP/1.1 clients: the Connect protocol (JSON or binary protobuf) and
// gRPC-Web, on the HTTP listener, at the services' standard paths
// (POST /payhook.v1.AddressService/GetInfo), so the dashboard and
// generated clients (@connectrpc/connect-web) call the typed API, server
// streams included.
//
// connectrpc.com/vanguard turns each call into a gRPC call, which is then
// forwarded, message bytes untouched, over a client connection to the
// server's own gRPC listener. The gRPC server's interceptors (request
// metrics, logs, recovery, API key, validation, error translation)
// therefore run once per call, exactly as for gRPC clients and for REST
// requests (which reach gRPC the same way, through the gateway).
//
// Guarantees:
//   - Connect and gRPC-Web only. A gRPC request (application/grpc) is
//     answered 415: gRPC has its own listener. REST paths never reach this
//     handler, which is mounted at the service prefixes only.
//   - The apikey and Idempotency-Key headers travel as the apikey and
//     idempotency-key metadata; nothing else a browser sends (cookies,
//     origin, user agent) becomes metadata.
//   - Cross-origin calls only from Config.AllowedOrigins; their preflights
//     are answered here with the headers Connect and gRPC-Web use.
//   - A server stream is not cut by the HTTP server's read and write
//     timeouts: the read deadline is lifted once the request is read, and
//     each message gets its own write deadline (Config.StreamWriteTimeout),
//     so a client that stops reading is dropped. A stream ends when the
//     client goes away, or when the server stops (its gRPC stream ends with
//     unavailable, which the client sees as the stream's error).
//
// Failure modes: Connect and gRPC-Web have no heartbeat a handler can send
// without a message, so a proxy may close a stream that stays idle longer
// than its timeout; WatchDeliveries clients resume from after_cursor. A
// request body over Config.MaxBodyBytes fails with resource_exhausted.
package browserrpc
