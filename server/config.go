package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/payhook/payhook/ent/store"
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
	if c.Seed == nil && c.SeedFile == "" {
		return errors.New("--seed-file: must not be empty")
	}
	if c.Seed != nil && (len(c.Seed) < 16 || len(c.Seed) > 64) {
		return fmt.Errorf("seed: %d bytes, want 16 to 64", len(c.Seed))
	}
	return nil
}
