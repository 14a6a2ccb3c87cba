package subscription

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	"github.com/payhook/payhook/ent/db/predicate"
	entsub "github.com/payhook/payhook/ent/db/subscription"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
)

// Limits and defaults of the service.
const (
	// MaxCustomer is the longest customer reference, in bytes.
	MaxCustomer = 256
	// DefaultRenewalExpiry is how long a renewal stays open for new
	// addresses (its held rates end with it).
	DefaultRenewalExpiry = invoice.DefaultExpiry
	// DefaultLimit and MaxLimit bound a page of List.
	DefaultLimit = 50
	MaxLimit     = 500
)

// Config configures the Service.
type Config struct {
	// DB is the database.
	DB *entdb.Client
	// Invoices hands out the renewals' addresses, as for checkouts.
	Invoices *invoice.Service
	// Addresses resolves coins.
	Addresses *address.Service
	// Prices know the currencies and value coins.
	Prices price.Source
	// Rules check webhook URLs (the operator's exceptions included).
	Rules *egress.Rules
	// Now is the clock.
	Now func() time.Time
	// BaseURL is the public base URL of the hosted pages.
	BaseURL string
	// RenewalExpiry is how long a renewal stays open
	// (DefaultRenewalExpiry when 0).
	RenewalExpiry time.Duration
	// HostedAddresses is the most open addresses (of renewals neither paid
	// nor expired) the subscription's hosted page (a Caller that is
	// Hosted) hands out: a payer asking for one more is refused with an
	// *invoice.CapError. The merchant's own requests are never refused,
	// but count. 0: no cap.
	HostedAddresses int
}

// Service creates subscriptions, hands out the addresses of their renewals
// and reports them.
type Service struct {
	cfg Config
}

// New returns the service.
func New(cfg Config) *Service {
	if cfg.RenewalExpiry <= 0 {
		cfg.RenewalExpiry = DefaultRenewalExpiry
	}
	if cfg.Now == nil {
		cfg.Now = clock.UTC
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Service{cfg: cfg}
}

// Request are the parameters of a new subscription, as given.
type Request struct {
	// ProjectID owns the subscription.
	ProjectID int64
	// NotifyURL, Currency and Customer are the request's parameters.
	NotifyURL, Currency, Customer string
	// Options are the option parameters, PERIOD:VALUE each.
	Options []string
	// Post and JSON select the webhooks' transport.
	Post, JSON bool
}

// Create validates r and stores a new subscription. Nothing is stored
// when a parameter is invalid.
func (s *Service) Create(ctx context.Context, r Request) (*entdb.Subscription, error) {
	p, err := project.Get(ctx, s.cfg.DB, r.ProjectID)
	if err != nil {
		return nil, err
	}
	notify, err := invoice.CheckNotifyURL(s.cfg.Rules, r.ProjectID, "notify_url", r.NotifyURL)
	if err != nil {
		return nil, err
	}
	cur, err := invoice.ParseCurrency(s.cfg.Prices, r.Currency, p.Currency)
	if err != nil {
		return nil, err
	}
	opts, err := ParseOptions(r.Options, cur.Decimals)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(r.Customer) {
		return nil, invalid("customer", "is not valid UTF-8")
	}
	if len(r.Customer) > MaxCustomer {
		return nil, invalid("customer", "is longer than %d bytes", MaxCustomer)
	}
	plan := make([]schema.PlanOption, len(opts))
	for i, o := range opts {
		plan[i] = schema.PlanOption{Period: o.Period.String(), Value: o.Value.String()}
	}
	tok, err := token("sub_")
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	return s.cfg.DB.Subscription.Create().SetProjectID(p.ID).SetToken(tok).SetNotifyURL(notify).
		SetCurrency(cur.Code).SetOptions(plan).SetCustomer(r.Customer).SetPost(r.Post || r.JSON).SetJSON(r.JSON).
		SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
}

// token returns prefix and 20 random bytes in lower-case base32.
func token(prefix string) (string, error) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate id: %w", err)
	}
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])), nil
}

// URL is the customer's hosted page of a subscription,
// /subscription/{token}/ (server/web serves it).
func (s *Service) URL(sub *entdb.Subscription) string {
	return s.cfg.BaseURL + "/subscription/" + sub.Token + "/"
}

