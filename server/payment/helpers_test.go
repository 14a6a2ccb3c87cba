package payment

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/outbound"
)

// statements counts the SQL statements and commits that go through a
// database opened by countingDB.
type statements struct {
	mu       sync.Mutex
	all      int
	payments int // statements that name the payments table
	commits  int
	log      []string
}

func (s *statements) add(q string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all++
	if strings.Contains(q, "payments") {
		s.payments++
	}
	if len(s.log) < 50 {
		s.log = append(s.log, q)
	}
}

// reset returns the counts so far (all, payments, commits) and starts
// again from zero.
func (s *statements) reset() (all, payments, commits int, log []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, payments, commits, log = s.all, s.payments, s.commits, s.log
	s.all, s.payments, s.commits, s.log = 0, 0, 0, nil
	return
}

type countingDriver struct {
	dialect.Driver
	s *statements
}

func (d countingDriver) Exec(ctx context.Context, q string, args, v any) error {
	d.s.add(q)
	return d.Driver.Exec(ctx, q, args, v)
}

func (d countingDriver) Query(ctx context.Context, q string, args, v any) error {
	d.s.add(q)
	return d.Driver.Query(ctx, q, args, v)
}

func (d countingDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return countingTx{tx, d.s}, nil
}

type countingTx struct {
	dialect.Tx
	s *statements
}

func (t countingTx) Exec(ctx context.Context, q string, args, v any) error {
	t.s.add(q)
	return t.Tx.Exec(ctx, q, args, v)
}

func (t countingTx) Query(ctx context.Context, q string, args, v any) error {
	t.s.add(q)
	return t.Tx.Query(ctx, q, args, v)
}

// QueryContext and ExecContext serve the hand-written statements (raw SQL
// through entdb.Tx), counted like the others.
func (t countingTx) QueryContext(ctx context.Context, q string, args ...any) (*stdsql.Rows, error) {
	t.s.add(q)
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	}).QueryContext(ctx, q, args...)
}

func (t countingTx) ExecContext(ctx context.Context, q string, args ...any) (stdsql.Result, error) {
	t.s.add(q)
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	}).ExecContext(ctx, q, args...)
}

func (t countingTx) Commit() error {
	t.s.mu.Lock()
	t.s.commits++
	t.s.mu.Unlock()
	return t.Tx.Commit()
}

// countingDB returns a migrated database of dialect d whose client counts
// its statements. The pool beneath is the real one (the lease uses it).
func countingDB(t *testing.T, d store.Dialect) (*store.DB, *statements) {
	t.Helper()
	db := storetest.Open(t, d)
	name := dialect.Postgres
	if d == store.SQLite {
		name = dialect.SQLite
	}
	s := &statements{}
	drv := countingDriver{Driver: entsql.OpenDB(name, db.SQL), s: s}
	return &store.DB{Client: entdb.NewClient(entdb.Driver(drv)), SQL: db.SQL, Dialect: db.Dialect}, s
}

// fixture is a devnet chain of one ticker and payment addresses on it.
type fixture struct {
	t     *testing.T
	db    *store.DB
	tk    chains.Ticker
	reg   *chains.Registry
	der   *chains.Deriver
	keyID int64
	next  uint32
}

func newFixture(t *testing.T, db *store.DB, ticker string) *fixture {
	t.Helper()
	reg := family.DefaultRegistry()
	tk, err := reg.Get(ticker)
	if err != nil {
		t.Fatal(err)
	}
	key, err := db.Client.APIKey.Create().SetName("t").SetPrefix("ph_x").SetHash(strings.Repeat("c", 64)).SetProjectID(1).Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	der, err := chains.NewDeriver(make([]byte, 32), family.All())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db, tk: tk, reg: reg, der: der, keyID: key.ID, next: 1}
}

// service returns a payment service over db with chain as the ticker's
// backend and rec as its reactor.
func (f *fixture) service(db *store.DB, chain chains.Backend, rec Reactor) *Service {
	now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	return New(db, Config{Registry: f.reg, Backends: map[string]chains.Backend{f.tk.Ticker: chain}, Reactors: everyService(rec), Now: now}, logger)
}

// addresses creates n payment addresses requiring confirmations and
// returns them.
func (f *fixture) addresses(n int, confirmations int32) []string {
	f.t.Helper()
	ctx := context.Background()
	dest, err := f.der.Address(f.tk, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]string, 0, n)
	for len(out) < n {
		var rows []*entdb.AddressCreate
		for range min(1000, n-len(out)) {
			i := f.next
			f.next++
			a, err := f.der.Address(f.tk, i)
			if err != nil {
				f.t.Fatal(err)
			}
			out = append(out, a)
			rows = append(rows, f.db.Client.Address.Create().SetAPIKeyID(f.keyID).SetProjectID(1).SetTicker(f.tk.Ticker).SetFamily(string(f.tk.Family)).
				SetAddressIn(a).SetDerivationIndex(int64(i)).SetCallbackURL(fmt.Sprintf("https://shop.example/hook/%d", i)).SetCallbackKey(fmt.Sprintf("%064x", i)).
				SetDestinations([]schema.Destination{{Address: dest, Share: decimal.NewFromInt(1)}}).SetRequiredConfirmations(confirmations))
		}
		if err := f.db.Client.Address.CreateBulk(rows...).Exec(ctx); err != nil {
			f.t.Fatal(err)
		}
	}
	return out
}

// payEach pays value to each address and mines the block that includes the
// payments.
func payEach(t *testing.T, chain *devnet.Chain, addrs []string, value string) {
	t.Helper()
	for _, a := range addrs {
		if _, err := chain.Pay(a, decimal.RequireFromString(value), false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chain.Mine(1); err != nil {
		t.Fatal(err)
	}
}

// poll runs one poll of w, failing the test on an error.
func poll(t *testing.T, w *Watcher) {
	t.Helper()
	if err := w.PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// byPayment groups the committed changes by transaction hash, as
// kind:status:confirmations lists.
func (r *recorder) byPayment() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for _, c := range r.changes {
		out[c.Payment.TxidIn] = append(out[c.Payment.TxidIn], string(c.Kind)+":"+string(c.Status)+":"+decimal.NewFromInt(c.Confirmations).String())
	}
	return out
}

// crashing gives svc an outbound engine that runs faults: a hook that
// returns an error stops the engine there, as the process dying would.
func crashing(svc *Service, faults outbound.Faults) {
	svc.out = outbound.New(svc.db, outbound.Config{Backends: svc.backends, Now: svc.now, Faults: faults}, svc.logger)
	svc.out.Handle(outbound.PurposeForward, forwarding{svc})
}

// outboundOf returns the outgoing transaction that carries forward f.
func outboundOf(t *testing.T, db *store.DB, f *entdb.Forward) *entdb.Outbound {
	t.Helper()
	if f.OutboundID == nil {
		t.Fatalf("forward %d has no outgoing transaction", f.ID)
	}
	o, err := db.Client.Outbound.Get(context.Background(), *f.OutboundID)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
