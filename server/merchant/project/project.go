// Package project manages the projects of the merchant interface: a project
// owns API keys, addresses, invoices and notifications, holds the IPN secret
// that signs its webhooks (rotated with a grace period during which the old
// secret also signs), its payout wallets per ticker, its fiat currency,
// default confirmations and accepted tickers.
//
// Secrets are stored in clear (an HMAC needs the secret itself); they are
// never logged and appear in no error message.
package project

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	entdb "github.com/payhook/payhook/ent/db"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/egress"
)

// DefaultName is the name of the project that keys created without a
// project join (and that existing keys moved into when projects arrived).
const DefaultName = "default"

// DefaultGrace is how long a rotated-out secret keeps signing.
const DefaultGrace = 24 * time.Hour

// ShareDecimals is the most decimal places a wallet's share has (as the
// low-level API's shares).
const ShareDecimals = 8

// SecretPrefix starts every IPN secret (the Standard Webhooks convention).
const SecretPrefix = "whsec_"

// NewSecret returns a fresh IPN secret: whsec_ and 32 random bytes in
// standard Base64.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate ipn secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:]), nil
}

// Params are the settings of a new project.
type Params struct {
	// Name labels the project; required.
	Name string
	// Currency is its fiat currency (ISO 4217, upper case); USD when empty.
	Currency string
	// Wallets are its payout wallets per ticker.
	Wallets map[string][]schema.Destination
	// Tickers are the coins it accepts; empty accepts all.
	Tickers []string
	// Confirmations are its default required confirmations per ticker.
	Confirmations map[string]int32
}

// Create stores a new project with a fresh IPN secret.
func Create(ctx context.Context, db *entdb.Client, p Params, now time.Time) (*entdb.Project, error) {
	secret, err := NewSecret()
	if err != nil {
		return nil, err
	}
	return create(ctx, db, p, secret, now)
}

// create stores a new project with secret ("" only for one that waits for
// the server to give it one: see Default).
func create(ctx context.Context, db *entdb.Client, p Params, secret string, now time.Time) (*entdb.Project, error) {
	name := strings.TrimSpace(p.Name)
	if name == "" {
		return nil, invalid("name must not be empty")
	}
	cur := strings.ToUpper(strings.TrimSpace(p.Currency))
	if cur == "" {
		cur = "USD"
	}
	if !currencyCode(cur) {
		return nil, invalid("currency %q is not a three-letter ISO 4217 code", p.Currency)
	}
	wallets := map[string][]schema.Destination{}
	for t, ds := range p.Wallets {
		if err := checkWallet(t, ds); err != nil {
			return nil, err
		}
		wallets[t] = ds
	}
	tickers := append([]string{}, p.Tickers...)
	confs := map[string]int32{}
	for t, n := range p.Confirmations {
		confs[t] = n
	}
	return db.Project.Create().SetName(name).SetCurrency(cur).SetIpnSecret(secret).
		SetWallets(wallets).SetConfirmations(confs).SetTickers(tickers).
		SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
}

func currencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

func checkWallet(ticker string, ds []schema.Destination) error {
	if strings.TrimSpace(ticker) == "" {
		return invalid("wallet ticker must not be empty")
	}
	if len(ds) == 0 {
		return invalid("wallet %s: at least one address is required", ticker)
	}
	total := decimal.Zero
	for _, d := range ds {
		if strings.TrimSpace(d.Address) == "" {
			return invalid("wallet %s: address must not be empty", ticker)
		}
		if !d.Share.IsPositive() || !d.Share.Truncate(ShareDecimals).Equal(d.Share) {
			return invalid("wallet %s: share of %s must be positive, with at most %d decimals", ticker, d.Address, ShareDecimals)
		}
		total = total.Add(d.Share)
	}
	if !total.Equal(decimal.NewFromInt(1)) {
		return invalid("wallet %s: shares add up to %s, want 1", ticker, total)
	}
	return nil
}

// Get returns a project.
func Get(ctx context.Context, db *entdb.Client, id int64) (*entdb.Project, error) {
	p, err := db.Project.Get(ctx, id)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return p, err
}

// List returns every project, oldest first.
func List(ctx context.Context, db *entdb.Client) ([]*entdb.Project, error) {
	return db.Project.Query().Order(entdb.Asc(entproject.FieldID)).All(ctx)
}

