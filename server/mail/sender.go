package mail

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	gomail "github.com/wneessen/go-mail"

	entdb "github.com/payhook/payhook/ent/db"
	entemail "github.com/payhook/payhook/ent/db/email"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/startstop"
)

// Observer is told of each email that leaves the outbox.
type Observer interface {
	// EmailFinished counts an email of kind that was sent, or failed for
	// good (status "sent" or "failed"). It must not block.
	EmailFinished(kind, status string)
}

// New returns the outbox that stores emails and the sender that sends
// them, both nil when cfg turns email off (no URL). cfg is defaulted and
// validated first. observer (nil: none) counts the emails sent and failed.
func New(db *store.DB, cfg Config, observer Observer, logger *slog.Logger) (*Outbox, *Sender, error) {
	if !cfg.Enabled() {
		return nil, nil, cfg.Validate()
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	srv, err := cfg.server()
	if err != nil {
		return nil, nil, err
	}
	s := &Sender{db: db, cfg: cfg, srv: srv, observer: observer, logger: logger, wake: make(chan struct{}, 1)}
	return &Outbox{db: db, cfg: cfg, wake: s.Wake, logger: logger}, s, nil
}

// Sender sends what the outbox holds: it claims due emails under a lease,
// sends each batch over one SMTP connection, and records every outcome
// (sent, a retry on the schedule, or failed). Every instance runs one;
// they share the work through the database.
type Sender struct {
	startstop.Base
	db       *store.DB
	cfg      Config
	srv      server
	observer Observer
	logger   *slog.Logger
	wake     chan struct{}
}

// Server names the SMTP server, its port, TLS and sender, without
// credentials (for the log).
func (s *Sender) Server() string { return s.srv.String() }

// Wake tells the sender that emails may be due; it never blocks.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start sends in the background until Stop: due emails at once, then
// whenever one is stored here (Wake), the next retry comes due, or
// PollInterval has passed (emails other instances stored). It returns at
// once; a sender starts once (startstop.ErrStarted). Stop (startstop's)
// waits for a batch in flight to be sent and recorded.
func (s *Sender) Start(ctx context.Context) error {
	run, err := s.StartInit(ctx)
	if err != nil {
		return err
	}
	s.Go(func() { s.loop(run) })
	return nil
}

// minWait is the least pause between two rounds of the loop: a due email
// another instance holds locked is not polled for in a tight loop.
const minWait = time.Second

func (s *Sender) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
		if err := s.RunDue(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("send emails: the outbox keeps them for the next round", "error", err)
		}
		// The pace of the loop is the wall clock's; what is due is the
		// configured clock's.
		wait := s.cfg.PollInterval
		if due, ok, err := s.nextDue(ctx); err == nil && ok {
			wait = min(wait, due.Sub(s.cfg.Now()))
		}
		timer.Reset(max(wait, minWait))
	}
}

// RunDue sends every email due at the clock's current time and returns
// once each outcome is recorded; retries due later are left for later.
// Tests drive sending with it; the background loop runs the same.
func (s *Sender) RunDue(ctx context.Context) error {
	for {
		rows, err := s.claim(ctx)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		s.send(ctx, rows)
	}
}

// nextDue is when the earliest email still to send is due (a lease's end
// for one in flight).
func (s *Sender) nextDue(ctx context.Context) (time.Time, bool, error) {
	e, err := s.db.Client.Email.Query().Where(entemail.NextAttemptAtNotNil()).
		Order(entdb.Asc(entemail.FieldNextAttemptAt)).Select(entemail.FieldNextAttemptAt).First(ctx)
	switch {
	case entdb.IsNotFound(err):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, err
	}
	return *e.NextAttemptAt, true, nil
}

