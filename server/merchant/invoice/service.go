// Package invoice is the merchant interface's checkouts and deposits: a
// project requests an invoice, the customer gets an address per coin with
// the amount converted at a held rate, and the invoice's reactor turns each
// stage of each payment into a webhook of the spec's merchant table, signed
// per attempt with the project's IPN secret, while it keeps the invoice's
// invoice_status.
package invoice

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entapikey "github.com/payhook/payhook/ent/db/apikey"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	"github.com/payhook/payhook/ent/db/notification"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/project"
)

// Kind is the service an invoice belongs to.
type Kind string

// Kinds of invoice.
const (
	Checkout     Kind = "checkout"
	Deposit      Kind = "deposit"
	Subscription Kind = "subscription"
)

// Defaults of Config.
const (
	// DefaultExpiry is a checkout's expiry when the request names none.
	DefaultExpiry = time.Hour
	// DefaultQuoteTTL is how long a quoted rate is held.
	DefaultQuoteTTL = 30 * time.Minute
)

// Config configures the Service.
type Config struct {
	// DB is the database.
	DB *entdb.Client
	// Addresses hands out addresses.
	Addresses *address.Service
	// Prices value coins in fiat.
	Prices price.Source
	// Rules check webhook URLs (the operator's exceptions included).
	Rules *egress.Rules
	// Now is the clock.
	Now func() time.Time
	// BaseURL is the public base URL of the hosted pages (payment_url).
	BaseURL string
	// Expiry is a checkout's default expiry (DefaultExpiry when 0).
	Expiry time.Duration
	// QuoteTTL is how long a quoted rate is held (DefaultQuoteTTL when 0).
	QuoteTTL time.Duration
	// HostedAddresses is the most addresses a hosted page (a Caller that
	// is Hosted) hands out for one invoice: a payer choosing one more coin
	// is refused with a *CapError. Addresses asked for with an API key are
	// never refused, but count. 0: no cap.
	HostedAddresses int
}

// Service creates invoices and hands out their addresses.
type Service struct {
	cfg Config
}

