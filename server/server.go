// Package server is payhook's composition root: it opens and migrates the
// database, loads the signing key and address seed, and serves the gRPC API
// on one listener and its REST gateway on another. REST requests reach the
// gRPC server through a client connection, so auth, validation, recovery and
// request logs run once, the same way, for both.
//
// Shutdown order: health reports NOT_SERVING, the HTTP and gRPC servers
// drain with a deadline, then background workers stop and the database is
// closed.
package server

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/sealed"
	"github.com/payhook/payhook/internal/startstop"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/browserrpc"
	"github.com/payhook/payhook/server/gateway"
	"github.com/payhook/payhook/server/idempotency"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/ledger/export"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/notification"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/refund"
	"github.com/payhook/payhook/server/merchant/subscription"
	"github.com/payhook/payhook/server/metrics"
	"github.com/payhook/payhook/server/openapi"
	"github.com/payhook/payhook/server/outbound"
	"github.com/payhook/payhook/server/payment"
	"github.com/payhook/payhook/server/ratelimit"
	"github.com/payhook/payhook/server/retention"
	"github.com/payhook/payhook/server/route"
	"github.com/payhook/payhook/server/rpc"
	"github.com/payhook/payhook/server/web"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/pay"
)

// Server is a running payhook instance.
type Server struct {
	cfg    Config
	logger *slog.Logger

	db       *store.DB
	grpc     *grpc.Server
	health   *health.Server
	http     *http.Server
	grpcLis  net.Listener
	httpLis  net.Listener
	opLis    net.Listener // the operator listener (--operator-listen); nil when off
	opHTTP   *http.Server // the operator listener's server; nil when off
	selfConn *grpc.ClientConn
	notifier *notifier.Notifier
	// callbacks are the keys that sign low-level callbacks.
	callbacks *project.CallbackKeys
	// endpoints are the projects' webhook endpoints; endpointMonitor
	// pauses the failing ones.
	endpoints       *endpoint.Service
	endpointMonitor *endpoint.Monitor
	// retention deletes old delivery records.
	retention *retention.Job
	devnet    *devnet.Devnet
	payouts   *payout.Service
	// psbtNodes are the nodes that prepare payouts from merchants' watch-only keys.
	psbtNodes map[string]payout.PSBTNode
	payments  *payment.Service
	outbound  *outbound.Engine
	watchers  map[string]*payment.Watcher
	nodes     []node
	// livePrices is the live price feed (--prices live); nil with the table.
	livePrices *price.Live
	// idempotency deletes expired Idempotency-Keys.
	idempotency *idempotency.Collector
	// mail stores emails and mailSender sends them; both nil without
	// --smtp-url (email off).
	mail       *mail.Outbox
	mailSender *mail.Sender
	// priceAlert is the episode of stale prices the operator was emailed
	// about.
	priceAlert priceAlert
	// pricedTickers are the tickers offered, whose prices /healthz watches.
	pricedTickers []string

	// The base runs the listeners' goroutines and the database probe; its
	// StopOnce runs the shutdown order once.
	startstop.Base
	stopErr error
	// remote is the connection to the remote signer (--signer-url), nil
	// when the process holds the seed.
	remote io.Closer
}

// New prepares a server: it validates cfg, opens and migrates the database,
// loads keys, builds the notifier, the chains and payments, and the API, and
// binds both listeners. Nothing is served until Start.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (_ *Server, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.closeAll())
		}
	}()
	if err := s.buildStore(ctx); err != nil {
		return nil, err
	}
	k, err := s.loadKeys(ctx)
	if err != nil {
		return nil, err
	}
	// The metrics observe the notifier's attempts and, once it exists, read
	// its queue at scrape time.
	met := metrics.New(nil, nil)
	met.ObserveBuild(cfg.Build)
	if err := s.buildMail(met); err != nil {
		return nil, err
	}
	defaultOwner, err := s.privateEndpointOwner(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.buildNotifier(signer.NewRSARing(k.callbacks), defaultOwner, met); err != nil {
		return nil, err
	}
	if cfg.Dev {
		if err := s.ensureDevKey(ctx); err != nil {
			return nil, err
		}
	}
	registry, prices, err := s.buildChains(k, met)
	if err != nil {
		return nil, err
	}
	if err := s.loadPrices(ctx); err != nil {
		return nil, err
	}
	if err := s.buildAPI(ctx, registry, prices, k, met); err != nil {
		return nil, err
	}
	return s, nil
}

// buildStore opens the database and migrates it (Store.Migrate auto) or
// checks that it needs no migration (off).
func (s *Server) buildStore(ctx context.Context) error {
	var err error
	s.db, err = admin.Open(ctx, s.cfg.Store.DB, store.Pool{MaxConns: s.cfg.Store.MaxConns})
	if err != nil {
		return err
	}
	if s.cfg.Store.Migrate == MigrateOff {
		pending, err := store.Pending(ctx, s.db)
		if err != nil {
			return fmt.Errorf("check database migrations: %w", err)
		}
		if len(pending) > 0 {
			return fmt.Errorf("%w: %d pending (%s) and --migrate=off: run `payhook migrate` with the same --db first, or start with --migrate=auto",
				ErrMigrationsBehind, len(pending), strings.Join(pending, ", "))
		}
	} else {
		registry, err := admin.LoadRegistry(s.cfg.Chains.RegistryFile)
		if err != nil {
			return err
		}
		applied, err := store.Migrate(ctx, s.db, admin.WithDecimals(registry))
		if err != nil {
			return fmt.Errorf("migrate database: %w", err)
		}
		if len(applied) > 0 {
			s.logger.Info("applied migrations", "versions", applied)
		}
	}
	return nil
}

