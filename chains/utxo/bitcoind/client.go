package bitcoind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/payhook/payhook/chains"
)

// maxResponse bounds a node's answer: a verbosity-2 block of a full
// mainnet block is a few megabytes of JSON; 64 MiB is far above it and
// keeps a misbehaving node from exhausting memory.
const maxResponse = 64 << 20

// Client is a JSON-RPC 1.0 client of a bitcoind-compatible node (Bitcoin
// Core, Litecoin Core, Bitcoin Cash Node, Dogecoin Core), with basic
// authentication from the URL's userinfo, per-call contexts and batches.
// btcd's rpcclient has neither contexts nor per-call timeouts, and starts
// goroutines per client, so the few lines of the protocol live here; the
// result shapes are decoded as the node documents them.
type Client struct {
	endpoint   string // without userinfo
	user, pass string
	hasAuth    bool
	http       *http.Client
}

// NewClient returns a Client for rawURL (http or https, credentials in the
// userinfo; a path such as /wallet/NAME is kept).
func NewClient(rawURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("node URL: not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("node URL: scheme %q, want http or https", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("node URL: no host")
	}
	c := &Client{http: hc}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		c.hasAuth = true
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	c.endpoint = u.String()
	return c, nil
}

// Endpoint returns the node's URL without credentials or options, for logs.
func (c *Client) Endpoint() string { return c.endpoint }

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type response struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// RPCError is an error the node answered with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("node error %d: %s", e.Code, e.Message) }

// Node error codes payhook acts on (bitcoin/src/rpc/protocol.h).
const (
	codeMethodNotFound   = -32601
	codeInvalidAddress   = -5 // RPC_INVALID_ADDRESS_OR_KEY: also "No such mempool or blockchain transaction"
	codeInvalidParameter = -8
	codeVerifyRejected   = -26
	codeAlreadyInChain   = -27
	codeVerifyError      = -25
)

// Call calls method with params and decodes the result into out (nil to
// discard). Transport failures, HTTP errors other than the node's JSON
// error answers, and undecodable answers wrap chains.ErrNode; an error the
// node answered with is a *RPCError.
func (c *Client) Call(ctx context.Context, out any, method string, params ...any) error {
	rs, err := c.do(ctx, []request{{JSONRPC: "1.0", ID: 0, Method: method, Params: nonNil(params)}})
	if err != nil {
		return err
	}
	return decode(rs[0], out, method)
}

// Batch is one call of a batch.
type Batch struct {
	Method string
	Params []any
	// Out receives the result (nil to discard).
	Out any
	// Err is the call's error after CallBatch.
	Err error
}

// CallBatch sends calls in one HTTP request and fills each call's Out and
// Err. It returns an error (wrapping chains.ErrNode) only when the batch as
// a whole failed.
func (c *Client) CallBatch(ctx context.Context, calls []*Batch) error {
	if len(calls) == 0 {
		return nil
	}
	reqs := make([]request, len(calls))
	for i, b := range calls {
		reqs[i] = request{JSONRPC: "1.0", ID: i, Method: b.Method, Params: nonNil(b.Params)}
	}
	rs, err := c.do(ctx, reqs)
	if err != nil {
		return err
	}
	for _, r := range rs {
		calls[r.ID].Err = decode(r, calls[r.ID].Out, calls[r.ID].Method)
	}
	return nil
}

func nonNil(p []any) []any {
	if p == nil {
		return []any{}
	}
	return p
}

func decode(r response, out any, method string) error {
	if r.Error != nil {
		return r.Error
	}
	if out == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(r.Result))
	d.UseNumber()
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("%w: %s: undecodable result: %v", chains.ErrNode, method, err)
	}
	return nil
}

func (c *Client) do(ctx context.Context, reqs []request) ([]response, error) {
	var body []byte
	var err error
	if len(reqs) == 1 {
		body, err = json.Marshal(reqs[0])
	} else {
		body, err = json.Marshal(reqs)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", reqs[0].Method, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", chains.ErrNode, reqs[0].Method, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.hasAuth {
		hr.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s: %w", chains.ErrNode, reqs[0].Method, ctx.Err())
		}
		// Not url.Error's text: it quotes the URL, whose path may hold a
		// provider's API key.
		msg := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		return nil, fmt.Errorf("%w: %s: %s", chains.ErrNode, reqs[0].Method, redact(msg, c.pass))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading the answer: %v", chains.ErrNode, reqs[0].Method, err)
	}
	if len(raw) > maxResponse {
		return nil, fmt.Errorf("%w: %s: answer larger than %d bytes", chains.ErrNode, reqs[0].Method, maxResponse)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, fmt.Errorf("%w: %s: HTTP %d: the node refused the credentials in the node URL", chains.ErrNode, reqs[0].Method, resp.StatusCode)
	}
	var rs []response
	if len(reqs) == 1 {
		var r response
		if err := json.Unmarshal(raw, &r); err != nil || (r.Result == nil && r.Error == nil) {
			return nil, fmt.Errorf("%w: %s: HTTP %d with an answer that is not JSON-RPC", chains.ErrNode, reqs[0].Method, resp.StatusCode)
		}
		rs = []response{r}
	} else if err := json.Unmarshal(raw, &rs); err != nil || len(rs) != len(reqs) {
		return nil, fmt.Errorf("%w: batch of %d: HTTP %d with an answer that is not a JSON-RPC batch", chains.ErrNode, len(reqs), resp.StatusCode)
	}
	seen := make([]bool, len(reqs))
	for _, r := range rs {
		if r.ID < 0 || r.ID >= len(reqs) || seen[r.ID] {
			return nil, fmt.Errorf("%w: %s: answer ids do not match the requests", chains.ErrNode, reqs[0].Method)
		}
		seen[r.ID] = true
	}
	return rs, nil
}

// redact removes the password from s (a transport error may quote the URL).
func redact(s, pass string) string {
	if pass == "" {
		return s
	}
	return strings.ReplaceAll(s, pass, "xxxxx")
}
