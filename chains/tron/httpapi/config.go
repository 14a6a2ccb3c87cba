package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
)

// Defaults applied by Config.WithDefaults.
const (
	// DefaultTimeout bounds each request to the node.
	DefaultTimeout = 10 * time.Second
	// DefaultBatchBlocks is how many blocks one getblockbylimitnext call
	// asks for. Mainnet blocks carry a few hundred transactions each, so
	// a batch is a few megabytes of JSON at most.
	DefaultBatchBlocks = 10
	// MaxBatchBlocks is the node's own limit for getblockbylimitnext.
	MaxBatchBlocks = 100
	// DefaultExpiration is how long a signed forward stays valid: long
	// enough that a forward recorded before a crash or a node outage can
	// still be sent when payhook comes back (see Config.Expiration).
	DefaultExpiration = 12 * time.Hour
	// MaxExpiration stays below java-tron's limit of 24 hours beyond the
	// head block's time (Constant.MAXIMUM_TIME_UNTIL_EXPIRATION).
	MaxExpiration = 23 * time.Hour
	// DefaultTokenEnergy is the energy budgeted for one TRC20 transfer:
	// a USDT transfer to an address that holds none costs about 130,000
	// energy with the dynamic energy penalty; the rest is margin.
	DefaultTokenEnergy = 150_000
	// DefaultTransferBytes is the bandwidth budgeted for one signed TRX
	// transfer (about 270 bytes with its signature and result).
	DefaultTransferBytes = 300
	// DefaultTriggerBytes is the bandwidth budgeted for one signed TRC20
	// transfer (about 345 bytes).
	DefaultTriggerBytes = 400
	// maxResponse bounds a node's answer; a larger one is garbage.
	maxResponse = 64 << 20
)

// Config configures a Backend. The zero value is not usable: Ticker and URL
// are required.
type Config struct {
	// Ticker is the TRON ticker served (trx or a trc20 token), with Net set:
	// Probe checks the node's genesis block against it.
	Ticker chains.Ticker
	// URL is the full node's HTTP API, e.g. http://127.0.0.1:8090 or
	// https://api.trongrid.io. Credentials go in the userinfo: user
	// "apikey" sends the password as TronGrid's TRON-PRO-API-KEY header,
	// any other user is HTTP basic authentication. Options go in the
	// query: contract=T... (the token contract, overriding
	// Ticker.Contract, for testnets), solidity=<URL> (where the
	// /walletsolidity endpoints are served, when not on URL: a java-tron
	// full node serves them on its solidity HTTP port, 8091 by default).
	URL string
	// Signer signs forwards (chains.Signer: keysign.Local over the seed,
	// or a remote signer); nil makes the backend watch-only (Sign returns
	// ErrWatchOnly).
	Signer chains.Signer
	// Client sends the requests; nil means a client with Timeout.
	Client *http.Client
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
	// BatchBlocks is how many blocks one request fetches (1 to
	// MaxBatchBlocks); zero means DefaultBatchBlocks.
	BatchBlocks int
	// Expiration is how long after its construction a signed forward
	// stays valid (at most MaxExpiration); zero means DefaultExpiration.
	// The node builds transactions that expire after 60 seconds; Sign
	// extends that, so that bytes recorded before a crash can be sent
	// later.
	Expiration time.Duration
	// TokenEnergy is the energy one TRC20 transfer may burn: it sets the
	// transaction's fee_limit (times the chain's energy price) and the
	// TRX the operator tops the payment address up with; zero means
	// DefaultTokenEnergy.
	TokenEnergy int64
}

// WithDefaults returns c with every zero field replaced by its default.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BatchBlocks == 0 {
		c.BatchBlocks = DefaultBatchBlocks
	}
	if c.Expiration == 0 {
		c.Expiration = DefaultExpiration
	}
	if c.TokenEnergy == 0 {
		c.TokenEnergy = DefaultTokenEnergy
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.Timeout}
	}
	return c
}

// Validate reports the first field of c (after WithDefaults) that is
// unusable, wrapping ErrInvalidConfig. It never echoes the URL's
// credentials.
func (c Config) Validate() error {
	c = c.WithDefaults()
	_, err := c.endpoint()
	return err
}

// endpoint is what Config's URL says, parsed.
type endpoint struct {
	base     string // scheme://host[:port][/prefix], no userinfo, no query
	solidity string // base of the /walletsolidity endpoints
	contract string // token contract, base58; "" for trx
	apiKey   string // TRON-PRO-API-KEY
	user     string // basic authentication
	password string
	hasBasic bool
}

func (c Config) endpoint() (endpoint, error) {
	bad := func(format string, a ...any) (endpoint, error) {
		return endpoint{}, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	tk := c.Ticker
	switch {
	case tk.Family != chains.FamilyTron:
		return bad("Ticker: %q is not a tron ticker", tk.Ticker)
	case !tk.Net.Valid():
		return bad("Ticker.Net: unknown network %q", tk.Net)
	case c.Timeout < 0:
		return bad("Timeout must not be negative")
	case c.BatchBlocks < 1 || c.BatchBlocks > MaxBatchBlocks:
		return bad("BatchBlocks must be 1 to %d, got %d", MaxBatchBlocks, c.BatchBlocks)
	case c.Expiration < time.Minute || c.Expiration > MaxExpiration:
		return bad("Expiration must be 1m to %s, got %s", MaxExpiration, c.Expiration)
	case c.TokenEnergy < 1 || c.TokenEnergy > 10_000_000:
		return bad("TokenEnergy must be 1 to 10000000, got %d", c.TokenEnergy)
	}
	base, err := parseBase(c.URL, "URL")
	if err != nil {
		return endpoint{}, err
	}
	u, _ := url.Parse(c.URL) // parseBase succeeded
	e := endpoint{base: base, solidity: base, contract: tk.Contract}
	if u.User != nil {
		pw, _ := u.User.Password()
		if u.User.Username() == "apikey" {
			e.apiKey = pw
		} else {
			e.user, e.password, e.hasBasic = u.User.Username(), pw, true
		}
	}
	q := u.Query()
	for k := range q {
		if k != "contract" && k != "solidity" {
			return bad("URL: unknown option %q (want contract or solidity)", k)
		}
	}
	if s := q.Get("solidity"); s != "" {
		if e.solidity, err = parseBase(s, "URL option solidity"); err != nil {
			return endpoint{}, err
		}
	}
	if s := q.Get("contract"); s != "" {
		e.contract = s
	}
	if tk.Token {
		if e.contract == "" {
			return bad("URL: token %s has no contract (set Ticker.Contract or ?contract=)", tk.Ticker)
		}
		if err := chains.ValidateAddress(tk, e.contract); err != nil {
			return bad("contract: %v", err)
		}
	} else if q.Has("contract") {
		return bad("URL: option contract is for tokens, %s is native", tk.Ticker)
	}
	return e, nil
}

// parseBase parses an http(s) URL into its base without userinfo, query
// or fragment. Its errors quote nothing of the URL but its scheme, so no
// credential reaches a log.
func parseBase(raw, field string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %s does not parse as a URL", ErrInvalidConfig, field)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%w: %s: scheme must be http or https, got %q", ErrInvalidConfig, field, u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: %s has no host", ErrInvalidConfig, field)
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("%w: %s must not have a fragment", ErrInvalidConfig, field)
	}
	b := url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}
	return b.String(), nil
}
