package jsonrpc

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
	"github.com/payhook/payhook/chains/keysign"
)

// Defaults of Config.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultBatchSize   = 20
	DefaultLogRange    = 1000
	DefaultMaxResponse = 64 << 20
)

// URL query options that configure the backend; they are removed from the
// URL before it reaches the node.
const (
	queryContract = "contract"
	queryChainID  = "chain_id"
)

// Config configures a Backend.
type Config struct {
	// Ticker is the coin or token, with Net set (chains.Registry.WithNet).
	// Its family must be evm.
	Ticker chains.Ticker
	// URL is the node's JSON-RPC endpoint, http or https. Credentials go in
	// the userinfo (sent as HTTP basic authentication); an API key in the
	// path or query is kept. Options in the query, removed before the URL
	// is used: contract=0x... (see Contract) and chain_id=N (see ChainID).
	// Error messages name the URL's scheme and host only.
	URL string
	// Signer signs forwards (chains.Signer); nil makes the backend
	// watch-only (Sign returns ErrWatchOnly), unless Keys is set.
	Signer chains.Signer
	// Keys, when Signer is nil, signs through keysign.New(Keys).
	Keys *chains.Keys
	// Client sends the requests; nil: a client of its own with Timeout,
	// whose idle connections Close closes. Responses are read up to
	// MaxResponse bytes either way.
	Client *http.Client
	// Timeout bounds each request to the node; default DefaultTimeout.
	Timeout time.Duration
	// ChainID is the chain id the node must report (eth_chainId); the URL's
	// chain_id option sets it too. 0 means: on mainnet, the network's
	// mainnet id (eth and erc20 1, bep20 56, polygon 137; another network
	// needs ChainID); on testnet or regtest, any id but those three, so a
	// mainnet node is never taken for a test network. Transactions are
	// signed for the id the node reports.
	ChainID uint64
	// Contract is the token's contract on the node's chain; the URL's
	// contract option sets it too. Empty: Ticker.Contract, the mainnet
	// contract, which is only right on mainnet: a token on testnet or
	// regtest must set it. A native coin must leave it empty.
	Contract string
	// BatchSize is how many blocks one batched request fetches; default
	// DefaultBatchSize.
	BatchSize int
	// LogRange is the most blocks one eth_getLogs asks for; default
	// DefaultLogRange. A range the node refuses is halved and asked again.
	LogRange int64
	// MaxResponse is the largest response body read, in bytes; default
	// DefaultMaxResponse. A longer body is a node error.
	MaxResponse int64
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Signer == nil && c.Keys != nil {
		c.Signer = keysign.New(c.Keys)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.LogRange == 0 {
		c.LogRange = DefaultLogRange
	}
	if c.MaxResponse == 0 {
		c.MaxResponse = DefaultMaxResponse
	}
	return c
}

// Validate reports the first invalid field, wrapping ErrInvalidConfig. It
// does no network I/O.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// resolved is a validated Config's derived settings.
type resolved struct {
	endpoint string         // the URL without our query options
	host     string         // scheme://host, for error messages
	contract common.Address // zero for a native coin
	chainID  chainRule
}

// chainRule is what eth_chainId must answer.
type chainRule struct {
	want    uint64 // exact id; 0: any id but the known mainnet ids
	mainnet bool
}

// check reports whether id passes the rule.
func (r chainRule) check(id uint64) error {
	switch {
	case r.want != 0 && id != r.want:
		return fmt.Errorf("%w: node reports chain id %d, want %d", chains.ErrWrongNetwork, id, r.want)
	case r.want == 0 && isKnownMainnet(id):
		return fmt.Errorf("%w: node reports chain id %d, a mainnet's, for a test network", chains.ErrWrongNetwork, id)
	}
	return nil
}

func isKnownMainnet(id uint64) bool { return id == 1 || id == 56 || id == 137 }

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...))
}