// New returns the service.
func New(cfg Config) *Service {
	if cfg.Expiry <= 0 {
		cfg.Expiry = DefaultExpiry
	}
	if cfg.QuoteTTL <= 0 {
		cfg.QuoteTTL = DefaultQuoteTTL
	}
	if cfg.Now == nil {
		cfg.Now = clock.UTC
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Service{cfg: cfg}
}

// Request are the parameters of a new checkout or deposit.
type Request struct {
	// ProjectID owns the invoice.
	ProjectID int64
	// NotifyURL, RedirectURL, Value, Currency, ItemDescription, ExpireAt,
	// Post, JSON and Convert are the request's parameters as given (Value,
	// RedirectURL and ExpireAt only for a checkout).
	NotifyURL, RedirectURL, Value, Currency, ItemDescription string
	ExpireAt                                                 int64
	Post, JSON, Convert                                      bool
	// UnderpaidTolerance and LatePayments are a checkout's payment
	// exception rules as given; empty takes the project's.
	UnderpaidTolerance, LatePayments string
	// Email is a checkout's payer's address, emailed a receipt once it is
	// paid (payhook's extension of the family's request); empty: none.
	Email string
}

// Create validates r and stores a new invoice of kind (Checkout or
// Deposit). Nothing is stored when a parameter is invalid.
func (s *Service) Create(ctx context.Context, kind Kind, r Request) (*entdb.Invoice, error) {
	p, err := project.Get(ctx, s.cfg.DB, r.ProjectID)
	if err != nil {
		return nil, err
	}
	notify, err := CheckNotifyURL(s.cfg.Rules, r.ProjectID, "notify_url", r.NotifyURL)
	if err != nil {
		return nil, err
	}
	cur, err := ParseCurrency(s.cfg.Prices, r.Currency, p.Currency)
	if err != nil {
		return nil, err
	}
	if err := CheckDescription(r.ItemDescription); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	c := s.cfg.DB.Invoice.Create().SetProjectID(p.ID).SetKind(entinvoice.Kind(kind)).
		SetNotifyURL(notify).SetCurrency(cur.Code).SetItemDescription(r.ItemDescription).
		SetPost(r.Post || r.JSON).SetJSON(r.JSON).SetConvert(r.Convert).
		SetCreatedAt(now).SetUpdatedAt(now)
	prefix := "dep_"
	if kind == Checkout {
		prefix = "chk_"
		value, err := ParseValue(r.Value, cur)
		if err != nil {
			return nil, err
		}
		exp, err := ParseExpiry(r.ExpireAt, now, s.cfg.Expiry)
		if err != nil {
			return nil, err
		}
		redirect, err := CheckRedirectURL(r.RedirectURL)
		if err != nil {
			return nil, err
		}
		tok, err := token("")
		if err != nil {
			return nil, err
		}
		tol, late, err := exceptionRules(p, r)
		if err != nil {
			return nil, err
		}
		email, err := CheckEmail(r.Email)
		if err != nil {
			return nil, err
		}
		if value != nil {
			if err := s.priceable(p, cur.Code); err != nil {
				return nil, err
			}
		}
		c.SetNillableValue(value).SetExpiresAt(exp).SetRedirectURL(redirect).SetSuccessToken(tok).SetEmail(email).
			SetUnderpaidTolerance(tol).SetLatePayments(entinvoice.LatePayments(late))
	}
	id, err := token(prefix)
	if err != nil {
		return nil, err
	}
	return c.SetPublicID(id).Save(ctx)
}

// exceptionRules are a checkout's underpaid_tolerance and late_payments:
// r's when given (each checked, a bad one named), else project p's.
func exceptionRules(p *entdb.Project, r Request) (decimal.Decimal, string, error) {
	tol, late := p.UnderpaidTolerance, string(p.LatePayments)
	if r.UnderpaidTolerance != "" {
		d, err := project.ParseTolerance(r.UnderpaidTolerance)
		if err != nil {
			return decimal.Zero, "", invalid("underpaid_tolerance", "%v", err)
		}
		tol = d
	}
	if r.LatePayments != "" {
		v, err := project.ParseLatePayments(r.LatePayments)
		if err != nil {
			return decimal.Zero, "", invalid("late_payments", "%v", err)
		}
		late = v
	}
	return tol, late, nil
}

// priceable returns nil when at least one coin project p accepts has a
// price in currency now, and otherwise why none has: a *price.StaleError
// (answered 503) naming the prices, the providers that failed and the
// age of the last known ones. A checkout nobody can pay then fails when
// it is requested, not on its page. A price source that cannot say why
// (the table, which prices what it lists at any age) is not second-guessed:
// its coins without a price are left off the page.
func (s *Service) priceable(p *entdb.Project, currency string) error {
	var errs []error
	for _, t := range s.cfg.Addresses.Registry().All() {
		if len(p.Tickers) > 0 && !contains(p.Tickers, t.Ticker) {
			continue
		}
		if _, ok := Rate(s.cfg.Prices, t, currency); ok {
			return nil
		}
		errs = append(errs, price.Why(s.cfg.Prices, t.Ticker, currency))
	}
	return price.MergeStale(errs...)
}

// token returns prefix and 20 random bytes in lower-case base32.
func token(prefix string) (string, error) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate id: %w", err)
	}
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])), nil
}

// PaymentURL is the hosted page of an invoice: /payment/{payment_id}/ for
// a checkout, /deposit/{payment_id}/ for a deposit (server/web serves
// both).
func (s *Service) PaymentURL(inv *entdb.Invoice) string {
	if inv.Kind == entinvoice.KindDeposit {
		return s.cfg.BaseURL + "/deposit/" + inv.PublicID + "/"
	}
	return s.cfg.BaseURL + "/payment/" + inv.PublicID + "/"
}

// Find returns the invoice of kind with public id paymentID, whatever its
// project: the hosted pages know nothing but the id, which is their
// capability (unguessable, 160 random bits).
func (s *Service) Find(ctx context.Context, kind Kind, paymentID string) (*entdb.Invoice, error) {
	inv, err := s.cfg.DB.Invoice.Query().
		Where(entinvoice.PublicID(paymentID), entinvoice.KindEQ(entinvoice.Kind(kind))).
		Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no %s with payment_id %q", ErrNotFound, kind, truncate(paymentID))
	}
	return inv, err
}

