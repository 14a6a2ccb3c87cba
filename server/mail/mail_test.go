package mail_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/goleak"

	entdb "github.com/payhook/payhook/ent/db"
	entemail "github.com/payhook/payhook/ent/db/email"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/mail/mailtest"
	"github.com/payhook/payhook/server/merchant/project"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

const from = "payhook@shop.example"

// env is a database with a project, its dashboard users, and an SMTP
// server; build returns an outbox and sender over them on a manual clock.
type env struct {
	db      *store.DB
	smtp    *mailtest.Server
	clock   *clock.Manual
	project *entdb.Project
	users   []string
}

func newEnv(t *testing.T, db *store.DB, opts mailtest.Options) *env {
	t.Helper()
	ctx := context.Background()
	p, err := project.Create(ctx, db.Client, project.Params{Name: "Book Shop"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Client.Project.UpdateOne(p).SetSupportContact("help@shop.example").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, smtp: mailtest.Start(t, opts), clock: clock.NewManual(t0), project: p,
		users: []string{"ann@shop.example", "bob@shop.example"}}
	for _, u := range append(e.users, "not an address") {
		if err := db.Client.DashboardUser.Create().SetProjectID(p.ID).SetEmail(u).SetPasswordHash("$argon2id$x").
			SetCreatedAt(t0).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A viewer gets no payout or endpoint email; a disabled owner none.
	if err := db.Client.DashboardUser.Create().SetProjectID(p.ID).SetEmail("val@shop.example").SetPasswordHash("$argon2id$x").
		SetRole("viewer").SetCreatedAt(t0).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Client.DashboardUser.Create().SetProjectID(p.ID).SetEmail("dan@shop.example").SetPasswordHash("$argon2id$x").
		SetDisabledAt(t0).SetCreatedAt(t0).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Another project's user never gets this project's emails.
	other, err := project.Create(ctx, db.Client, project.Params{Name: "Other"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Client.DashboardUser.Create().SetProjectID(other.ID).SetEmail("eve@other.example").SetPasswordHash("$argon2id$x").
		SetCreatedAt(t0).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) config(mutate ...func(*mail.Config)) mail.Config {
	c := mail.Config{
		URL: e.smtp.URL(from), Operators: []string{"ops@host.example"}, DashboardURL: "https://pay.shop.example/dashboard/",
		Now: e.clock.Now, RootCAs: e.smtp.Roots, Timeout: 10 * time.Second,
	}
	for _, m := range mutate {
		m(&c)
	}
	return c
}

func (e *env) build(t *testing.T, db *store.DB, cfg mail.Config, obs mail.Observer) (*mail.Outbox, *mail.Sender) {
	t.Helper()
	o, s, err := mail.New(db, cfg, obs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return o, s
}

// enqueue runs fn in a transaction.
func enqueue(t *testing.T, db *store.DB, fn func(tx *entdb.Tx) error) {
	t.Helper()
	if err := store.WithTx(context.Background(), db.Client, fn); err != nil {
		t.Fatal(err)
	}
}

func runDue(t *testing.T, s *mail.Sender) {
	t.Helper()
	if err := s.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func emails(t *testing.T, db *store.DB) []*entdb.Email {
	t.Helper()
	rows, err := db.Client.Email.Query().Order(entdb.Asc(entemail.FieldID)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// counter is an Observer.
type counter struct {
	mu  sync.Mutex
	got map[string]int
}

func (c *counter) EmailFinished(kind, status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.got == nil {
		c.got = map[string]int{}
	}
	c.got[kind+" "+status]++
}

func (c *counter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[key]
}

// TestEachKindDelivered: every kind of email reaches the SMTP server (over
// STARTTLS, authenticated) addressed to the right people, each once,
// saying what happened, naming the project and what to do, in text and
// HTML; a dashboard user whose sign-in name is no address and another
// project's user get nothing.
func TestEachKindDelivered(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newEnv(t, db, mailtest.Options{TLS: true, Username: "payhook", Password: "s3cret"})
		obs := &counter{}
		o, s := e.build(t, db, e.config(), obs)
		ctx := context.Background()
		paidAt := t0.Add(-time.Minute)
		enqueue(t, db, func(tx *entdb.Tx) error {
			p := &entdb.Payout{ID: 42, ProjectID: e.project.ID, Ticker: "ltc", TotalRequested: decimal.RequireFromString("12.5"),
				ApprovalReason: "12.5 ltc is above the maximum per payout of 10 ltc"}
			if err := o.PayoutApproval(ctx, tx, p); err != nil {
				return err
			}
			if err := o.EndpointPaused(ctx, tx, e.project.ID, "https://shop.example/hooks/payhook", t0.Add(-time.Hour)); err != nil {
				return err
			}
			if err := o.PriceDegraded(ctx, tx, t0.Add(-2*time.Hour), "no fresh ltc/USD price: providers coinbase, kraken failed"); err != nil {
				return err
			}
			return o.Receipts(ctx, tx, mail.Receipt{ProjectID: e.project.ID, To: "payer@example.org", PaymentID: "chk_abc",
				Description: "a <b>book</b>", Value: "100.00 USD", PaidAt: paidAt,
				Payments: []mail.ReceiptPayment{{Amount: "0.00125", Coin: "btc", TxID: "f00d"}}})
		})
		runDue(t, s)
		got := e.smtp.Wait(t, 6)
		if len(got) != 6 {
			t.Fatalf("%d messages, want 6 (2 payout, 2 endpoint, 1 operator, 1 receipt)", len(got))
		}
		type want struct {
			subject string
			text    []string
		}
		wants := map[string][]want{
			"ann@shop.example": {
				{"[Book Shop] Payout 42 of 12.5 LTC awaits your approval", []string{"Book Shop", "12.5 LTC", "above the maximum per payout", "https://pay.shop.example/dashboard/payouts/"}},
				{"[Book Shop] Webhooks to shop.example are paused", []string{"Book Shop", "https://shop.example/hooks/payhook", "2026-11-28 11:00:00 UTC", "resume it"}},
			},
			"ops@host.example": {
				{"payhook: prices stale since 2026-11-28 10:00:00 UTC, amounts cannot be priced", []string{"no fresh ltc/USD price", "--price-provider", "once per episode"}},
			},
			"payer@example.org": {
				{"Receipt: your payment to Book Shop", []string{"chk_abc", "100.00 USD", "0.00125 BTC", "f00d", "help@shop.example", "a <b>book</b>", "2026-11-28 11:59:00 UTC"}},
			},
		}
		wants["bob@shop.example"] = wants["ann@shop.example"]
		seen := map[string]int{}
		for _, m := range got {
			if len(m.To) != 1 || !m.TLS || m.User != "payhook" || m.From != from {
				t.Errorf("envelope to %v from %q, TLS %v, user %q: want one recipient, from %s, over TLS, authenticated", m.To, m.From, m.TLS, m.User, from)
				continue
			}
			to := m.To[0]
			if h := m.Header(); h.Get("To") != "<"+to+">" && h.Get("To") != to {
				t.Errorf("To header %q for envelope %s", h.Get("To"), to)
			}
			if m.Header().Get("Auto-Submitted") != "auto-generated" || m.Header().Get("Message-Id") == "" {
				t.Errorf("headers %v: want Auto-Submitted and a Message-ID", m.Header())
			}
			var match *want
			for i, w := range wants[to] {
				if w.subject == m.Subject() {
					match = &wants[to][i]
				}
			}
			if match == nil {
				t.Errorf("to %s: unexpected subject %q", to, m.Subject())
				continue
			}
			seen[to+" "+m.Subject()]++
			for _, s := range match.text {
				if !strings.Contains(m.Text(), s) {
					t.Errorf("to %s, %q: text lacks %q:\n%s", to, m.Subject(), s, m.Text())
				}
			}
			if h := m.HTML(); !strings.Contains(h, "Book Shop") && to != "ops@host.example" || strings.Contains(h, "<b>book</b>") {
				t.Errorf("to %s: HTML does not name the project, or does not escape what it shows:\n%s", to, h)
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s: %d copies", k, n)
			}
		}
		for _, r := range emails(t, db) {
			if r.Status != entemail.StatusSent || r.SentAt == nil || !r.SentAt.Equal(t0) || r.NextAttemptAt != nil || r.LeaseUntil != nil || r.Attempts != 1 {
				t.Errorf("email %d (%s): status %s, sent %v, next %v, lease %v, attempts %d", r.ID, r.Kind, r.Status, r.SentAt, r.NextAttemptAt, r.LeaseUntil, r.Attempts)
			}
		}
		if obs.count("payout_approval sent") != 2 || obs.count("receipt sent") != 1 || obs.count("price_degraded sent") != 1 {
			t.Errorf("observer: %v", obs.got)
		}
	})
}

// TestRetriedOnRefusal: the SMTP server answers 451 twice; the email is
// retried 1m and then 5m later on the injected clock (not before), then
// delivered once, and the row says sent after three attempts.
func TestRetriedOnRefusal(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newEnv(t, db, mailtest.Options{})
		o, s := e.build(t, db, e.config(), nil)
		e.smtp.RefuseData(2, 451)
		enqueue(t, db, func(tx *entdb.Tx) error {
			return o.Enqueue(context.Background(), tx, mail.Email{Kind: mail.KindReceipt, Cause: "chk_1", To: "payer@example.org", Subject: "s", Text: "t"})
		})
		steps := []struct {
			advance  time.Duration
			refused  int
			attempts int
			next     time.Duration // from t0; 0: none
		}{
			{0, 1, 1, time.Minute},
			{30 * time.Second, 1, 1, time.Minute}, // not due yet
			{30 * time.Second, 2, 2, 6 * time.Minute},
			{4 * time.Minute, 2, 2, 6 * time.Minute},
			{time.Minute, 2, 3, 0},
		}
		for i, st := range steps {
			e.clock.Advance(st.advance)
			runDue(t, s)
			if got := e.smtp.Refused(); got != st.refused {
				t.Fatalf("step %d: %d refused, want %d", i, got, st.refused)
			}
			r := emails(t, db)[0]
			var next time.Duration
			if r.NextAttemptAt != nil {
				next = r.NextAttemptAt.Sub(t0)
			}
			if r.Attempts != st.attempts || next != st.next {
				t.Fatalf("step %d: attempts %d, next %s (last error %q); want %d, %s", i, r.Attempts, next, r.LastError, st.attempts, st.next)
			}
			if st.next != 0 && (r.Status != entemail.StatusPending || !strings.Contains(r.LastError, "451")) {
				t.Fatalf("step %d: status %s, last error %q", i, r.Status, r.LastError)
			}
		}
		if got := e.smtp.Messages(); len(got) != 1 {
			t.Fatalf("%d messages delivered, want 1", len(got))
		}
		if r := emails(t, db)[0]; r.Status != entemail.StatusSent || r.LastError != "" {
			t.Fatalf("status %s, last error %q", r.Status, r.LastError)
		}
		e.clock.Advance(time.Hour)
		runDue(t, s)
		if got := e.smtp.Messages(); len(got) != 1 {
			t.Fatalf("%d messages after another round, want 1", len(got))
		}
	})
}

// TestFailures: a recipient the server refuses with 550 fails at once;
// an unreachable server is retried on the schedule until its 48 hours are
// over, then failed, each attempt starting within the window.
func TestFailures(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newEnv(t, db, mailtest.Options{})
		obs := &counter{}
		o, s := e.build(t, db, e.config(), obs)
		e.smtp.RefuseRecipient("gone@example.org", 550)
		enqueue(t, db, func(tx *entdb.Tx) error {
			return o.Enqueue(context.Background(), tx, mail.Email{Kind: mail.KindReceipt, Cause: "chk_1", To: "gone@example.org", Subject: "s", Text: "t"})
		})
		runDue(t, s)
		if r := emails(t, db)[0]; r.Status != entemail.StatusFailed || r.Attempts != 1 || r.NextAttemptAt != nil || !strings.Contains(r.LastError, "550") {
			t.Fatalf("refused recipient: status %s, attempts %d, next %v, error %q", r.Status, r.Attempts, r.NextAttemptAt, r.LastError)
		}
		if obs.count("receipt failed") != 1 {
			t.Fatalf("observer: %v", obs.got)
		}

		// A server that is not there: a port nothing listens on.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		o2, s2 := e.build(t, db, e.config(func(c *mail.Config) {
			c.URL = "smtp://127.0.0.1:" + strconv.Itoa(port) + "?tls=none&from=" + from
		}), obs)
		enqueue(t, db, func(tx *entdb.Tx) error {
			return o2.Enqueue(context.Background(), tx, mail.Email{Kind: mail.KindReceipt, Cause: "chk_2", To: "payer@example.org", Subject: "s", Text: "t"})
		})
		created := e.clock.Now()
		var attempts []time.Time
		for range 40 {
			attempts = append(attempts, e.clock.Now())
			runDue(t, s2)
			r := emails(t, db)[1]
			if r.Status == entemail.StatusFailed {
				if r.NextAttemptAt != nil || !strings.Contains(r.LastError, "gave up") || !strings.Contains(r.LastError, "connect") {
					t.Fatalf("given up: next %v, error %q", r.NextAttemptAt, r.LastError)
				}
				break
			}
			if r.NextAttemptAt == nil {
				t.Fatalf("pending without a next attempt: %+v", r)
			}
			e.clock.Set(*r.NextAttemptAt)
		}
		r := emails(t, db)[1]
		if r.Status != entemail.StatusFailed {
			t.Fatalf("still %s after %d attempts", r.Status, len(attempts))
		}
		last := attempts[len(attempts)-1]
		if last.After(created.Add(48*time.Hour)) || last.Before(created.Add(45*time.Hour)) || r.Attempts != len(attempts) {
			t.Fatalf("%d attempts (row says %d), the last %s after the email was stored: want the schedule up to 48h",
				len(attempts), r.Attempts, last.Sub(created))
		}
		if attempts[1].Sub(attempts[0]) != time.Minute || attempts[2].Sub(attempts[1]) != 5*time.Minute {
			t.Fatalf("retry delays %s, %s: want 1m, 5m", attempts[1].Sub(attempts[0]), attempts[2].Sub(attempts[1]))
		}
	})
}