// buildMail builds the email outbox and sender (--smtp-url), counted by
// met, or says once that email is off.
func (s *Server) buildMail(met *metrics.Metrics) error {
	var err error
	s.mail, s.mailSender, err = mail.New(s.db, s.cfg.Email, met, s.logger)
	if err != nil {
		return err
	}
	if s.mailSender == nil {
		s.logger.Info("email off (no --smtp-url): no payout approval, price alert or payer receipt is emailed, and none is stored to send later")
		return nil
	}
	met.ObserveEmail()
	s.logger.Info("email on", "smtp", s.mailSender.Server(), "operator_emails", len(s.cfg.Email.Operators))
	return nil
}

// sealSecrets gives the database the key that seals its secrets (the
// --secrets-key-file, else one derived from the seed), seals what an
// earlier version stored in clear, and gives every project its secret.
func (s *Server) sealSecrets(ctx context.Context, seed []byte) error {
	box, err := s.cfg.Keys.SecretsKey(seed)
	if err != nil {
		return err
	}
	s.db.SetSecretsKey(box)
	if err := s.db.SealSecrets(ctx); err != nil {
		if errors.Is(err, sealed.ErrOpen) {
			return fmt.Errorf("%w: the database's secrets were sealed with another key (another seed, or --secrets-key-file given or dropped since)", err)
		}
		return err
	}
	if err := project.EnsureSecrets(ctx, s.db.Client); err != nil {
		return fmt.Errorf("projects: %w", err)
	}
	return nil
}

// keys are what the key material becomes: addresses derive from the seed,
// callbacks are signed with the signing key, whose public half merchants
// fetch.
type keys struct {
	deriver *chains.Deriver
	signer  chains.Signer // signs forwards, payouts, sweeps and refunds
	// callbacks are the keys that sign low-level callbacks: the server's,
	// and each project's own.
	callbacks *project.CallbackKeys
}

// loadKeys loads (or creates) the address seed, or reaches the remote
// signer that holds it, and the signing key.
func (s *Server) loadKeys(ctx context.Context) (keys, error) {
	var (
		k   keys
		err error
	)
	if s.cfg.Keys.Remote() {
		k, err = s.remoteKeys(ctx)
	} else {
		k, err = s.seedKeys(ctx)
	}
	if err != nil {
		return keys{}, err
	}
	cfg := s.cfg.Keys
	var key *rsa.PrivateKey
	if cfg.SigningKeyFile != "" {
		key, err = signer.LoadRSAKeyFile(cfg.SigningKeyFile)
	} else {
		key, err = signer.EnsureRSAKey(ctx, s.db.Client, cfg.SigningKeyBits, s.cfg.Now())
	}
	if err != nil {
		return keys{}, fmt.Errorf("--signing-key-file: %w", err)
	}
	callbacks := &project.CallbackKeys{
		DB: s.db.Client, Server: key, Bits: cfg.SigningKeyBits, TTL: secretTTL, Now: s.cfg.Now,
	}
	s.callbacks = callbacks
	k.callbacks = callbacks
	return k, nil
}

// seedKeys loads (or creates) the address seed: addresses derive from it
// and the process signs with it (keysign.Local).
func (s *Server) seedKeys(ctx context.Context) (keys, error) {
	cfg := s.cfg.Keys
	seed := cfg.Seed
	if seed == nil {
		var (
			created bool
			err     error
		)
		if len(s.cfg.Chains.Nodes) > 0 {
			// Real funds (a node is real even with --dev): never invent a
			// seed silently.
			if seed, err = loadSeed(cfg.SeedFile); err != nil {
				return keys{}, err
			}
		} else if seed, created, err = loadOrCreateSeed(cfg.SeedFile); err != nil {
			return keys{}, err
		}
		if created {
			s.logger.Warn("generated a new address seed: back this file up, it is the only way to recover funds sent to payment addresses", "seed_file", cfg.SeedFile)
		}
	}
	if err := s.sealSecrets(ctx, seed); err != nil {
		return keys{}, err
	}
	deriver, err := chains.NewDeriver(seed, family.All())
	if err != nil {
		return keys{}, fmt.Errorf("address seed: %w", err)
	}
	wallet, err := chains.NewKeys(seed)
	if err != nil {
		return keys{}, fmt.Errorf("address seed: %w", err)
	}
	return keys{deriver: deriver, signer: keysign.New(wallet)}, nil
}

// secretTTL is how long the webhook signer keeps a project's secrets before
// it reads them again: one read a second per busy project instead of one
// per attempt; a rotation signs the attempts that start after it.
const secretTTL = time.Second

// privateEndpointOwner checks that the project each --allow-private-endpoint
// PROJECT=URL names exists, and returns the default project's id when an
// entry names none (URL alone is the default project's exception; that
// project is created then, as it is for a key created without a project);
// 0 when every entry names its project.
func (s *Server) privateEndpointOwner(ctx context.Context) (int64, error) {
	var defaultOwner int64
	for _, raw := range s.cfg.Delivery.AllowPrivateEndpoints {
		a, err := egress.ParseAllowance(raw, 0)
		if err != nil {
			return 0, fmt.Errorf("--allow-private-endpoint %q: %w", raw, err)
		}
		if a.Owner != 0 {
			if _, err := project.Get(ctx, s.db.Client, a.Owner); errors.Is(err, project.ErrNotFound) {
				return 0, fmt.Errorf("--allow-private-endpoint %q: there is no project %d (payhook project list shows their ids)", raw, a.Owner)
			} else if err != nil {
				return 0, fmt.Errorf("--allow-private-endpoint %q: %w", raw, err)
			}
			continue
		}
		if defaultOwner == 0 {
			p, err := project.Default(ctx, s.db.Client, s.cfg.Now())
			if err != nil {
				return 0, fmt.Errorf("--allow-private-endpoint %q: %w", raw, err)
			}
			defaultOwner = p.ID
		}
	}
	return defaultOwner, nil
}