// resolve validates c (with defaults applied) and derives its settings.
func (c Config) resolve() (resolved, error) {
	c = c.WithDefaults()
	var r resolved
	tk := c.Ticker
	switch {
	case tk.Ticker == "":
		return r, invalid("Ticker", "missing")
	case tk.Family != chains.FamilyEVM:
		return r, invalid("Ticker", "%s is of family %q, not evm", tk.Ticker, tk.Family)
	case tk.Decimals < 0 || tk.Decimals > chains.MaxDecimals:
		return r, invalid("Ticker", "%d decimals", tk.Decimals)
	case !tk.Net.Valid():
		return r, invalid("Ticker", "network %q", tk.Net)
	}
	switch {
	case c.Timeout < 0:
		return r, invalid("Timeout", "negative")
	case c.BatchSize < 1 || c.BatchSize > 1000:
		return r, invalid("BatchSize", "%d, want 1 to 1000", c.BatchSize)
	case c.LogRange < 1:
		return r, invalid("LogRange", "%d, want at least 1", c.LogRange)
	case c.MaxResponse < 1<<10:
		return r, invalid("MaxResponse", "%d bytes, want at least 1024", c.MaxResponse)
	}

	u, err := url.Parse(c.URL)
	if err != nil || c.URL == "" {
		// url.Parse's message quotes the URL, which may hold a password.
		return r, invalid("URL", "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return r, invalid("URL", "scheme %q, want http or https", u.Scheme)
	}
	if u.Host == "" {
		return r, invalid("URL", "no host")
	}
	r.host = u.Scheme + "://" + u.Host
	q := u.Query()
	contract, chainID := c.Contract, c.ChainID
	if v, ok := q[queryContract]; ok {
		if len(v) != 1 || (contract != "" && contract != v[0]) {
			return r, invalid("URL", "option %s given twice", queryContract)
		}
		contract = v[0]
		q.Del(queryContract)
	}
	if v, ok := q[queryChainID]; ok {
		id, err := strconv.ParseUint(v[0], 10, 64)
		if len(v) != 1 || err != nil || id == 0 || (chainID != 0 && chainID != id) {
			return r, invalid("URL", "option %s must be given once, as a positive integer", queryChainID)
		}
		chainID = id
		q.Del(queryChainID)
	}
	u.RawQuery = q.Encode()
	r.endpoint = u.String()

	mainnet := tk.Net == "" || tk.Net == chains.Mainnet
	known, isKnown := evm.ChainID(tk.Network)
	switch {
	case mainnet && chainID == 0 && !isKnown:
		return r, invalid("ChainID", "network %q has no known chain id: set it", tk.Network)
	case mainnet && chainID == 0:
		chainID = known
	case mainnet && isKnown && chainID != known:
		return r, invalid("ChainID", "%d on %s mainnet, whose chain id is %d", chainID, tk.Network, known)
	case !mainnet && isKnownMainnet(chainID):
		return r, invalid("ChainID", "%d is a mainnet's chain id, but %s runs on %s", chainID, tk.Ticker, tk.Net)
	}
	r.chainID = chainRule{want: chainID, mainnet: mainnet}

	switch {
	case !tk.Token && contract != "":
		return r, invalid("Contract", "%s is a native coin", tk.Ticker)
	case tk.Token && contract == "" && !mainnet:
		return r, invalid("Contract", "%s on %s needs its contract there (Ticker.Contract is the mainnet one)", tk.Ticker, tk.Net)
	case tk.Token && contract == "":
		contract = tk.Contract
	}
	if tk.Token {
		if !common.IsHexAddress(contract) || common.HexToAddress(contract) == (common.Address{}) {
			return r, invalid("Contract", "%q is not a contract address", contract)
		}
		if err := chains.ValidateAddress(tk, contract); err != nil {
			return r, invalid("Contract", "%v", err)
		}
		r.contract = common.HexToAddress(contract)
	}
	return r, nil
}
