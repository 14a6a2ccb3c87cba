package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/payhook/payhook/chains"
)

// post sends req as JSON to base+path and decodes the answer into out.
// Every failure wraps chains.ErrNode: the node unreachable or slow
// (transport errors, timeouts), an HTTP status other than 200, an answer
// larger than maxResponse, one that is not JSON of out's shape, or
// java-tron's {"Error": "..."} object. Messages name the path, never the
// URL (which may carry credentials).
func (b *Backend) post(ctx context.Context, base, path string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("tron %s: encode request: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: tron %s: %v", chains.ErrNode, path, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if b.ep.apiKey != "" {
		hr.Header.Set("TRON-PRO-API-KEY", b.ep.apiKey)
	}
	if b.ep.hasBasic {
		hr.SetBasicAuth(b.ep.user, b.ep.password)
	}
	resp, err := b.cfg.Client.Do(hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL
		}
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s", b.cfg.Timeout)
		}
		return fmt.Errorf("%w: tron %s: %v", chains.ErrNode, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("%w: tron %s: read answer: %v", chains.ErrNode, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: tron %s: HTTP %d: %s", chains.ErrNode, path, resp.StatusCode, clip(string(bytes.TrimSpace(data))))
	}
	if len(data) > maxResponse {
		return fmt.Errorf("%w: tron %s: answer larger than %d bytes", chains.ErrNode, path, maxResponse)
	}
	if err := nodeError(data); err != nil {
		return fmt.Errorf("%w: tron %s: %v", chains.ErrNode, path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: tron %s: answer is not the expected JSON: %v", chains.ErrNode, path, err)
	}
	return nil
}

// nodeError returns java-tron's {"Error": "..."} as an error, nil when
// data is anything else.
func nodeError(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !bytes.Contains(data, []byte(`"Error"`)) {
		return nil
	}
	var e struct {
		Error *string `json:"Error"`
	}
	if json.Unmarshal(data, &e) != nil || e.Error == nil {
		return nil
	}
	return fmt.Errorf("node error: %s", clip(*e.Error))
}
