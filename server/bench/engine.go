package bench

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/startstop"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/metrics"
)

// Config is how Open builds an Engine.
type Config struct {
	// DSN is the database to run on (a ScratchDB's); it is migrated.
	DSN string
	// RSAKey signs the messages whose Batch.Signer is "rsa", once, when
	// they are stored (as low-level callbacks are signed).
	RSAKey *rsa.PrivateKey
	// Workers bounds concurrent delivery attempts.
	Workers int
	// PerHost bounds concurrent attempts to one destination; WaitParked
	// measures against it.
	PerHost int
	// AttemptTimeout bounds one attempt; the notifier's default (the
	// spec's limit) when 0.
	AttemptTimeout time.Duration
	// AllowPrivate are the exact loopback endpoints (the benchmark's
	// receivers) that deliveries (all of Owner) may reach.
	AllowPrivate []string
}

// WithDefaults returns c unchanged: the engine has no defaults of its own,
// and the notifier's (notifier.Delivery.WithDefaults) fill what is unset.
func (c Config) WithDefaults() Config { return c }

// Validate reports the first bad field.
func (c Config) Validate() error {
	switch {
	case c.DSN == "":
		return errors.New("bench: DSN is empty")
	case c.RSAKey == nil:
		return errors.New("bench: RSAKey is nil")
	case c.Workers < 1 || c.PerHost < 1:
		return fmt.Errorf("bench: Workers %d and PerHost %d must be positive", c.Workers, c.PerHost)
	}
	return nil
}

// claimBatch is the most rows the engine claims per query.
const claimBatch = 256

// hmacKey is the signing reference of HMAC-signed benchmark messages (the
// merchant webhook scheme).
const hmacKey = "bench"

// benchSecret is the webhook secret of every benchmark key: not a secret
// (the bench's receiver does not verify), only well formed.
const benchSecret = "whsec_YmVuY2htYXJrIHdlYmhvb2sgc2VjcmV0LCBub3Qgc2VjcmV0"

// Owner is the owner (API key id) of every benchmark notification.
const Owner = 1

// Engine is payhook's delivery engine (the notifier) on one database, with
// its metrics served over HTTP. Build it with Open, store the backlog a run
// needs, Start it, and Stop it when the run is over.
type Engine struct {
	cfg     Config
	db      *store.DB
	n       *notifier.Notifier
	metrics *http.Server
	url     string

	startstop.Base
	stopErr error
}

// Open opens and migrates the database, builds the notifier (not started)
// observed by payhook's metrics, and serves those metrics on a loopback
// listener (MetricsURL).
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (_ *Engine, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	defer func() {
		if err != nil {
			_ = db.Close()
		}
	}()
	if _, err := store.Migrate(ctx, db); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	met := metrics.New(nil, nil)
	n, err := notifier.New(db, notifier.Config{
		Delivery: notifier.Delivery{AttemptTimeout: cfg.AttemptTimeout, AllowPrivateEndpoints: cfg.AllowPrivate, Workers: cfg.Workers, PerHost: cfg.PerHost},
		// The receivers are the benchmark owner's.
		DefaultOwner: Owner,
		Batch:        claimBatch,
		Signers: []signer.Signer{
			signer.NewRSASigner(cfg.RSAKey),
			signer.NewWebhookSigner(signer.StaticSecrets(benchSecret)),
		},
		Observer: met,
	}, logger)
	if err != nil {
		return nil, err
	}
	met.ObserveQueue(n.Queue.Stats, n.Events.Watchers)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	e := &Engine{
		cfg: cfg, db: db, n: n,
		metrics: &http.Server{Handler: met.Handler(), ReadHeaderTimeout: 10 * time.Second},
		url:     "http://" + l.Addr().String() + "/metrics",
	}
	e.Go(func() { _ = e.metrics.Serve(l) })
	return e, nil
}

// MetricsURL is where the engine's Prometheus metrics are served.
func (e *Engine) MetricsURL() string { return e.url }

// Start starts delivering; it returns once the notifier runs. An engine
// starts once (startstop.ErrStarted).
func (e *Engine) Start(ctx context.Context) error {
	if _, err := e.StartInit(ctx); err != nil {
		return err
	}
	if err := e.n.Start(ctx); err != nil {
		return fmt.Errorf("start notifier: %w", err)
	}
	return nil
}