// TestCrashAfterSend: the one case that sends twice. The SMTP server took
// the email and the sender "dies" before recording it: the email stays
// leased (another round at the same time sends nothing), and once the
// lease lapses it is sent again, with the same Message-ID, and recorded
// sent.
func TestCrashAfterSend(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newEnv(t, db, mailtest.Options{})
		var crashes atomic.Int32
		cfg := e.config(func(c *mail.Config) {
			c.Faults.AfterSend = func(int64) bool { return crashes.Add(1) == 1 }
		})
		o, s := e.build(t, db, cfg, nil)
		enqueue(t, db, func(tx *entdb.Tx) error {
			return o.Enqueue(context.Background(), tx, mail.Email{Kind: mail.KindReceipt, Cause: "chk_1", To: "payer@example.org", Subject: "s", Text: "t"})
		})
		runDue(t, s)
		if r := emails(t, db)[0]; r.Status != entemail.StatusPending || r.LeaseUntil == nil || len(e.smtp.Messages()) != 1 {
			t.Fatalf("after the crash: status %s, lease %v, %d delivered", r.Status, r.LeaseUntil, len(e.smtp.Messages()))
		}
		runDue(t, s) // the lease holds
		if n := len(e.smtp.Messages()); n != 1 {
			t.Fatalf("%d delivered while the lease holds", n)
		}
		e.clock.Advance(mail.DefaultLease + time.Second)
		runDue(t, s)
		got := e.smtp.Messages()
		if len(got) != 2 || got[0].Header().Get("Message-Id") != got[1].Header().Get("Message-Id") {
			t.Fatalf("%d delivered; Message-IDs %q", len(got), func() []string {
				var ids []string
				for _, m := range got {
					ids = append(ids, m.Header().Get("Message-Id"))
				}
				return ids
			}())
		}
		if r := emails(t, db)[0]; r.Status != entemail.StatusSent || r.Attempts != 2 {
			t.Fatalf("status %s after %d attempts", r.Status, r.Attempts)
		}
	})
}