// Find returns the subscription with token, whatever its project: the
// hosted page knows nothing but the token, which is its capability.
func (s *Service) Find(ctx context.Context, tok string) (*entdb.Subscription, error) {
	sub, err := s.cfg.DB.Subscription.Query().Where(entsub.Token(tok)).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no subscription with token %s", ErrNotFound, quote(tok))
	}
	return sub, err
}

// Get returns the project's subscription with token.
func (s *Service) Get(ctx context.Context, projectID int64, tok string) (*entdb.Subscription, error) {
	sub, err := s.cfg.DB.Subscription.Query().Where(entsub.Token(tok), entsub.ProjectID(projectID)).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no subscription with token %s", ErrNotFound, quote(tok))
	}
	return sub, err
}

// findOption returns the subscription's option of period raw.
func findOption(sub *entdb.Subscription, raw string) (schema.PlanOption, error) {
	names := make([]string, len(sub.Options))
	for i, o := range sub.Options {
		if o.Period == raw {
			return o, nil
		}
		names[i] = o.Period
	}
	return schema.PlanOption{}, address.InvalidForPayer(address.ForPayer("error.option_unknown"), "option", "%s is not an option of this subscription (its options: %s)", quote(raw), strings.Join(names, ", "))
}

// Address hands out an address for coin to pay a renewal of the option
// with period option: the option's open renewal (created when there is
// none), then its address as a checkout's (invoice.Service.Address: the
// same address and quote when asked again).
func (s *Service) Address(ctx context.Context, key invoice.Caller, tok, option, coin string) (*invoice.Quote, error) {
	sub, err := s.Get(ctx, key.ProjectID, tok)
	if err != nil {
		return nil, err
	}
	opt, err := findOption(sub, option)
	if err != nil {
		return nil, err
	}
	value, err := decimal.NewFromString(opt.Value)
	if err != nil {
		return nil, fmt.Errorf("stored option %s of %s: %w", opt.Period, sub.Token, err)
	}
	t, err := s.checkCoin(ctx, sub.ProjectID, coin)
	if err != nil {
		return nil, err
	}
	inv, created, err := s.openRenewal(ctx, sub, opt.Period, value)
	if err != nil {
		return nil, err
	}
	if key.Hosted {
		err = s.checkHostedCap(ctx, sub, inv, t)
	}
	var q *invoice.Quote
	if err == nil {
		q, err = s.cfg.Invoices.Address(ctx, invoice.Subscription, key, inv.PublicID, coin)
	}
	if err != nil && created {
		// Nothing stays behind a refused request: a renewal this request
		// created without any address goes.
		if n, cerr := s.cfg.DB.Address.Query().Where(entaddress.InvoiceID(inv.ID)).Count(ctx); cerr == nil && n == 0 {
			_ = s.cfg.DB.Invoice.DeleteOneID(inv.ID).Exec(ctx)
		}
	}
	return q, err
}

// checkCoin refuses a coin payhook or the project does not take, before
// anything is stored, and returns its ticker.
func (s *Service) checkCoin(ctx context.Context, projectID int64, coin string) (chains.Ticker, error) {
	t, err := s.cfg.Addresses.Lookup(strings.Replace(strings.TrimSpace(coin), "_", "/", 1))
	if errors.Is(err, chains.ErrUnknownTicker) {
		return t, address.InvalidForPayer(address.ForPayer("error.coin_unknown"), "coin", "%s is not a coin payhook supports (GET /info/ lists them)", quote(coin))
	}
	if err != nil {
		return t, err
	}
	p, err := project.Get(ctx, s.cfg.DB, projectID)
	if err != nil {
		return t, err
	}
	if len(p.Tickers) > 0 {
		for _, tk := range p.Tickers {
			if tk == t.Ticker {
				return t, nil
			}
		}
		return t, address.InvalidForPayer(address.ForPayer("error.coin_not_accepted", strings.ToUpper(t.Coin)), "coin", "this project does not accept %s", t.Ticker)
	}
	return t, nil
}