// HostedCaller is who asks for an address from a hosted page: the
// invoice's project, acting through its first unrevoked API key (its first
// key when all are revoked), which an address row records as its creator.
// An invoice stores no key of its own, and the page has none.
func (s *Service) HostedCaller(ctx context.Context, projectID int64) (Caller, error) {
	q := s.cfg.DB.APIKey.Query().Where(entapikey.ProjectID(projectID), entapikey.Operator(false))
	k, err := q.Clone().Where(entapikey.RevokedAtIsNil()).Order(entdb.Asc(entapikey.FieldID)).First(ctx)
	if entdb.IsNotFound(err) {
		k, err = q.Order(entdb.Asc(entapikey.FieldID)).First(ctx)
	}
	if entdb.IsNotFound(err) {
		return Caller{}, fmt.Errorf("%w: project %d has no API key", ErrNoKey, projectID)
	}
	if err != nil {
		return Caller{}, err
	}
	return Caller{APIKeyID: k.ID, ProjectID: projectID, Hosted: true}, nil
}

// checkHostedCap refuses one more address of inv from a hosted page when
// it has HostedAddresses already. Concurrent choices may pass the count
// together: at most one more each, which the pages' per-network limit
// bounds.
func (s *Service) checkHostedCap(ctx context.Context, inv *entdb.Invoice) error {
	limit := s.cfg.HostedAddresses
	if limit <= 0 {
		return nil
	}
	tickers, err := s.cfg.DB.Address.Query().Where(entaddress.InvoiceID(inv.ID)).
		Order(entdb.Asc(entaddress.FieldID)).Select(entaddress.FieldTicker).Strings(ctx)
	if err != nil {
		return err
	}
	if len(tickers) < limit {
		return nil
	}
	names := make([]string, len(tickers))
	for i, t := range tickers {
		names[i] = strings.ToUpper(CoinName(t))
	}
	return &CapError{
		Reason: fmt.Sprintf("This payment already has %d addresses, the most this page hands out: pay with one of the coins chosen before (%s).",
			len(tickers), strings.Join(names, ", ")),
		Payer: address.ForPayer("error.cap_invoice", len(tickers), strings.Join(names, ", ")),
	}
}

// Get returns the project's invoice of kind with public id paymentID.
func (s *Service) Get(ctx context.Context, kind Kind, projectID int64, paymentID string) (*entdb.Invoice, error) {
	inv, err := s.cfg.DB.Invoice.Query().
		Where(entinvoice.PublicID(paymentID), entinvoice.ProjectID(projectID), entinvoice.KindEQ(entinvoice.Kind(kind))).
		Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no %s with payment_id %q", ErrNotFound, kind, truncate(paymentID))
	}
	return inv, err
}

// Quote is an address handed out for an invoice, with its held rate.
type Quote struct {
	// Address is the address row.
	Address *entdb.Address
	// Ticker is its coin.
	Ticker chains.Ticker
	// Invoice is the invoice.
	Invoice *entdb.Invoice
}