// buildNotifier builds the notifier, signing with sg and observed by
// met; --allow-private-endpoint entries without a project are
// defaultOwner's.
func (s *Server) buildNotifier(sg signer.StoredSigner, defaultOwner int64, met *metrics.Metrics) error {
	// Merchant webhooks are signed at every attempt with the project's
	// secrets as they are then; low-level (custom payment) callbacks carry
	// both the RSA signature and the project's.
	webhooks := signer.NewWebhookSigner(project.NewRing(s.db.Client, secretTTL, s.cfg.Now))
	var err error
	s.notifier, err = notifier.New(s.db, notifier.Config{
		Delivery:     s.cfg.Delivery,
		DefaultOwner: defaultOwner,
		Now:          s.cfg.Now,
		Signers: []signer.Signer{sg, webhooks, signer.NewBoth(signer.SchemeRSAWebhook, sg, webhooks),
			signer.NewStandardWebhookSigner(endpoint.NewRing(s.db.Client, secretTTL, s.cfg.Now))},
		Observer: met,
		// Endpoints' max_per_second, in buckets every instance shares.
		Throttle: endpointThrottle{ratelimit.NewBuckets(s.db, s.cfg.Now, s.logger)},
	}, s.logger)
	if err != nil {
		return err
	}
	s.endpoints = endpoint.New(endpoint.Config{
		DB: s.db.Client, Dialect: s.db.Dialect, Rules: s.notifier.Dispatcher.Rules(), Now: s.cfg.Now, Queue: s.notifier.Queue,
		Wake: s.notifier.Dispatcher.Wake, RateChanged: s.notifier.Dispatcher.ForgetRate, KnownTypes: eventtype.Names(),
		Paused: met.EndpointPaused,
	})
	met.ObserveEndpoints(s.endpoints.PausedFailing)
	for _, a := range s.notifier.Dispatcher.Rules().Allowances() {
		s.logger.Info("private endpoint allowed", "project", a.Owner, "endpoint", a.Endpoint.String())
	}
	met.ObserveQueue(s.notifier.Queue.Stats, s.notifier.Events.Watchers)
	return nil
}

// buildChains loads the ticker registry and the price table, and builds the
// chain backends (the devnet in developer mode), the payment service and one
// watcher per ticker with a backend. It returns the registry and the price
// table.
func (s *Server) buildChains(k keys, met *metrics.Metrics) (*chains.Registry, price.Source, error) {
	cfg := s.cfg.Chains
	registry, err := admin.LoadRegistry(cfg.RegistryFile)
	if err != nil {
		return nil, nil, err
	}
	if registry, err = withNodeNetworks(registry, cfg.Nodes); err != nil {
		return nil, nil, err
	}
	table := price.Default()
	if cfg.PriceFile != "" {
		if table, err = admin.LoadFile("--price-file", cfg.PriceFile, price.Load); err != nil {
			return nil, nil, err
		}
	}
	var prices price.Source = table
	if cfg.pricesMode() == PricesLive {
		live, err := buildLivePrices(cfg, table, priceStore{s.db.Client}, s.cfg.Now, s.logger)
		if err != nil {
			return nil, nil, err
		}
		s.livePrices, prices = live, live
	}
	// Chain backends: the configured nodes, and the devnet in developer
	// mode for every ticker without a node.
	backends := map[string]chains.Backend{}
	nodes, err := buildNodes(registry, cfg, k.signer, func(ticker string) *http.Client {
		return &http.Client{Timeout: cfg.NodeTimeout, Transport: timedTransport{base: http.DefaultTransport,
			observe: func(d time.Duration, ok bool) { met.NodeRequest(ticker, d, ok) }}}
	})
	if err != nil {
		return nil, nil, err
	}
	s.nodes = nodes
	nearHead := map[string]bool{}
	s.psbtNodes = map[string]payout.PSBTNode{}
	for _, n := range nodes {
		backends[n.ticker] = n.backend
		nearHead[n.ticker] = true
		if pn, ok := n.backend.(payout.PSBTNode); ok {
			s.psbtNodes[n.ticker] = pn
		}
	}
	if s.cfg.Dev {
		s.devnet = devnet.New(registry, devnet.Options{Clock: s.cfg.Now})
		for _, t := range registry.All() {
			if _, ok := backends[t.Ticker]; ok {
				continue
			}
			if c, ok := s.devnet.Chain(t.Ticker); ok {
				backends[t.Ticker] = c
			}
		}
	}
	if !cfg.OfferWithoutNodes {
		// A ticker nothing watches is not offered: absent from /info/,
		// and creating an address of it is answered 404.
		registry = registry.Only(func(t chains.Ticker) bool { _, ok := backends[t.Ticker]; return ok })
	}
	if s.livePrices != nil {
		for _, t := range registry.All() {
			s.pricedTickers = append(s.pricedTickers, t.Ticker)
		}
		met.ObservePrices(s.priceStats)
	}
	// One engine sends every outgoing transaction; forwarding is its first
	// caller.
	signing := backends
	if wrap := s.cfg.OutboundBackend; wrap != nil {
		signing = make(map[string]chains.Backend, len(backends))
		for ticker, b := range backends {
			signing[ticker] = wrap(ticker, b)
		}
	}
	s.outbound = outbound.New(s.db, outbound.Config{Backends: signing, Now: s.cfg.Now, Faults: s.cfg.OutboundFaults}, s.logger)
	s.payments = payment.New(s.db, payment.Config{
		Registry:      registry,
		Backends:      backends,
		Outbound:      s.outbound,
		Reactors:      reactors(s.merchantEvents(), prices, s.cfg.Now, s.db.Dialect, s.mail),
		Now:           s.cfg.Now,
		StartNearHead: nearHead,
	}, s.logger)
	s.watchers = map[string]*payment.Watcher{}
	for _, t := range registry.All() {
		if _, ok := backends[t.Ticker]; !ok {
			continue
		}
		w, err := s.payments.NewWatcher(t, cfg.WatchInterval)
		if err != nil {
			return nil, nil, err
		}
		s.watchers[t.Ticker] = w
	}
	return registry, prices, nil
}