// checkHostedCap refuses a new address of t for renewal inv of sub from
// the hosted page when sub's open renewals have HostedAddresses addresses
// already; the address inv has for t, if any, is handed out again.
// Concurrent choices may pass the count together: at most one more each,
// which the page's per-network limit bounds.
func (s *Service) checkHostedCap(ctx context.Context, sub *entdb.Subscription, inv *entdb.Invoice, t chains.Ticker) error {
	limit := s.cfg.HostedAddresses
	if limit <= 0 {
		return nil
	}
	if _, err := s.cfg.Addresses.FindForInvoice(ctx, inv.ProjectID, inv.ID, t.Ticker); err == nil {
		return nil
	} else if !errors.Is(err, address.ErrNotFound) {
		return err
	}
	now := s.cfg.Now()
	open, err := s.cfg.DB.Invoice.Query().
		Where(entinvoice.SubscriptionID(sub.ID), entinvoice.KindEQ(entinvoice.KindSubscription),
			entinvoice.StatusIn(openStatuses...), entinvoice.ExpiresAtGT(now)).All(ctx)
	if err != nil {
		return err
	}
	ids := make([]int64, len(open))
	first := time.Time{}
	for i, r := range open {
		ids[i] = r.ID
		if first.IsZero() || r.ExpiresAt.Before(first) {
			first = *r.ExpiresAt
		}
	}
	n, err := s.cfg.DB.Address.Query().Where(entaddress.InvoiceIDIn(ids...)).Count(ctx)
	if err != nil || n < limit {
		return err
	}
	minutes := max((first.Sub(now)+time.Minute-1)/time.Minute, 1)
	return &invoice.CapError{
		Reason: fmt.Sprintf("This subscription has %d payment addresses open, the most its page hands out: pay to one of them, or choose again in %d min, when the oldest expires.",
			n, minutes),
		Payer: address.ForPayer("error.cap_subscription", n, int(minutes)),
	}
}

// openStatuses are the invoice_status values of a renewal that may still
// be paid into.
var openStatuses = []entinvoice.Status{entinvoice.StatusWaiting, entinvoice.StatusPending, entinvoice.StatusPartial}

// openRenewal returns the option's open renewal, creating it when there is
// none. The subscription's row is written first, which serialises
// concurrent requests of one subscription (a row lock in PostgreSQL, the
// write lock in SQLite), so there is at most one open renewal per option.
func (s *Service) openRenewal(ctx context.Context, sub *entdb.Subscription, period string, value decimal.Decimal) (*entdb.Invoice, bool, error) {
	var inv *entdb.Invoice
	created := false
	err := store.WithTx(ctx, s.cfg.DB, func(tx *entdb.Tx) error {
		now := s.cfg.Now()
		if err := tx.Subscription.UpdateOneID(sub.ID).SetUpdatedAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("lock subscription %s: %w", sub.Token, err)
		}
		var err error
		inv, err = tx.Invoice.Query().
			Where(entinvoice.SubscriptionID(sub.ID), entinvoice.KindEQ(entinvoice.KindSubscription),
				entinvoice.OptionEQ(period), entinvoice.StatusIn(openStatuses...), entinvoice.ExpiresAtGT(now)).
			Order(entdb.Desc(entinvoice.FieldID)).First(ctx)
		if err == nil {
			return nil
		}
		if !entdb.IsNotFound(err) {
			return err
		}
		id, err := token("ren_")
		if err != nil {
			return err
		}
		inv, err = tx.Invoice.Create().SetProjectID(sub.ProjectID).SetPublicID(id).SetKind(entinvoice.KindSubscription).
			SetNotifyURL(sub.NotifyURL).SetCurrency(sub.Currency).SetValue(value).
			SetExpiresAt(now.Add(s.cfg.RenewalExpiry)).SetPost(sub.Post).SetJSON(sub.JSON).
			SetSubscriptionID(sub.ID).SetOption(period).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		created = err == nil
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("renewal of %s: %w", sub.Token, err)
	}
	return inv, created, nil
}

// View is a subscription as fetch and list report it.
type View struct {
	// Subscription is the stored subscription.
	Subscription *entdb.Subscription
	// Status is its status now.
	Status Status
	// Renewals are its renewals with a detected payment, oldest first.
	Renewals []Renewal
}

// Renewal is one renewal with a detected payment.
type Renewal struct {
	// Invoice is the renewal.
	Invoice *entdb.Invoice
	// Status is its invoice_status now: as stored by the reactor, expired
	// once past its expiry unpaid.
	Status invoice.Status
	// Payments are its payments (dropped and reverted ones left out),
	// oldest first, with their addresses.
	Payments []*entdb.Payment
	// ReceivedFiat is received_fiat (see ReceivedFiat); nil when unknown.
	ReceivedFiat *decimal.Decimal
}