// Address hands out the invoice's address for coin (btc, trc20_usdt or
// trc20/usdt), quoting the amount at a rate held for QuoteTTL (and never
// past the checkout's expiry). Asking again returns the same address and
// quote. The coin must be one the project accepts; a checkout must not have
// expired, and its amount in the coin must reach the coin's minimum
// transaction.
func (s *Service) Address(ctx context.Context, kind Kind, key Caller, paymentID, coin string) (*Quote, error) {
	inv, err := s.Get(ctx, kind, key.ProjectID, paymentID)
	if err != nil {
		return nil, err
	}
	p, err := project.Get(ctx, s.cfg.DB, key.ProjectID)
	if err != nil {
		return nil, err
	}
	t, err := s.cfg.Addresses.Lookup(strings.Replace(strings.TrimSpace(coin), "_", "/", 1))
	if errors.Is(err, chains.ErrUnknownTicker) {
		return nil, payerInvalid("error.coin_unknown", nil, "coin", "%q is not a coin payhook supports (GET /info/ lists them)", truncate(coin))
	}
	if err != nil {
		return nil, err
	}
	if len(p.Tickers) > 0 && !contains(p.Tickers, t.Ticker) {
		return nil, payerInvalid("error.coin_not_accepted", []any{strings.ToUpper(t.Coin)}, "coin", "this project does not accept %s", t.Ticker)
	}
	if a, err := s.cfg.Addresses.FindForInvoice(ctx, inv.ProjectID, inv.ID, t.Ticker); err == nil {
		return &Quote{Address: a, Ticker: t, Invoice: inv}, nil
	} else if !errors.Is(err, address.ErrNotFound) {
		return nil, err
	}
	now := s.cfg.Now()
	if inv.ExpiresAt != nil && !now.Before(*inv.ExpiresAt) {
		return nil, payerInvalid("status.expired", nil, "payment_id", "the %s expired at %d", kind, inv.ExpiresAt.Unix())
	}
	if key.Hosted {
		if err := s.checkHostedCap(ctx, inv); err != nil {
			return nil, err
		}
	}
	link := address.InvoiceLink{ID: inv.ID, Service: string(inv.Kind), QuoteExpiresAt: now.Add(s.cfg.QuoteTTL)}
	if inv.ExpiresAt != nil && inv.LatePayments == entinvoice.LatePaymentsRefund {
		// The payment layer holds what arrives from the expiry on
		// (late_payment) instead of forwarding it.
		link.LateHoldFrom = inv.ExpiresAt
	}
	if inv.ExpiresAt != nil && inv.ExpiresAt.Before(link.QuoteExpiresAt) {
		link.QuoteExpiresAt = *inv.ExpiresAt
	}
	rate, ok := Rate(s.cfg.Prices, t, inv.Currency)
	if ok {
		link.Rate = &rate
	}
	if inv.Value != nil {
		if !ok {
			if err := price.Why(s.cfg.Prices, t.Ticker, inv.Currency); err != nil {
				return nil, err // stale: 503, naming the cause
			}
			return nil, payerInvalid("error.coin_no_price", []any{strings.ToUpper(t.Coin)}, "coin", "%s has no price in %s now; choose another coin", t.Ticker, inv.Currency)
		}
		v := QuoteCoin(*inv.Value, rate, t.Decimals)
		if v.GreaterThanOrEqual(maxCoin) {
			return nil, payerInvalid("error.coin_too_large", []any{strings.ToUpper(t.Coin)}, "coin", "%s %s is more than payhook can quote in %s; choose another coin", inv.Value.String(), inv.Currency, t.Coin)
		}
		if v.LessThan(t.MinTransaction) {
			return nil, payerInvalid("error.below_minimum", []any{v.String(), strings.ToUpper(t.Coin), t.MinTransaction.String()}, "coin", "%s %s is %s %s, below the minimum transaction of %s %s; choose another coin",
				inv.Value.String(), inv.Currency, v.String(), t.Coin, t.MinTransaction.String(), t.Coin)
		}
		link.ValueCoin = &v
	}
	var confs *int32
	if c, ok := p.Confirmations[t.Ticker]; ok {
		confs = &c
	}
	ip := address.InvoiceParams{
		APIKeyID: key.APIKeyID, ProjectID: inv.ProjectID, Ticker: t, NotifyURL: inv.NotifyURL,
		Post: inv.Post, JSON: inv.JSON, Destinations: p.Wallets[t.Ticker], Confirmations: confs, Link: link,
	}
	if id, ok := p.WatchKeys[t.Ticker]; ok {
		// The merchant's own key: the payment lands in their wallet, where
		// payhook cannot hold it for a refund (late payments are credited;
		// docs/decisions.md).
		ip.WatchKeyID, ip.Destinations, ip.Link.LateHoldFrom = &id, nil, nil
	}
	a, err := s.cfg.Addresses.CreateForInvoice(ctx, ip)
	if err != nil {
		return nil, err
	}
	return &Quote{Address: a, Ticker: t, Invoice: inv}, nil
}