// merchantEvents is the Enqueuer of every merchant event's builder: the
// queue, with each event also published to the project's endpoints.
func (s *Server) merchantEvents() endpoint.Fanout {
	return endpoint.Fanout{Queue: s.notifier.Queue, Endpoints: s.endpoints}
}

// reactors routes each address service's payment changes to its reactor:
// low-level (custom) payments to the callback reactor, every invoice's
// (checkouts, deposits, subscription renewals) to the invoice reactor with
// the renewals' hooks; a paid checkout's receipt goes to receipts (nil:
// email off).
func reactors(q address.Enqueuer, prices price.Source, now func() time.Time, dialect store.Dialect, receipts *mail.Outbox) payment.Reactors {
	postgres := dialect == store.Postgres
	callbacks := address.NewCallbackReactor(q, prices)
	invoices := invoice.NewReactor(q, prices, signer.SchemeWebhook, now, postgres, map[invoice.Kind]invoice.Hooks{
		invoice.Subscription: subscription.NewHooks(prices, signer.SchemeWebhook),
	}, receipts)
	return payment.Reactors{
		address.ServiceLabel:         callbacks,
		string(invoice.Checkout):     invoices,
		string(invoice.Deposit):      invoices,
		string(invoice.Subscription): invoices,
		// A payout wallet's payments are the project's payout balance:
		// credited and held, notifying no one.
		address.PayoutWalletService: payout.WalletReactor{Dialect: dialect, Now: now},
		// A payment of another asset than its address takes (without
		// multi_token): one wrong_asset webhook, whatever the address.
		payment.WrongAssetService: address.NewWrongAssetReactor(q),
	}
}

