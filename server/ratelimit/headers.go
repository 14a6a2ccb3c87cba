package ratelimit

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"
)

// The headers of a limited answer (IETF httpapi-ratelimit-headers, the
// draft's three-header form, and RFC 9110's Retry-After). gRPC carries the
// same names, lower-case, as metadata.
const (
	// HeaderLimit is the bucket's size: the burst.
	HeaderLimit = "RateLimit-Limit"
	// HeaderRemaining is how many requests may follow at once.
	HeaderRemaining = "RateLimit-Remaining"
	// HeaderReset is how many seconds until the bucket is full again.
	HeaderReset = "RateLimit-Reset"
	// HeaderRetryAfter, on a refusal only, is how many seconds until the
	// next request may be made.
	HeaderRetryAfter = "Retry-After"
)

var headerNames = []string{HeaderLimit, HeaderRemaining, HeaderReset, HeaderRetryAfter}

// wholeSeconds rounds d up to whole seconds, at least 1 for any wait.
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}

// values are r's headers and their values.
func (r Result) values() [][2]string {
	out := [][2]string{
		{HeaderLimit, strconv.Itoa(r.Limit)},
		{HeaderRemaining, strconv.Itoa(r.Remaining)},
		{HeaderReset, strconv.FormatInt(wholeSeconds(r.Reset), 10)},
	}
	if !r.Allowed {
		out = append(out, [2]string{HeaderRetryAfter, strconv.FormatInt(max(wholeSeconds(r.RetryAfter), 1), 10)})
	}
	return out
}

// SetHeaders sets r's headers on h.
func (r Result) SetHeaders(h http.Header) {
	for _, kv := range r.values() {
		h.Set(kv[0], kv[1])
	}
}

// Metadata is r's headers as gRPC metadata.
func (r Result) Metadata() metadata.MD {
	md := metadata.MD{}
	for _, kv := range r.values() {
		md.Set(kv[0], kv[1])
	}
	return md
}

// HTTPHeader returns the HTTP header a gRPC metadata key of a limited
// answer becomes, and whether it is one: the REST gateway passes these to
// its answers and no other metadata.
func HTTPHeader(mdKey string) (string, bool) {
	for _, h := range headerNames {
		if strings.EqualFold(mdKey, h) {
			return h, true
		}
	}
	return "", false
}

// CopyHeaders sets on h the headers of a limited answer found in md (a
// refused gRPC call's trailer or header), and reports whether there were
// any.
func CopyHeaders(h http.Header, md metadata.MD) bool {
	found := false
	for _, name := range headerNames {
		if vs := md.Get(name); len(vs) > 0 {
			h.Set(name, vs[0])
			found = true
		}
	}
	return found
}