// TestTwoSenders: two instances' senders, each with its own connections to
// one database, send at once; every email is delivered exactly once.
func TestTwoSenders(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			dsn := storetest.DSN(t, d)
			ctx := context.Background()
			var dbs []*store.DB
			for range 2 {
				db, err := store.Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				db.SetSecretsKey(storetest.SecretsKey)
				dbs = append(dbs, db)
			}
			if _, err := store.Migrate(ctx, dbs[0]); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, dbs[0], mailtest.Options{})
			cfg := e.config(func(c *mail.Config) { c.Batch = 3 })
			o, _ := e.build(t, dbs[0], cfg, nil)
			const n = 30
			enqueue(t, dbs[0], func(tx *entdb.Tx) error {
				for i := range n {
					if err := o.Enqueue(ctx, tx, mail.Email{Kind: mail.KindReceipt, Cause: "chk_" + strconv.Itoa(i), To: "payer@example.org",
						Subject: "receipt " + strconv.Itoa(i), Text: "t"}); err != nil {
						return err
					}
				}
				return nil
			})
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for _, db := range dbs {
				_, s := e.build(t, db, cfg, nil)
				wg.Go(func() { errs <- s.RunDue(ctx) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			got := e.smtp.Messages()
			subjects := map[string]int{}
			for _, m := range got {
				subjects[m.Subject()]++
			}
			if len(got) != n || len(subjects) != n {
				t.Fatalf("%d delivered, %d distinct: want %d, each once (%v)", len(got), len(subjects), n, subjects)
			}
			for _, r := range emails(t, dbs[0]) {
				if r.Status != entemail.StatusSent || r.Attempts != 1 {
					t.Fatalf("email %d: %s after %d attempts", r.ID, r.Status, r.Attempts)
				}
			}
		})
	}
}