// buildAPI builds the gRPC server with its interceptors and services, binds
// both listeners, and builds the REST gateway (reaching gRPC through a
// client connection), /healthz and /metrics.
func (s *Server) buildAPI(ctx context.Context, registry *chains.Registry, prices price.Source, k keys, met *metrics.Metrics) error {
	cfg := s.cfg.API
	addresses := address.New(s.db.Client, s.db.Dialect == store.Postgres, registry, k.deriver, s.notifier.Dispatcher.Rules(), s.cfg.Now)
	addresses.Ready = s.chainReady
	keyResolver := apikey.Resolver{DB: s.db.Client, Now: s.cfg.Now, Logger: s.logger}
	limiter, err := s.buildLimiter()
	if err != nil {
		return err
	}
	// Calls made with an Idempotency-Key are kept a day; every instance
	// deletes the expired ones.
	idem := idempotency.New(s.db.Client, idempotency.Config{Now: s.cfg.Now})
	s.idempotency = idempotency.NewCollector(idem, 0, s.logger)
	unary, stream, err := interceptor.Chain(interceptor.Config{
		Keys:     keyResolver,
		Tickers:  addresses,
		Classify: store.Classify,
		// The request limits, right after authentication.
		LimitUnary: limiter.Unary, LimitStream: limiter.Stream,
		Idempotency: idem,
		// Every successful call of the management and payouts scopes.
		Audit: audit.Calls{DB: s.db.Client, Now: s.cfg.Now}, ClientAddr: limiter.CallerAddr,
	}, s.logger)
	if err != nil {
		return err
	}
	s.grpc = grpc.NewServer(
		// The request metrics come first, so they time and count every
		// call, refused ones included.
		grpc.ChainUnaryInterceptor(append([]grpc.UnaryServerInterceptor{met.UnaryServerInterceptor()}, unary...)...),
		grpc.ChainStreamInterceptor(append([]grpc.StreamServerInterceptor{met.StreamServerInterceptor()}, stream...)...),
		// Deliberately bounded: the body limit plus the header limit covers
		// every REST request; a direct gRPC client gets the same room.
		grpc.MaxRecvMsgSize(int(cfg.MaxBodyBytes)+maxHeaderBytes),
	)
	payhookv1.RegisterAddressServiceServer(s.grpc, rpc.NewAddressServer(addresses, prices, k.callbacks, keyResolver))
	payhookv1.RegisterDeliveryServiceServer(s.grpc, rpc.NewDeliveryServer(s.notifier.Events, s.notifier.Queue, s.cfg.Now))
	payhookv1.RegisterOperatorServiceServer(s.grpc, rpc.NewOperatorServer(addresses))
	s.payouts = payout.New(s.db, addresses, s.outbound, payout.Config{
		FeePercent: s.cfg.Chains.PayoutFeePercent, Interval: s.cfg.Chains.PayoutInterval, MinBatch: s.cfg.Chains.PayoutMinBatch,
		Queue: s.merchantEvents(), Mail: s.mail, Now: s.cfg.Now, PSBTNodes: s.psbtNodes,
	}, s.logger)
	// Queued payouts are planned after each poll of their ticker's chain,
	// by the instance that watches it.
	s.payments.AfterPoll(s.payouts.Tick)
	payhookv1.RegisterPayoutServiceServer(s.grpc, rpc.NewPayoutServer(s.payouts))
	payhookv1.RegisterProjectServiceServer(s.grpc, rpc.NewProjectServer(admin.Projects(s.db.Client, registry, s.notifier.Dispatcher.Rules(), s.cfg.Now)))
	events, err := rpc.NewEventServer(s.endpoints)
	if err != nil {
		return err
	}
	payhookv1.RegisterEventServiceServer(s.grpc, events)
	exporter, err := s.exporter(prices)
	if err != nil {
		return err
	}
	payhookv1.RegisterExportServiceServer(s.grpc, rpc.NewExportServer(exporter))
	if s.devnet != nil {
		payhookv1.RegisterDevnetServiceServer(s.grpc, rpc.NewDevnetServer(s.devnet, s.pollChain))
	}
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)

	if s.grpcLis, err = net.Listen("tcp", cfg.GRPCAddr); err != nil {
		return fmt.Errorf("--grpc-addr: %w", err)
	}
	if s.httpLis, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return fmt.Errorf("--http-addr: %w", err)
	}
	if cfg.OperatorAddr != "" {
		if s.opLis, err = net.Listen("tcp", cfg.OperatorAddr); err != nil {
			return fmt.Errorf("--operator-listen: %w", err)
		}
	}
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = "http://" + dialable(s.httpLis.Addr())
	}
	invoices := invoice.New(invoice.Config{
		DB: s.db.Client, Addresses: addresses, Prices: prices, Rules: s.notifier.Dispatcher.Rules(),
		Now: s.cfg.Now, BaseURL: publicURL,
		HostedAddresses: ratelimit.Cap(s.cfg.Limits.InvoiceAddresses),
	})
	payhookv1.RegisterCheckoutServiceServer(s.grpc, rpc.NewCheckoutServer(invoices))
	payhookv1.RegisterDepositServiceServer(s.grpc, rpc.NewDepositServer(invoices))
	refunds := refund.New(s.db, invoices, s.payouts, s.merchantEvents(), s.cfg.Now)
	payhookv1.RegisterRefundServiceServer(s.grpc, rpc.NewRefundServer(refunds, s.payments))
	notifications := notification.New(s.db.Client, s.notifier.Queue, s.notifier.Dispatcher.Rules(), s.cfg.Now, limiter)
	payhookv1.RegisterNotificationServiceServer(s.grpc, rpc.NewNotificationServer(notifications))
	s.endpoints.SetQuota(limiter)
	payhookv1.RegisterEndpointServiceServer(s.grpc, rpc.NewEndpointServer(s.endpoints))
	s.endpointMonitor = endpoint.NewMonitor(s.endpoints, s.cfg.EndpointPauseAfter, 0, func(ctx context.Context, tx *entdb.Tx, e *entdb.Endpoint) error {
		since := s.cfg.Now()
		if e.FailingSince != nil {
			since = *e.FailingSince
		}
		return s.mail.EndpointPaused(ctx, tx, e.ProjectID, e.URL, since)
	}, s.logger)
	s.retention = retention.New(retention.Config{DB: s.db.Client, Age: s.cfg.Retention, AuditAge: s.cfg.AuditRetention, Now: s.cfg.Now, Logger: s.logger})
	subs := subscription.New(subscription.Config{
		DB: s.db.Client, Invoices: invoices, Addresses: addresses, Prices: prices,
		Rules: s.notifier.Dispatcher.Rules(), Now: s.cfg.Now, BaseURL: publicURL,
		HostedAddresses: ratelimit.Cap(s.cfg.Limits.SubscriptionAddresses),
	})
	payhookv1.RegisterSubscriptionServiceServer(s.grpc, rpc.NewSubscriptionServer(subs))
	proxies, err := cfg.trustedProxies()
	if err != nil {
		return err
	}
	pages, err := pay.New(pay.Config{
		DB: s.db.Client, Invoices: invoices, Subscriptions: subs, Addresses: addresses, Prices: prices, Refunds: refunds,
		Mempool: s.payments, Now: s.cfg.Now, PollInterval: cfg.PagePollInterval, Logger: s.logger,
	})
	if err != nil {
		return fmt.Errorf("hosted pages: %w", err)
	}
	dash, err := dashboard.New(dashboard.Config{
		DB: s.db.Client, Invoices: invoices, Subscriptions: subs, Addresses: addresses, Prices: prices,
		Notifications: notifications, Endpoints: s.endpoints, Payouts: s.payouts, Refunds: refunds, Payments: s.payments, Events: s.notifier.Events, Export: exporter, PublicURL: cfg.PublicURL, CallbackKeys: s.callbacks,
		Rules: s.notifier.Dispatcher.Rules(), Mail: s.mail, Now: s.cfg.Now, Logger: s.logger, TrustedProxies: proxies, StreamHeartbeat: cfg.StreamHeartbeat,
	})
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	assets, err := web.NewAssets(pay.Assets(), dashboard.Assets())
	if err != nil {
		return err
	}
	// The limiter marks the calls forwarded over it with their HTTP
	// client's network.
	s.selfConn, err = grpc.NewClient(dialable(s.grpcLis.Addr()),
		append(limiter.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		return fmt.Errorf("connect gateway to gRPC: %w", err)
	}
	gw, err := gateway.New(ctx, s.selfConn, gateway.Config{
		Devnet:       s.devnet != nil,
		Tickers:      addresses,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Heartbeat:    cfg.StreamHeartbeat,
	}, s.logger)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// Every path mounted beside the gateway is one of the route table's,
	// which derives reserved ticker names and metric labels from it.
	var unlisted []string
	mount := func(pattern string, h http.Handler) {
		if !route.Default().Mounted(pattern) {
			unlisted = append(unlisted, pattern)
		}
		mux.Handle(pattern, h)
	}
	// /healthz's details and /metrics are the operator's: on this
	// listener they need an operator's key (a bare status is anyone's).
	healthClient := healthpb.NewHealthClient(s.selfConn)
	gate := operatorGate{keys: keyResolver}
	mount(route.Healthz, healthHandler(healthClient, s.ChainStatuses, s.degraded, gate))
	met.ObserveChains(s.chainStats)
	mount(route.Metrics, metricsHandler(gate, met.Handler()))
	apiDocs, err := openapi.Handler()
	if err != nil {
		return err
	}
	mount(openapi.DocumentPath, apiDocs)
	mount(openapi.DocsPath, apiDocs)
	// Connect and gRPC-Web for browsers, at /payhook.v1.<Service>/<Method>:
	// forwarded through the gRPC client connection like REST, so every
	// interceptor runs once. The devnet is served only when registered.
	var services []string
	for name := range s.grpc.GetServiceInfo() {
		if strings.HasPrefix(name, "payhook.v1.") {
			services = append(services, name)
		}
	}
	slices.Sort(services)
	browser, err := browserrpc.New(browserrpc.Config{
		Conn:               s.selfConn,
		Services:           services,
		AllowedOrigins:     cfg.CORSOrigins,
		MaxBodyBytes:       cfg.MaxBodyBytes,
		StreamWriteTimeout: cfg.WriteTimeout,
	}, s.logger)
	if err != nil {
		return err
	}
	for _, p := range browser.Paths() {
		mount(p, browser)
	}
	if len(unlisted) > 0 {
		return fmt.Errorf("paths %v are mounted but not in the route table (server/route)", unlisted)
	}
	// The dashboard, the pages' assets, then the hosted pages (/payment/,
	// /deposit/{dep_...}/, /subscription/{sub_...}/) in front of the API,
	// which shares their first segments: every other path is the API's.
	mux.Handle(dashboard.Prefix, dash)
	mux.Handle("/dashboard", dash) // sent to Prefix, with the dashboard's headers
	mux.Handle(web.AssetPrefix, assets)
	mux.Handle("/", pages.Wrap(gw))
	s.http = &http.Server{
		// The key leaves the query before any handler sees the request;
		// the request metrics label by route, never by path or query.
		Handler:           met.InstrumentHTTP(gateway.APIKeyFromQuery(limiter.HTTP(mux, pages.Refused))),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	if s.opLis != nil {
		// The operator listener: the same two handlers, open to whoever
		// reaches it (bind it to a private address), and nothing else.
		open := operatorGate{open: true}
		opMux := http.NewServeMux()
		opMux.Handle(route.Healthz, healthHandler(healthClient, s.ChainStatuses, s.degraded, open))
		opMux.Handle(route.Metrics, metricsHandler(open, met.Handler()))
		s.opHTTP = &http.Server{
			Handler:           opMux,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       cfg.ReadTimeout,
			WriteTimeout:      cfg.WriteTimeout,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    maxHeaderBytes,
		}
	}
	return nil
}

// maxHeaderBytes bounds a REST request's header, query included.
const maxHeaderBytes = 64 << 10

// dialable turns a listener address into one a local client can dial.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// ensureDevKey gives the developer a key to use: a database without keys
// gets one, printed once. Only key hashes are stored, so a database that
// already has keys cannot show one again: the command that creates another
// is printed instead.
func (s *Server) ensureDevKey(ctx context.Context) error {
	n, err := apikey.Count(ctx, s.db.Client)
	if err != nil {
		return fmt.Errorf("count api keys: %w", err)
	}
	if n > 0 {
		fmt.Fprintf(s.cfg.Out, "\n  --dev: this database already has %d API key(s); keys are shown only when created.\n"+
			"  Create another with: %s\n\n", n, devKeyCommand(s.cfg.Store.DB))
		return nil
	}
	key, _, err := apikey.Create(ctx, s.db.Client, "dev", s.cfg.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.cfg.Out, "\n  --dev: created API key %q (shown once; send it in the apikey header)\n\n", key)
	return nil
}

// devKeyCommand is the command line that creates an API key on the
// database dsn; a PostgreSQL password is masked.
func devKeyCommand(dsn string) string {
	cmd := "payhook apikey create --name dev"
	if dsn == DefaultDB {
		return cmd
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			dsn = u.Redacted()
		}
	}
	return cmd + " --db '" + strings.ReplaceAll(dsn, "'", `'\''`) + "'"
}

