package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/browserrpc"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/metrics"
	"github.com/payhook/payhook/server/outbound"
	"github.com/payhook/payhook/server/ratelimit"
	"github.com/payhook/payhook/server/signer"
	"github.com/payhook/payhook/server/web/dashboard"
)

// Config is everything payhook serve needs, grouped by the part of the
// server each setting shapes. cmd/payhook fills it from flags and PAYHOOK_*
// environment variables; tests fill it directly. Validation errors name the
// bad setting by its command-line flag.
type Config struct {
	// Store is the database.
	Store StoreConfig
	// API is the gRPC API and its REST gateway.
	API APIConfig
	// Keys are the address seed and the callback signing key.
	Keys KeysConfig
	// Delivery is how notifications reach merchants: the notifier's own
	// delivery part, whose WithDefaults holds the only delivery defaults.
	Delivery notifier.Delivery
	// Chains are the tickers, prices and chain watchers.
	Chains ChainsConfig
	// Limits are the request limits and quotas: per API key, per client
	// network, hosted-page addresses, test webhooks (server/ratelimit,
	// whose WithDefaults holds their defaults).
	Limits ratelimit.Limits
	// Email is the SMTP server and the operator's addresses (--smtp-url,
	// PAYHOOK_SMTP_PASSWORD, --operator-email: server/mail, whose
	// WithDefaults holds their defaults). Without a URL payhook sends, and
	// stores, no email. Its clock and dashboard link are the server's
	// (Now, API.PublicURL).
	Email mail.Config
	// Dev turns on developer conveniences: an API key is created and printed
	// when the database has none (when it has some, the command that creates
	// another is printed instead), the chains are simulated (the devnet),
	// and the listeners default to loopback (DefaultDevHTTPAddr,
	// DefaultDevGRPCAddr), since the devnet's pay, mine and reorg need no
	// API key.
	Dev bool
	// ManualDelivery leaves the dispatch loop and chain watcher loops off;
	// deliveries happen only when the caller runs them (Notifier().RunDue),
	// on the configured clock, chains are read when the devnet changes
	// them, and live prices are refreshed by RefreshPrices only. Tests.
	ManualDelivery bool
	// EndpointPauseAfter is how long every attempt to a webhook endpoint
	// must have failed before it is paused (endpoint.DefaultPauseAfter
	// when 0).
	EndpointPauseAfter time.Duration
	// Retention is how old delivery records (notifications, their
	// attempts and events, the merchant event log) must be to be deleted
	// (retention.DefaultAge when 0; negative keeps everything).
	Retention time.Duration
	// AuditRetention is how old audit log entries must be to be deleted
	// (retention.DefaultAuditAge, 400 days, when 0; negative keeps
	// every entry).
	AuditRetention time.Duration
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
	// OutboundFaults inject crashes into the outbound engine. Tests.
	OutboundFaults outbound.Faults
	// OutboundBackend, when set, wraps each chain backend the outbound
	// engine signs and sends with (a signer that refuses); the watchers
	// read the backends themselves. Tests.
	OutboundBackend func(ticker string, b chains.Backend) chains.Backend
	// Out receives messages meant for the person running the server (the dev
	// API key); os.Stdout when nil.
	Out io.Writer
	// Build names the running binary in payhook_build_info; when its
	// Version is empty, metrics.ReadBuild("") fills it from the binary's
	// embedded build information.
	Build metrics.BuildInfo
}

// StoreConfig is the database.
type StoreConfig struct {
	// DB is the database (--db): "sqlite:PATH" (the embedded default) or a
	// "postgres://" URL (production).
	DB string
	// MaxConns bounds this instance's PostgreSQL connection pool
	// (--db-max-conns); requests wait for a free connection within their
	// deadline. The instance opens one more connection outside the pool
	// (the notifier's LISTEN), and the chain watchers' lease and the
	// migration lock hold one of the pool's while they last. SQLite's pool
	// is fixed. Default store.DefaultMaxConns (20): four instances fit in
	// PostgreSQL's default max_connections of 100.
	MaxConns int
	// HealthProbeInterval is how often the database is probed for the
	// health status; DefaultHealthProbeInterval when 0. Tests shorten it.
	HealthProbeInterval time.Duration
	// Migrate is what starting does about migrations the database lacks
	// (--migrate): MigrateAuto (the default) applies them, under a lock so
	// that instances starting together apply them once; MigrateOff applies
	// none and refuses to start while any is missing, for operators who run
	// `payhook migrate` as a separate deployment step.
	Migrate string
}

