// Command payhook is the payhook payment-notification gateway.
//
//	payhook serve [flags]              run the gRPC API and its REST gateway
//	payhook migrate [--db DSN]         apply database migrations and exit
//	payhook apikey create --name NAME  issue an API key (printed once)
//	payhook watch [filters]            print delivery events as they happen
//	payhook listen --forward-to URL    relay your deliveries to a local server
//	payhook devnet pay|mine|reorg      drive the simulated chains of a --dev server
//
// Every flag has a PAYHOOK_* environment equivalent (--http-addr is
// PAYHOOK_HTTP_ADDR); a flag given on the command line wins. This is the only
// place that reads the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
)

const usage = `payhook: self-hostable payment-notification gateway

Usage:
  payhook serve [flags]              run the gRPC API (default :9090) and REST gateway (default :8080)
  payhook migrate [--db DSN]         apply database migrations and exit
  payhook apikey create --name NAME  issue an API key; it is printed once
  payhook watch [--address A] [--ticker T] [--uuid U]
                                     print your delivery events as they happen
  payhook listen --forward-to http://localhost:3000/hook [--address A]
                                     replay your deliveries against a local server
  payhook devnet pay --ticker btc --address ADDR --amount 0.01 [--fail-execution]
  payhook devnet mine --ticker btc [--blocks 3]
  payhook devnet reorg --ticker btc --depth 2
                                     drive the simulated chains of a server run with --dev
  payhook bench [--db postgres://...|sqlite] [--n 5000] [--rate 500] [--dead 10000]
                                     measure delivery throughput and latency next to the machine's limits

Run "payhook COMMAND -h" for a command's flags. Every flag can also be set
with a PAYHOOK_* environment variable (--db is PAYHOOK_DB).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "payhook:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("missing command")
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr, logger)
	case "migrate":
		return migrate(ctx, args[1:], stdout, stderr)
	case "apikey":
		if len(args) < 2 || args[1] != "create" {
			return errors.New(`usage: payhook apikey create --name NAME`)
		}
		return apikeyCreate(ctx, args[2:], stdout, stderr)
	case "watch":
		return watch(ctx, args[1:], stdout, stderr)
	case "devnet":
		return devnetCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		return bench(ctx, args[1:], stdout, stderr)
	case "listen":
		return listen(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// parse parses args into fs, then fills every flag not given on the command
// line from its PAYHOOK_* environment variable.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		env := "PAYHOOK_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s: %w", env, e)
			}
		}
	})
	return err
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", server.DefaultDB, `database: "sqlite:PATH" (embedded) or "postgres://user@host/db?sslmode=disable"`)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := newFlagSet("payhook serve", stderr)
	cfg := server.Config{Out: stdout}
	fs.StringVar(&cfg.DB, "db", server.DefaultDB, `database: "sqlite:PATH" (embedded) or "postgres://user@host/db?sslmode=disable"`)
	fs.StringVar(&cfg.HTTPAddr, "http-addr", server.DefaultHTTPAddr, "REST gateway listen address")
	fs.StringVar(&cfg.GRPCAddr, "grpc-addr", server.DefaultGRPCAddr, "gRPC listen address")
	fs.BoolVar(&cfg.Dev, "dev", false, "developer mode: create and print an API key when the database has none")
	fs.StringVar(&cfg.SeedFile, "seed-file", server.DefaultSeedFile, "hex master seed that payment addresses derive from (created on first start; back it up)")
	fs.StringVar(&cfg.SigningKeyFile, "signing-key-file", "", "PEM RSA private key for callback signatures (default: generated once and kept in the database)")
	fs.IntVar(&cfg.SigningKeyBits, "signing-key-bits", server.DefaultSigningKeyBits, "size of a generated signing key")
	fs.StringVar(&cfg.RegistryFile, "registry-file", "", "JSON ticker registry replacing the embedded one")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests may take on shutdown")
	delays := delaysFlag(schedule.Default().Delays)
	fs.Var(&delays, "retry-delays", "waits after failed delivery attempts; the last one repeats")
	fs.DurationVar(&cfg.DeliveryWindow, "delivery-window", schedule.Default().Window, "no delivery attempt starts later than this after a notification was stored")
	fs.DurationVar(&cfg.AttemptTimeout, "attempt-timeout", server.DefaultAttemptTimeout, "limit of one delivery attempt: connect, TLS, request and response")
	var allow listFlag
	fs.Var(&allow, "allow-private-endpoint", "exact callback endpoint (scheme://host:port/path) allowed to resolve to a private or loopback address; repeatable")
	fs.DurationVar(&cfg.DeliveryLease, "delivery-lease", 0, "how long a claimed notification stays reserved for this instance before another may take it over (default: attempt timeout + 30s)")
	fs.IntVar(&cfg.DeliveryWorkers, "delivery-workers", server.DefaultDeliveryWorkers, "concurrent delivery attempts")
	fs.IntVar(&cfg.PerHostConcurrency, "per-host-concurrency", server.DefaultPerHostConcurrency, "concurrent delivery attempts to one destination host")
	fs.StringVar(&cfg.PriceFile, "price-file", "", "JSON table of USD prices and fiat rates replacing the embedded one")
	fs.DurationVar(&cfg.WatchInterval, "watch-interval", server.DefaultWatchInterval, "how often chain watchers poll their chains")
	fs.DurationVar(&cfg.DevnetBlockTime, "devnet-block-time", 0, "with --dev: mine a block on every simulated chain this often (0: only on request)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg.RetryDelays = delays
	cfg.AllowPrivateEndpoints = allow
	return server.Run(ctx, cfg, logger)
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook migrate", stderr)
	dsn := dbFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := store.Migrate(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
		return nil
	}
	fmt.Fprintf(stdout, "applied migrations: %s\n", strings.Join(applied, ", "))
	return nil
}

func apikeyCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook apikey create", stderr)
	dsn := dbFlag(fs)
	name := fs.String("name", "", "a name for the key (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return errors.New("--name: required")
	}
	db, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := store.Migrate(ctx, db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	key, _, err := apikey.Create(ctx, db.Client, *name, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", key)
	fmt.Fprintf(stderr, "API key %q created; it is shown only this once.\n", *name)
	return nil
}

func openDB(ctx context.Context, dsn string) (*store.DB, error) {
	if _, _, err := store.ParseDSN(dsn); err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return db, nil
}

// delaysFlag is a comma-separated list of durations ("1m,5m,15m,1h,3h").
type delaysFlag []time.Duration

func (d *delaysFlag) String() string {
	parts := make([]string, len(*d))
	for i, v := range *d {
		parts[i] = v.String()
	}
	return strings.Join(parts, ",")
}

func (d *delaysFlag) Set(s string) error {
	v, err := schedule.ParseDelays(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// listFlag collects a repeatable flag; one value may hold several,
// separated by commas (the form its environment variable takes).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}