// Fetch returns the project's subscription with token.
func (s *Service) Fetch(ctx context.Context, projectID int64, tok string) (*View, error) {
	sub, err := s.Get(ctx, projectID, tok)
	if err != nil {
		return nil, err
	}
	vs, err := s.views(ctx, []*entdb.Subscription{sub})
	if err != nil {
		return nil, err
	}
	return &vs[0], nil
}

// List returns a page of the project's subscriptions, newest first, and
// the cursor of the next page ("" at the end). limit 0 is DefaultLimit.
func (s *Service) List(ctx context.Context, projectID int64, limit int, cursor string) ([]View, string, error) {
	return s.page(ctx, []predicate.Subscription{entsub.ProjectID(projectID)}, limit, cursor, "next_cursor of the previous page")
}

// page returns the subscriptions that match where, newest first, after
// cursor (an id; where a caller's next cursor comes from is cursorHint, for
// the error), limit of them (DefaultLimit when 0), and the next cursor.
func (s *Service) page(ctx context.Context, where []predicate.Subscription, limit int, cursor, cursorHint string) ([]View, string, error) {
	if limit < 0 || limit > MaxLimit {
		return nil, "", invalid("limit", "must be between 1 and %d", MaxLimit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	q := s.cfg.DB.Subscription.Query().Where(where...)
	if cursor != "" {
		before, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || before <= 0 {
			return nil, "", invalid("cursor", "%s is not a cursor of this listing (%s)", quote(cursor), cursorHint)
		}
		q.Where(entsub.IDLT(before))
	}
	subs, err := q.Order(entdb.Desc(entsub.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(subs) > limit {
		subs = subs[:limit]
		next = strconv.FormatInt(subs[limit-1].ID, 10)
	}
	vs, err := s.views(ctx, subs)
	return vs, next, err
}

// views loads the renewals and payments of subs.
func (s *Service) views(ctx context.Context, subs []*entdb.Subscription) ([]View, error) {
	now := s.cfg.Now()
	out := make([]View, len(subs))
	if len(subs) == 0 {
		return out, nil
	}
	ids := make([]int64, len(subs))
	at := map[int64]int{}
	for i, sub := range subs {
		ids[i] = sub.ID
		at[sub.ID] = i
		out[i] = View{Subscription: sub, Status: StatusAt(sub.ExpiresAt, now), Renewals: []Renewal{}}
	}
	invs, err := s.cfg.DB.Invoice.Query().
		Where(entinvoice.SubscriptionIDIn(ids...), entinvoice.KindEQ(entinvoice.KindSubscription)).
		Order(entdb.Asc(entinvoice.FieldID)).All(ctx)
	if err != nil || len(invs) == 0 {
		return out, err
	}
	invIDs := make([]int64, len(invs))
	for i, inv := range invs {
		invIDs[i] = inv.ID
	}
	byInvoice, err := invoice.PaymentsByInvoice(ctx, s.cfg.DB, invIDs, true)
	if err != nil {
		return nil, err
	}
	for _, inv := range invs {
		ps := byInvoice[inv.ID]
		if len(ps) == 0 {
			continue
		}
		v := &out[at[*inv.SubscriptionID]]
		v.Renewals = append(v.Renewals, Renewal{
			Invoice:      inv,
			Status:       renewalStatus(inv, now),
			Payments:     ps,
			ReceivedFiat: ReceivedFiat(invoice.States(ps)),
		})
	}
	return out, nil
}

// renewalStatus is a renewal's invoice_status as its reactor stored it
// (what its last webhook said), expired once past its expiry unpaid.
func renewalStatus(inv *entdb.Invoice, now time.Time) invoice.Status {
	st := invoice.Status(inv.Status)
	if st != invoice.Paid && inv.ExpiresAt != nil && !now.Before(*inv.ExpiresAt) {
		return invoice.Expired
	}
	return st
}

// FiatPlaces is the minor unit of currency (2 when unknown).
func (s *Service) FiatPlaces(currency string) int32 {
	return invoice.FiatPlaces(s.cfg.Prices, currency)
}