// The values of StoreConfig.Migrate.
const (
	MigrateAuto = "auto"
	MigrateOff  = "off"
)

// APIConfig is the gRPC API and its REST gateway.
type APIConfig struct {
	// HTTPAddr is the REST gateway's listen address (--http-addr); empty
	// means DefaultHTTPAddr, or DefaultDevHTTPAddr with Config.Dev.
	HTTPAddr string
	// GRPCAddr is the gRPC listen address (--grpc-addr); empty means
	// DefaultGRPCAddr, or DefaultDevGRPCAddr with Config.Dev.
	GRPCAddr string
	// OperatorAddr, when set, is the operator listener's address
	// (--operator-listen): /healthz with every chain's details and
	// /metrics, without a key, for monitoring on a private network. Off
	// (empty) by default; the public listener then shows the details and
	// the metrics only to an operator's API key.
	OperatorAddr string
	// PublicURL is the base URL customers reach the hosted pages at
	// (payment_url, subscription_url) and the dashboard is served from
	// (--public-url); the HTTP listener's address when empty. When it is
	// https, dashboard cookies are Secure even though TLS ends in a proxy
	// in front of payhook.
	PublicURL string
	// TrustedProxies are the addresses or networks (CIDR) of reverse
	// proxies in front of payhook (--trusted-proxy): the per-network
	// limits (anonymous requests, the dashboard's sign-in) read the
	// client's address from the X-Forwarded-For they set. Without them the
	// peer is the client.
	TrustedProxies []string
	// ShutdownTimeout bounds how long in-flight requests may take to finish
	// on shutdown (--shutdown-timeout).
	ShutdownTimeout time.Duration
	// MaxBodyBytes caps a REST request body (--max-body-bytes); a longer
	// one is answered 413. A gRPC message may be this plus the REST header
	// limit (what a REST request with a long query becomes).
	MaxBodyBytes int64
	// ReadTimeout bounds reading a REST request, body included, and
	// WriteTimeout writing its response; streams (/deliveries/watch) are
	// exempt from both. Tests shorten them.
	ReadTimeout, WriteTimeout time.Duration
	// StreamHeartbeat is how often a REST stream with nothing to send
	// writes an empty line, so proxies do not close it as idle. Tests
	// shorten it.
	StreamHeartbeat time.Duration
	// PagePollInterval is how often a hosted payment page's script asks
	// for the payment's status (pay.DefaultPollInterval when 0). Tests
	// shorten it.
	PagePollInterval time.Duration
	// CORSOrigins are the browser origins (scheme://host[:port], or "*"
	// for any) whose pages may call the Connect and gRPC-Web API from
	// another origin (--cors-origin). None by default: pages served by
	// payhook itself and non-browser clients need no entry.
	CORSOrigins []string
}

// KeysConfig is the address seed and the callback signing key.
type KeysConfig struct {
	// SeedFile holds the hex-encoded master seed that payment addresses are
	// derived from (--seed-file). It is created (mode 0600) on first start
	// when missing.
	SeedFile string
	// Seed, when set, is used instead of SeedFile (tests).
	Seed []byte
	// SigningKeyFile optionally names a PEM RSA private key to sign callbacks
	// with (--signing-key-file); when empty the key is generated on first
	// start and kept in the database.
	SigningKeyFile string
	// SigningKeyBits is the size of a generated signing key
	// (--signing-key-bits).
	SigningKeyBits int
	// SecretsKeyFile optionally names the key that seals the secrets kept
	// in the database (--secrets-key-file: 32 bytes as hex, mode 0600);
	// when empty the key is derived from the seed.
	SecretsKeyFile string
	// Signer, when its URL is set (--signer-url, --signer-cert,
	// --signer-key, --signer-ca), is the remote signer (`payhook signer`,
	// over mutual TLS) that holds the seed and signs every transaction: the
	// server then reads no seed (Seed and SeedFile are not used), derives
	// payment addresses from the public keys the signer gives, and needs
	// SecretsKeyFile.
	Signer signer.ClientConfig
}

