package rpc

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/keysign"
)

// Defaults applied by Config.WithDefaults.
const (
	// DefaultTimeout bounds each JSON-RPC request.
	DefaultTimeout = 10 * time.Second
	// DefaultConcurrency is how many getBlock requests Blocks has in flight
	// at once.
	DefaultConcurrency = 4
	// DefaultMaxResponse bounds the size of one answer; a larger one is
	// garbage as far as the backend is concerned.
	DefaultMaxResponse = 32 << 20
)

// mintParam is the URL query parameter that names the SPL mint.
const mintParam = "mint"

// Config configures a Backend.
type Config struct {
	// Ticker is the ticker served (family solana), with Net set: Mainnet
	// (mainnet-beta), Testnet (devnet or testnet) or Regtest (a local
	// validator). See Backend.Probe.
	Ticker chains.Ticker
	// URL is the node's JSON-RPC endpoint (http or https). Credentials go
	// in the userinfo (sent as HTTP basic authentication) or in the query
	// (providers' api-key parameters are kept). The query parameter
	// "mint" is the SPL mint and is removed before requests are sent.
	URL string
	// Signer signs forwards (chains.Signer); nil makes the backend
	// watch-only (Sign fails with ErrWatchOnly), unless Keys is set.
	Signer chains.Signer
	// Keys, when Signer is nil, signs through keysign.New(Keys).
	Keys *chains.Keys
	// Client sends the requests; nil means a client with Timeout.
	Client *http.Client
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
	// Mint is the SPL token's mint (base58), for token tickers only. Empty
	// means the URL's mint parameter, else Ticker.Contract (the mainnet
	// mint): a devnet or local node needs its own.
	Mint string
	// Concurrency is how many getBlock requests Blocks sends at once;
	// zero means DefaultConcurrency.
	Concurrency int
	// MaxResponse bounds an answer's size in bytes; zero means
	// DefaultMaxResponse.
	MaxResponse int64
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Signer == nil && c.Keys != nil {
		c.Signer = keysign.New(c.Keys)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxResponse == 0 {
		c.MaxResponse = DefaultMaxResponse
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.Timeout}
	}
	return c
}

// Validate reports the first field of c (after WithDefaults) that New
// cannot use, wrapping ErrInvalidConfig. Messages never quote the URL.
func (c Config) Validate() error {
	_, _, err := c.WithDefaults().parse()
	return err
}

// parse checks c and returns the endpoint (without the mint parameter) and
// the mint (zero for native SOL).
func (c Config) parse() (*url.URL, solana.PublicKey, error) {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...))
	}
	t := c.Ticker
	switch {
	case t.Family != chains.FamilySolana:
		return nil, solana.PublicKey{}, bad("Ticker", "family %q, want solana", t.Family)
	case !t.Net.Valid():
		return nil, solana.PublicKey{}, bad("Ticker.Net", "%q is not mainnet, testnet or regtest", t.Net)
	case !t.Token && t.Decimals != 9:
		return nil, solana.PublicKey{}, bad("Ticker.Decimals", "%d; SOL has 9 (lamports)", t.Decimals)
	case t.Token && (t.Decimals < 0 || t.Decimals > 18):
		return nil, solana.PublicKey{}, bad("Ticker.Decimals", "%d is out of range", t.Decimals)
	case c.Timeout < 0:
		return nil, solana.PublicKey{}, bad("Timeout", "must not be negative")
	case c.Concurrency < 0:
		return nil, solana.PublicKey{}, bad("Concurrency", "must not be negative")
	case c.MaxResponse < 0:
		return nil, solana.PublicKey{}, bad("MaxResponse", "must not be negative")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, solana.PublicKey{}, bad("URL", "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, solana.PublicKey{}, bad("URL", "scheme must be http or https")
	}
	if u.Host == "" {
		return nil, solana.PublicKey{}, bad("URL", "no host")
	}
	if u.Fragment != "" {
		return nil, solana.PublicKey{}, bad("URL", "must not have a fragment")
	}
	q := u.Query()
	mint := c.Mint
	if m := q.Get(mintParam); m != "" {
		if mint != "" && mint != m {
			return nil, solana.PublicKey{}, bad("Mint", "differs from the URL's mint parameter")
		}
		mint = m
	}
	if q.Has(mintParam) {
		q.Del(mintParam)
		u.RawQuery = q.Encode()
	}
	if !t.Token {
		if mint != "" {
			return nil, solana.PublicKey{}, bad("Mint", "set for %s, which is not a token", t.Ticker)
		}
		return u, solana.PublicKey{}, nil
	}
	if mint == "" {
		mint = t.Contract
	}
	if err := chains.ValidateAddress(t, mint); err != nil {
		return nil, solana.PublicKey{}, bad("Mint", "%v", err)
	}
	key, err := solana.PublicKeyFromBase58(mint)
	if err != nil {
		return nil, solana.PublicKey{}, bad("Mint", "%v", err)
	}
	return u, key, nil
}

// Backend is a chains.Backend on a Solana node's JSON-RPC API, for one
// ticker: native SOL or one SPL token. It is safe for concurrent use.
type Backend struct {
	ticker      chains.Ticker
	signer      chains.Signer
	mint        solana.PublicKey // zero for SOL
	concurrency int
	page        int // signatures per getSignaturesForAddress
	rpc         *client

	mu      sync.Mutex
	watched map[string]bool
	mintOK  bool // the mint was checked (owner program, decimals)
}

var (
	_ chains.Backend        = (*Backend)(nil)
	_ chains.AddressWatcher = (*Backend)(nil)
	_ chains.Prober         = (*Backend)(nil)
)

// New returns a Backend for cfg. It does no network I/O; Probe checks the
// node. Errors wrap ErrInvalidConfig.
func New(cfg Config) (*Backend, error) {
	cfg = cfg.WithDefaults()
	u, mint, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	return &Backend{
		ticker:      cfg.Ticker,
		signer:      cfg.Signer,
		mint:        mint,
		concurrency: cfg.Concurrency,
		page:        signaturePage,
		rpc:         &client{url: u.String(), http: cfg.Client, timeout: cfg.Timeout, maxResponse: cfg.MaxResponse},
		watched:     make(map[string]bool),
	}, nil
}

// Ticker returns the backend's ticker.
func (b *Backend) Ticker() chains.Ticker { return b.ticker }

// Mint returns the SPL mint (base58), "" for native SOL.
func (b *Backend) Mint() string {
	if !b.ticker.Token {
		return ""
	}
	return b.mint.String()
}