// claim leases up to Batch due emails to this sender, oldest due first:
// next_attempt_at is set exactly while an email is pending, and a leased
// one is due again when its lease ends (its sender died), so the due index
// alone finds the work. On PostgreSQL the rows are locked FOR UPDATE SKIP
// LOCKED, so instances claiming at once take different emails. An email
// past the schedule's window is failed instead. The claimed rows come
// back with their attempt counted.
func (s *Sender) claim(ctx context.Context) ([]*entdb.Email, error) {
	now := s.cfg.Now()
	until := now.Add(s.cfg.Lease)
	var claimed, expired []*entdb.Email
	err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		claimed, expired = nil, nil
		q := tx.Email.Query().Where(entemail.NextAttemptAtLTE(now)).
			Order(entdb.Asc(entemail.FieldNextAttemptAt), entdb.Asc(entemail.FieldID)).Limit(s.cfg.Batch)
		if s.db.Dialect == store.Postgres {
			q.ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
		}
		rows, err := q.All(ctx)
		if err != nil {
			return fmt.Errorf("select due emails: %w", err)
		}
		var ids []int64
		for _, r := range rows {
			if now.After(s.cfg.Policy.Expires(r.CreatedAt)) {
				why := fmt.Sprintf("gave up: not sent within %s after %d attempts", s.cfg.Policy.Window, r.Attempts)
				if r.LastError != "" {
					why += "; last: " + r.LastError
				}
				if err := tx.Email.UpdateOneID(r.ID).SetStatus(entemail.StatusFailed).ClearNextAttemptAt().
					ClearLeaseUntil().SetLastError(why).Exec(ctx); err != nil {
					return fmt.Errorf("fail email %d: %w", r.ID, err)
				}
				r.LastError = why
				expired = append(expired, r)
				continue
			}
			r.Attempts++
			ids = append(ids, r.ID)
			claimed = append(claimed, r)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Email.Update().Where(entemail.IDIn(ids...)).AddAttempts(1).
			SetLeaseUntil(until).SetNextAttemptAt(until).Exec(ctx); err != nil {
			return fmt.Errorf("lease %d emails: %w", len(ids), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range expired {
		s.finished(r, entemail.StatusFailed, r.LastError)
	}
	return claimed, nil
}

// send sends rows over one SMTP connection and records each outcome. A
// claimed batch is finished even when Stop comes meanwhile (each SMTP
// command is bounded by Timeout): an email the server took is recorded
// sent, so a stop does not send it twice.
func (s *Sender) send(ctx context.Context, rows []*entdb.Email) {
	ctx = context.WithoutCancel(ctx)
	outcomes := make([]error, len(rows))
	msgs := make([]*gomail.Msg, len(rows))
	var batch []*gomail.Msg
	for i, r := range rows {
		if msgs[i], outcomes[i] = s.message(r); outcomes[i] == nil {
			batch = append(batch, msgs[i])
		}
	}
	if len(batch) > 0 {
		if err := s.deliver(ctx, batch); err != nil {
			for i := range rows {
				if outcomes[i] == nil {
					outcomes[i] = err
				}
			}
		} else {
			for i, m := range msgs {
				switch {
				case m == nil || m.IsDelivered():
				case m.SendError() != nil:
					outcomes[i] = m.SendError()
				default:
					outcomes[i] = errors.New("the SMTP session ended before this email was sent")
				}
			}
		}
	}
	for i, r := range rows {
		if outcomes[i] == nil && s.cfg.Faults.AfterSend != nil && s.cfg.Faults.AfterSend(r.ID) {
			continue // the process "died" here: nothing is recorded
		}
		if err := s.record(ctx, r, outcomes[i]); err != nil {
			// The lease lapses and the email is claimed again: sent
			// twice if it went out (the one case that may).
			s.logger.Error("record an email's outcome; it is sent again once its lease lapses", "email", r.ID, "error", err)
		}
	}
}

// deliver opens one SMTP connection and sends msgs over it; each message
// then says whether the server took it. The error is the connection's
// (dial, TLS, authentication): no message was sent.
func (s *Sender) deliver(ctx context.Context, msgs []*gomail.Msg) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	conn, err := c.DialToSMTPClientWithContext(dctx)
	cancel()
	if err != nil {
		return fmt.Errorf("connect to the SMTP server %s: %w", s.srv, err)
	}
	// Each message records its own outcome (IsDelivered, SendError).
	_ = c.SendWithSMTPClient(conn, msgs...)
	if err := c.CloseWithSMTPClient(conn); err != nil {
		s.logger.Debug("close the SMTP connection", "error", err)
	}
	return nil
}

// client is a go-mail client for the configured server.
func (s *Sender) client() (*gomail.Client, error) {
	opts := []gomail.Option{
		gomail.WithPort(s.srv.port),
		gomail.WithTimeout(s.cfg.Timeout),
		gomail.WithTLSConfig(&tls.Config{ServerName: s.srv.host, MinVersion: tls.VersionTLS12, RootCAs: s.cfg.RootCAs}),
	}
	switch {
	case s.srv.implicitTLS:
		opts = append(opts, gomail.WithSSL())
	case s.srv.plain:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.srv.username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.srv.username), gomail.WithPassword(s.srv.password))
	}
	c, err := gomail.NewClient(s.srv.host, opts...)
	if err != nil {
		return nil, fmt.Errorf("SMTP client for %s: %w", s.srv, err)
	}
	return c, nil
}

