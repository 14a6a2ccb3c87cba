package project

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/watchonly"
	entdb "github.com/payhook/payhook/ent/db"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
)

// Request is a project to create, as the operator asks for it: the specs
// are parsed and checked against the ticker registry by Service.Create.
type Request struct {
	// Name and Currency are the project's.
	Name, Currency string
	// Wallets are TICKER=ADDRESS[,ADDRESS@SHARE...] specs.
	Wallets []string
	// Tickers are the accepted coins; empty accepts all.
	Tickers []string
	// Confirmations are TICKER=N specs.
	Confirmations []string
	// APIKeyScopes are the scopes of the project's first API key (every
	// scope when empty).
	APIKeyScopes []string
}

// KeyIssuer creates a project's API key with scopes (every scope when
// empty) with db (the creating transaction's client) and returns it in
// clear: apikey.CreateScoped. It is declared here, where it is consumed,
// because server/apikey imports this package.
type KeyIssuer func(ctx context.Context, db *entdb.Client, name string, projectID int64, scopes []string, now time.Time) (string, *entdb.APIKey, error)

// IssuedKey is a new project's first API key, in clear this once, and its
// scopes.
type IssuedKey struct {
	Key    string
	Scopes []string
}

// ServiceConfig is what a Service needs.
type ServiceConfig struct {
	// DB is the database.
	DB *entdb.Client
	// Registry checks wallet addresses and names the tickers.
	Registry *chains.Registry
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
	// IssueKey creates a new project's first API key.
	IssueKey KeyIssuer
	// Rules, when set, check a payout webhook URL as the server's
	// notifier will (the operator's exceptions of the project included);
	// nil checks the URL rules only (see SetPayoutNotify).
	Rules *egress.Rules
}

// Service is the operator's project administration: the ProjectService's
// logic, shared by the API (server/rpc) and the `payhook project` commands
// (server/admin). Specs are parsed and wallet addresses checked against the
// ticker registry; bad input wraps ErrInvalid and names the field.
type Service struct {
	cfg ServiceConfig
}

// NewService returns the project administration of cfg.DB.
func NewService(cfg ServiceConfig) *Service {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	return &Service{cfg: cfg}
}

// Now is the service's clock (whether a rotation's grace still runs).
func (s *Service) Now() time.Time { return s.cfg.Now() }

// wallet parses and checks a wallet spec.
func (s *Service) wallet(spec string) (string, []schema.Destination, error) {
	ticker, ds, err := ParseWallet(spec)
	if err != nil {
		return "", nil, err
	}
	t, ok := s.cfg.Registry.Lookup(chainsTicker(ticker))
	if !ok {
		return "", nil, fmt.Errorf("%w: wallet %q: unknown ticker %s", ErrInvalid, spec, ticker)
	}
	if err := CheckAddresses(t, ds); err != nil {
		return "", nil, fmt.Errorf("wallet %q: %w", spec, err)
	}
	return t.Ticker, ds, nil
}

// watchKey parses a TICKER=KEY wallet spec, a merchant's extended public
// key or output descriptor (IsKeySpec): ok is false for a spec of
// addresses. gap is the key's gap limit, 0 to keep it.
func (s *Service) watchKey(spec string, gap int) (WatchKeyParams, bool, error) {
	name, value, found := strings.Cut(spec, "=")
	if !found || !IsKeySpec(value) {
		return WatchKeyParams{}, false, nil
	}
	t, err := s.ticker("wallet", name)
	if err != nil {
		return WatchKeyParams{}, true, err
	}
	k, err := watchonly.Parse(t, value)
	if err != nil {
		return WatchKeyParams{}, true, fmt.Errorf("%w: wallet %s: %w", ErrInvalid, t.Ticker, err)
	}
	return WatchKeyParams{Ticker: t, Key: k, GapLimit: gap}, true, nil
}

// SetWatchKey sets project id's watch-only wallet from a TICKER=KEY spec
// (an extended public key or an output descriptor), with gap limit gap (0
// keeps the key's: DefaultGapLimit for a new one).
func (s *Service) SetWatchKey(ctx context.Context, id int64, spec string, gap int) (*entdb.WatchKey, error) {
	w, ok, err := s.watchKey(spec, gap)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalid("wallet %q: want TICKER=KEY, an extended public key or an output descriptor", spec)
	}
	return SetWatchKey(ctx, s.cfg.DB, id, w, s.cfg.Now())
}