// Remote reports whether a remote signer holds the seed.
func (c KeysConfig) Remote() bool { return c.Signer.URL != "" }

// ChainsConfig is the tickers, prices and chain watchers.
type ChainsConfig struct {
	// RegistryFile optionally replaces the embedded ticker registry
	// (--registry-file).
	RegistryFile string
	// PriceFile optionally replaces the embedded USD price and fiat rate
	// table, in chains/price's format (--price-file).
	PriceFile string
	// WatchInterval is how often chain watchers poll their backends
	// (--watch-interval).
	WatchInterval time.Duration
	// DevnetBlockTime, with Config.Dev, mines a block on every simulated
	// chain this often; 0 mines only on request (--devnet-block-time).
	DevnetBlockTime time.Duration
	// Nodes maps tickers to their node's URL (--node TICKER=URL, the
	// --node-file lines, PAYHOOK_NODE_<TICKER>): credentials in the
	// userinfo, payhook's options in the query (network=mainnet|testnet|
	// regtest, default mainnet; family options such as contract=). A
	// ticker without a node is not offered, unless Dev puts it on the
	// devnet.
	Nodes map[string]string
	// FallbackFees maps UTXO tickers to the fee rate (coin per 1000
	// vbytes) forwards pay when the node has no estimate
	// (--fallback-fee TICKER=RATE); bitcoind.DefaultFallbackFee otherwise.
	FallbackFees map[string]decimal.Decimal
	// PayoutFeePercent is the operator's payout fee (--payout-fee), a
	// percentage of each payout's total requested, from 0 (the default,
	// no fee) to 100; it goes to the operator's address as a forward's
	// service fee does.
	PayoutFeePercent decimal.Decimal
	// PayoutInterval sends the queued payouts of a ticker in batches
	// (--payout-interval TICKER=DURATION): see payout.Config.Interval.
	PayoutInterval map[string]time.Duration
	// PayoutMinBatch is the least total of a ticker's batch
	// (--payout-min-batch TICKER=AMOUNT): see payout.Config.MinBatch.
	PayoutMinBatch map[string]decimal.Decimal
	// Prices is where USD prices and fiat rates come from (--prices):
	// PricesTable (the embedded table or --price-file) or PricesLive
	// (PriceProviders over the table, which stays beneath as the last
	// fallback). Empty means live when nodes are configured (real
	// payments need real prices) and the table otherwise (the devnet,
	// offline development).
	Prices string
	// PriceProviders are the live providers (--price-provider,
	// repeatable): "coinbase", "coingecko", "kraken", "frankfurter", each
	// optionally "=BASEURL" (a mirror, a test server). All are asked at
	// every refresh and each price is the median of those that answer.
	// Default: coinbase, coingecko, kraken, frankfurter.
	PriceProviders []string
	// PriceTTL is how often live prices are refreshed (--price-ttl).
	PriceTTL time.Duration
	// PriceMaxAge is how old a price may be before it is not used
	// (--price-max-age): price leaves the payloads, the conversion maps
	// are {}, requests that need a price (a checkout with an amount, an
	// address of one, /convert/, /estimate/) answer 503 naming the cause,
	// and /healthz reports degraded. Negative: no limit.
	PriceMaxAge time.Duration
	// NodeTimeout bounds one node request (--node-timeout).
	NodeTimeout time.Duration
	// OfferWithoutNodes offers every ticker of the registry even without a
	// node or the devnet: addresses are created but nothing watches their
	// chain. Tests of the API that need no chain.
	OfferWithoutNodes bool
}