// Default returns the default project, creating it when there is none.
// Concurrent callers on an empty database may each create one; all of them
// then use the oldest.
func Default(ctx context.Context, db *entdb.Client, now time.Time) (*entdb.Project, error) {
	p, err := db.Project.Query().Where(entproject.Name(DefaultName)).Order(entdb.Asc(entproject.FieldID)).First(ctx)
	if err == nil {
		return p, nil
	}
	if !entdb.IsNotFound(err) {
		return nil, fmt.Errorf("find default project: %w", err)
	}
	if _, err := Create(ctx, db, Params{Name: DefaultName}, now); errors.Is(err, store.ErrNoSecretsKey) {
		// An admin command on a database no server has opened yet (the
		// first `payhook apikey create`) has no secrets key: the project
		// waits for its secret, which the server gives it when it starts
		// (EnsureSecrets), as it did for projects of older versions.
		if _, err := create(ctx, db, Params{Name: DefaultName}, "", now); err != nil {
			return nil, fmt.Errorf("create default project: %w", err)
		}
	} else if err != nil {
		return nil, err
	}
	return db.Project.Query().Where(entproject.Name(DefaultName)).Order(entdb.Asc(entproject.FieldID)).First(ctx)
}

// EnsureSecrets gives every project without an IPN secret a fresh one (the
// migration that introduced projects cannot generate secrets in SQL).
func EnsureSecrets(ctx context.Context, db *entdb.Client) error {
	ps, err := db.Project.Query().Where(entproject.IpnSecret("")).All(ctx)
	if err != nil {
		return fmt.Errorf("find projects without a secret: %w", err)
	}
	for _, p := range ps {
		s, err := NewSecret()
		if err != nil {
			return err
		}
		if _, err := db.Project.Update().Where(entproject.ID(p.ID), entproject.IpnSecret("")).SetIpnSecret(s).Save(ctx); err != nil {
			return fmt.Errorf("store secret of project %d: %w", p.ID, err)
		}
	}
	return nil
}

// RotateSecret replaces a project's IPN secret with a fresh one and returns
// it; the old secret keeps signing (beside the new one) for grace.
func RotateSecret(ctx context.Context, db *entdb.Client, id int64, grace time.Duration, now time.Time) (string, error) {
	if grace < 0 {
		return "", invalid("grace must not be negative")
	}
	p, err := Get(ctx, db, id)
	if err != nil {
		return "", err
	}
	s, err := NewSecret()
	if err != nil {
		return "", err
	}
	until := now.Add(grace)
	// The secret is sealed at rest (each sealing differs), so the row's
	// last change, not the secret, tells whether another request rotated
	// it meanwhile.
	n, err := db.Project.Update().Where(entproject.ID(id), entproject.UpdatedAt(p.UpdatedAt)).
		SetIpnSecret(s).SetPreviousIpnSecret(p.IpnSecret).SetPreviousSecretUntil(until).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return "", fmt.Errorf("rotate secret of project %d: %w", id, err)
	}
	if n == 0 {
		return "", fmt.Errorf("%w: project %d was changed by another request while its secret was rotated; try again", ErrConcurrent, id)
	}
	return s, nil
}

// Secrets returns the secrets that sign for a project at time at: the
// current one, then the previous one while its grace period lasts.
func Secrets(p *entdb.Project, at time.Time) []string {
	out := []string{p.IpnSecret}
	if p.PreviousIpnSecret != "" && p.PreviousSecretUntil != nil && at.Before(*p.PreviousSecretUntil) {
		out = append(out, p.PreviousIpnSecret)
	}
	return out
}

// KeyRef is the signing key reference of a project's webhooks.
func KeyRef(id int64) string { return "project:" + strconv.FormatInt(id, 10) }

// ParseKeyRef returns the project id of a KeyRef.
func ParseKeyRef(ref string) (int64, error) {
	s, ok := strings.CutPrefix(ref, "project:")
	if !ok {
		return 0, invalid("signing key %q is not a project's", ref)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, invalid("signing key %q is not a project's", ref)
	}
	return id, nil
}

