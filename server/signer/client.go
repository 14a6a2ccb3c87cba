package signer

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// ClientConfig is how the server reaches `payhook signer` (serve's
// --signer-* flags).
type ClientConfig struct {
	// URL is https://HOST:PORT of the signer.
	URL string
	// Cert and Key are the server's client certificate and key (PEM);
	// CA is the CA the signer's certificate chains to.
	Cert, Key, CA string
	// Timeout bounds one call to the signer (DefaultTimeout when zero): a
	// signer that hangs is then retried like one that is down.
	Timeout time.Duration
}

// DefaultTimeout bounds one call to the signer.
const DefaultTimeout = 30 * time.Second

// Validate names the first field that is wrong.
func (c ClientConfig) Validate() error {
	if _, _, err := c.target(); err != nil {
		return err
	}
	for _, f := range [][2]string{{"--signer-cert", c.Cert}, {"--signer-key", c.Key}, {"--signer-ca", c.CA}} {
		if f[1] == "" {
			return fmt.Errorf("%s: required with --signer-url (mutual TLS)", f[0])
		}
	}
	return nil
}

// target returns the URL's host:port and host name.
func (c ClientConfig) target() (hostport, host string, err error) {
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", "", fmt.Errorf("--signer-url %q: want https://HOST:PORT", c.URL)
	}
	return u.Host, u.Hostname(), nil
}

// Client is the chains.Signer of a remote `payhook signer`: UTXO
// transactions are signed there; EVM, TRON and Solana answer
// chains.ErrSignerUnsupported. It caches the public keys it fetched. It is
// safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	rpc     signerv1.SignerServiceClient
	timeout time.Duration

	mu   sync.Mutex
	keys map[chains.KeyPath]*signerv1.PublicKeys
}

var _ chains.Signer = (*Client)(nil)