// Defaults of Config.
const (
	DefaultDB       = "sqlite:payhook.db"
	DefaultHTTPAddr = ":8080"
	DefaultGRPCAddr = ":9090"
	// DefaultDevHTTPAddr and DefaultDevGRPCAddr are the listen addresses of
	// a --dev server given none: loopback only, because the devnet's RPCs
	// are unauthenticated.
	DefaultDevHTTPAddr = "127.0.0.1:8080"
	DefaultDevGRPCAddr = "127.0.0.1:9090"
	// DefaultSeedFile is the seed file of a Config that names none. The
	// payhook command's default is elsewhere: the user's configuration
	// directory (admin.DefaultSeedPath), outside any working tree.
	DefaultSeedFile = admin.DefaultSeedFile
	// PricesTable and PricesLive are the values of --prices.
	PricesTable = "table"
	PricesLive  = "live"
	// DefaultNodeTimeout bounds one request to a chain node.
	DefaultNodeTimeout     = 10 * time.Second
	DefaultSigningKeyBits  = 2048
	DefaultShutdownTimeout = 15 * time.Second
	// DefaultMaxBodyBytes is 1 MiB; the largest request of the API (a
	// create with every destination) is a few kilobytes.
	DefaultMaxBodyBytes    = 1 << 20
	DefaultReadTimeout     = 30 * time.Second
	DefaultWriteTimeout    = 60 * time.Second
	DefaultStreamHeartbeat = 15 * time.Second
	DefaultWatchInterval   = 2 * time.Second
	// DefaultDBMaxConns is store.DefaultMaxConns: four instances, each with
	// its LISTEN connection, fit in PostgreSQL's default max_connections.
	DefaultDBMaxConns = store.DefaultMaxConns
	// DefaultHealthProbeInterval is how often the database is probed.
	DefaultHealthProbeInterval = 2 * time.Second
)

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	c.Store = c.Store.WithDefaults()
	if c.Dev {
		if c.API.HTTPAddr == "" {
			c.API.HTTPAddr = DefaultDevHTTPAddr
		}
		if c.API.GRPCAddr == "" {
			c.API.GRPCAddr = DefaultDevGRPCAddr
		}
	}
	c.API = c.API.WithDefaults()
	c.Keys = c.Keys.WithDefaults()
	c.Delivery = c.Delivery.WithDefaults()
	c.Chains = c.Chains.WithDefaults()
	c.Limits = c.Limits.WithDefaults()
	if c.Now == nil {
		c.Now = clock.Now
	}
	c.Email = c.Email.WithDefaults()
	c.Email.Now = c.Now
	if c.API.PublicURL != "" && c.Email.DashboardURL == "" {
		c.Email.DashboardURL = strings.TrimRight(c.API.PublicURL, "/") + dashboard.Prefix
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Build.Version == "" {
		c.Build = metrics.ReadBuild("")
	}
	return c
}

// Validate reports the first bad setting, naming it by its flag.
func (c Config) Validate() error {
	if err := c.Store.Validate(); err != nil {
		return err
	}
	if err := c.API.Validate(); err != nil {
		return err
	}
	if err := c.Keys.Validate(); err != nil {
		return err
	}
	if err := validateDelivery(c.Delivery); err != nil {
		return err
	}
	if err := c.Chains.Validate(); err != nil {
		return err
	}
	if err := c.Limits.Validate(); err != nil {
		return err
	}
	if err := c.Email.Validate(); err != nil {
		return err
	}
	if c.Chains.DevnetBlockTime > 0 && !c.Dev {
		return fmt.Errorf("--devnet-block-time: needs --dev (the devnet runs only in developer mode)")
	}
	if !c.Dev && len(c.Chains.Nodes) == 0 && !c.Chains.OfferWithoutNodes {
		return ErrNoChains
	}
	return nil
}

// WithDefaults returns c with every unset field set to its default.
func (c StoreConfig) WithDefaults() StoreConfig {
	if c.DB == "" {
		c.DB = DefaultDB
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultDBMaxConns
	}
	if c.Migrate == "" {
		c.Migrate = MigrateAuto
	}
	if c.HealthProbeInterval == 0 {
		c.HealthProbeInterval = DefaultHealthProbeInterval
	}
	return c
}

// Validate reports a DB that payhook cannot open, naming --db, or a pool
// too small to work, naming --db-max-conns.
func (c StoreConfig) Validate() error {
	if _, _, err := store.ParseDSN(c.DB); err != nil {
		return fmt.Errorf("--db: %w", err)
	}
	if c.MaxConns < MinDBMaxConns {
		// The migration lock holds one connection while migrations use
		// another; the watchers' lease holds one while requests need more.
		return fmt.Errorf("--db-max-conns: %d is below the minimum of %d", c.MaxConns, MinDBMaxConns)
	}
	if c.HealthProbeInterval < 0 {
		return errors.New("health probe interval: must not be negative")
	}
	if c.Migrate != MigrateAuto && c.Migrate != MigrateOff {
		return fmt.Errorf("--migrate: %q is neither %s nor %s", c.Migrate, MigrateAuto, MigrateOff)
	}
	return nil
}