// message builds r's message. Its Message-ID is the same on every attempt
// (the row's id and a hash of its dedupe key), so a receiver that
// deduplicates by Message-ID shows an email sent twice once.
func (s *Sender) message(r *entdb.Email) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(s.srv.from); err != nil {
		return nil, fmt.Errorf("sender %q: %w", s.srv.from, err)
	}
	if err := m.To(r.To); err != nil {
		return nil, permanentError{fmt.Errorf("recipient %q: %w", r.To, err)}
	}
	m.Subject(r.Subject)
	h := sha256.Sum256([]byte(r.DedupeKey))
	_, domain, _ := strings.Cut(s.srv.fromAddr, "@")
	m.SetMessageIDWithValue("payhook." + strconv.FormatInt(r.ID, 10) + "." + hex.EncodeToString(h[:8]) + "@" + domain)
	m.SetDateWithValue(s.cfg.Now())
	// RFC 3834: no vacation or out-of-office replies to an automatic email.
	m.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	m.SetBodyString(gomail.TypeTextPlain, r.TextBody)
	if r.HTMLBody != "" {
		m.AddAlternativeString(gomail.TypeTextHTML, r.HTMLBody)
	}
	return m, nil
}

// permanentError is an email that can never be sent as stored.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// permanent reports whether err refuses the email for good: the server
// refused its recipient or its content with a 5xx reply, or the message
// cannot be built. Everything else (the server unreachable, 4xx replies,
// a refused sender or authentication, which the operator can fix) is
// retried on the schedule.
func permanent(err error) bool {
	if errors.As(err, new(permanentError)) {
		return true
	}
	var se *gomail.SendError
	return errors.As(err, &se) && se.ErrorCode() >= 500 &&
		(se.Reason == gomail.ErrSMTPRcptTo || se.Reason == gomail.ErrSMTPDataClose)
}

// maxError is the most of an error's text the row keeps.
const maxError = 1000

// record stores the outcome of r's attempt (err nil: sent): sent; failed
// for good; or the next attempt on the schedule (failed once the schedule's
// window has closed). Sent is recorded whatever happened to the lease
// meanwhile (the email went out); a failure only while the row is still
// this attempt's (its attempt count unchanged), so it never overwrites a
// later attempt's state.
func (s *Sender) record(ctx context.Context, r *entdb.Email, err error) error {
	now := s.cfg.Now()
	if err == nil {
		n, uerr := s.db.Client.Email.Update().Where(entemail.ID(r.ID), entemail.StatusEQ(entemail.StatusPending)).
			SetStatus(entemail.StatusSent).SetSentAt(now).ClearNextAttemptAt().ClearLeaseUntil().SetLastError("").Save(ctx)
		if uerr != nil {
			return uerr
		}
		if n > 0 {
			s.finished(r, entemail.StatusSent, "")
		}
		return nil
	}
	msg := err.Error()
	if len(msg) > maxError {
		msg = msg[:maxError] + "..."
	}
	this := s.db.Client.Email.Update().Where(entemail.ID(r.ID), entemail.StatusEQ(entemail.StatusPending), entemail.Attempts(r.Attempts)).
		ClearLeaseUntil().SetLastError(msg)
	next, ok := s.cfg.Policy.Next(r.CreatedAt, now, r.Attempts)
	if permanent(err) || !ok {
		if !permanent(err) {
			msg = fmt.Sprintf("gave up: not sent within %s after %d attempts; last: %s", s.cfg.Policy.Window, r.Attempts, msg)
			this.SetLastError(msg)
		}
		n, uerr := this.SetStatus(entemail.StatusFailed).ClearNextAttemptAt().Save(ctx)
		if uerr != nil {
			return uerr
		}
		if n > 0 {
			s.finished(r, entemail.StatusFailed, msg)
		}
		return nil
	}
	if _, uerr := this.SetNextAttemptAt(next).Save(ctx); uerr != nil {
		return uerr
	}
	s.logger.Warn("email not sent; retrying", "email", r.ID, "kind", r.Kind, "attempt", r.Attempts, "next", next, "error", msg)
	return nil
}

// finished logs and counts an email that left the outbox.
func (s *Sender) finished(r *entdb.Email, status entemail.Status, why string) {
	if status == entemail.StatusFailed {
		s.logger.Error("email failed for good", "email", r.ID, "kind", r.Kind, "project", r.ProjectID, "attempts", r.Attempts, "error", why)
	} else {
		s.logger.Info("email sent", "email", r.ID, "kind", r.Kind, "project", r.ProjectID)
	}
	if s.observer != nil {
		s.observer.EmailFinished(r.Kind, status.String())
	}
}