// Dial returns a Client of the signer at cfg.URL (no I/O until the first
// call).
func Dial(cfg ClientConfig) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hostport, host, _ := cfg.target()
	tc, err := ClientTLS(cfg.Cert, cfg.Key, cfg.CA, host)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("passthrough:///"+hostport, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if err != nil {
		return nil, fmt.Errorf("--signer-url: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{conn: conn, rpc: signerv1.NewSignerServiceClient(conn), timeout: timeout, keys: map[chains.KeyPath]*signerv1.PublicKeys{}}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Offline implements chains.Signer: a remote signer is asked over the
// network.
func (c *Client) Offline() bool { return false }

// fetch returns the public keys of paths (secp256k1), asking the signer
// for those not cached.
func (c *Client) fetch(ctx context.Context, paths []chains.KeyPath) (map[chains.KeyPath]*signerv1.PublicKeys, error) {
	c.mu.Lock()
	var missing []*signerv1.KeyPath
	for _, p := range paths {
		if _, ok := c.keys[p]; !ok {
			missing = append(missing, &signerv1.KeyPath{Purpose: p.Purpose, CoinType: p.CoinType})
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		resp, err := c.rpc.GetPublicKeys(cctx, &signerv1.GetPublicKeysRequest{Paths: missing})
		cancel()
		if err != nil {
			return nil, fromStatus("public keys", err)
		}
		if len(resp.GetKeys()) != len(missing) {
			return nil, fmt.Errorf("%w: public keys: %d answers for %d paths", chains.ErrSignerUnavailable, len(resp.GetKeys()), len(missing))
		}
		c.mu.Lock()
		for _, k := range resp.GetKeys() {
			c.keys[chains.KeyPath{Curve: chains.Secp256k1, Purpose: k.GetPath().GetPurpose(), CoinType: k.GetPath().GetCoinType()}] = k
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[chains.KeyPath]*signerv1.PublicKeys, len(paths))
	for _, p := range paths {
		k, ok := c.keys[p]
		if !ok {
			return nil, fmt.Errorf("%w: public keys: no answer for %s", chains.ErrSignerUnavailable, p.Path(0, 0))
		}
		out[p] = k
	}
	return out, nil
}

// PublicDeriver returns the Deriver of the secp256k1 key paths of
// families, from the signer's public keys (chains.NewPublicDeriver): a
// server without the seed derives payment addresses with it. Ed25519
// (Solana) addresses need the seed: it derives none.
func (c *Client) PublicDeriver(ctx context.Context, families []chains.Family) (*chains.Deriver, error) {
	var paths []chains.KeyPath
	seen := map[chains.KeyPath]bool{}
	for _, f := range families {
		for _, p := range f.KeyPaths() {
			if p.Curve == chains.Secp256k1 && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	keys, err := c.fetch(ctx, paths)
	if err != nil {
		return nil, err
	}
	ext := make(map[chains.KeyPath]*hdkeychain.ExtendedKey, len(keys))
	for p, k := range keys {
		x, err := hdkeychain.NewKeyFromString(k.GetExternalXpub())
		if err != nil {
			return nil, fmt.Errorf("%w: public key of %s: %v", chains.ErrSignerUnavailable, p.Path(0, 0), err)
		}
		ext[p] = x
	}
	return chains.NewPublicDeriver(ext)
}

// OperatorAddress implements chains.Signer: the address of the operator's
// public key the signer gave.
func (c *Client) OperatorAddress(ctx context.Context, t chains.Ticker) (string, error) {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return "", err
	}
	if p.Curve != chains.Secp256k1 {
		return "", unsupported(t)
	}
	keys, err := c.fetch(ctx, []chains.KeyPath{p})
	if err != nil {
		return "", err
	}
	pub, err := btcec.ParsePubKey(keys[p].GetOperatorPublicKey())
	if err != nil {
		return "", fmt.Errorf("%w: operator key of %s: %v", chains.ErrSignerUnavailable, t.Ticker, err)
	}
	return t.Rules().Address(t, pub.SerializeCompressed())
}

// SignUTXO implements chains.Signer over SignUtxo.
func (c *Client) SignUTXO(ctx context.Context, r chains.UTXOSignRequest) ([]byte, error) {
	x := r.Context
	req := &signerv1.SignUtxoRequest{
		Context: &signerv1.SignContext{Ticker: x.Ticker.Ticker, Net: string(x.Ticker.Net), Purpose: x.Purpose, ProjectId: x.ProjectID, Key: x.Key},
		Tx:      r.Tx,
	}
	for _, in := range r.Inputs {
		req.Inputs = append(req.Inputs, &signerv1.UtxoInput{Value: in.Value, Script: in.Script, Key: in.Key})
	}
	for _, o := range r.Own {
		if o.Output < 0 {
			return nil, fmt.Errorf("%w: own output %d", chains.ErrInvalidForward, o.Output)
		}
		req.Own = append(req.Own, &signerv1.UtxoOwnOutput{Output: uint32(o.Output), Key: &signerv1.KeyRef{Operator: o.Key.Operator, Index: o.Key.Index}})
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rpc.SignUtxo(cctx, req)
	if err != nil {
		return nil, fromStatus(x.Ticker.Ticker+" "+x.Key, err)
	}
	return resp.GetTx(), nil
}

// SignEVM implements chains.Signer: not signed remotely yet.
func (c *Client) SignEVM(_ context.Context, r chains.EVMSignRequest) ([]byte, error) {
	return nil, unsupported(r.Context.Ticker)
}

// SignTron implements chains.Signer: not signed remotely yet.
func (c *Client) SignTron(_ context.Context, r chains.TronSignRequest) ([]byte, error) {
	return nil, unsupported(r.Context.Ticker)
}

// SignSolana implements chains.Signer: not signed remotely yet.
func (c *Client) SignSolana(_ context.Context, r chains.SolanaSignRequest) ([][]byte, error) {
	return nil, unsupported(r.Context.Ticker)
}

func unsupported(t chains.Ticker) error {
	return fmt.Errorf("%w: %s (%s family) is not supported by the remote signer yet: only the utxo family is; run the server with the seed for it", chains.ErrSignerUnsupported, t.Ticker, t.Family)
}

// fromStatus turns the signer's gRPC status into the chains errors: a
// policy refusal wraps chains.ErrSignerRefused and chains.ErrInvalidForward
// (the outbound engine fails the transaction: asking again is refused
// again), a malformed request ErrInvalidForward, an unimplemented family
// ErrSignerUnsupported, anything else ErrSignerUnavailable (retried).
func fromStatus(what string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%w: %s: %w", chains.ErrSignerUnavailable, what, err)
	}
	switch st.Code() {
	case codes.PermissionDenied:
		msg := strings.TrimPrefix(st.Message(), chains.ErrSignerRefused.Error()+": ")
		return fmt.Errorf("%w: %w: %s", chains.ErrInvalidForward, chains.ErrSignerRefused, msg)
	case codes.InvalidArgument:
		return fmt.Errorf("%w: the signer refused the request: %s", chains.ErrInvalidForward, st.Message())
	case codes.Unimplemented:
		return fmt.Errorf("%w: %s", chains.ErrSignerUnsupported, st.Message())
	}
	return fmt.Errorf("%w: %s: %s: %s", chains.ErrSignerUnavailable, what, st.Code(), st.Message())
}