// TestDedupe: the same cause to the same recipient is one email, whether
// stored twice in one transaction or in two (whatever the address's case);
// another recipient or cause is another email; a rolled back transaction
// stores none.
func TestDedupe(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newEnv(t, db, mailtest.Options{})
		o, _ := e.build(t, db, e.config(), nil)
		ctx := context.Background()
		one := mail.Email{Kind: mail.KindReceipt, Cause: "chk_1", To: "payer@example.org", Subject: "s", Text: "t"}
		enqueue(t, db, func(tx *entdb.Tx) error { return o.Enqueue(ctx, tx, one, one) })
		enqueue(t, db, func(tx *entdb.Tx) error {
			again := one
			again.To, again.Subject = "Payer@Example.org", "another text"
			return o.Enqueue(ctx, tx, again)
		})
		if got := emails(t, db); len(got) != 1 || got[0].Subject != "s" {
			t.Fatalf("%d emails after the same cause three times", len(got))
		}
		enqueue(t, db, func(tx *entdb.Tx) error {
			other, cause := one, one
			other.To, cause.Cause = "other@example.org", "chk_2"
			return o.Enqueue(ctx, tx, other, cause)
		})
		if got := emails(t, db); len(got) != 3 {
			t.Fatalf("%d emails, want 3", len(got))
		}
		err := store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
			if err := o.PayoutApproval(ctx, tx, &entdb.Payout{ID: 9, ProjectID: e.project.ID, Ticker: "btc", TotalRequested: decimal.NewFromInt(1)}); err != nil {
				return err
			}
			return context.Canceled // roll back
		})
		if err == nil || len(emails(t, db)) != 3 {
			t.Fatalf("rolled back: %v, %d emails", err, len(emails(t, db)))
		}
		// The same payout twice: one email per user.
		for range 2 {
			enqueue(t, db, func(tx *entdb.Tx) error {
				return o.PayoutApproval(ctx, tx, &entdb.Payout{ID: 9, ProjectID: e.project.ID, Ticker: "btc", TotalRequested: decimal.NewFromInt(1)})
			})
		}
		if got := emails(t, db); len(got) != 5 {
			t.Fatalf("%d emails, want 5 (3 and one per user)", len(got))
		}
		// A long cause (an endpoint URL) is hashed into the key.
		long := "https://shop.example/" + strings.Repeat("x", 300)
		for range 2 {
			enqueue(t, db, func(tx *entdb.Tx) error { return o.EndpointPaused(ctx, tx, e.project.ID, long, t0) })
		}
		if got := emails(t, db); len(got) != 7 || len(got[6].DedupeKey) > 200 {
			t.Fatalf("%d emails, want 7; last key %d bytes", len(got), len(got[len(got)-1].DedupeKey))
		}
		// A bad email is refused, naming what is wrong, and stores nothing.
		err = store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
			return o.Enqueue(ctx, tx, mail.Email{Kind: mail.KindReceipt, Cause: "c", To: "no address", Subject: "s", Text: "t"})
		})
		if err == nil || !strings.Contains(err.Error(), "no address") {
			t.Fatalf("bad recipient: %v", err)
		}
	})
}

