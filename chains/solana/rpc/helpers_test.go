package rpc_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payhook/payhook/chains/chaintest"
)

func seed() []byte { return chaintest.Seed }

// newHandlerServer serves h and returns its URL; the server closes when
// the test ends.
func newHandlerServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