// Ring gives the notifier a project's secrets at the moment of each attempt,
// read from the database, so a rotation signs the next attempt. A Ring made
// by NewRing keeps what it read for a short while (its TTL), so a busy
// project's attempts do not each read its row: a rotation then signs the
// attempts that start after the TTL (the previous secret stays valid for
// the rotation's grace).
type Ring struct {
	// DB is the database.
	DB *entdb.Client

	cache *ringCache
}

// ringCache is what a Ring read, per project, and until when it serves.
type ringCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[int64]ringEntry
}

type ringEntry struct {
	p     *entdb.Project
	until time.Time
}

// NewRing returns a Ring over db that keeps a project's secrets for ttl
// (by now's clock) before it reads them again.
func NewRing(db *entdb.Client, ttl time.Duration, now func() time.Time) Ring {
	return Ring{DB: db, cache: &ringCache{ttl: ttl, now: now, entries: map[int64]ringEntry{}}}
}

// Secrets returns the secrets valid at at for the project a KeyRef names.
func (r Ring) Secrets(ctx context.Context, key string, at time.Time) ([]string, error) {
	id, err := ParseKeyRef(key)
	if err != nil {
		return nil, err
	}
	p, err := r.project(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.IpnSecret == "" {
		return nil, fmt.Errorf("project %d has no ipn secret yet", id)
	}
	return Secrets(p, at), nil
}

// project reads project id, or takes it from the cache while it serves.
func (r Ring) project(ctx context.Context, id int64) (*entdb.Project, error) {
	c := r.cache
	if c == nil {
		return Get(ctx, r.DB, id)
	}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.p, nil
	}
	p, err := Get(ctx, r.DB, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.entries[id] = ringEntry{p: p, until: now.Add(c.ttl)}
	c.mu.Unlock()
	return p, nil
}

// SetWallet replaces a project's payout wallets for ticker.
func SetWallet(ctx context.Context, db *entdb.Client, id int64, ticker string, ds []schema.Destination, now time.Time) error {
	if err := checkWallet(ticker, ds); err != nil {
		return err
	}
	return updateWallets(ctx, db, id, now, ticker, func(w map[string][]schema.Destination) { w[ticker] = ds })
}

// RemoveWallet removes a project's payout wallets for ticker; its payments
// are then held (payhook funds lists them).
func RemoveWallet(ctx context.Context, db *entdb.Client, id int64, ticker string, now time.Time) error {
	return updateWallets(ctx, db, id, now, ticker, func(w map[string][]schema.Destination) { delete(w, ticker) })
}

// updateWallets changes project id's payout wallets, and makes its
// addresses of ticker come from the operator's seed again (a watch-only
// key of the ticker is set aside; its addresses are still watched, and set
// again it continues where it stopped).
func updateWallets(ctx context.Context, db *entdb.Client, id int64, now time.Time, ticker string, change func(map[string][]schema.Destination)) error {
	tx, err := db.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	p, err := tx.Project.Get(ctx, id)
	if entdb.IsNotFound(err) {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	if err != nil {
		return err
	}
	w := map[string][]schema.Destination{}
	for k, v := range p.Wallets {
		w[k] = v
	}
	change(w)
	keys := maps.Clone(p.WatchKeys)
	delete(keys, ticker)
	if keys == nil {
		keys = map[string]int64{}
	}
	if _, err := tx.Project.UpdateOneID(id).SetWallets(w).SetWatchKeys(keys).SetUpdatedAt(now).Save(ctx); err != nil {
		return fmt.Errorf("store wallets of project %d: %w", id, err)
	}
	return tx.Commit()
}

// ParseWallet parses a --wallet flag value, TICKER=ADDRESS[,ADDRESS@SHARE...]:
// addresses without a share split what is left after the explicit shares
// equally (a single address takes everything).
func ParseWallet(s string) (string, []schema.Destination, error) {
	ticker, list, ok := strings.Cut(s, "=")
	ticker = strings.ToLower(strings.TrimSpace(ticker))
	if !ok || ticker == "" || strings.TrimSpace(list) == "" {
		return "", nil, invalid("wallet %q: want TICKER=ADDRESS[,ADDRESS@SHARE...]", s)
	}
	var ds []schema.Destination
	var unshared []int
	total := decimal.Zero
	for _, part := range strings.Split(list, ",") {
		addr, share, has := strings.Cut(strings.TrimSpace(part), "@")
		addr = strings.TrimSpace(addr)
		if addr == "" {
			return "", nil, invalid("wallet %q: empty address", s)
		}
		d := schema.Destination{Address: addr}
		if has {
			v, err := decimal.NewFromString(strings.TrimSpace(share))
			if err != nil || !v.IsPositive() || v.GreaterThan(decimal.NewFromInt(1)) || !v.Truncate(ShareDecimals).Equal(v) {
				return "", nil, invalid("wallet %q: share %q of %s must be a number above 0 and at most 1, with at most %d decimals", s, share, addr, ShareDecimals)
			}
			d.Share = v
			total = total.Add(v)
		} else {
			unshared = append(unshared, len(ds))
		}
		ds = append(ds, d)
	}
	rest := decimal.NewFromInt(1).Sub(total)
	if rest.IsNegative() || (len(unshared) == 0 && !rest.IsZero()) {
		return "", nil, invalid("wallet %q: shares add up to %s, want 1", s, total)
	}
	if len(unshared) > 0 {
		if !rest.IsPositive() {
			return "", nil, invalid("wallet %q: no share left for the addresses without one", s)
		}
		// Equal parts truncated to ShareDecimals; what truncation leaves
		// goes to the first, so the shares add up to exactly 1 (a third
		// each would not: 0.3333... x 3 < 1, and forwarding refuses it).
		each := rest.Div(decimal.NewFromInt(int64(len(unshared)))).Truncate(ShareDecimals)
		if !each.IsPositive() {
			return "", nil, invalid("wallet %q: too many addresses to share what is left", s)
		}
		for _, i := range unshared {
			ds[i].Share = each
		}
		ds[unshared[0]].Share = each.Add(rest.Sub(each.Mul(decimal.NewFromInt(int64(len(unshared))))))
	}
	return ticker, ds, nil
}

// CheckAddresses checks a wallet for t: every destination is an address
// of t's chain and network, appears once however it is spelled
// (Family.DestinationKey), and receives at least what its network carries
// of the ticker's minimum payment (distribute.CheckOutputs), so that no
// payment to the wallet plans an output that can never be sent.
func CheckAddresses(t chains.Ticker, ds []schema.Destination) error {
	seen := make(map[string]bool, len(ds))
	shares := make([]distribute.Share, len(ds))
	for i, d := range ds {
		if err := chains.ValidateAddress(t, d.Address); err != nil {
			var ae *chains.AddressError
			if errors.As(err, &ae) {
				return invalid("%s is not a valid %s address: %s", d.Address, t.Ticker, ae.Reason)
			}
			return invalid("%s addresses cannot be checked by this server: %v", t.Ticker, err)
		}
		key, err := t.Rules().DestinationKey(t, d.Address)
		if err != nil {
			return invalid("%s addresses cannot be checked by this server: %v", t.Ticker, err)
		}
		if seen[key] {
			return invalid("wallet %s: destination %s is listed twice", t.Ticker, d.Address)
		}
		seen[key] = true
		shares[i] = distribute.Share{Address: d.Address, Share: d.Share}
	}
	if err := distribute.CheckOutputs(t, shares); err != nil {
		return invalid("wallet %s: %v", t.Ticker, err)
	}
	return nil
}

// WalletTickers returns the tickers a project has wallets for, sorted.
func WalletTickers(p *entdb.Project) []string {
	ts := make([]string, 0, len(p.Wallets))
	for t := range p.Wallets {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}

// SetPayoutNotify sets where project id's payout webhooks go (rawURL, ""
// for none) and how (a form POST, or a GET when post is false). The URL
// must be http or https, without credentials or a fragment; with rules
// (the server's: the dashboard and the operator API) it must also pass the
// destination rules with the operator's exceptions for project id, as
// every webhook URL does when it is accepted. Without rules (nil: the
// offline `payhook project update`, which does not know serve's
// --allow-private-endpoint) only the URL rules apply. Either way, where it
// may connect is checked again at every attempt, for this project.
func SetPayoutNotify(ctx context.Context, db *entdb.Client, rules *egress.Rules, id int64, rawURL string, post bool, now time.Time) error {
	u := ""
	if rawURL != "" {
		var err error
		if u, err = egress.CheckURL(rawURL); err != nil {
			return invalid("payout_notify_url: %v", err)
		}
		if rules != nil {
			if _, err := rules.Check(id, u); err != nil {
				return invalid("payout_notify_url: %v; webhooks must reach a public HTTP(S) address", err)
			}
		}
	}
	n, err := db.Project.Update().Where(entproject.ID(id)).
		SetPayoutNotifyURL(u).SetPayoutNotifyPost(post).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("set payout webhook of project %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return nil
}

// SetPayoutLimit sets what project id may pay out of ticker without a
// dashboard user's approval: perPayout per payout and perDay per UTC day,
// in coin units; zero is no limit, and both zero remove the coin's limits.
func SetPayoutLimit(ctx context.Context, db *entdb.Client, id int64, ticker string, perPayout, perDay decimal.Decimal, now time.Time) error {
	if perPayout.Sign() < 0 || perDay.Sign() < 0 {
		return invalid("payout limit: amounts must not be negative")
	}
	return store.WithTx(ctx, db, func(tx *entdb.Tx) error {
		p, err := tx.Project.Get(ctx, id)
		if entdb.IsNotFound(err) {
			return fmt.Errorf("%w: %d", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		limits := map[string]schema.PayoutLimit{}
		for k, v := range p.PayoutLimits {
			limits[k] = v
		}
		if perPayout.IsZero() && perDay.IsZero() {
			delete(limits, ticker)
		} else {
			limits[ticker] = schema.PayoutLimit{PerPayout: perPayout, PerDay: perDay}
		}
		return tx.Project.UpdateOne(p).SetPayoutLimits(limits).SetUpdatedAt(now).Exec(ctx)
	})
}

// ToleranceDecimals is the most decimal places an underpaid_tolerance has
// (a hundredth of a percent).
const ToleranceDecimals = 2

// ParseTolerance parses an underpaid_tolerance: a percent from 0 to 100
// with at most ToleranceDecimals decimal places ("1", "0.5"). The error
// says what is wrong, without naming the parameter (callers name it).
func ParseTolerance(raw string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(strings.TrimSpace(raw))
	if err != nil {
		return decimal.Zero, fmt.Errorf("%q is not a decimal percent such as 0.5", truncate(raw))
	}
	if d.IsNegative() || d.GreaterThan(decimal.NewFromInt(100)) {
		return decimal.Zero, fmt.Errorf("%s is not a percent from 0 to 100", d)
	}
	if !d.Truncate(ToleranceDecimals).Equal(d) {
		return decimal.Zero, fmt.Errorf("%s has more than %d decimal places", d, ToleranceDecimals)
	}
	return d, nil
}

// ParseLatePayments parses a late_payments policy: credit or refund. The
// error says what is wrong, without naming the parameter.
func ParseLatePayments(raw string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case schema.LateCredit, schema.LateRefund:
		return v, nil
	}
	return "", fmt.Errorf("%q is not a late payment policy (credit or refund)", truncate(raw))
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// SetPaymentExceptions sets project id's payment exception rules, which
// its new checkouts copy unless their request names their own: tolerance
// is the underpaid_tolerance (nil leaves it), late the late_payments
// policy (nil leaves it), autoRefund whether payers' refunds of
// overpayments are approved at once (nil leaves it). Checkouts created
// before keep theirs.
func SetPaymentExceptions(ctx context.Context, db *entdb.Client, id int64, tolerance *decimal.Decimal, late *string, autoRefund *bool, now time.Time) error {
	u := db.Project.Update().Where(entproject.ID(id)).SetUpdatedAt(now)
	if tolerance != nil {
		if _, err := ParseTolerance(tolerance.String()); err != nil {
			return invalid("underpaid_tolerance: %v", err)
		}
		u.SetUnderpaidTolerance(*tolerance)
	}
	if late != nil {
		v, err := ParseLatePayments(*late)
		if err != nil {
			return invalid("late_payments: %v", err)
		}
		u.SetLatePayments(entproject.LatePayments(v))
	}
	if autoRefund != nil {
		u.SetAutoRefundOverpaid(*autoRefund)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("set payment exceptions of project %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return nil
}
