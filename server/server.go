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
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/gateway"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/metrics"
	"github.com/payhook/payhook/server/payment"
	"github.com/payhook/payhook/server/rpc"
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
	selfConn *grpc.ClientConn
	notifier *notifier.Notifier
	devnet   *devnet.Devnet
	payments *payment.Service
	watchers map[string]*payment.Watcher

	stopOnce sync.Once
	stopErr  error
	served   sync.WaitGroup

	stopProbe context.CancelFunc
	probeDone chan struct{}
}

// New prepares a server: it validates cfg, opens and migrates the database,
// loads keys and binds both listeners. Nothing is served until Start.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (_ *Server, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger}
	defer func() {
		if err != nil {
			s.closeAll()
		}
	}()

	s.db, err = store.Open(ctx, cfg.DB)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	applied, err := store.Migrate(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("migrate database: %w", err)
	}
	if len(applied) > 0 {
		logger.Info("applied migrations", "versions", applied)
	}

	registry := chains.DefaultRegistry()
	if cfg.RegistryFile != "" {
		f, err := os.Open(cfg.RegistryFile)
		if err != nil {
			return nil, fmt.Errorf("--registry-file: %w", err)
		}
		registry, err = chains.LoadRegistry(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--registry-file %s: %w", cfg.RegistryFile, err)
		}
	}

	seed := cfg.Seed
	if seed == nil {
		var created bool
		seed, created, err = loadOrCreateSeed(cfg.SeedFile)
		if err != nil {
			return nil, err
		}
		if created {
			logger.Warn("generated a new address seed: back this file up, it is the only way to recover funds sent to payment addresses", "seed_file", cfg.SeedFile)
		}
	}
	deriver, err := chains.NewDeriver(seed)
	if err != nil {
		return nil, fmt.Errorf("address seed: %w", err)
	}

	var key *rsa.PrivateKey
	if cfg.SigningKeyFile != "" {
		key, err = notifier.LoadRSAKeyFile(cfg.SigningKeyFile)
	} else {
		key, err = notifier.EnsureRSAKey(ctx, s.db.Client, cfg.SigningKeyBits, cfg.Now())
	}
	if err != nil {
		return nil, fmt.Errorf("--signing-key-file: %w", err)
	}
	// The metrics observe the notifier's attempts and, once it exists, read
	// its queue at scrape time.
	met := metrics.New(nil, nil)
	signer := notifier.NewRSASigner(key)
	pub, err := signer.PublicKeyPEM()
	if err != nil {
		return nil, err
	}
	s.notifier, err = notifier.New(s.db, signer, notifier.Config{
		Policy:   schedule.Policy{Delays: cfg.RetryDelays, Window: cfg.DeliveryWindow},
		Egress:   egress.Config{Timeout: cfg.AttemptTimeout, AllowPrivate: cfg.AllowPrivateEndpoints},
		Workers:  cfg.DeliveryWorkers,
		PerHost:  cfg.PerHostConcurrency,
		Lease:    cfg.DeliveryLease,
		Clock:    clockFunc(cfg.Now),
		Observer: met,
	}, logger)
	if err != nil {
		return nil, err
	}
	met.ObserveQueue(s.notifier.Stats, s.notifier.Watchers)

	if cfg.Dev {
		if err := s.ensureDevKey(ctx); err != nil {
			return nil, err
		}
	}

	prices := price.Default()
	if cfg.PriceFile != "" {
		f, err := os.Open(cfg.PriceFile)
		if err != nil {
			return nil, fmt.Errorf("--price-file: %w", err)
		}
		prices, err = price.Load(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--price-file %s: %w", cfg.PriceFile, err)
		}
	}
	// Chain backends: the devnet in developer mode. Node RPC backends plug
	// into the same map, watchers and payment code.
	backends := map[string]chains.Backend{}
	if cfg.Dev {
		s.devnet = devnet.New(registry, devnet.Options{Clock: cfg.Now})
		for _, t := range registry.All() {
			if c, ok := s.devnet.Chain(t.Ticker); ok {
				backends[t.Ticker] = c
			}
		}
	}
	s.payments = payment.New(s.db, s.notifier, registry, prices, backends, cfg.Now, logger)
	s.watchers = map[string]*payment.Watcher{}
	for _, t := range registry.All() {
		if _, ok := backends[t.Ticker]; !ok {
			continue
		}
		w, err := s.payments.NewWatcher(t, cfg.WatchInterval)
		if err != nil {
			return nil, err
		}
		s.watchers[t.Ticker] = w
	}

	unary, stream, err := interceptor.Chain(interceptor.Config{
		Keys: apikey.Resolver{DB: s.db.Client},
		Public: []string{
			payhookv1.AddressService_GetPublicKey_FullMethodName,
			payhookv1.AddressService_GetInfo_FullMethodName,
			// The devnet exists only with --dev, where it simulates chains
			// for whoever develops against the server.
			payhookv1.DevnetService_Pay_FullMethodName,
			payhookv1.DevnetService_Mine_FullMethodName,
			payhookv1.DevnetService_Reorg_FullMethodName,
		},
	}, logger)
	if err != nil {
		return nil, err
	}
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	addresses := address.New(s.db.Client, s.db.Dialect == store.Postgres, registry, deriver, cfg.Now)
	payhookv1.RegisterAddressServiceServer(s.grpc, rpc.NewAddressServer(addresses, pub))
	payhookv1.RegisterDeliveryServiceServer(s.grpc, rpc.NewDeliveryServer(s.notifier))
	if s.devnet != nil {
		payhookv1.RegisterDevnetServiceServer(s.grpc, rpc.NewDevnetServer(s.devnet, s.pollChain))
	}
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)

	if s.grpcLis, err = net.Listen("tcp", cfg.GRPCAddr); err != nil {
		return nil, fmt.Errorf("--grpc-addr: %w", err)
	}
	if s.httpLis, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return nil, fmt.Errorf("--http-addr: %w", err)
	}
	s.selfConn, err = grpc.NewClient(dialable(s.grpcLis.Addr()), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect gateway to gRPC: %w", err)
	}
	gw, err := gateway.New(ctx, s.selfConn, s.devnet != nil)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", healthHandler(healthpb.NewHealthClient(s.selfConn)))
	mux.Handle("/metrics", met.Handler())
	mux.Handle("/", gw)
	s.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	return s, nil
}

