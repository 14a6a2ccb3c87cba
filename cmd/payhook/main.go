// Command payhook is the payhook payment-notification gateway.
//
//	payhook serve [flags]              run the gRPC API and its REST gateway
//	payhook migrate [--db DSN]         apply database migrations and exit
//	payhook apikey create --name NAME  issue an API key (printed once)
//	payhook apikey list | revoke ID    list or revoke API keys
//	payhook version                    what this binary is
//	payhook completion bash|zsh|fish   shell completion
//	payhook watch [filters]            print delivery events as they happen
//	payhook listen --forward-to URL    relay your deliveries to a local server
//	payhook devnet pay|mine|reorg      drive the simulated chains of a --dev server
//
// The client commands (watch, listen, chain status, devnet) reach the
// server at --server, its HTTP address, over the Connect protocol and
// /healthz.
//
// Every flag has a PAYHOOK_* environment equivalent (--http-addr is
// PAYHOOK_HTTP_ADDR); a flag given on the command line wins. This is the only
// place that reads the environment. --log-format and --log-level are global:
// accepted before or after the command.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/ratelimit"
)

const usage = `payhook: self-hostable payment-notification gateway

Usage:
  payhook serve [flags]              run the gRPC API (default :9090) and REST gateway (default :8080);
                                     with --dev, on 127.0.0.1 unless an address is given
  payhook migrate [--db DSN]         apply database migrations and exit (serve applies them too,
                                     unless --migrate=off)
  payhook apikey create --name NAME [--project ID] [--scope read,create,payouts,management] [--operator]
                                     issue an API key of a project (the default one unless --project; an
                                     operator's key with --operator); it is printed once
  payhook apikey list [--project ID] [--json]
                                     list API keys (id, name, prefix, project, kind, created, last used, revoked)
  payhook apikey revoke ID|NAME [--project ID]
                                     revoke a key: every instance answers it 401 from its next request on
  payhook project create --name NAME [--currency USD] [--wallet TICKER=ADDRESS[,ADDRESS@SHARE...]]... [--scope read,create,payouts,management] [--json]
  payhook project list | rotate-secret --project ID [--grace 24h] | rotate-callback-key --project ID [--grace 72h] | update --project ID --payout-notify-url URL | wallet set|remove --project ID ...
                                     manage merchant projects: API keys, IPN secret, payout wallets
  payhook user create --project ID --email EMAIL
                                     create a dashboard (/dashboard/) user of a project; the password is
                                     read from standard input (first line)
  payhook funds [--json]             list the funds payhook holds (addresses created without a forwarding
                                     address), per ticker, with the key derivation paths to sweep them
  payhook payouts [--json]           list the payout requests merchants made (/{ticker}/payout/), oldest first
  payhook watch [--address A] [--ticker T] [--uuid U]
                                     print your delivery events as they happen
  payhook listen --forward-to http://localhost:3000/hook [--address A]
                                     replay your deliveries against a local server
  payhook seed init [--seed-file PATH] [--encrypt]
                                     write a new master seed (mode 0600; never overwritten); back it up;
                                     --encrypt seals it under a passphrase that serve then needs
  payhook seed encrypt [--seed-file PATH]
                                     encrypt an existing plain seed file in place (the same seed)
  payhook seed passphrase [--seed-file PATH] [--new-passphrase-file FILE]
                                     change an encrypted seed file's passphrase in place (the same seed)
  payhook signer --policy-file FILE --cert FILE --key FILE --client-ca FILE [--listen ADDR]
                                     hold the seed on this machine and sign what a server asks
                                     (serve --signer-url), within the policy (gRPC, mutual TLS)
  payhook chain status [--server http://127.0.0.1:8080] [--apikey KEY] [--json]
                                     each ticker's node, network, head, cursor and health
                                     (an operator's key, or --server at serve's --operator-listen)
  payhook devnet pay --ticker btc --address ADDR --amount 0.01 [--fail-execution]
  payhook devnet mine --ticker btc [--blocks 3]
  payhook devnet reorg --ticker btc --depth 2
                                     drive the simulated chains of a server run with --dev
  payhook version [--json]           version, commit and Go version of this binary (also payhook --version)
  payhook completion bash|zsh|fish   print a shell completion script

Global flags, before or after the command:
  --log-format text|json             log line format (default text)
  --log-level debug|info|warn|error  least severe level logged (default info)

watch, listen, chain status and devnet reach a running server at --server (its
HTTP address, serve's --http-addr; default http://127.0.0.1:8080, where
serve --dev listens); the admin commands (migrate, apikey, project, user,
funds, payouts) open its database, --db (default sqlite:payhook.db).

Run "payhook COMMAND --help" (or "payhook help COMMAND") for a command's flags.
Every flag can also be set with a PAYHOOK_* environment variable (--db is
PAYHOOK_DB, --log-level is PAYHOOK_LOG_LEVEL). The benchmark is its own
command: go run ./cmd/payhook-bench.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runIn(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "payhook:", err)
		}
		os.Exit(2)
	}
}

// run runs a command with nothing on its standard input.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runIn(ctx, args, strings.NewReader(""), stdout, stderr)
}

// runIn runs the command args; stdin feeds the commands that read secrets
// (user create reads a password).
func runIn(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	args, logger, err := globalFlags(args, stderr)
	if err != nil {
		return err
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, logger: logger}
	err = dispatch(ctx, commands(), []string{"payhook"}, args, e)
	if h := (*helpError)(nil); errors.As(err, &h) {
		// Asked for: the usage goes to standard output, and it is no
		// failure.
		fmt.Fprint(stdout, h.usage)
		return nil
	}
	return err
}

// parse parses args into fs, then fills every flag not given on the command
// line from its PAYHOOK_* environment variable. An argument that is no flag
// is an error.
func parse(fs *flag.FlagSet, args []string) error {
	_, err := parseN(fs, args, 0)
	return err
}

// parseN is parse for a command that takes up to n arguments, before,
// between or after its flags (after "--", everything is an argument); it
// returns them.
func parseN(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if ub, ok := fs.Output().(*usageBuffer); ok {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpError{usage: ub.String()}
			}
			_, _ = ub.WriteTo(ub.stderr)
			ub.Reset()
		}
		if err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
		if len(pos) > n {
			break
		}
	}
	if len(pos) > n {
		return nil, fmt.Errorf("unexpected argument %q", pos[n])
	}
	var err error
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
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
	if err != nil {
		return nil, err
	}
	return pos, nil
}

// newFlagSet returns the flag set of command name (e.g. "payhook apikey
// list"). What it prints while parsing is held until parse knows whether
// it is help (standard output) or an error (stderr).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&usageBuffer{stderr: stderr})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of %s:\n", name)
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\nGlobal flags (before or after the command): --log-format text|json, --log-level debug|info|warn|error.")
	}
	return fs
}

func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", server.DefaultDB, `database: "sqlite:PATH" (embedded) or "postgres://user@host/db?sslmode=disable"`)
}

// serveFaults, when set, changes serve's configuration before the server
// runs: only the binary built with -tags faults sets it (faults_kill.go),
// for the process-level fault tests.
var serveFaults func(*server.Config)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	cfg, profile, err := serveFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	if serveFaults != nil {
		serveFaults(&cfg)
	}
	if profile != "" {
		stop, err := startCPUProfile(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	server.TuneGC(server.DefaultGCPercent)
	return server.Run(ctx, cfg, logger)
}

// startCPUProfile profiles the whole process into path (go tool pprof
// reads it) until stop, which serve calls once the server has shut down.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// serveConfig parses serve's flags (and their PAYHOOK_* variables) into a
// server configuration; the server fills in what is left unset.
func serveConfig(args []string, stdout, stderr io.Writer) (server.Config, error) {
	cfg, _, err := serveFlags(args, stdout, stderr)
	return cfg, err
}

// serveFlags is serveConfig and the flags that are the process's, not the
// server's: --cpuprofile's path.
func serveFlags(args []string, stdout, stderr io.Writer) (cfg server.Config, profile string, err error) {
	fs := newFlagSet("payhook serve", stderr)
	cfg = server.Config{Out: stdout, Build: build()}
	fs.StringVar(&cfg.Store.DB, "db", server.DefaultDB, `database: "sqlite:PATH" (embedded) or "postgres://user@host/db?sslmode=disable"`)
	fs.StringVar(&cfg.Store.Migrate, "migrate", server.MigrateAuto, "database migrations at start: auto applies the missing ones; off applies none and refuses to start while any is missing (run payhook migrate first)")
	fs.IntVar(&cfg.Store.MaxConns, "db-max-conns", server.DefaultDBMaxConns, "PostgreSQL connections this instance may open (plus one for LISTEN); requests wait for a free one")
	// Empty listen addresses take the server's defaults, which depend on --dev.
	fs.StringVar(&cfg.API.HTTPAddr, "http-addr", "", "REST gateway listen address (default "+server.DefaultHTTPAddr+", "+server.DefaultDevHTTPAddr+" with --dev)")
	fs.StringVar(&cfg.API.GRPCAddr, "grpc-addr", "", "gRPC listen address (default "+server.DefaultGRPCAddr+", "+server.DefaultDevGRPCAddr+" with --dev)")
	fs.StringVar(&cfg.API.OperatorAddr, "operator-listen", "", "address of the operator listener (e.g. 127.0.0.1:9091), serving /healthz with every chain's details and /metrics without a key; bind it to a private address (default: off; the public listener then serves them to an operator's API key only)")
	fs.StringVar(&cfg.API.PublicURL, "public-url", "", "base URL customers and dashboard users reach this server at, e.g. https://pay.example.com (payment_url starts with it; https makes dashboard cookies Secure behind a TLS proxy; default: the HTTP listen address)")
	var proxies listFlag
	fs.Var(&proxies, "trusted-proxy", "address or CIDR network of a reverse proxy in front of payhook whose X-Forwarded-For names the client (for the per-network limits: --anon-rate, the dashboard's sign-in); repeatable")
	var corsOrigins listFlag
	fs.Var(&corsOrigins, "cors-origin", "browser origin (scheme://host[:port], or * for any) whose pages may call the Connect and gRPC-Web API across origins; repeatable (default: none)")
	fs.BoolVar(&cfg.Dev, "dev", false, "developer mode: simulated chains, loopback listeners, and an API key printed when the database has none")
	fs.StringVar(&cfg.Keys.SeedFile, "seed-file", "", "master seed that payment addresses derive from, hex or encrypted (payhook seed init --encrypt; then see --seed-passphrase-file) (created with --dev on first start; back it up) (default "+seedFileDefaultText+")")
	seedPassFile := fs.String("seed-passphrase-file", "", seedPassphraseFileUsage)
	fs.StringVar(&cfg.Keys.SigningKeyFile, "signing-key-file", "", "PEM RSA private key for callback signatures (default: generated once and kept in the database)")
	fs.StringVar(&cfg.Keys.SecretsKeyFile, "secrets-key-file", "", "32-byte hex key (mode 0600) that seals the secrets kept in the database (default: derived from the seed)")
	fs.StringVar(&cfg.Keys.Signer.URL, "signer-url", "", "https://HOST:PORT of a remote signer (payhook signer) that holds the seed and signs every transaction; the server then reads no seed and needs --secrets-key-file")
	fs.StringVar(&cfg.Keys.Signer.Cert, "signer-cert", "", "with --signer-url: PEM client certificate this server presents to the signer")
	fs.StringVar(&cfg.Keys.Signer.Key, "signer-key", "", "with --signer-url: PEM private key of --signer-cert")
	fs.StringVar(&cfg.Keys.Signer.CA, "signer-ca", "", "with --signer-url: PEM CA certificate the signer's certificate must chain to")
	fs.IntVar(&cfg.Keys.SigningKeyBits, "signing-key-bits", server.DefaultSigningKeyBits, "size of a generated signing key")
	fs.StringVar(&cfg.Chains.RegistryFile, "registry-file", "", "JSON ticker registry replacing the embedded one")
	fs.DurationVar(&cfg.API.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests may take on shutdown")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the whole run to this file when the server stops (go tool pprof reads it; for diagnosing speed)")
	fs.Int64Var(&cfg.API.MaxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "largest REST request body accepted; a longer one is answered 413")
	// The delivery flags' defaults are the notifier's, the only ones.
	delivery := notifier.Delivery{}.WithDefaults()
	delays := delaysFlag(delivery.Delays)
	fs.Var(&delays, "retry-delays", "waits after failed delivery attempts; the last one repeats")
	fs.DurationVar(&cfg.Delivery.Window, "delivery-window", delivery.Window, "no delivery attempt starts later than this after a notification was stored")
	fs.DurationVar(&cfg.Delivery.AttemptTimeout, "attempt-timeout", delivery.AttemptTimeout, "limit of one delivery attempt: connect, TLS, request and response")
	var allow listFlag
	fs.Var(&allow, "allow-private-endpoint", "PROJECT=URL: an exact callback endpoint (scheme://host:port/path) that project PROJECT's (id) webhooks may send to although it resolves to a private or loopback address; a URL alone is the default project's; repeatable")
	fs.DurationVar(&cfg.Delivery.Lease, "delivery-lease", 0, "how long a claimed notification stays reserved for this instance before another may take it over (default: attempt timeout + 30s)")
	fs.IntVar(&cfg.Delivery.Workers, "delivery-workers", delivery.Workers, "concurrent delivery attempts")
	fs.IntVar(&cfg.Delivery.PerHost, "per-host-concurrency", delivery.PerHost, "concurrent delivery attempts to one destination host")
	fs.StringVar(&cfg.Chains.PriceFile, "price-file", "", "JSON table of USD prices and fiat rates replacing the embedded one")
	fs.DurationVar(&cfg.Chains.WatchInterval, "watch-interval", server.DefaultWatchInterval, "how often chain watchers poll their chains")
	fs.DurationVar(&cfg.Chains.DevnetBlockTime, "devnet-block-time", 0, "with --dev: mine a block on every simulated chain this often (0: only on request)")
	nodes := nodesFlag{}
	fs.Var(nodes, "node", "a chain node: TICKER=URL with credentials and options, e.g. ltc=http://user:pass@127.0.0.1:19443/?network=regtest; repeatable (also PAYHOOK_NODE_<TICKER>)")
	nodeFile := fs.String("node-file", "", "file of TICKER=URL lines (# comments), as --node takes them")
	fees := feesFlag{}
	fs.Var(fees, "fallback-fee", "UTXO fee rate when the node has no estimate: TICKER=RATE in coin per 1000 vbytes; repeatable")
	payoutFee := fs.String("payout-fee", "0", "the operator's payout fee, a percentage of each payout's total requested (0 to 100)")
	payoutInterval := intervalsFlag{}
	fs.Var(payoutInterval, "payout-interval", "send queued payouts of a ticker in batches, every DURATION: TICKER=DURATION (e.g. ltc=10m); repeatable; without it a payout is sent when queued")
	payoutMinBatch := minBatchFlag{}
	fs.Var(payoutMinBatch, "payout-min-batch", "with --payout-interval, the least total of a batch (TICKER=AMOUNT in the coin); a smaller batch waits for more payouts; repeatable")
	fs.DurationVar(&cfg.Chains.NodeTimeout, "node-timeout", server.DefaultNodeTimeout, "limit of one request to a chain node")
	fs.StringVar(&cfg.Chains.Prices, "prices", "", "where prices come from: table (embedded or --price-file) or live (providers over the table); default live with --node, table otherwise")
	var providers listFlag
	fs.Var(&providers, "price-provider", "live price provider: coinbase, coingecko, kraken, frankfurter, each optionally NAME=BASEURL; all are asked and each price is the median of those that answer; repeatable (default all four)")
	fs.DurationVar(&cfg.Chains.PriceTTL, "price-ttl", 0, "how often live prices are refreshed (default 5m)")
	fs.Func("retention-days", "how many days delivery records (notifications, attempts, the event log) are kept; never one still waiting or paused, never the ledger (default 90; 0 keeps everything)", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 36500 {
			return errors.New("want a whole number of days, 0 to 36500 (0 keeps everything)")
		}
		if n == 0 {
			cfg.Retention = -1
		} else {
			cfg.Retention = time.Duration(n) * 24 * time.Hour
		}
		return nil
	})
	fs.Func("audit-retention-days", "how many days audit log entries (who changed what, from the dashboard, the API or these commands) are kept (default 400: a yearly audit finds its whole year; 0 keeps everything)", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 36500 {
			return errors.New("want a whole number of days, 0 to 36500 (0 keeps everything)")
		}
		if n == 0 {
			cfg.AuditRetention = -1
		} else {
			cfg.AuditRetention = time.Duration(n) * 24 * time.Hour
		}
		return nil
	})
	fs.DurationVar(&cfg.EndpointPauseAfter, "endpoint-pause-after", 0, "how long every attempt to a webhook endpoint must have failed before it is paused (its deliveries wait; default 24h)")
	fs.DurationVar(&cfg.Chains.PriceMaxAge, "price-max-age", 0, "how old a price may be before it is not used: requests needing it answer 503, /healthz says degraded, payloads omit it (default 1h; negative: no limit)")
	fs.Float64Var(&cfg.Limits.KeyRate, "key-rate", ratelimit.DefaultKeyRate, "requests per second each API key may make (refused 429 with Retry-After beyond it); a project's own limit (payhook project update --rate-limit) replaces it; 0: no limit")
	fs.IntVar(&cfg.Limits.KeyBurst, "key-burst", ratelimit.DefaultKeyBurst, "requests an API key may make at once before --key-rate applies")
	fs.Float64Var(&cfg.Limits.AnonRate, "anon-rate", ratelimit.DefaultAnonRate, "requests per second one client network (IPv4 /24, IPv6 /64) may make without an API key: hosted pages, their status polling, the methods that need no key; 0: no limit")
	fs.IntVar(&cfg.Limits.AnonBurst, "anon-burst", ratelimit.DefaultAnonBurst, "requests a client network may make at once before --anon-rate applies")
	fs.IntVar(&cfg.Limits.InvoiceAddresses, "page-addresses-per-invoice", ratelimit.DefaultInvoiceAddresses, "most addresses the hosted checkout and deposit pages hand out for one invoice (one per coin a payer chooses); 0: no cap")
	fs.IntVar(&cfg.Limits.SubscriptionAddresses, "page-addresses-per-subscription", ratelimit.DefaultSubscriptionAddresses, "most open addresses (of renewals neither paid nor expired) a subscription's hosted page hands out; 0: no cap")
	fs.IntVar(&cfg.Limits.TestEvents, "test-events-per-day", ratelimit.DefaultTestEvents, "test webhooks (POST /notification/test/) each project may send a day; 0: no limit")
	fs.StringVar(&cfg.Email.URL, "smtp-url", "", "SMTP server payhook emails through: smtp://[USER[:PASSWORD]@]HOST[:PORT]?from=ADDRESS (STARTTLS required, port 587; tls=none for a relay on this host) or smtps://... (implicit TLS, port 465); the password may be given in PAYHOOK_SMTP_PASSWORD instead (default: off, no email is sent)")
	var operatorEmails listFlag
	fs.Var(&operatorEmails, "operator-email", "the operator's address, emailed when prices go stale (needs --smtp-url); repeatable or comma-separated")
	if err := parse(fs, args); err != nil {
		return server.Config{}, "", err
	}
	if *nodeFile != "" {
		if err := readNodeFile(*nodeFile, nodes); err != nil {
			return server.Config{}, "", err
		}
	}
	envNodes(os.Environ(), nodes)
	if cfg.Keys.Remote() {
		// The seed stays on the signer's machine: none is read here.
		if cfg.Keys.SeedFile != "" || strings.TrimSpace(os.Getenv("PAYHOOK_SEED")) != "" {
			return server.Config{}, "", errors.New("--signer-url: with a remote signer the server holds no seed: drop --seed-file (PAYHOOK_SEED_FILE) and PAYHOOK_SEED; the seed belongs to payhook signer")
		}
		_ = os.Unsetenv(admin.SeedPassphraseEnv)
		return finishServeConfig(cfg, profile, nodes, fees, *payoutFee, payoutInterval, payoutMinBatch, providers, delays, allow, proxies, corsOrigins, operatorEmails)
	}
	if v := strings.TrimSpace(os.Getenv("PAYHOOK_SEED")); v != "" {
		// The seed itself, hex, instead of --seed-file (secret stores that
		// inject environment variables); never printed.
		if cfg.Keys.SeedFile != "" {
			return server.Config{}, "", errors.New("PAYHOOK_SEED and --seed-file (or PAYHOOK_SEED_FILE) are both set: give the seed one way")
		}
		seed, err := hex.DecodeString(v)
		if err != nil || len(seed) < 16 || len(seed) > 64 {
			return server.Config{}, "", errors.New("PAYHOOK_SEED: want 32 to 128 hex digits (a 16- to 64-byte seed)")
		}
		cfg.Keys.Seed = seed
		// The seed is open: its passphrase is needed no more.
		admin.ForgetSeedPassphrase()
	}
	if cfg.Keys.SeedFile == "" && cfg.Keys.Seed == nil {
		cfg.Keys.SeedFile = defaultSeedFile(stderr)
	}
	if cfg.Keys.Seed == nil {
		// An encrypted seed file opens here, before anything starts.
		seed, err := openSealedSeed(cfg.Keys.SeedFile, *seedPassFile)
		if err != nil {
			return server.Config{}, "", err
		}
		cfg.Keys.Seed = seed
	}
	// Whatever the seed, its passphrase leaves the environment: no process
	// payhook starts inherits it.
	_ = os.Unsetenv(admin.SeedPassphraseEnv)
	return finishServeConfig(cfg, profile, nodes, fees, *payoutFee, payoutInterval, payoutMinBatch, providers, delays, allow, proxies, corsOrigins, operatorEmails)
}

// finishServeConfig sets what serveFlags parsed into cfg, after the seed.
func finishServeConfig(cfg server.Config, profile string, nodes nodesFlag, fees feesFlag, payoutFee string, payoutInterval intervalsFlag,
	payoutMinBatch minBatchFlag, providers listFlag, delays delaysFlag, allow, proxies, corsOrigins, operatorEmails listFlag) (server.Config, string, error) {
	if len(nodes) > 0 {
		cfg.Chains.Nodes = nodes
	}
	if len(fees) > 0 {
		cfg.Chains.FallbackFees = fees
	}
	pf, err := decimal.NewFromString(payoutFee)
	if err != nil {
		return server.Config{}, "", fmt.Errorf("--payout-fee %q: want a percentage such as 0.5", payoutFee)
	}
	cfg.Chains.PayoutFeePercent = pf
	cfg.Chains.PayoutInterval = payoutInterval
	cfg.Chains.PayoutMinBatch = payoutMinBatch
	cfg.Chains.PriceProviders = providers
	cfg.Delivery.Delays = delays
	cfg.Delivery.AllowPrivateEndpoints = allow
	cfg.API.TrustedProxies = proxies
	cfg.API.CORSOrigins = corsOrigins
	cfg.Email.Operators = operatorEmails
	// The SMTP password, from a secret store that injects environment
	// variables rather than in --smtp-url; never printed.
	cfg.Email.Password = os.Getenv("PAYHOOK_SMTP_PASSWORD")
	// On the command line 0 turns a limit off; in server.Config 0 is the
	// default.
	cfg.Limits.KeyRate = ratelimit.FromFlag(cfg.Limits.KeyRate)
	cfg.Limits.AnonRate = ratelimit.FromFlag(cfg.Limits.AnonRate)
	cfg.Limits.InvoiceAddresses = ratelimit.FromFlag(cfg.Limits.InvoiceAddresses)
	cfg.Limits.SubscriptionAddresses = ratelimit.FromFlag(cfg.Limits.SubscriptionAddresses)
	cfg.Limits.TestEvents = ratelimit.FromFlag(cfg.Limits.TestEvents)
	return cfg, profile, nil
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook migrate", stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it): its decimals convert the amounts the ledger journals")
	if err := parse(fs, args); err != nil {
		return err
	}
	applied, err := admin.Migrate(ctx, *dsn, *registryFile)
	if err != nil {
		return err
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
	operator := fs.Bool("operator", false, "an operator's key: it alone may call the operator API (GET /operator/funds)")
	var scopes listFlag
	fs.Var(&scopes, "scope", "what the key may do: read, create, payouts, management (repeatable or comma-separated; default: all four)")
	project := fs.Int64("project", 0, "the project the key belongs to (payhook project list; default: the default project)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return errors.New("--name: required")
	}
	if err := scopesGiven(fs, scopes); err != nil {
		return err
	}
	if _, err := admin.ParseScopes(scopes); err != nil {
		return fmt.Errorf("--scope: %w", err)
	}
	if *project < 0 {
		return errors.New("--project: want a project id (payhook project list)")
	}
	key, granted, err := admin.CreateScopedAPIKey(ctx, *dsn, *project, *name, *operator, scopes, clock.Now())
	if err != nil {
		return err
	}
	kind := "API key"
	if *operator {
		kind = "operator key"
	}
	fmt.Fprintf(stdout, "%s\n", key)
	fmt.Fprintf(stderr, "%s %q created with scopes %s; it is shown only this once.\n", kind, *name, strings.Join(granted, ", "))
	return nil
}

// funds lists the funds payhook holds (the journal's held balance: no
// forwarding address, below the minimum or dust, held for the operator),
// per ticker and reason, then per address with what sweeping them needs.
func funds(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook funds", stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it)")
	asJSON := fs.Bool("json", false, "print the operator API's JSON (GET /operator/funds)")
	if err := parse(fs, args); err != nil {
		return err
	}
	resp, err := admin.HeldFunds(ctx, *dsn, *registryFile)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true, Multiline: true}.Marshal(resp)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	if len(resp.GetTickers()) == 0 {
		fmt.Fprintln(stdout, "payhook holds no funds: every payment was forwarded")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, t := range resp.GetTickers() {
		var why []string
		for _, r := range t.GetByReason() {
			why = append(why, fmt.Sprintf("%s %s", r.GetReason(), r.GetTotal()))
		}
		fmt.Fprintf(tw, "%s\t%s %s held in %d payments (%s)\n", t.GetTicker(), t.GetTotal(), t.GetCoin(), t.GetPayments(), strings.Join(why, ", "))
		for _, a := range resp.GetAddresses() {
			if a.GetTicker() != t.GetTicker() {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d payments\t%s\tproject %d\tkey %s (index %d)\n", a.GetAddressIn(), a.GetBalance(), a.GetPayments(),
				strings.Join(a.GetReasons(), ","), a.GetProjectId(), a.GetDerivationPath(), a.GetDerivationIndex())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "The keys derive from the server's seed file (--seed-file); sweep with a wallet that imports it.")
	return nil
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

// scopesGiven checks --scope of fs: given, it must name at least one scope
// (an empty value would silently mean every scope).
func scopesGiven(fs *flag.FlagSet, scopes listFlag) error {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "scope" })
	if set && len(scopes) == 0 {
		return errors.New("--scope: name at least one of read, create, payouts, management (leave the flag out for all four)")
	}
	return nil
}

func (l *listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// payouts lists the payout requests merchants made that are not handled
// yet, oldest first: payhook records them and sends nothing by itself.
func payouts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook payouts", stderr)
	dsn := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print the operator API's JSON (GET /operator/payouts)")
	if err := parse(fs, args); err != nil {
		return err
	}
	resp, err := admin.PayoutRequests(ctx, *dsn)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true, Multiline: true}.Marshal(resp)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	if len(resp.GetRequests()) == 0 {
		fmt.Fprintln(stdout, "no payout requests")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, p := range resp.GetRequests() {
		fmt.Fprintf(tw, "%s\t%s\t%s %s\tto %s\tkey %d\t%s\n", p.GetRequestedAt().AsTime().Format(time.RFC3339), p.GetUuid(),
			p.GetValue(), p.GetTicker(), p.GetAddress(), p.GetApiKeyId(), p.GetStatus())
	}
	return tw.Flush()
}
