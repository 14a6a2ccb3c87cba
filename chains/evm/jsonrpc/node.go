package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/payhook/payhook/chains"
)

// maxQuoted bounds how much of a node's answer an error message repeats.
const maxQuoted = 200

// call sends one request, its result decoded into result (a pointer). Node
// failures wrap chains.ErrNode; a cancelled ctx is returned as such.
func (b *Backend) call(ctx context.Context, result any, method string, args ...any) error {
	cctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	if err := b.rpc.CallContext(cctx, result, method, args...); err != nil {
		return b.nodeError(ctx, method, err)
	}
	return nil
}

// batch sends elems in one request. The request's failure wraps
// chains.ErrNode; each element's own error is left in its Error field,
// cleaned with elemError.
func (b *Backend) batch(ctx context.Context, elems []rpc.BatchElem) error {
	if len(elems) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	if err := b.rpc.BatchCallContext(cctx, elems); err != nil {
		return b.nodeError(ctx, "batch of "+elems[0].Method, err)
	}
	return nil
}

// elemError returns a batch element's error wrapping chains.ErrNode, nil
// if it has none.
func (b *Backend) elemError(ctx context.Context, e rpc.BatchElem) error {
	if e.Error == nil {
		return nil
	}
	return b.nodeError(ctx, e.Method, e.Error)
}

// nodeError wraps err, the failure of a request to the node, in
// chains.ErrNode with a message that names the method and the node's
// scheme and host, never its path, query or credentials, and repeats at
// most maxQuoted bytes of what the node said. A cancelled caller context is
// not the node's fault: it is returned as the context's error.
func (b *Backend) nodeError(ctx context.Context, method string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s: %w", b.tk.Ticker, method, ctx.Err())
	}
	var (
		httpErr rpc.HTTPError
		urlErr  *url.Error
		rpcErr  rpc.Error
		msg     string
	)
	switch {
	case errors.As(err, &httpErr):
		msg = fmt.Sprintf("HTTP %s: %s", httpErr.Status, quote(string(httpErr.Body)))
	case errors.As(err, &urlErr):
		// url.Error's message holds the whole URL: keep only what failed.
		msg = urlErr.Op + ": " + quote(urlErr.Err.Error())
	case errors.As(err, &rpcErr):
		msg = fmt.Sprintf("error %d: %s", rpcErr.ErrorCode(), quote(rpcErr.Error()))
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("no answer within %s", b.cfg.Timeout)
	default:
		msg = quote(err.Error())
	}
	return fmt.Errorf("%w: %s %s at %s: %s", chains.ErrNode, b.tk.Ticker, method, b.res.host, msg)
}

// quote shortens s to maxQuoted bytes, on a UTF-8 boundary, and quotes it.
func quote(s string) string {
	if len(s) > maxQuoted {
		s = strings.ToValidUTF8(s[:maxQuoted], "") + "..."
	}
	return fmt.Sprintf("%q", s)
}

// garbage returns an error wrapping chains.ErrNode for an answer that is
// well-formed JSON but not what the method promises.
func (b *Backend) garbage(method, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s at %s: unexpected answer: %s", chains.ErrNode, b.tk.Ticker, method, b.res.host, fmt.Sprintf(format, args...))
}

// limitedTransport reads at most max bytes of each response body.
type limitedTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{r: io.LimitedReader{R: resp.Body, N: t.max + 1}, c: resp.Body, max: t.max}
	return resp, nil
}

// errTooLarge reports a response body longer than Config.MaxResponse.
var errTooLarge = errors.New("response too large")

type limitedBody struct {
	r   io.LimitedReader
	c   io.Closer
	max int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.r.N <= 0 {
		return n, fmt.Errorf("%w: more than %d bytes", errTooLarge, l.max)
	}
	return n, err
}

func (l *limitedBody) Close() error { return l.c.Close() }

// JSON shapes of the node's answers. Pointers tell a missing field from a
// zero one: a missing required field is garbage.

type header struct {
	Number     *hexutil.Uint64 `json:"number"`
	Hash       *common.Hash    `json:"hash"`
	ParentHash *common.Hash    `json:"parentHash"`
	BaseFee    *hexutil.Big    `json:"baseFeePerGas"`
}

// check reports a header without its number or hashes, or whose number
// is not want (when want >= 0).
func (b *Backend) checkHeader(h *header, method string, want int64) (int64, error) {
	if h.Number == nil || h.Hash == nil || h.ParentHash == nil || uint64(*h.Number) > math.MaxInt64 {
		return 0, b.garbage(method, "block without number or hashes")
	}
	n := int64(*h.Number)
	if want >= 0 && n != want {
		return 0, b.garbage(method, "block %d, asked for %d", n, want)
	}
	return n, nil
}

type fullBlock struct {
	header
	Transactions []txJSON `json:"transactions"`
}

type txJSON struct {
	Hash        *common.Hash    `json:"hash"`
	From        *common.Address `json:"from"`
	To          *common.Address `json:"to"`
	Value       *hexutil.Big    `json:"value"`
	BlockNumber *hexutil.Uint64 `json:"blockNumber"`
}

type receiptJSON struct {
	Status      *hexutil.Uint64 `json:"status"`
	BlockNumber *hexutil.Uint64 `json:"blockNumber"`
	BlockHash   *common.Hash    `json:"blockHash"`
	Logs        []logJSON       `json:"logs"`
}

type logJSON struct {
	Address     *common.Address `json:"address"`
	Topics      []common.Hash   `json:"topics"`
	Data        hexutil.Bytes   `json:"data"`
	BlockNumber *hexutil.Uint64 `json:"blockNumber"`
	BlockHash   *common.Hash    `json:"blockHash"`
	TxHash      *common.Hash    `json:"transactionHash"`
	Index       *hexutil.Uint64 `json:"logIndex"`
	Removed     bool            `json:"removed"`
}

// transferTopic is topic 0 of an ERC-20 Transfer(address,address,uint256)
// log: keccak256 of that signature.
var transferTopic = common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")

// tokenTransfer decodes l as an ERC-20 Transfer of contract: its recipient
// and value. ok is false for any other log (another event, an ERC-721
// Transfer with its indexed token id, a malformed one).
func tokenTransfer(l *logJSON, contract common.Address) (to common.Address, value *big.Int, ok bool) {
	if l.Address == nil || *l.Address != contract || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 {
		return to, nil, false
	}
	t := l.Topics[2]
	if common.BytesToHash(t[12:]) != t {
		return to, nil, false // not a left-padded address
	}
	return common.BytesToAddress(t[12:]), new(big.Int).SetBytes(l.Data), true
}

// blockArg formats a height for eth_getBlockByNumber and eth_getLogs.
func blockArg(n int64) string { return hexutil.EncodeUint64(uint64(n)) }