// WatchWallets returns project id's watch-only wallets with what their
// merchant's wallet needs to scan.
func (s *Service) WatchWallets(ctx context.Context, id int64) ([]WatchWallet, error) {
	pr, err := Get(ctx, s.cfg.DB, id)
	if err != nil {
		return nil, err
	}
	ws, err := WatchWallets(ctx, s.cfg.DB, pr)
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		t, ok := s.cfg.Registry.Lookup(w.Ticker)
		if !ok {
			continue // a ticker this server no longer runs
		}
		k, err := watchonly.Parse(t, w.Key.Descriptor)
		if err != nil {
			return nil, fmt.Errorf("stored watch key of %s: %w", t.Ticker, err)
		}
		for n := uint32(0); len(ws[i].First) < 3 && n < 10; n++ {
			if a, err := k.Address(n); err == nil {
				ws[i].First = append(ws[i].First, IndexedAddress{Index: n, Address: a})
			}
		}
	}
	return ws, nil
}

// chainsTicker turns trc20_usdt into trc20/usdt.
func chainsTicker(s string) string { return strings.Replace(s, "_", "/", 1) }

// ticker resolves a ticker as the merchant API names it (btc, trc20_usdt,
// trc20/usdt).
func (s *Service) ticker(param, name string) (chains.Ticker, error) {
	t, ok := s.cfg.Registry.Lookup(chainsTicker(strings.ToLower(strings.TrimSpace(name))))
	if !ok {
		return chains.Ticker{}, fmt.Errorf("%w: %s: unknown ticker %q", ErrInvalid, param, name)
	}
	return t, nil
}

// Create creates the project req asks for, with its first API key (named
// as the project), in one transaction; the key is returned in clear this
// once.
func (s *Service) Create(ctx context.Context, req Request) (*entdb.Project, IssuedKey, error) {
	wallets := map[string][]schema.Destination{}
	var watch []WatchKeyParams
	for _, spec := range req.Wallets {
		if w, ok, err := s.watchKey(spec, 0); ok || err != nil {
			if err != nil {
				return nil, IssuedKey{}, err
			}
			watch = append(watch, w)
			continue
		}
		t, ds, err := s.wallet(spec)
		if err != nil {
			return nil, IssuedKey{}, err
		}
		wallets[t] = ds
	}
	var tickers []string
	for _, name := range req.Tickers {
		t, err := s.ticker("tickers", name)
		if err != nil {
			return nil, IssuedKey{}, err
		}
		tickers = append(tickers, t.Ticker)
	}
	confs := map[string]int32{}
	for _, spec := range req.Confirmations {
		name, count, ok := strings.Cut(spec, "=")
		t, err := s.ticker("confirmations", name)
		if err != nil {
			return nil, IssuedKey{}, err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(count), 10, 32)
		if !ok || err != nil || n < int64(t.MinConfirmations) || n > 100 {
			return nil, IssuedKey{}, fmt.Errorf("%w: confirmations %q: want %s=N with N from %d to 100", ErrInvalid, spec, t.Ticker, t.MinConfirmations)
		}
		if fixed, ok := t.Rules().FixedConfirmations(t); ok {
			n = fixed // Solana has no numeric depth
		}
		confs[t.Ticker] = int32(n)
	}
	name, currency := req.Name, req.Currency
	var pr *entdb.Project
	var key IssuedKey
	err := store.WithTx(ctx, s.cfg.DB, func(tx *entdb.Tx) error {
		var err error
		if pr, err = Create(ctx, tx.Client(), Params{Name: name, Currency: currency, Wallets: wallets, Tickers: tickers, Confirmations: confs}, s.cfg.Now()); err != nil {
			return err
		}
		for _, w := range watch {
			if _, err := setWatchKeyTx(ctx, tx, pr.ID, w, s.cfg.Now()); err != nil {
				return err
			}
		}
		if len(watch) > 0 {
			if pr, err = tx.Project.Get(ctx, pr.ID); err != nil {
				return err
			}
		}
		var row *entdb.APIKey
		if key.Key, row, err = s.cfg.IssueKey(ctx, tx.Client(), name, pr.ID, req.APIKeyScopes, s.cfg.Now()); err != nil {
			return err
		}
		key.Scopes = row.Scopes
		return nil
	})
	return pr, key, err
}

// Get returns project id.
func (s *Service) Get(ctx context.Context, id int64) (*entdb.Project, error) {
	return Get(ctx, s.cfg.DB, id)
}

// List lists the projects.
func (s *Service) List(ctx context.Context) ([]*entdb.Project, error) {
	return List(ctx, s.cfg.DB)
}

// RotateSecret rotates project id's IPN secret; the old one signs beside
// the new one for grace.
func (s *Service) RotateSecret(ctx context.Context, id int64, grace time.Duration) (string, error) {
	return RotateSecret(ctx, s.cfg.DB, id, grace, s.cfg.Now())
}

// SetWallet sets project id's payout wallets of a ticker from a
// TICKER=ADDRESS[,ADDRESS@SHARE...] spec.
func (s *Service) SetWallet(ctx context.Context, id int64, spec string) error {
	if w, ok, err := s.watchKey(spec, 0); ok || err != nil {
		if err != nil {
			return err
		}
		_, err = SetWatchKey(ctx, s.cfg.DB, id, w, s.cfg.Now())
		return err
	}
	t, ds, err := s.wallet(spec)
	if err != nil {
		return err
	}
	return SetWallet(ctx, s.cfg.DB, id, t, ds, s.cfg.Now())
}

