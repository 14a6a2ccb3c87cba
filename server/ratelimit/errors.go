package ratelimit

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Denied reports a request refused by a limit or a quota. Its text is the
// caller's to read; Result says when to come back. It is a gRPC status
// (ResourceExhausted, with a RetryInfo detail), so a handler may return it
// as it is; the Limiter's interceptor adds the headers.
type Denied struct {
	// Reason says what is used up and when to come back.
	Reason string
	// Result is the bucket's answer.
	Result Result
}

func (e *Denied) Error() string { return e.Reason }

// GRPCStatus is e as a gRPC status: ResourceExhausted, with the wait in a
// RetryInfo detail.
func (e *Denied) GRPCStatus() *status.Status {
	st := status.New(codes.ResourceExhausted, e.Reason)
	wait := time.Duration(max(wholeSeconds(e.Result.RetryAfter), 1)) * time.Second
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)}); err == nil {
		return d
	}
	return st
}

// denied returns the Denied of r, its reason what followed by when to
// come back.
func denied(r Result, what string) *Denied {
	return &Denied{Reason: what + "; retry in " + waitText(r.RetryAfter), Result: r}
}

// waitText says d in whole seconds, minutes or hours, rounded up.
func waitText(d time.Duration) string {
	s := max(wholeSeconds(d), 1)
	switch {
	case s < 120:
		return strconv.FormatInt(s, 10) + " s"
	case s < 2*3600:
		return strconv.FormatInt((s+59)/60, 10) + " min"
	}
	return strconv.FormatInt((s+3599)/3600, 10) + " h"
}

// rateText says a rate per second as people read it.
func rateText(rate float64) string {
	switch {
	case rate >= 1:
		return strconv.FormatFloat(rate, 'f', -1, 64) + " a second"
	case rate*60 >= 1:
		return strconv.FormatFloat(rate*60, 'f', 1, 64) + " a minute"
	}
	return strconv.FormatFloat(rate*3600, 'f', 1, 64) + " an hour"
}

// keyDenied, networkDenied and testDenied are the refusals of each limit.
func keyDenied(r Result, l Limit) *Denied {
	return denied(r, fmt.Sprintf("too many requests: this API key may make %d at once and %s after that", l.Burst, rateText(l.Rate)))
}

func networkDenied(r Result) *Denied {
	return denied(r, "too many requests from your network")
}

func testDenied(r Result, perDay int) *Denied {
	return denied(r, fmt.Sprintf("test webhooks: this project may send %d a day and has sent them", perDay))
}