// GRPCAddr is the address the gRPC server listens on.
func (s *Server) GRPCAddr() string { return dialable(s.grpcLis.Addr()) }

// HTTPAddr is the address the REST gateway listens on.
func (s *Server) HTTPAddr() string { return dialable(s.httpLis.Addr()) }

// OperatorAddr is the address the operator listener (--operator-listen)
// listens on; "" when it is off.
func (s *Server) OperatorAddr() string {
	if s.opLis == nil {
		return ""
	}
	return dialable(s.opLis.Addr())
}

// DB is the server's database (for tests and subcommands).
func (s *Server) DB() *store.DB { return s.db }

// Endpoints returns the projects' webhook endpoints (tests publish events
// through it).
func (s *Server) Endpoints() *endpoint.Service { return s.endpoints }

// Retention returns the job that deletes old delivery records (tests run
// it with ManualDelivery).
func (s *Server) Retention() *retention.Job { return s.retention }

// EndpointMonitor returns the monitor that pauses failing endpoints (tests
// run its rounds with ManualDelivery).
func (s *Server) EndpointMonitor() *endpoint.Monitor { return s.endpointMonitor }

// ForgetCallbackKey makes this instance read project id's callback key
// anew at its next callback (after a rotation made elsewhere, which every
// instance otherwise sees within a second).
func (s *Server) ForgetCallbackKey(id int64) { s.callbacks.Forget(id) }

