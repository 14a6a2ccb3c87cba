package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"connectrpc.com/connect"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier/egress"
)

// clientFlags are the connection flags of watch and listen.
type clientFlags struct {
	server                        *string
	apikey, address, ticker, uuid string
	after                         int64
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	c.server = serverFlag(fs)
	fs.StringVar(&c.apikey, "apikey", "", "API key (required)")
	fs.StringVar(&c.address, "address", "", "only this payment address")
	fs.StringVar(&c.ticker, "ticker", "", "only this ticker")
	fs.StringVar(&c.uuid, "uuid", "", "only this notification")
	fs.Int64Var(&c.after, "after", 0, "resume after this cursor")
}

// deliveryStream is the server's stream of delivery events.
type deliveryStream struct {
	s    *connect.ServerStreamForClient[payhookv1.WatchDeliveriesResponse]
	base string
}

// Recv returns the next event; an error names the server when it was not
// reached or went away.
func (d deliveryStream) Recv() (*payhookv1.WatchDeliveriesResponse, error) {
	if d.s.Receive() {
		return d.s.Msg(), nil
	}
	if err := d.s.Err(); err != nil {
		return nil, reachError(d.base, err)
	}
	return nil, io.EOF
}

// open starts WatchDeliveries over the Connect protocol on the HTTP
// listener --server names.
func (c *clientFlags) open(ctx context.Context, req *payhookv1.WatchDeliveriesRequest) (deliveryStream, func(), error) {
	if c.apikey == "" {
		return deliveryStream{}, nil, errors.New("--apikey: required")
	}
	base, err := serverURL(*c.server)
	if err != nil {
		return deliveryStream{}, nil, err
	}
	req.AddressIn, req.Ticker, req.Uuid, req.AfterCursor = c.address, c.ticker, c.uuid, c.after
	client := connect.NewClient[payhookv1.WatchDeliveriesRequest, payhookv1.WatchDeliveriesResponse](newHTTPClient(),
		procedure(base, payhookv1.DeliveryService_WatchDeliveries_FullMethodName))
	r := connect.NewRequest(req)
	r.Header().Set("apikey", c.apikey)
	stream, err := client.CallServerStream(ctx, r)
	if err != nil {
		return deliveryStream{}, nil, reachError(base, err)
	}
	return deliveryStream{s: stream, base: base}, func() { _ = stream.Close() }, nil
}

// watch prints delivery events for a person, one line each.
func watch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook watch", stderr)
	var c clientFlags
	c.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	stream, closeConn, err := c.open(ctx, &payhookv1.WatchDeliveriesRequest{})
	if err != nil {
		return err
	}
	defer closeConn()
	for {
		resp, err := stream.Recv()
		if err != nil {
			return streamEnd(ctx, err)
		}
		fmt.Fprintln(stdout, formatEvent(resp.GetEvent()))
	}
}

func streamEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// formatEvent renders an event as one line.
func formatEvent(e *payhookv1.DeliveryEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s %s %s %s", e.GetCursor(), e.GetTime().AsTime().Format(time.RFC3339), e.GetUuid(), e.GetTicker(), e.GetAddressIn(), e.GetPaymentStatus())
	switch e.GetKind() {
	case "created":
		b.WriteString(" stored")
	case "attempt":
		fmt.Fprintf(&b, " attempt %d %s", e.GetAttempt(), e.GetOutcome())
		if e.HttpStatus != nil {
			fmt.Fprintf(&b, " HTTP %d", e.GetHttpStatus())
		}
	case "expired":
		b.WriteString(" expired")
	}
	fmt.Fprintf(&b, " -> %s", e.GetDeliveryStatus())
	if e.GetNextAttemptAt() != nil && e.GetDeliveryStatus() == "retrying" {
		fmt.Fprintf(&b, " (next %s)", e.GetNextAttemptAt().AsTime().Format(time.RFC3339))
	}
	if e.GetError() != "" {
		fmt.Fprintf(&b, ": %s", e.GetError())
	}
	return b.String()
}

// listen relays each new notification of the key's addresses to a local
// URL: the exact method, body and headers, with the original query for GET.
// It is how a merchant tests a local server that the destination rules
// would otherwise never let payhook reach.
func listen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook listen", stderr)
	var c clientFlags
	c.register(fs)
	forward := fs.String("forward-to", "", "local URL to replay deliveries against, e.g. http://localhost:3000/hook (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	target, err := url.Parse(*forward)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return fmt.Errorf("--forward-to: %q is not an http(s) URL", *forward)
	}
	stream, closeConn, err := c.open(ctx, &payhookv1.WatchDeliveriesRequest{IncludeRequest: true, LiveOnly: c.after == 0})
	if err != nil {
		return err
	}
	defer closeConn()
	fmt.Fprintf(stderr, "relaying deliveries to %s (Ctrl-C to stop)\n", target)
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return streamEnd(ctx, err)
		}
		e := resp.GetEvent()
		if e.GetKind() != "created" || e.GetRequest() == nil {
			continue
		}
		fmt.Fprintln(stdout, relay(ctx, client, target, e))
	}
}

// relay replays one notification's request against target and describes
// the outcome.
func relay(ctx context.Context, client *http.Client, target *url.URL, e *payhookv1.DeliveryEvent) string {
	r := e.GetRequest()
	u := *target
	if orig, err := url.Parse(r.GetUrl()); err == nil && orig.RawQuery != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += orig.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, r.GetMethod(), u.String(), bytes.NewReader(r.GetBody()))
	if err != nil {
		return fmt.Sprintf("%s %s: %v", e.GetUuid(), e.GetPaymentStatus(), err)
	}
	for k, v := range r.GetHeaders() {
		req.Header.Set(k, v)
	}
	req.Header.Set("x-payhook-original-url", r.GetUrl())
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Sprintf("%s %s -> %s: %v", e.GetUuid(), e.GetPaymentStatus(), u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	verdict := "acknowledged"
	if ok, why := egress.Acknowledged(resp.StatusCode, body); !ok {
		verdict = "not acknowledged: " + why
	}
	return fmt.Sprintf("%s %s -> %s %s: HTTP %d, %s", e.GetUuid(), e.GetPaymentStatus(), r.GetMethod(), u.Redacted(), resp.StatusCode, verdict)
}