// Stop stops the notifier (attempts in flight finish or are recorded as
// interrupted), the metrics server and closes the database. It is
// idempotent, may be called without Start, and returns the same error to
// every caller.
func (e *Engine) Stop() error {
	e.StopOnce(func() {
		e.n.Stop()
		e.stopErr = errors.Join(e.metrics.Close(), e.db.Close())
		e.Wait() // the metrics server's goroutine
	})
	return e.stopErr
}

// Batch is a run of benchmark callbacks stored in one transaction: the
// low-level callback of a confirmed BTC payment, numbered From to
// From+Count-1 (the number sets the txid and the value).
type Batch struct {
	// URL is the callback URL.
	URL string
	// Transport is "get", "form" or "json".
	Transport string
	// Signer is "rsa" (signed once, when stored) or "hmac" (the merchant
	// webhook scheme, signed at each attempt).
	Signer string
	// From is the first message's number; Count how many there are.
	From, Count int
}

// Addresses the benchmark callbacks are about.
const (
	benchAddressIn = "bc1qjcnhwsw976enmkvdlnyas0lcpc5fcee2gkl64h"
	benchDest      = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
)

// Enqueue stores b in one transaction through notifier.Enqueue, the call
// the payment code makes, and returns the stored uuids and the instant the
// database's COMMIT returned: before the notifier's own commit hook hands
// the rows to its senders, so a latency measured from it includes every
// part of delivery.
func (e *Engine) Enqueue(ctx context.Context, b Batch) (ids []string, committed time.Time, err error) {
	tr, ok := map[string]payload.Transport{"get": payload.TransportGET, "form": payload.TransportForm, "json": payload.TransportJSON}[b.Transport]
	if !ok {
		return nil, time.Time{}, fmt.Errorf("enqueue: transport %q is not get, form or json", b.Transport)
	}
	var signing notifier.Signing
	switch b.Signer {
	case "rsa":
		signing = notifier.Signing{Scheme: signer.SchemeRSASHA256}
	case "hmac":
		signing = notifier.Signing{Scheme: signer.SchemeWebhook, Key: hmacKey}
	default:
		return nil, time.Time{}, fmt.Errorf("enqueue: signer %q is not rsa or hmac", b.Signer)
	}
	ids = make([]string, 0, b.Count)
	err = store.WithTx(ctx, e.db.Client, func(tx *entdb.Tx) error {
		for i := b.From; i < b.From+b.Count; i++ {
			id := uuid.NewString()
			req, err := address.EncodeCallback(b.URL, tr, address.Callback{
				UUID: id, AddressIn: benchAddressIn, AddressOut: []address.Share{{Address: benchDest, Share: decimal.NewFromInt(1)}},
				TxidIn: fmt.Sprintf("%064x", i), Confirmations: 1, RequiredConfirmations: 1, PaymentStatus: "confirmed",
				Coin: "btc", Decimals: 8, ValueCoin: decimal.New(int64(100000+i), -8),
				Params: []payload.Param{{Key: "order", Value: "42"}},
			})
			if err != nil {
				return fmt.Errorf("encode callback %d: %w", i, err)
			}
			row, err := e.n.Enqueue(ctx, tx, notifier.Message{
				UUID: id, Owner: Owner, Request: req, Signing: signing,
				Subject: notifier.Subject{Service: address.ServiceLabel, Event: "confirmed", Ref: benchAddressIn, Topic: "btc"},
			})
			if err != nil {
				return err
			}
			ids = append(ids, row.UUID)
		}
		// Registered last, this hook runs innermost: it stamps the instant
		// the database's COMMIT returned, before the notifier's own commit
		// hook hands the rows to its senders. Stamping after WithTx returns
		// would start the clock after a send may already have begun.
		tx.OnCommit(func(next entdb.Committer) entdb.Committer {
			return entdb.CommitFunc(func(ctx context.Context, tx *entdb.Tx) error {
				err := next.Commit(ctx, tx)
				committed = clock.Now()
				return err
			})
		})
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("enqueue %d callbacks: %w", b.Count, err)
	}
	return ids, committed, nil
}

// Prefill stores count queued notifications due tomorrow, in bulk, to
// measure claims and memory with a large queue: generated in the database
// on PostgreSQL (a million rows in seconds), in bulk inserts of 2,000 on
// SQLite.
func (e *Engine) Prefill(ctx context.Context, count int) error {
	future := clock.Now().Add(24 * time.Hour)
	if e.db.Dialect == store.Postgres {
		for done := 0; done < count; {
			k := min(100000, count-done)
			if _, err := e.db.SQL.ExecContext(ctx, `INSERT INTO notifications (created_at, updated_at, uuid, topic, subject, host, event,
					method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at, owner_id)
				SELECT now(), now(), gen_random_uuid()::text, 'btc', $1, '127.0.0.1:9', 'confirmed',
					'GET', 'http://127.0.0.1:9/queued', '', '', '', '', 'retrying', 1, $2, $3, $4 FROM generate_series(1, $5)`,
				benchAddressIn, future, future.Add(time.Hour), Owner, k); err != nil {
				return fmt.Errorf("prefill: %w", err)
			}
			done += k
		}
		return nil
	}
	for done := 0; done < count; {
		k := min(2000, count-done)
		builders := make([]*entdb.NotificationCreate, k)
		for i := range builders {
			var b [16]byte
			_, _ = rand.Read(b[:])
			builders[i] = e.db.Client.Notification.Create().SetUUID(hex.EncodeToString(b[:])).SetOwnerID(Owner).
				SetTopic("btc").SetSubject(benchAddressIn).SetHost("127.0.0.1:9").SetEvent("confirmed").SetMethod("GET").
				SetURL("http://127.0.0.1:9/queued").SetBody([]byte{}).SetStatus(notification.StatusRetrying).SetAttempts(1).
				SetNextAttemptAt(future).SetExpiresAt(future.Add(time.Hour))
		}
		if err := e.db.Client.Notification.CreateBulk(builders...).Exec(ctx); err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
		done += k
	}
	return nil
}

// WaitParked waits until at most 3 x PerHost notifications to endpoint are
// due and not in flight (the notifier keeps 2 x PerHost of a saturated
// destination due and parks the rest), polling the database; it returns
// how long that took, or an error after limit.
func (e *Engine) WaitParked(ctx context.Context, endpoint string, limit time.Duration) (time.Duration, error) {
	start := clock.Now()
	u, err := url.Parse(endpoint)
	if err != nil {
		return 0, fmt.Errorf("wait parked: %w", err)
	}
	host := u.Host // an IP and a port, as the notifier keys destinations
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		due, err := e.db.Client.Notification.Query().
			Where(notification.Host(host), notification.NextAttemptAtLTE(clock.Now()), notification.LeaseUntilIsNil()).
			Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("wait parked: count due: %w", err)
		}
		if due <= 3*e.cfg.PerHost {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("the dead endpoint's %d due notifications were not set aside within %s", due, limit)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("wait parked: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// FailedAttempts counts the finished attempts that were not acknowledged,
// by error, from the attempt log; nil when there are none.
func (e *Engine) FailedAttempts(ctx context.Context) (map[string]int, error) {
	var errs []struct {
		Error string `json:"error"`
		Count int    `json:"count"`
	}
	if err := e.db.Client.DeliveryAttempt.Query().
		Where(deliveryattempt.OutcomeNotIn(deliveryattempt.OutcomeAcknowledged, deliveryattempt.OutcomeInFlight)).
		GroupBy(deliveryattempt.FieldError).Aggregate(entdb.Count()).Scan(ctx, &errs); err != nil {
		return nil, fmt.Errorf("failed attempts: %w", err)
	}
	if len(errs) == 0 {
		return nil, nil
	}
	out := make(map[string]int, len(errs))
	for _, e := range errs {
		out[e.Error] = e.Count
	}
	return out, nil
}

// Backlog is a large queue of notifications spread over many endpoints,
// some of them dead, stored by PrefillBacklog.
type Backlog struct {
	// Total notifications, spread evenly over Endpoints destinations.
	Total, Endpoints int
	// Dead are the URLs of the dead endpoints (each its own host:port):
	// the first len(Dead) destinations. Their notifications are retries
	// (one attempt failed already) coming due evenly over DueWithin from
	// now, as a dead endpoint's backlog keeps coming due.
	Dead      []string
	DueWithin time.Duration
}

// PrefillBacklog stores b in bulk on PostgreSQL: the healthy endpoints'
// notifications are retries due from tomorrow on (spread over a day, to
// hosts 127.3.x.y:9 that are never reached during a run), the dead
// endpoints' come due during the run. It measures what a large queue and
// many dead destinations cost a healthy endpoint, and payhook's memory.
func (e *Engine) PrefillBacklog(ctx context.Context, b Backlog) error {
	if e.db.Dialect != store.Postgres {
		return errors.New("prefill backlog: PostgreSQL only")
	}
	if b.Endpoints < 1 || len(b.Dead) > b.Endpoints || b.Total < b.Endpoints {
		return fmt.Errorf("prefill backlog: %d notifications over %d endpoints, %d dead", b.Total, b.Endpoints, len(b.Dead))
	}
	hosts := make([]string, len(b.Dead))
	for i, d := range b.Dead {
		u, err := url.Parse(d)
		if err != nil {
			return fmt.Errorf("prefill backlog: %w", err)
		}
		hosts[i] = u.Host
	}
	now := clock.Now()
	// g is the row, g % endpoints its destination; the dead ones
	// (destination < cardinality($dead)) take their URL and host from the
	// arrays, the others a loopback host of their own.
	const q = `INSERT INTO notifications (created_at, updated_at, uuid, topic, subject, host, event,
			method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at, owner_id)
		SELECT $1::timestamptz, $1::timestamptz, gen_random_uuid()::text, 'btc', $2, h.host, 'confirmed',
			'GET', h.url, '', '', '', '', 'retrying', 1,
			CASE WHEN h.dead THEN $1::timestamptz + ($3::float8 * (g - $6) / $7) * interval '1 second'
				ELSE $1::timestamptz + interval '1 day' + (random() * 86400) * interval '1 second' END,
			$1::timestamptz + interval '2 days', $4
		FROM generate_series($6::int, $6::int + $7::int - 1) g,
		LATERAL (SELECT (g % $5) AS e) d,
		LATERAL (SELECT d.e < cardinality($8::text[]) AS dead,
			CASE WHEN d.e < cardinality($8::text[]) THEN ($8::text[])[d.e + 1]
				ELSE '127.3.' || (d.e / 250) || '.' || (d.e % 250 + 1) || ':9' END AS host,
			CASE WHEN d.e < cardinality($8::text[]) THEN ($9::text[])[d.e + 1]
				ELSE 'http://127.3.' || (d.e / 250) || '.' || (d.e % 250 + 1) || ':9/h' END AS url) h`
	for done := 0; done < b.Total; {
		k := min(100000, b.Total-done)
		if _, err := e.db.SQL.ExecContext(ctx, q, now, benchAddressIn, b.DueWithin.Seconds(), Owner, b.Endpoints, done, k,
			store.Array(toAny(hosts)), store.Array(toAny(b.Dead))); err != nil {
			return fmt.Errorf("prefill backlog: %w", err)
		}
		done += k
	}
	_, err := e.db.SQL.ExecContext(ctx, "ANALYZE notifications")
	return err
}

// WaitTimedOut waits until n attempts have ended without an answer (the
// dead endpoints' first attempts timed out: from then on payhook knows
// them), polling the attempt log; it returns how long that took, or an
// error after limit.
func (e *Engine) WaitTimedOut(ctx context.Context, n int, limit time.Duration) (time.Duration, error) {
	start := clock.Now()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		c, err := e.db.Client.DeliveryAttempt.Query().
			Where(deliveryattempt.OutcomeNotIn(deliveryattempt.OutcomeAcknowledged, deliveryattempt.OutcomeInFlight)).
			Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("wait timed out: %w", err)
		}
		if c >= n {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("only %d of %d attempts to dead endpoints ended within %s", c, n, limit)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("wait timed out: %w", ctx.Err())
		case <-t.C:
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