// TestOff: without a URL there is no outbox and no sender, a nil outbox
// stores nothing, and settings that need a URL are refused.
func TestOff(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	o, s, err := mail.New(db, mail.Config{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || o != nil || s != nil {
		t.Fatalf("off: %v, %v, %v", o, s, err)
	}
	enqueue(t, db, func(tx *entdb.Tx) error {
		ctx := context.Background()
		return errorsJoin(
			o.Enqueue(ctx, tx, mail.Email{Kind: mail.KindReceipt}),
			o.PayoutApproval(ctx, tx, &entdb.Payout{}),
			o.EndpointPaused(ctx, tx, 1, "https://x.example", t0),
			o.PriceDegraded(ctx, tx, t0, "why"),
			o.Receipts(ctx, tx, mail.Receipt{To: "a@b.example"}),
		)
	})
	if n := len(emails(t, db)); n != 0 {
		t.Fatalf("%d emails stored with email off", n)
	}
	for _, c := range []mail.Config{{Operators: []string{"ops@x.example"}}, {Password: "p"}} {
		if _, _, err := mail.New(db, c, nil, slog.Default()); err == nil {
			t.Errorf("%+v without a URL: accepted", c)
		}
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestBackground: a started sender sends an email as soon as its
// transaction commits (no poll interval to wait out), and Stop ends it.
func TestBackground(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	e := newEnv(t, db, mailtest.Options{})
	o, s := e.build(t, db, e.config(func(c *mail.Config) { c.PollInterval = time.Hour; c.Now = clock.Now }), nil)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	enqueue(t, db, func(tx *entdb.Tx) error {
		return o.Enqueue(context.Background(), tx, mail.Email{Kind: mail.KindReceipt, Cause: "chk_1", To: "payer@example.org", Subject: "s", Text: "t"})
	})
	e.smtp.Wait(t, 1)
	s.Stop()
	s.Stop() // idempotent
}