// Payments is the server's payment service (tests).
func (s *Server) Payments() *payment.Service { return s.payments }

// Devnet is the simulated chains of a --dev server; nil otherwise.
func (s *Server) Devnet() *devnet.Devnet { return s.devnet }

// Payouts returns the payout service (tests run its Tick).
func (s *Server) Payouts() *payout.Service { return s.payouts }

// pollChain tells ticker's watcher that its chain changed (a devnet Pay,
// Mine or Reorg). The background watcher is woken and the call returns at
// once: one poller per chain, and a mined block is applied by it, not by the
// request. With ManualDelivery there is no background watcher: the chain is
// polled here, so tests that drive everything by hand stay deterministic.
func (s *Server) pollChain(ctx context.Context, ticker string) error {
	w, ok := s.watchers[ticker]
	if !ok {
		return nil
	}
	if s.cfg.ManualDelivery {
		return w.PollOnce(ctx)
	}
	w.Wake()
	return nil
}

// Watcher returns ticker's chain watcher, or nil when the ticker has no
// backend. Tests wait on its WaitHeight.
func (s *Server) Watcher(ticker string) *payment.Watcher { return s.watchers[ticker] }

// Notifier is the server's notifier (for tests and the payment code).
func (s *Server) Notifier() *notifier.Notifier { return s.notifier }

// Mail is the server's email sender (tests run its RunDue); nil when email
// is off.
func (s *Server) Mail() *mail.Sender { return s.mailSender }

// Start serves both listeners in the background, starts the dispatcher and
// the chain watchers (unless ManualDelivery), reports SERVING and returns
// once all of that is running. ctx bounds starting only: what runs in the
// background lives until Stop, not until ctx ends. A server starts once: a
// second Start, or a Start after Stop, returns startstop.ErrStarted. After
// an error, Stop still releases what New and Start took.
func (s *Server) Start(ctx context.Context) error {
	run, err := s.StartInit(ctx)
	if err != nil {
		return err
	}
	s.Go(func() {
		if err := s.grpc.Serve(s.grpcLis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.logger.Error("grpc server stopped", "error", err)
		}
	})
	s.Go(func() {
		if err := s.http.Serve(s.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("http server stopped", "error", err)
		}
	})
	if s.opHTTP != nil {
		s.Go(func() {
			if err := s.opHTTP.Serve(s.opLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.logger.Error("operator http server stopped", "error", err)
			}
		})
	}
	if !s.cfg.ManualDelivery {
		if err := s.notifier.Start(ctx); err != nil {
			return fmt.Errorf("start delivery: %w", err)
		}
		for _, w := range s.watchers {
			if err := w.Start(ctx); err != nil {
				return err
			}
		}
		if s.livePrices != nil {
			// The first refresh runs in the background: a price provider
			// being down never delays serving (the table is beneath).
			if err := s.livePrices.Start(context.WithoutCancel(ctx)); err != nil {
				return fmt.Errorf("start live prices: %w", err)
			}
		}
		if s.mailSender != nil {
			if err := s.mailSender.Start(ctx); err != nil {
				return fmt.Errorf("start email: %w", err)
			}
			if s.livePrices != nil && len(s.cfg.Email.Operators) > 0 {
				s.Go(func() { s.watchPrices(run) })
			}
		}
		if s.devnet != nil && s.cfg.Chains.DevnetBlockTime > 0 {
			// The mining loop lives until Stop, not until ctx ends.
			if err := s.devnet.Start(context.WithoutCancel(ctx), s.cfg.Chains.DevnetBlockTime); err != nil {
				return fmt.Errorf("start devnet auto-mining: %w", err)
			}
		}
	}
	if err := s.idempotency.Start(ctx); err != nil {
		return fmt.Errorf("start the Idempotency-Key collector: %w", err)
	}
	if !s.cfg.ManualDelivery {
		// Tests that drive delivery run the monitor's rounds themselves.
		if err := s.endpointMonitor.Start(ctx); err != nil {
			return fmt.Errorf("start the endpoint monitor: %w", err)
		}
		if err := s.retention.Start(ctx); err != nil {
			return fmt.Errorf("start the retention job: %w", err)
		}
	}
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.Go(func() { s.probeDatabase(run) })
	if s.opLis != nil {
		s.logger.Info("payhook serving", "grpc", s.grpcLis.Addr().String(), "http", s.httpLis.Addr().String(), "operator", s.opLis.Addr().String())
	} else {
		s.logger.Info("payhook serving", "grpc", s.grpcLis.Addr().String(), "http", s.httpLis.Addr().String())
	}
	return nil
}

