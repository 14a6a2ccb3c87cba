package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"connectrpc.com/connect"
)

// defaultServer is where the client commands (devnet, watch, listen, chain
// status) find payhook: the HTTP listener of `payhook serve --dev` on this
// machine.
const defaultServer = "http://127.0.0.1:8080"

// serverFlag registers --server, the one flag every client command takes.
// It names payhook's HTTP listener (serve's --http-addr), which serves the
// typed API over the Connect protocol beside REST and /healthz, so one
// address reaches every command's calls.
func serverFlag(fs *flag.FlagSet) *string {
	return fs.String("server", defaultServer, "the HTTP address of a running payhook serve (its --http-addr), e.g. http://127.0.0.1:8080")
}

// serverURL returns the base URL --server names: an http(s) URL without
// a trailing slash; a bare host:port is taken as http://host:port.
func serverURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--server %q: want payhook's HTTP address, e.g. %s", raw, defaultServer)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// reachError names the address a client command tried when the server
// could not be reached, and says which flag changes it; an answer of the
// server (a refused request) is returned as its message.
func reachError(base string, err error) error {
	var ce *connect.Error
	if errors.As(err, &ce) && ce.Code() != connect.CodeUnavailable && ce.Code() != connect.CodeUnknown {
		return errors.New(ce.Message())
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("cannot reach payhook at %s (set its address with --server; is payhook serve running?): %w", base, err)
}

// procedure is the Connect URL of a gRPC method (its full name,
// "/payhook.v1.DevnetService/Pay") on the server at base.
func procedure(base, fullMethod string) string { return base + fullMethod }

// newHTTPClient is the client of the calls: no redirect is followed
// (payhook answers none; a redirect is something else answering), and no
// overall timeout, which would cut watch's stream (callers bound unary
// calls with their context).
func newHTTPClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