// SetPayoutNotify sets project id's payout webhook URL ("" for none) and
// transport (form POST, or GET when post is false).
func (s *Service) SetPayoutNotify(ctx context.Context, id int64, rawURL string, post bool) error {
	return SetPayoutNotify(ctx, s.cfg.DB, s.cfg.Rules, id, rawURL, post, s.cfg.Now())
}

// SetPayoutLimit sets project id's payout limits of ticker: perPayout and
// perDay are decimal amounts in coin units, "0" or "" for no limit.
func (s *Service) SetPayoutLimit(ctx context.Context, id int64, ticker, perPayout, perDay string) error {
	t, err := s.ticker("ticker", ticker)
	if err != nil {
		return err
	}
	amount := func(param, v string) (decimal.Decimal, error) {
		if v == "" {
			return decimal.Zero, nil
		}
		d, err := decimal.NewFromString(v)
		if err != nil || d.Sign() < 0 || d.Exponent() < -t.Decimals {
			return decimal.Zero, invalid("%s: %q is not an amount of %s (a non-negative decimal with at most %d places)", param, v, t.Ticker, t.Decimals)
		}
		return d, nil
	}
	pp, err := amount("per_payout", perPayout)
	if err != nil {
		return err
	}
	pd, err := amount("per_day", perDay)
	if err != nil {
		return err
	}
	return SetPayoutLimit(ctx, s.cfg.DB, id, t.Ticker, pp, pd, s.cfg.Now())
}

// RemoveWallet removes project id's payout wallets of ticker.
func (s *Service) RemoveWallet(ctx context.Context, id int64, ticker string) error {
	t, ok := s.cfg.Registry.Lookup(chainsTicker(ticker))
	if ok {
		ticker = t.Ticker
	}
	return RemoveWallet(ctx, s.cfg.DB, id, ticker, s.cfg.Now())
}

// SetPaymentExceptions sets project id's payment exception rules from
// their text: tolerance is an underpaid_tolerance percent, late a
// late_payments policy, autoRefund auto_refund_overpaid; nil leaves a rule
// as it is, and at least one must be given. A bad value is refused naming
// its field, and nothing changes.
func (s *Service) SetPaymentExceptions(ctx context.Context, id int64, tolerance, late *string, autoRefund *bool) error {
	if tolerance == nil && late == nil && autoRefund == nil {
		return invalid("give underpaid_tolerance, late_payments or auto_refund_overpaid")
	}
	var tol *decimal.Decimal
	if tolerance != nil {
		d, err := ParseTolerance(*tolerance)
		if err != nil {
			return invalid("underpaid_tolerance: %v", err)
		}
		tol = &d
	}
	if late != nil {
		if _, err := ParseLatePayments(*late); err != nil {
			return invalid("late_payments: %v", err)
		}
	}
	return SetPaymentExceptions(ctx, s.cfg.DB, id, tol, late, autoRefund, s.cfg.Now())
}

// MaxRateLimit and MaxRateBurst bound a project's rate_limit and
// rate_burst (as ratelimit bounds the server's, a package this one does
// not import).
const (
	MaxRateLimit = 1e6
	MaxRateBurst = 1_000_000
)

// SetRateLimit sets the request limit of each of project id's API keys:
// rate requests per second (0: the server's --key-rate; negative: no
// limit) and burst at once (0: the server's --key-burst); nil leaves one as
// it is, and at least one must be given. A bad value is refused naming its
// field, and nothing changes. Every instance applies it within
// ratelimit.ProjectTTL.
func (s *Service) SetRateLimit(ctx context.Context, id int64, rate *float64, burst *int64) error {
	if rate == nil && burst == nil {
		return invalid("give rate_limit or rate_burst")
	}
	if rate != nil && (math.IsNaN(*rate) || math.IsInf(*rate, 0) || *rate > MaxRateLimit) {
		return invalid("rate_limit: %v is not a rate up to %g requests per second", *rate, float64(MaxRateLimit))
	}
	if burst != nil && (*burst < 0 || *burst > MaxRateBurst) {
		return invalid("rate_burst: %d is not from 0 to %d", *burst, MaxRateBurst)
	}
	u := s.cfg.DB.Project.Update().Where(entproject.ID(id)).SetUpdatedAt(s.cfg.Now())
	if rate != nil {
		r := *rate
		if r < 0 {
			r = -1 // no limit, whatever the negative number
		}
		u.SetRateLimit(r)
	}
	if burst != nil {
		u.SetRateBurst(int(*burst))
	}
	n, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("set rate limit of project %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return nil
}