// Stop shuts down in order: health NOT_SERVING, drain HTTP and gRPC within
// the shutdown timeout, stop the dispatcher, the email sender and the
// chain watchers, then
// close the database. It is idempotent and waits; it may be called without
// Start, or after a failed one. It returns what closing reported, the same
// to every caller.
func (s *Server) Stop() error {
	s.StopOnce(func() {
		// The base cancelled the database probe's context; a status the
		// probe sets from now on is ignored by the shut-down health server.
		s.health.Shutdown()
		// Watch streams would hold GracefulStop open: end them first; their
		// clients resume from their cursor elsewhere or after the restart.
		s.notifier.Events.CloseWatchers()
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.API.ShutdownTimeout)
		defer cancel()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := s.http.Shutdown(ctx); err != nil {
				s.logger.Warn("http drain cut short", "error", err)
				_ = s.http.Close()
			}
		}()
		if s.opHTTP != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.opHTTP.Shutdown(ctx); err != nil {
					_ = s.opHTTP.Close()
				}
			}()
		}
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			go func() { s.grpc.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
				s.logger.Warn("grpc drain cut short")
				s.grpc.Stop()
				<-done
			}
		}()
		wg.Wait()
		s.Wait() // the listeners' goroutines, and the probe's
		// In-flight attempts finish or are recorded as interrupted; queued
		// work stays in the database.
		s.notifier.Stop()
		if s.mailSender != nil {
			s.mailSender.Stop() // a batch in flight is sent and recorded
		}
		if s.devnet != nil {
			s.devnet.Stop()
		}
		if s.livePrices != nil {
			s.livePrices.Stop()
		}
		for _, w := range s.watchers {
			w.Stop()
		}
		if s.idempotency != nil {
			s.idempotency.Stop()
		}
		if s.endpointMonitor != nil {
			s.endpointMonitor.Stop()
		}
		if s.retention != nil {
			s.retention.Stop()
		}
		for _, n := range s.nodes {
			if c, ok := n.backend.(interface{ Close() }); ok {
				c.Close()
			}
		}
		s.stopErr = s.closeAll()
	})
	return s.stopErr
}

func (s *Server) closeAll() error {
	var errs []error
	if s.selfConn != nil {
		errs = append(errs, s.selfConn.Close())
	}
	// Serving closes the listeners on stop; a server that never started
	// releases what New bound here (closing twice is harmless).
	for _, l := range []net.Listener{s.grpcLis, s.httpLis, s.opLis} {
		if l != nil {
			_ = l.Close()
		}
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	if s.remote != nil {
		errs = append(errs, s.remote.Close())
	}
	return errors.Join(errs...)
}

// probeAcquireWait is how long a health probe waits for a connection from
// a pool that is at its bound. Waiting means the database is busy serving
// requests, not down: the probe then leaves the status as it is.
const probeAcquireWait = 30 * time.Second

// probeDatabase pings the database every Store.HealthProbeInterval and
// reports an outage in the health status (NOT_SERVING, so /healthz answers
// 503 and load balancers route around) and the log, and its end, until ctx
// ends. Queued work is not lost meanwhile: it is in the database, which is
// what is down. A pool busy with requests is not an outage (probeOnce).
func (s *Server) probeDatabase(ctx context.Context) {
	interval := s.cfg.Store.HealthProbeInterval
	t := time.NewTicker(interval)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		busy, err := s.probeOnce(ctx, interval)
		switch {
		case ctx.Err() != nil || busy:
		case err != nil && !down:
			down = true
			s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
			s.logger.Error("database unreachable: reporting NOT_SERVING until it is back", "error", err)
		case err == nil && down:
			down = false
			s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
			s.logger.Info("database reachable again: SERVING")
		}
	}
}

// probeOnce takes a connection from the pool and pings the database on it
// within timeout. Waiting for the connection is not part of the ping: a pool
// at its bound has requests queued, which is load, not an outage, so the
// wait may last up to probeAcquireWait and, should even that run out while
// the pool is still full, busy is reported instead of an error. A pool below
// its bound that cannot open a connection is an outage.
func (s *Server) probeOnce(ctx context.Context, timeout time.Duration) (busy bool, err error) {
	actx, cancel := context.WithTimeout(ctx, probeAcquireWait)
	defer cancel()
	conn, err := s.db.SQL.Conn(actx)
	if err != nil {
		st := s.db.SQL.Stats()
		if actx.Err() != nil && st.MaxOpenConnections > 0 && st.InUse >= st.MaxOpenConnections {
			s.logger.Warn("database pool busy: every connection in use for the whole health probe", "max_conns", st.MaxOpenConnections, "waiting", st.WaitCount)
			return true, nil
		}
		return false, err
	}
	pctx, cancelPing := context.WithTimeout(ctx, timeout)
	defer cancelPing()
	err = conn.PingContext(pctx)
	_ = conn.Close() // a broken connection is discarded, not returned to the pool
	if err != nil && pctx.Err() == nil {
		// The connection may have been idle across a database restart:
		// the pool's own ping retries on a fresh one, so one stale
		// connection does not keep the status down.
		err = s.db.SQL.PingContext(pctx)
	}
	return false, err
}

// Run serves until ctx is cancelled, then shuts down gracefully.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	s, err := New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		if ctx.Err() != nil {
			// Asked to shut down before serving: not a failure.
			return s.Stop()
		}
		return errors.Join(err, s.Stop())
	}
	<-ctx.Done()
	logger.Info("shutting down")
	err = s.Stop()
	logger.Info("stopped", "error", err)
	return err
}

// exporter is the accounting export: every ticker of the registry file is
// known to it (a journal line of a coin no longer offered still converts),
// and a stored price values a line within the live prices' maximum age.
func (s *Server) exporter(prices price.Source) (*export.Exporter, error) {
	all, err := admin.LoadRegistry(s.cfg.Chains.RegistryFile)
	if err != nil {
		return nil, err
	}
	cfg := export.Config{
		DB: s.db.Client, Tickers: all.Lookup,
		FiatPlaces: func(currency string) int32 { return invoice.FiatPlaces(prices, currency) },
	}
	if s.livePrices != nil && s.livePrices.MaxAge() > 0 {
		cfg.MaxPriceAge = s.livePrices.MaxAge()
	}
	return export.New(cfg)
}