// dialable turns a listener address into one a local client can dial.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

func (s *Server) ensureDevKey(ctx context.Context) error {
	n, err := apikey.Count(ctx, s.db.Client)
	if err != nil {
		return fmt.Errorf("count api keys: %w", err)
	}
	if n > 0 {
		return nil
	}
	key, _, err := apikey.Create(ctx, s.db.Client, "dev", s.cfg.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.cfg.Out, "\n  --dev: created API key %q (shown once; send it in the apikey header)\n\n", key)
	return nil
}

// GRPCAddr is the address the gRPC server listens on.
func (s *Server) GRPCAddr() string { return dialable(s.grpcLis.Addr()) }

// HTTPAddr is the address the REST gateway listens on.
func (s *Server) HTTPAddr() string { return dialable(s.httpLis.Addr()) }

// DB is the server's database (for tests and subcommands).
func (s *Server) DB() *store.DB { return s.db }

// Payments is the server's payment service (tests).
func (s *Server) Payments() *payment.Service { return s.payments }

// Devnet is the simulated chains of a --dev server; nil otherwise.
func (s *Server) Devnet() *devnet.Devnet { return s.devnet }

// pollChain has ticker's watcher read its chain now.
func (s *Server) pollChain(ctx context.Context, ticker string) error {
	w, ok := s.watchers[ticker]
	if !ok {
		return nil
	}
	return w.PollOnce(ctx)
}

// Notifier is the server's notifier (for tests and the payment code).
func (s *Server) Notifier() *notifier.Notifier { return s.notifier }

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// Start serves both listeners in the background and returns at once.
func (s *Server) Start() {
	s.served.Add(2)
	go func() {
		defer s.served.Done()
		if err := s.grpc.Serve(s.grpcLis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.logger.Error("grpc server stopped", "error", err)
		}
	}()
	go func() {
		defer s.served.Done()
		if err := s.http.Serve(s.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("http server stopped", "error", err)
		}
	}()
	if !s.cfg.ManualDelivery {
		s.notifier.Start()
		for _, w := range s.watchers {
			w.Start()
		}
		if s.devnet != nil && s.cfg.DevnetBlockTime > 0 {
			// Validate checked the block time; Start fails only if started twice.
			if err := s.devnet.Start(context.Background(), s.cfg.DevnetBlockTime); err != nil {
				s.logger.Error("devnet auto-mining", "error", err)
			}
		}
	}
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	ctx, cancel := context.WithCancel(context.Background())
	s.stopProbe, s.probeDone = cancel, make(chan struct{})
	go s.probeDatabase(ctx)
	s.logger.Info("payhook serving", "grpc", s.grpcLis.Addr().String(), "http", s.httpLis.Addr().String())
}

// Stop shuts down in order: health NOT_SERVING, drain HTTP and gRPC within
// the shutdown timeout, then close the database. It is idempotent and waits.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.stopProbe != nil {
			s.stopProbe()
			<-s.probeDone
		}
		s.health.Shutdown()
		// Watch streams would hold GracefulStop open: end them first; their
		// clients resume from their cursor elsewhere or after the restart.
		s.notifier.CloseWatchers()
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
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
		s.served.Wait()
		// In-flight attempts finish or are recorded as interrupted; queued
		// work stays in the database.
		s.notifier.Stop()
		if s.devnet != nil {
			s.devnet.Stop()
		}
		for _, w := range s.watchers {
			w.Stop()
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
	for _, l := range []net.Listener{s.grpcLis, s.httpLis} {
		if l != nil {
			_ = l.Close()
		}
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}

// probeInterval is how often the database is pinged for health.
const probeInterval = 2 * time.Second

// probeDatabase pings the database and reports an outage in the health
// status (NOT_SERVING, so /healthz answers 503 and load balancers route
// around) and the log, and its end, until ctx ends. Queued work is not lost
// meanwhile: it is in the database, which is what is down.
func (s *Server) probeDatabase(ctx context.Context) {
	defer close(s.probeDone)
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, probeInterval)
		err := s.db.SQL.PingContext(pctx)
		cancel()
		switch {
		case err != nil && !down && ctx.Err() == nil:
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

// Run serves until ctx is cancelled, then shuts down gracefully.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	s, err := New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	s.Start()
	<-ctx.Done()
	logger.Info("shutting down")
	err = s.Stop()
	logger.Info("stopped", "error", err)
	return err
}

func healthHandler(c healthpb.HealthClient) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := c.Check(r.Context(), &healthpb.HealthCheckRequest{})
		w.Header().Set("Content-Type", "application/json")
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"error","error":"not serving"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","health":"serving"}`))
	})
}