// MinDBMaxConns is the smallest --db-max-conns accepted.
const MinDBMaxConns = 2

// MinMaxBodyBytes is the smallest body limit accepted: 1 KiB.
const MinMaxBodyBytes = 1 << 10

// WithDefaults returns c with every unset field set to its default.
func (c APIConfig) WithDefaults() APIConfig {
	if c.HTTPAddr == "" {
		c.HTTPAddr = DefaultHTTPAddr
	}
	if c.GRPCAddr == "" {
		c.GRPCAddr = DefaultGRPCAddr
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.StreamHeartbeat == 0 {
		c.StreamHeartbeat = DefaultStreamHeartbeat
	}
	return c
}

// Validate reports the first bad setting, naming it by its flag.
func (c APIConfig) Validate() error {
	for _, a := range []struct{ flag, addr string }{{"--http-addr", c.HTTPAddr}, {"--grpc-addr", c.GRPCAddr}, {"--operator-listen", c.OperatorAddr}} {
		if a.addr == "" && a.flag == "--operator-listen" {
			continue // off
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("%s: %q is not a host:port listen address", a.flag, a.addr)
		}
	}
	if c.OperatorAddr != "" && !strings.HasSuffix(c.OperatorAddr, ":0") && (c.OperatorAddr == c.HTTPAddr || c.OperatorAddr == c.GRPCAddr) {
		return errors.New("--operator-listen must differ from --http-addr and --grpc-addr")
	}
	if c.HTTPAddr == c.GRPCAddr && c.HTTPAddr[len(c.HTTPAddr)-2:] != ":0" {
		return errors.New("--http-addr and --grpc-addr must differ")
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout: must not be negative")
	}
	if c.MaxBodyBytes < MinMaxBodyBytes {
		return fmt.Errorf("--max-body-bytes: %d is below the minimum of %d", c.MaxBodyBytes, MinMaxBodyBytes)
	}
	if c.PublicURL != "" {
		if err := checkPublicURL(c.PublicURL); err != nil {
			return fmt.Errorf("--public-url: %w", err)
		}
	}
	if _, err := c.trustedProxies(); err != nil {
		return err
	}
	for _, o := range c.CORSOrigins {
		if err := browserrpc.CheckOrigin(o); err != nil {
			return fmt.Errorf("--cors-origin: %w", err)
		}
	}
	if c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.StreamHeartbeat < 0 {
		return errors.New("API read timeout, write timeout and stream heartbeat must not be negative")
	}
	return nil
}

// trustedProxies parses TrustedProxies: a CIDR network or one address.
func (c APIConfig) trustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, raw := range c.TrustedProxies {
		if p, err := netip.ParsePrefix(raw); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(raw)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy: %q is neither an IP address nor a CIDR network", raw)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// checkPublicURL accepts an absolute http or https URL with a host and
// nothing after its path: it prefixes every payment_url.
func checkPublicURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q must start with http:// or https://", raw)
	case u.Host == "":
		return fmt.Errorf("%q has no host", raw)
	case u.User != nil:
		return fmt.Errorf("%q must not carry credentials", raw)
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return fmt.Errorf("%q must not have a query or a fragment", raw)
	}
	return nil
}

// WithDefaults returns c with every unset field set to its default.
func (c KeysConfig) WithDefaults() KeysConfig {
	if c.SeedFile == "" {
		c.SeedFile = DefaultSeedFile
	}
	if c.SigningKeyBits == 0 {
		c.SigningKeyBits = DefaultSigningKeyBits
	}
	return c
}

// Validate reports the first bad setting, naming it by its flag.
func (c KeysConfig) Validate() error {
	if c.SigningKeyBits < 2048 || c.SigningKeyBits > 8192 {
		return fmt.Errorf("--signing-key-bits: %d is outside 2048..8192", c.SigningKeyBits)
	}
	if c.Remote() {
		if err := c.Signer.Validate(); err != nil {
			return err
		}
		if c.Seed != nil {
			return errors.New("--signer-url: with a remote signer the server holds no seed: give it to payhook signer, not to serve (PAYHOOK_SEED, --seed-file)")
		}
		if c.SecretsKeyFile == "" {
			return errors.New("--secrets-key-file: required with --signer-url (the server holds no seed to derive the key that seals the database's secrets from)")
		}
		return nil
	}
	if c.Seed == nil && c.SeedFile == "" {
		return errors.New("--seed-file: must not be empty")
	}
	if c.Seed != nil && (len(c.Seed) < 16 || len(c.Seed) > 64) {
		return fmt.Errorf("seed: %d bytes, want 16 to 64", len(c.Seed))
	}
	return nil
}

