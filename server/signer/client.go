package signer

import (
	"context"
	"crypto/ed25519"
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

// Client is the chains.Signer of a remote `payhook signer`: every
// family's transactions are signed there. It caches the public keys it
// fetched. It is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	rpc     signerv1.SignerServiceClient
	timeout time.Duration

	mu   sync.Mutex
	keys map[chains.KeyPath]*signerv1.PublicKeys
	ed   map[chains.KeyPath]*edKeys
}

// edKeys are the ed25519 public keys of one key path fetched so far.
type edKeys struct {
	operator []byte
	pubs     map[uint32]ed25519.PublicKey
}

// edBatch is how many ed25519 public keys one GetEd25519PublicKeys asks
// for: the index asked and those after it, which the next addresses use.
const edBatch = 64

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
	return &Client{conn: conn, rpc: signerv1.NewSignerServiceClient(conn), timeout: timeout, keys: map[chains.KeyPath]*signerv1.PublicKeys{}, ed: map[chains.KeyPath]*edKeys{}}, nil
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

// PublicDeriver returns the Deriver of the key paths of families, from
// the signer's public keys (chains.NewPublicDeriver): a server without the
// seed derives payment addresses with it. Secp256k1 addresses derive from
// the extended public keys fetched now; ed25519 (Solana) ones, which
// SLIP-0010 derives only from the seed, are asked of the signer edBatch
// indexes at a time and cached.
func (c *Client) PublicDeriver(ctx context.Context, families []chains.Family) (*chains.Deriver, error) {
	var paths []chains.KeyPath
	seen := map[chains.KeyPath]bool{}
	ed := map[chains.KeyPath]chains.Ed25519Source{}
	for _, f := range families {
		for _, p := range f.KeyPaths() {
			switch {
			case seen[p]:
			case p.Curve == chains.Secp256k1:
				paths = append(paths, p)
			case p.Curve == chains.Ed25519:
				ed[p] = func(index uint32) (ed25519.PublicKey, error) {
					cctx, cancel := context.WithTimeout(context.Background(), c.timeout)
					defer cancel()
					return c.edPublic(cctx, p, index)
				}
			}
			seen[p] = true
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
	return chains.NewPublicDeriver(ext, ed)
}

// edPublic returns the public key of index of the ed25519 path p, and
// caches the operator's; a key not cached is fetched with the edBatch
// indexes from it.
func (c *Client) edPublic(ctx context.Context, p chains.KeyPath, index uint32) (ed25519.PublicKey, error) {
	c.mu.Lock()
	if k := c.ed[p]; k != nil {
		if pub, ok := k.pubs[index]; ok {
			c.mu.Unlock()
			return pub, nil
		}
	}
	c.mu.Unlock()
	count := uint32(edBatch)
	if index >= 1<<31 {
		return nil, fmt.Errorf("%w: must be below 2^31", chains.ErrInvalidIndex)
	}
	count = min(count, 1<<31-index)
	resp, err := c.rpc.GetEd25519PublicKeys(ctx, &signerv1.GetEd25519PublicKeysRequest{
		Path: &signerv1.KeyPath{Purpose: p.Purpose, CoinType: p.CoinType}, Start: index, Count: count})
	if err != nil {
		return nil, fromStatus("ed25519 public keys", err)
	}
	if len(resp.GetPublicKeys()) != int(count) || len(resp.GetOperatorPublicKey()) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: ed25519 public keys: %d answers for %d indexes", chains.ErrSignerUnavailable, len(resp.GetPublicKeys()), count)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.ed[p]
	if k == nil {
		k = &edKeys{pubs: map[uint32]ed25519.PublicKey{}}
		c.ed[p] = k
	}
	k.operator = resp.GetOperatorPublicKey()
	for i, pub := range resp.GetPublicKeys() {
		if len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: ed25519 public key of index %d: %d bytes", chains.ErrSignerUnavailable, index+uint32(i), len(pub))
		}
		k.pubs[index+uint32(i)] = pub
	}
	return k.pubs[index], nil
}

// OperatorAddress implements chains.Signer: the address of the operator's
// public key the signer gave.
func (c *Client) OperatorAddress(ctx context.Context, t chains.Ticker) (string, error) {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return "", err
	}
	if p.Curve == chains.Ed25519 {
		c.mu.Lock()
		k := c.ed[p]
		c.mu.Unlock()
		if k == nil {
			if _, err := c.edPublic(ctx, p, 0); err != nil {
				return "", err
			}
			c.mu.Lock()
			k = c.ed[p]
			c.mu.Unlock()
		}
		return t.Rules().Address(t, k.operator)
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
	req := &signerv1.SignUtxoRequest{Context: signContext(r.Context), Tx: r.Tx}
	for _, in := range r.Inputs {
		req.Inputs = append(req.Inputs, &signerv1.UtxoInput{Value: in.Value, Script: in.Script, Key: in.Key})
	}
	for _, o := range r.Own {
		if o.Output < 0 {
			return nil, fmt.Errorf("%w: own output %d", chains.ErrInvalidForward, o.Output)
		}
		req.Own = append(req.Own, &signerv1.UtxoOwnOutput{Output: uint32(o.Output), Key: keyRefPB(o.Key)})
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rpc.SignUtxo(cctx, req)
	if err != nil {
		return nil, fromStatus(r.Context.Ticker.Ticker+" "+r.Context.Key, err)
	}
	return resp.GetTx(), nil
}

// SignEVM implements chains.Signer over SignEvm.
func (c *Client) SignEVM(ctx context.Context, r chains.EVMSignRequest) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rpc.SignEvm(cctx, &signerv1.SignEvmRequest{
		Context: signContext(r.Context), Tx: r.Tx, ChainId: r.ChainID, Key: keyRefPB(r.Key), Own: keyRefsPB(r.Own)})
	if err != nil {
		return nil, fromStatus(r.Context.Ticker.Ticker+" "+r.Context.Key, err)
	}
	return resp.GetTx(), nil
}

// SignTron implements chains.Signer over SignTron.
func (c *Client) SignTron(ctx context.Context, r chains.TronSignRequest) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rpc.SignTron(cctx, &signerv1.SignTronRequest{
		Context: signContext(r.Context), RawData: r.RawData, Key: keyRefPB(r.Key), Own: keyRefsPB(r.Own)})
	if err != nil {
		return nil, fromStatus(r.Context.Ticker.Ticker+" "+r.Context.Key, err)
	}
	return resp.GetSignature(), nil
}