// Caller is who asks: an API key and its project.
type Caller struct {
	// APIKeyID is the key.
	APIKeyID int64
	// ProjectID is its project.
	ProjectID int64
	// Hosted marks a payer on a hosted page, who acts through the
	// project's key (HostedCaller) and is held to the page's caps
	// (Config.HostedAddresses).
	Hosted bool
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Rate returns the price of one unit of t's coin in currency, false when
// the coin or the currency has no price.
func Rate(prices price.Source, t chains.Ticker, currency string) (decimal.Decimal, bool) {
	if prices == nil {
		return decimal.Zero, false
	}
	usd, ok := prices.USD(t.Ticker)
	if !ok || !usd.IsPositive() {
		return decimal.Zero, false
	}
	for _, c := range prices.Fiat() {
		if c.Code == currency && c.PerUSD.IsPositive() {
			return usd.Mul(c.PerUSD), true
		}
	}
	return decimal.Zero, false
}

// QuoteCoin converts a fiat value to the coin at rate, rounded up to the
// coin's decimals, so that paying the quote always covers the value.
func QuoteCoin(value, rate decimal.Decimal, decimals int32) decimal.Decimal {
	return value.Div(rate).RoundUp(decimals)
}

// Logs is an invoice's history.
type Logs struct {
	// Invoice is the invoice.
	Invoice *entdb.Invoice
	// Status is its invoice_status now (expired once past its expiry
	// unpaid).
	Status Status
	// Addresses are the addresses handed out.
	Addresses []*entdb.Address
	// Payments are its payments, oldest first, with their forwards.
	Payments []*entdb.Payment
	// Notifications are its webhooks, oldest first, with their attempts.
	Notifications []*entdb.Notification
	// PaidFiat is the confirmed incoming fiat.
	PaidFiat decimal.Decimal
	// Settlement is where the invoice stands (Status and PaidFiat are its).
	Settlement Settlement
	// Coin names the coin of Exceptions' coin amounts: the coin of the last
	// payment that counts toward the invoice; empty when none does.
	Coin string
	// Exceptions are the amounts due or overpaid, as a webhook of that
	// payment carries them now.
	Exceptions Exceptions
	// FiatPlaces is the minor unit of the invoice's currency, which fiat
	// amounts are shown rounded to.
	FiatPlaces int32
}

// Logs returns the history of the project's invoice of kind.
func (s *Service) Logs(ctx context.Context, kind Kind, projectID int64, paymentID string) (*Logs, error) {
	inv, err := s.Get(ctx, kind, projectID, paymentID)
	if err != nil {
		return nil, err
	}
	addrs, err := s.cfg.DB.Address.Query().Where(entaddress.InvoiceID(inv.ID)).Order(entdb.Asc(entaddress.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	pays, err := s.cfg.DB.Payment.Query().Where(entpayment.HasAddressWith(entaddress.InvoiceID(inv.ID))).
		WithForward().WithAddress().Order(entdb.Asc(entpayment.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := s.cfg.DB.Notification.Query().
		Where(notification.OwnerID(projectID), notification.Subject(inv.PublicID), notification.Service(string(inv.Kind))).
		Order(entdb.Asc(notification.FieldID)).
		WithDeliveryAttempts(func(q *entdb.DeliveryAttemptQuery) { q.Order(entdb.Asc(deliveryattempt.FieldNumber)) }).
		All(ctx)
	if err != nil {
		return nil, err
	}
	l := &Logs{Invoice: inv, Addresses: addrs, Payments: pays, Notifications: ns, PaidFiat: decimal.Zero,
		FiatPlaces: FiatPlaces(s.cfg.Prices, inv.Currency)}
	l.Settlement = Settle(inv.Value, inv.UnderpaidTolerance, pastExpiry(inv, s.cfg.Now()), States(pays))
	l.Status, l.PaidFiat = l.Settlement.Status, l.Settlement.Paid
	// The amounts due or overpaid in a coin are in the coin of the last
	// payment that counts, at its valuation, as its webhook carried them.
	if l.Settlement.Due != nil || l.Settlement.Overpaid != nil {
		var last *entdb.Payment
		for i := len(pays) - 1; i >= 0 && last == nil; i-- {
			if countsToward(pays[i]) {
				last = pays[i]
			}
		}
		var t *chains.Ticker
		if last != nil && last.Edges.Address != nil && s.cfg.Addresses != nil {
			if tk, err := s.cfg.Addresses.Lookup(last.Edges.Address.Ticker); err == nil {
				t, l.Coin = &tk, TickerName(tk)
			}
		}
		if last == nil {
			last = &entdb.Payment{}
		}
		l.Exceptions = exceptionsOf(s.cfg.Prices, t, inv, last, last.ValueCoin, l.Settlement, l.FiatPlaces)
	}
	return l, nil
}

// pastExpiry reports whether inv is past its expiry at now.
func pastExpiry(inv *entdb.Invoice, now time.Time) bool {
	return inv.ExpiresAt != nil && !now.Before(*inv.ExpiresAt)
}

// counts reports whether a payment of status st counts toward an invoice
// (a dropped or reverted one never does).
func counts(st entpayment.Status) bool {
	return st != entpayment.StatusDropped && st != entpayment.StatusReverted
}

// countsToward reports whether payment p counts toward its invoice: of a
// status that counts, and not held for a refund as late (late_payments
// refund: the merchant refunds it, so it pays nothing of the invoice).
func countsToward(p *entdb.Payment) bool {
	return counts(p.Status) && p.HoldReason != entpayment.HoldReasonLatePayment
}

func stateOf(p *entdb.Payment) PaymentState {
	return PaymentState{
		Confirmed: p.Status == entpayment.StatusConfirmed || p.Status == entpayment.StatusCompleted,
		Fiat:      p.ValueFiat,
	}
}