// validateDelivery reports the first bad delivery setting, naming it by its
// flag.
func validateDelivery(c notifier.Delivery) error {
	if err := c.Policy.Validate(); err != nil {
		return fmt.Errorf("--retry-delays/--delivery-window: %w", err)
	}
	if c.AttemptTimeout <= 0 {
		return fmt.Errorf("--attempt-timeout: must be positive")
	}
	for _, e := range c.AllowPrivateEndpoints {
		if _, err := egress.ParseAllowance(e, 0); err != nil {
			return fmt.Errorf("--allow-private-endpoint %q: want PROJECT=URL (PROJECT a project id) or URL alone (the default project's): %w", e, err)
		}
	}
	if c.Lease != 0 && c.Lease <= c.AttemptTimeout {
		return fmt.Errorf("--delivery-lease: %s must be longer than --attempt-timeout %s", c.Lease, c.AttemptTimeout)
	}
	if c.Workers < 1 {
		return fmt.Errorf("--delivery-workers: must be at least 1")
	}
	if c.PerHost < 1 {
		return fmt.Errorf("--per-host-concurrency: must be at least 1")
	}
	return nil
}

// WithDefaults returns c with every unset field set to its default.
func (c ChainsConfig) WithDefaults() ChainsConfig {
	if c.WatchInterval == 0 {
		c.WatchInterval = DefaultWatchInterval
	}
	if c.NodeTimeout == 0 {
		c.NodeTimeout = DefaultNodeTimeout
	}
	return c
}

// Validate reports the first bad setting, naming it by its flag. Whether
// DevnetBlockTime has the --dev it needs is Config.Validate's question.
func (c ChainsConfig) Validate() error {
	if c.WatchInterval <= 0 {
		return fmt.Errorf("--watch-interval: must be positive")
	}
	if c.DevnetBlockTime < 0 {
		return fmt.Errorf("--devnet-block-time: must not be negative")
	}
	if c.NodeTimeout < 0 {
		return fmt.Errorf("--node-timeout: must not be negative")
	}
	if c.Prices != "" && c.Prices != PricesTable && c.Prices != PricesLive {
		return fmt.Errorf("--prices %q: want table or live", c.Prices)
	}
	if c.PriceTTL < 0 {
		return fmt.Errorf("--price-ttl: must not be negative")
	}
	for ticker, raw := range c.Nodes {
		if _, _, err := splitNodeURL(raw); err != nil {
			return fmt.Errorf("--node %s: %w", ticker, err)
		}
	}
	for ticker, rate := range c.FallbackFees {
		if rate.Sign() <= 0 || rate.GreaterThan(decimal.NewFromInt(1)) {
			return fmt.Errorf("--fallback-fee %s=%s: want a rate above 0 and at most 1 coin per 1000 vbytes", ticker, rate)
		}
	}
	if c.PayoutFeePercent.Sign() < 0 || c.PayoutFeePercent.GreaterThan(decimal.NewFromInt(100)) {
		return fmt.Errorf("--payout-fee %s: want a percentage from 0 to 100", c.PayoutFeePercent)
	}
	for ticker, d := range c.PayoutInterval {
		if d <= 0 {
			return fmt.Errorf("--payout-interval %s=%s: want a positive duration", ticker, d)
		}
	}
	for ticker, a := range c.PayoutMinBatch {
		if a.Sign() <= 0 {
			return fmt.Errorf("--payout-min-batch %s=%s: want a positive amount", ticker, a)
		}
		if c.PayoutInterval[ticker] <= 0 {
			return fmt.Errorf("--payout-min-batch %s: only with --payout-interval %s=DURATION (without an interval each payout is sent when queued)", ticker, ticker)
		}
	}
	return nil
}
