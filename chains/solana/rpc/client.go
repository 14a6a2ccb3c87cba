package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// client is a JSON-RPC 2.0 client over HTTP. It never puts the endpoint's
// URL in an error (it may hold credentials), bounds each request by
// timeout and each answer by maxResponse, and turns every failure into an
// error wrapping chains.ErrNode.
type client struct {
	url         string
	http        *http.Client
	timeout     time.Duration
	maxResponse int64
	id          atomic.Uint64
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// maxQuoted bounds how much of a node's error message goes into an error.
const maxQuoted = 300

// call invokes method with params and decodes the result into out (a
// pointer; nil to ignore the result). A JSON null result leaves a pointer
// field or pointer-to-pointer out nil.
func (c *client) call(ctx context.Context, method string, params []any, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	id := c.id.Add(1)
	body, err := json.Marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", method, err) // our own values: a bug
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nodeError(method, "build request: %v", redact(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nodeError(method, "%v", redact(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResponse+1))
	if err != nil {
		return nodeError(method, "read answer: %v", redact(err))
	}
	if int64(len(raw)) > c.maxResponse {
		return nodeError(method, "answer larger than %d bytes", c.maxResponse)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		if resp.StatusCode != http.StatusOK {
			return nodeError(method, "HTTP status %d", resp.StatusCode)
		}
		return nodeError(method, "not a JSON-RPC answer: %v", err)
	}
	if r.Error != nil {
		e := &RPCError{Method: method, Code: r.Error.Code, Message: cut(r.Error.Message)}
		var data struct {
			Err json.RawMessage `json:"err"`
		}
		if len(r.Error.Data) > 0 && json.Unmarshal(r.Error.Data, &data) == nil && len(data.Err) > 0 && string(data.Err) != "null" {
			var s string
			if json.Unmarshal(data.Err, &s) == nil {
				e.Reason = cut(s)
			} else {
				e.Reason = cut(string(data.Err))
			}
		}
		return e
	}
	if resp.StatusCode != http.StatusOK {
		return nodeError(method, "HTTP status %d", resp.StatusCode)
	}
	if r.JSONRPC != "2.0" || string(r.ID) != strconv.FormatUint(id, 10) {
		return nodeError(method, "answer is not JSON-RPC 2.0 for request %d", id)
	}
	if len(r.Result) == 0 {
		return nodeError(method, "answer has neither result nor error")
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return nodeError(method, "garbled result: %v", err)
	}
	return nil
}

// callValue calls a method whose result is an RpcResponse,
// {"context":{...},"value":V}, and returns V. A null result is garbage.
func callValue[T any](ctx context.Context, c *client, method string, params []any) (T, error) {
	var (
		res  *contextValue[T]
		zero T
	)
	if err := c.call(ctx, method, params, &res); err != nil {
		return zero, err
	}
	if res == nil {
		return zero, nodeError(method, "null result")
	}
	return res.Value, nil
}

// redact returns the error inside a *url.Error, whose message would quote
// the URL (and with it, credentials in the query).
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func cut(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted] + "..."
	}
	return s
}

// Commitment levels as the RPC API spells them.
const (
	processed = "processed"
	confirmed = "confirmed"
	finalized = "finalized"
)

// commitment returns the config object {"commitment": c} plus extra fields.
func commitment(c string, extra ...any) map[string]any {
	m := map[string]any{"commitment": c}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}
