package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/schedule"
)

// Config is everything payhook serve needs. cmd/payhook fills it from flags
// and PAYHOOK_* environment variables; tests fill it directly.
type Config struct {
	// DB is the database: "sqlite:PATH" (the embedded default) or a
	// "postgres://" URL (production).
	DB string
	// HTTPAddr is the REST gateway's listen address.
	HTTPAddr string
	// GRPCAddr is the gRPC listen address.
	GRPCAddr string
	// Dev turns on developer conveniences: an API key is created and printed
	// when the database has none.
	Dev bool
	// SeedFile holds the hex-encoded master seed that payment addresses are
	// derived from. It is created (mode 0600) on first start when missing.
	SeedFile string
	// Seed, when set, is used instead of SeedFile (tests).
	Seed []byte
	// SigningKeyFile optionally names a PEM RSA private key to sign callbacks
	// with; when empty the key is generated on first start and kept in the
	// database.
	SigningKeyFile string
	// SigningKeyBits is the size of a generated signing key.
	SigningKeyBits int
	// RegistryFile optionally replaces the embedded ticker registry.
	RegistryFile string
	// RetryDelays are the waits after failed attempts; the last repeats.
	RetryDelays []time.Duration
	// DeliveryWindow is how long after its creation a notification may still
	// be attempted.
	DeliveryWindow time.Duration
	// AttemptTimeout bounds one delivery attempt (connect, TLS, request and
	// response).
	AttemptTimeout time.Duration
	// AllowPrivateEndpoints are exact callback endpoints (scheme, host, port,
	// path) that may resolve to private or loopback addresses: the operator's
	// development receivers. Nothing else may.
	AllowPrivateEndpoints []string
	// DeliveryLease is how long a claimed notification stays reserved for
	// this instance; another instance (or this one after a crash) takes it
	// over when it lapses. It must exceed AttemptTimeout; 0 means
	// AttemptTimeout + 30s.
	DeliveryLease time.Duration
	// DeliveryWorkers bounds concurrent delivery attempts of this instance.
	DeliveryWorkers int
	// PerHostConcurrency bounds concurrent attempts to one destination.
	PerHostConcurrency int
	// PriceFile optionally replaces the embedded USD price and fiat rate
	// table (chains/price's format).
	PriceFile string
	// WatchInterval is how often chain watchers poll their backends.
	WatchInterval time.Duration
	// DevnetBlockTime, with Dev, mines a block on every simulated chain this
	// often; 0 mines only on request.
	DevnetBlockTime time.Duration
	// ManualDelivery leaves the dispatch loop and chain watcher loops off;
	// deliveries happen only when the caller runs them (Notifier().RunDue),
	// on the configured clock, and chains are read when the devnet changes
	// them. Tests.
	ManualDelivery bool
	// ShutdownTimeout bounds how long in-flight requests may take to finish
	// on shutdown.
	ShutdownTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Out receives messages meant for the person running the server (the dev
	// API key); os.Stdout when nil.
	Out io.Writer
}

// Defaults of Config.
const (
	DefaultDB              = "sqlite:payhook.db"
	DefaultHTTPAddr        = ":8080"
	DefaultGRPCAddr        = ":9090"
	DefaultSeedFile        = "payhook.seed"
	DefaultSigningKeyBits  = 2048
	DefaultShutdownTimeout = 15 * time.Second
	// DefaultAttemptTimeout is the spec's limit per delivery attempt.
	DefaultAttemptTimeout     = 30 * time.Second
	DefaultDeliveryWorkers    = 64
	DefaultPerHostConcurrency = 16
	DefaultWatchInterval      = 2 * time.Second
)

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	if c.DB == "" {
		c.DB = DefaultDB
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = DefaultHTTPAddr
	}
	if c.GRPCAddr == "" {
		c.GRPCAddr = DefaultGRPCAddr
	}
	if c.SeedFile == "" {
		c.SeedFile = DefaultSeedFile
	}
	if c.SigningKeyBits == 0 {
		c.SigningKeyBits = DefaultSigningKeyBits
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = schedule.Default().Delays
	}
	if c.DeliveryWindow == 0 {
		c.DeliveryWindow = schedule.Default().Window
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	if c.WatchInterval == 0 {
		c.WatchInterval = DefaultWatchInterval
	}
	if c.DeliveryWorkers == 0 {
		c.DeliveryWorkers = DefaultDeliveryWorkers
	}
	if c.PerHostConcurrency == 0 {
		c.PerHostConcurrency = DefaultPerHostConcurrency
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	return c
}

// Validate reports the first bad setting, naming it by its flag.
func (c Config) Validate() error {
	if _, _, err := store.ParseDSN(c.DB); err != nil {
		return fmt.Errorf("--db: %w", err)
	}
	for _, a := range []struct{ flag, addr string }{{"--http-addr", c.HTTPAddr}, {"--grpc-addr", c.GRPCAddr}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("%s: %q is not a host:port listen address", a.flag, a.addr)
		}
	}
	if c.HTTPAddr == c.GRPCAddr && c.HTTPAddr[len(c.HTTPAddr)-2:] != ":0" {
		return errors.New("--http-addr and --grpc-addr must differ")
	}
	if c.SigningKeyBits < 2048 || c.SigningKeyBits > 8192 {
		return fmt.Errorf("--signing-key-bits: %d is outside 2048..8192", c.SigningKeyBits)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout: must not be negative")
	}
	if err := (schedule.Policy{Delays: c.RetryDelays, Window: c.DeliveryWindow}).Validate(); err != nil {
		return fmt.Errorf("--retry-delays/--delivery-window: %w", err)
	}
	if c.AttemptTimeout <= 0 {
		return fmt.Errorf("--attempt-timeout: must be positive")
	}
	for _, e := range c.AllowPrivateEndpoints {
		if _, err := egress.ParseEndpoint(e); err != nil {
			return fmt.Errorf("--allow-private-endpoint %q: %w", e, err)
		}
	}
	if c.DeliveryLease != 0 && c.DeliveryLease <= c.AttemptTimeout {
		return fmt.Errorf("--delivery-lease: %s must be longer than --attempt-timeout %s", c.DeliveryLease, c.AttemptTimeout)
	}
	if c.DeliveryWorkers < 1 {
		return fmt.Errorf("--delivery-workers: must be at least 1")
	}
	if c.PerHostConcurrency < 1 {
		return fmt.Errorf("--per-host-concurrency: must be at least 1")
	}
	if c.WatchInterval <= 0 {
		return fmt.Errorf("--watch-interval: must be positive")
	}
	if c.DevnetBlockTime < 0 {
		return fmt.Errorf("--devnet-block-time: must not be negative")
	}
	if c.DevnetBlockTime > 0 && !c.Dev {
		return fmt.Errorf("--devnet-block-time: needs --dev (the devnet runs only in developer mode)")
	}
	if c.Seed == nil && c.SeedFile == "" {
		return errors.New("--seed-file: must not be empty")
	}
	if c.Seed != nil && (len(c.Seed) < 16 || len(c.Seed) > 64) {
		return fmt.Errorf("seed: %d bytes, want 16 to 64", len(c.Seed))
	}
	return nil
}