// SignSolana implements chains.Signer over SignSolana.
func (c *Client) SignSolana(ctx context.Context, r chains.SolanaSignRequest) ([][]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rpc.SignSolana(cctx, &signerv1.SignSolanaRequest{
		Context: signContext(r.Context), Message: r.Message, Keys: keyRefsPB(r.Keys), Own: keyRefsPB(r.Own)})
	if err != nil {
		return nil, fromStatus(r.Context.Ticker.Ticker+" "+r.Context.Key, err)
	}
	return resp.GetSignatures(), nil
}

// signContext is x on the wire.
func signContext(x chains.SignContext) *signerv1.SignContext {
	return &signerv1.SignContext{Ticker: x.Ticker.Ticker, Net: string(x.Ticker.Net), Purpose: x.Purpose, ProjectId: x.ProjectID, Key: x.Key}
}

// keyRefPB is k on the wire.
func keyRefPB(k chains.KeyRef) *signerv1.KeyRef {
	return &signerv1.KeyRef{Operator: k.Operator, Index: k.Index}
}

// keyRefsPB is ks on the wire.
func keyRefsPB(ks []chains.KeyRef) []*signerv1.KeyRef {
	out := make([]*signerv1.KeyRef, len(ks))
	for i, k := range ks {
		out[i] = keyRefPB(k)
	}
	return out
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
