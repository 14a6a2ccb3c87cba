// Package address implements the low-level address API: creating payment
// addresses derived from the operator's seed, and reading an address's
// callback history. Every operation is scoped to the API key that owns the
// address: another key's address is reported as not found.
package address

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/watchonly"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/merchant/project"
)

// Service creates and reads payment addresses.
type Service struct {
	db       *entdb.Client
	postgres bool
	registry *chains.Registry
	deriver  *chains.Deriver
	rules    *egress.Rules
	now      func() time.Time

	// keys are the parsed watch-only keys, by ticker and descriptor.
	keys sync.Map

	// Ready, when set, is asked before an address of a ticker is handed
	// out; an error (wrapping ErrChainNotReady) refuses it.
	Ready func(ctx context.Context, ticker string) error
}

// New returns a Service. now is the clock used for timestamps; postgres
// says whether db is PostgreSQL (index allocation takes a lock there);
// rules are the destination rules of the notifier's egress client
// (egress.Client.Rules), so a callback that no attempt could ever reach is
// refused here with the reason an attempt would give (the operator's
// exceptions of the address's project apply, as they do to its callbacks,
// whose owner it is); nil rules have no operator exceptions.
//
// Set Ready before use to refuse new addresses of a ticker whose chain is
// not watched yet (ErrChainNotReady).
func New(db *entdb.Client, postgres bool, registry *chains.Registry, deriver *chains.Deriver, rules *egress.Rules, now func() time.Time) *Service {
	return &Service{db: db, postgres: postgres, registry: registry, deriver: deriver, rules: rules, now: now}
}

// CreateParams are the inputs of Create.
type CreateParams struct {
	// APIKeyID is the key that creates the address.
	APIKeyID int64
	// ProjectID owns the address: the key's project.
	ProjectID int64
	// Ticker is the ticker as given in the path ("btc", "trc20/usdt").
	Ticker string
	// Callback is the callback URL as given.
	Callback string
	// CBParams is the cb_params query string.
	CBParams string
	// Address is the destination parameter (one wallet or SHARE@ADDR|...).
	Address string
	// Confirmations is the requested threshold; nil for the ticker's default.
	Confirmations *int32
	// Post, JSON and Convert are the transport and conversion flags.
	Post, JSON, Convert bool
	// MultiToken and MultiChain are this API family's multi_token and
	// multi_chain: another asset of the chain (a token to an ETH address),
	// or the same address on another EVM chain, is credited under its own
	// ticker. Refused for tickers whose addresses receive no other asset.
	MultiToken, MultiChain bool
	// Priority is the forwarding fee level (ResolvePriority; "" is
	// default).
	Priority string

	// invoice, set by CreateForInvoice, links the address to an invoice.
	invoice *InvoiceLink
	// service, set by PayoutWallet, is the address's service when it is
	// neither low-level nor an invoice's.
	service string
	// watchKeyID, when set, is the merchant's watch-only key the address
	// is derived from instead of the operator's seed.
	watchKeyID *int64
}

// InvoiceLink is what an address handed out for a merchant invoice
// (checkout, deposit, subscription renewal) carries beyond a low-level one.
type InvoiceLink struct {
	// ID is the invoice.
	ID int64
	// Service is checkout, deposit or subscription.
	Service string
	// Rate is the held rate (invoice currency per coin); nil when the coin
	// has no price.
	Rate *decimal.Decimal
	// ValueCoin is the quoted amount; nil for an open amount.
	ValueCoin *decimal.Decimal
	// QuoteExpiresAt ends the held rate.
	QuoteExpiresAt time.Time
	// LateHoldFrom, when set, holds the payments detected from then on
	// (late_payment) for a refund: a checkout's expiry under its refund
	// policy for late payments.
	LateHoldFrom *time.Time
}

// InvoiceParams are the inputs of CreateForInvoice.
type InvoiceParams struct {
	// APIKeyID and ProjectID are the caller and the invoice's project.
	APIKeyID, ProjectID int64
	// Ticker is the coin.
	Ticker chains.Ticker
	// NotifyURL is the invoice's webhook URL (kept as the address's
	// callback URL for the logs; the invoice's reactor sends its webhooks).
	NotifyURL string
	// Post and JSON are the invoice's transport.
	Post, JSON bool
	// Destinations are the project's payout wallets for the coin; none
	// holds the funds.
	Destinations []schema.Destination
	// Confirmations is the project's threshold for the coin; nil for the
	// coin's default.
	Confirmations *int32
	// Link is the invoice and the quote.
	Link InvoiceLink
	// WatchKeyID, when set, is the project's watch-only key of the ticker:
	// the address is derived from it (Destinations are then ignored).
	WatchKeyID *int64
}

// InvoiceKey is the callback key of an invoice's address: an invoice has at
// most one address per coin.
func InvoiceKey(invoiceID int64) string {
	return CallbackKey("invoice:" + strconv.FormatInt(invoiceID, 10))
}

// FindForInvoice returns the invoice's address for ticker, ErrNotFound when
// none was handed out.
func (s *Service) FindForInvoice(ctx context.Context, projectID, invoiceID int64, ticker string) (*entdb.Address, error) {
	return s.find(ctx, projectID, ticker, InvoiceKey(invoiceID))
}

// CreateForInvoice hands out the invoice's address for a coin, or returns
// the one already handed out (a customer asking twice pays the same
// address, at the first quote).
func (s *Service) CreateForInvoice(ctx context.Context, p InvoiceParams) (*entdb.Address, error) {
	key := InvoiceKey(p.Link.ID)
	if a, err := s.find(ctx, p.ProjectID, p.Ticker.Ticker, key); err == nil {
		return a, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	confs, err := requiredConfirmations(p.Ticker, p.Confirmations)
	if err != nil {
		return nil, err
	}
	link := p.Link
	cp := CreateParams{APIKeyID: p.APIKeyID, ProjectID: p.ProjectID, Post: p.Post || p.JSON, JSON: p.JSON, invoice: &link, watchKeyID: p.WatchKeyID}
	dests := p.Destinations
	if p.WatchKeyID != nil {
		dests = []schema.Destination{}
	}
	for range 8 {
		a, err := s.insert(ctx, cp, p.Ticker, CallbackURL{URL: p.NotifyURL, Params: []schema.Param{}}, key, dests, confs)
		if err == nil {
			return a, nil
		}
		if !entdb.IsConstraintError(err) {
			return nil, err
		}
		if a, err := s.find(ctx, p.ProjectID, p.Ticker.Ticker, key); err == nil {
			return a, nil
		}
	}
	return nil, fmt.Errorf("create invoice address: conflicting concurrent creates did not settle")
}

// PayoutWalletService is the service of a project's payout wallet
// addresses; PayoutWalletURL stands in their callback URL, which nothing
// calls (a payout wallet's payments notify no one: they are the project's
// payout balance).
const (
	PayoutWalletService = "payout"
	PayoutWalletURL     = "payout-wallet:"
)

// PayoutWallet returns the project's payout wallet for ticker t, handing it
// out on first use: a payhook address with no forwarding destination, so
// every payment to it is credited and held as the project's payout balance
// (this API family's `/{ticker}/payout/address/`). A project has one per
// coin under any concurrency (the (project, ticker, callback key) unique
// index decides). A project whose wallet of t is the merchant's watch-only
// key gets an address of that key: what funds it is in the merchant's
// wallet, for their PSBT payouts to spend.
func (s *Service) PayoutWallet(ctx context.Context, apiKeyID, projectID int64, t chains.Ticker) (*entdb.Address, error) {
	key := CallbackKey(PayoutWalletURL)
	if a, err := s.find(ctx, projectID, t.Ticker, key); err == nil {
		return a, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	confs, err := requiredConfirmations(t, nil)
	if err != nil {
		return nil, err
	}
	cp := CreateParams{APIKeyID: apiKeyID, ProjectID: projectID, service: PayoutWalletService}
	if projectID != 0 {
		pr, err := project.Get(ctx, s.db, projectID)
		if err != nil {
			return nil, err
		}
		if id, ok := pr.WatchKeys[t.Ticker]; ok {
			// The merchant's own key: what funds it is in their wallet,
			// which their payouts (PSBTs) spend.
			cp.watchKeyID = &id
		}
	}
	for range 8 {
		a, err := s.insert(ctx, cp, t, CallbackURL{URL: PayoutWalletURL, Params: []schema.Param{}}, key, []schema.Destination{}, confs)
		if err == nil {
			return a, nil
		}
		if !entdb.IsConstraintError(err) {
			return nil, err
		}
		if a, err := s.find(ctx, projectID, t.Ticker, key); err == nil {
			return a, nil
		}
	}
	return nil, fmt.Errorf("create payout wallet: conflicting concurrent creates did not settle")
}

// Lookup resolves a ticker of the registry. A native coin whose network
// also has tokens answers to network/coin as well (`sol/sol` is `sol`):
// `/info/` nests such a coin under its own name, so this API family's
// client libraries list it as `sol_sol` and request `/sol/sol/...`.
func (s *Service) Lookup(ticker string) (chains.Ticker, error) {
	key := strings.ToLower(ticker)
	t, ok := s.registry.Lookup(key)
	if !ok {
		t, ok = s.nativeAlias(key)
	}
	if !ok {
		if s.registry.LeftOut(key) {
			return chains.Ticker{}, fmt.Errorf("%w: %s is not offered by this server: no chain node is configured for it", chains.ErrUnknownTicker, ticker)
		}
		return chains.Ticker{}, fmt.Errorf("%w: %s", chains.ErrUnknownTicker, ticker)
	}
	return t, nil
}

// nativeAlias resolves `net/net` to the native coin `net` when the network
// `net` has tokens.
func (s *Service) nativeAlias(key string) (chains.Ticker, bool) {
	network, coin, ok := strings.Cut(key, "/")
	if !ok || network != coin {
		return chains.Ticker{}, false
	}
	t, ok := s.registry.Lookup(network)
	if !ok || t.Token {
		return chains.Ticker{}, false
	}
	for _, other := range s.registry.All() {
		if other.Network == network && other.Ticker != t.Ticker {
			return t, true
		}
	}
	return chains.Ticker{}, false
}

// CheckTicker returns an error wrapping chains.ErrUnknownTicker when ticker
// is not in the registry (interceptor.TickerChecker).
func (s *Service) CheckTicker(ticker string) error {
	_, err := s.Lookup(ticker)
	return err
}

// Registry returns the ticker registry the service uses.
func (s *Service) Registry() *chains.Registry { return s.registry }

// CallbackKey is the lookup key of a callback URL.
func CallbackKey(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:])
}

// Create returns the address of (API key, ticker, final callback URL),
// creating it when it does not exist. This API family identifies an address
// by its callback URL: creating again with the same settings returns the
// same address, and with other settings (forwarding, confirmations,
// transport, conversion) is refused with a *ConflictError naming them, so a
// merchant never gets an address that behaves otherwise than it asked.
func (s *Service) Create(ctx context.Context, p CreateParams) (*entdb.Address, chains.Ticker, error) {
	t, err := s.Lookup(p.Ticker)
	if err != nil {
		return nil, chains.Ticker{}, err
	}
	cb, err := ParseCallback(p.Callback, p.CBParams)
	if err != nil {
		return nil, t, err
	}
	if err := checkDestination(s.rules, p.ProjectID, cb.URL); err != nil {
		return nil, t, err
	}
	// Every parameter is checked even when the address exists: a bad
	// request gets its error, never a silent success.
	dests, err := ParseDestinations(t, p.Address)
	if err != nil {
		return nil, t, err
	}
	prio, err := ResolvePriority(t, p.Priority)
	if err != nil {
		return nil, t, err
	}
	p.Priority = prio.Name
	req := p.Confirmations
	if p.ProjectID != 0 {
		pr, err := project.Get(ctx, s.db, p.ProjectID)
		if err != nil {
			return nil, t, err
		}
		if len(pr.Tickers) > 0 && !slices.Contains(pr.Tickers, t.Ticker) {
			return nil, t, invalid("ticker", "this project does not accept %s", t.Ticker)
		}
		if id, ok := pr.WatchKeys[t.Ticker]; ok {
			// The merchant's own key: the address is theirs, and what it
			// receives stays in their wallet.
			if len(dests) > 0 {
				return nil, t, invalid("address", "this project receives %s in its own wallet (a watch-only key): payments stay where they land and are not forwarded; omit address", t.Ticker)
			}
			p.watchKeyID = &id
			dests = []schema.Destination{}
		} else if len(dests) == 0 {
			// No forwarding address: the project's payout wallets for the
			// coin receive the funds; without one, payhook holds them.
			dests = pr.Wallets[t.Ticker]
		}
		if n, ok := pr.Confirmations[t.Ticker]; ok && req == nil {
			req = &n // the project's default for the coin
		}
	}
	confs, err := requiredConfirmations(t, req)
	if err != nil {
		return nil, t, err
	}
	key := CallbackKey(cb.URL)
	if a, err := s.find(ctx, p.ProjectID, t.Ticker, key); err == nil {
		return a, t, sameSettings(t, a, dests, confs, p)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, t, err
	}
	// Two requests may race for the same callback, or for the next
	// derivation index: the unique indexes decide, and the loser retries.
	for range 8 {
		a, err := s.insert(ctx, p, t, cb, key, dests, confs)
		if err == nil {
			return a, t, nil
		}
		if !entdb.IsConstraintError(err) {
			return nil, t, err
		}
		if a, err := s.find(ctx, p.ProjectID, t.Ticker, key); err == nil {
			return a, t, sameSettings(t, a, dests, confs, p)
		}
	}
	return nil, t, fmt.Errorf("create address: conflicting concurrent creates for the same callback did not settle")
}

// sameSettings reports how an existing address's settings differ from a
// create's, as a *ConflictError, or nil when they are the same.
func sameSettings(t chains.Ticker, a *entdb.Address, dests []schema.Destination, confs int32, p CreateParams) error {
	var differ []string
	if !sameDestinations(t, a.Destinations, dests) {
		differ = append(differ, "address")
	}
	if a.RequiredConfirmations != confs {
		differ = append(differ, "confirmations")
	}
	if a.JSON != p.JSON {
		differ = append(differ, "json")
	}
	if a.Post != (p.Post || p.JSON) {
		differ = append(differ, "post")
	}
	if a.Convert != p.Convert {
		differ = append(differ, "convert")
	}
	if a.MultiToken != p.MultiToken {
		differ = append(differ, "multi_token")
	}
	if a.MultiChain != p.MultiChain {
		differ = append(differ, "multi_chain")
	}
	if p.Priority != "" && a.Priority != p.Priority {
		differ = append(differ, "priority")
	}
	if len(differ) > 0 {
		return &ConflictError{Fields: differ}
	}
	return nil
}

// sameDestinations reports whether a and b pay the same destinations the
// same shares, in order: destinations compare by what they pay to (the
// family's DestinationKey: an output script, an account), not by spelling,
// so two base58 addresses that differ in case are two destinations and one
// script written two ways is one.
func sameDestinations(t chains.Ticker, a, b []schema.Destination) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Share.Equal(b[i].Share) {
			return false
		}
		ka, erra := t.Rules().DestinationKey(t, a[i].Address)
		kb, errb := t.Rules().DestinationKey(t, b[i].Address)
		if erra != nil || errb != nil {
			// A stored destination the rules no longer read (a network
			// changed): only the same spelling is the same destination.
			if a[i].Address != b[i].Address {
				return false
			}
			continue
		}
		if ka != kb {
			return false
		}
	}
	return true
}

func requiredConfirmations(t chains.Ticker, req *int32) (int32, error) {
	if n, fixed := t.Rules().FixedConfirmations(t); fixed {
		return int32(n), nil // Solana has no numeric depth: accepted means 1.
	}
	if req == nil {
		return t.DefaultConfirmations, nil
	}
	if *req < t.MinConfirmations || *req > 100 {
		return 0, invalid("confirmations", "must be between %d and 100 for %s, got %d", t.MinConfirmations, t.Ticker, *req)
	}
	return *req, nil
}

func (s *Service) insert(ctx context.Context, p CreateParams, t chains.Ticker, cb CallbackURL, key string, dests []schema.Destination, confs int32) (*entdb.Address, error) {
	if s.Ready != nil {
		if err := s.Ready(ctx, t.Ticker); err != nil {
			return nil, err
		}
	}
	var a *entdb.Address
	err := store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
		var err error
		a, err = s.insertTx(ctx, tx, p, t, cb, key, dests, confs)
		return err
	})
	return a, err
}

// derivationLock serialises derivation index allocation on PostgreSQL, so
// concurrent creates never pick the same next index (SQLite transactions
// already hold the write lock).
const derivationLock = 0x70617969

func (s *Service) insertTx(ctx context.Context, tx *entdb.Tx, p CreateParams, t chains.Ticker, cb CallbackURL, key string, dests []schema.Destination, confs int32) (*entdb.Address, error) {
	c := tx.Address.Create()
	if p.watchKeyID != nil {
		if err := s.deriveWatch(ctx, tx, t, *p.watchKeyID, c); err != nil {
			return nil, err
		}
	} else if err := s.deriveSeed(ctx, tx, t, c); err != nil {
		return nil, err
	}
	now := s.now()
	if p.service != "" {
		c.SetService(p.service)
	}
	if l := p.invoice; l != nil {
		c.SetInvoiceID(l.ID).SetService(l.Service).SetNillableQuoteRate(l.Rate).
			SetNillableQuoteValueCoin(l.ValueCoin).SetQuoteExpiresAt(l.QuoteExpiresAt).SetNillableLateHoldFrom(l.LateHoldFrom)
	}
	return c.
		SetAPIKeyID(p.APIKeyID).
		SetProjectID(p.ProjectID).
		SetTicker(t.Ticker).
		SetFamily(string(t.Family)).
		SetCallbackURL(cb.URL).
		SetCallbackKey(key).
		SetDestinations(dests).
		SetPost(p.Post || p.JSON).
		SetJSON(p.JSON).
		SetConvert(p.Convert).
		SetMultiToken(p.MultiToken).
		SetPriority(cmp.Or(p.Priority, chains.DefaultPriority.Name)).
		SetMultiChain(p.MultiChain).
		SetCustomParams(cb.Params).
		SetRequiredConfirmations(confs).
		SetCreatedAt(now).
		SetUpdatedAt(now).
		Save(ctx)
}

// deriveSeed sets c's address to the operator seed's next derivation
// index: one more than the highest handed out, under a lock on PostgreSQL.
func (s *Service) deriveSeed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, c *entdb.AddressCreate) error {
	if s.postgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", derivationLock); err != nil {
			return fmt.Errorf("lock derivation index: %w", err)
		}
	}
	last, err := tx.Address.Query().
		Where(entaddress.DerivationIndexNotNil()).
		Order(entdb.Desc(entaddress.FieldDerivationIndex)).
		Limit(1).
		Select(entaddress.FieldDerivationIndex).
		Ints(ctx)
	if err != nil {
		return fmt.Errorf("next derivation index: %w", err)
	}
	var index int64
	if len(last) > 0 {
		index = int64(last[0]) + 1
	}
	var addrIn string
	for {
		addrIn, err = s.deriver.Address(t, uint32(index))
		if errors.Is(err, chains.ErrInvalidIndex) && index < 1<<31-1 {
			index++ // BIP32 skips the (astronomically rare) invalid child.
			continue
		}
		if err != nil {
			return fmt.Errorf("derive %s address %d: %w", t.Ticker, index, err)
		}
		break
	}
	c.SetAddressIn(addrIn).SetDerivationIndex(index)
	return nil
}

// deriveWatch sets c's address to the next receive index of the merchant's
// watch-only key id. The key's row is updated first, so on PostgreSQL a
// concurrent create of the same key waits for this transaction, then takes
// the next index; an index BIP 32 declares invalid is skipped for good.
func (s *Service) deriveWatch(ctx context.Context, tx *entdb.Tx, t chains.Ticker, id int64, c *entdb.AddressCreate) error {
	for {
		wk, err := tx.WatchKey.UpdateOneID(id).AddNextIndex(1).SetUpdatedAt(s.now()).Save(ctx)
		if err != nil {
			return fmt.Errorf("next index of watch key %d: %w", id, err)
		}
		k, err := s.watchKey(t, wk.Descriptor)
		if err != nil {
			return err
		}
		index := wk.NextIndex - 1
		if index >= 1<<31 {
			return kind.Wrap(kind.Unavailable, fmt.Errorf("the %s key has handed out all 2^31 of its receive addresses: set another key", t.Ticker))
		}
		addrIn, err := k.Address(uint32(index))
		if errors.Is(err, chains.ErrInvalidIndex) {
			continue
		}
		if err != nil {
			return fmt.Errorf("derive %s address %d of watch key %d: %w", t.Ticker, index, id, err)
		}
		c.SetAddressIn(addrIn).SetWatchKeyID(id).SetWatchIndex(index)
		return nil
	}
}

// watchKey parses a stored watch key's descriptor for t, once per
// descriptor and ticker.
func (s *Service) watchKey(t chains.Ticker, descriptor string) (*watchonly.Key, error) {
	ck := t.Ticker + "\x00" + descriptor
	if k, ok := s.keys.Load(ck); ok {
		return k.(*watchonly.Key), nil
	}
	k, err := watchonly.Parse(t, descriptor)
	if err != nil {
		return nil, fmt.Errorf("stored watch key of %s: %w", t.Ticker, err)
	}
	s.keys.Store(ck, k)
	return k, nil
}

// find returns the project's address for ticker and callback key (the
// oldest, should keys that shared a callback before projects existed have
// made one each).
func (s *Service) find(ctx context.Context, projectID int64, ticker, key string) (*entdb.Address, error) {
	a, err := s.db.Address.Query().
		Where(entaddress.ProjectID(projectID), entaddress.Ticker(ticker), entaddress.CallbackKey(key)).
		Order(entdb.Asc(entaddress.FieldID)).
		First(ctx)
	if entdb.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find address: %w", err)
	}
	return a, nil
}

// Logs is the callback history of an address.
type Logs struct {
	// Address is the address.
	Address *entdb.Address
	// Payments are its incoming transactions, oldest first.
	Payments []*entdb.Payment
	// Notifications are the callbacks of each payment (by payment id),
	// oldest first, each with its attempts (in order) loaded.
	Notifications map[int64][]*entdb.Notification
}

// Logs returns the history of the address the project created for ticker
// with the callback URL (the final URL, as Create returned it).
func (s *Service) Logs(ctx context.Context, projectID int64, ticker, callback string) (*Logs, error) {
	t, err := s.Lookup(ticker)
	if err != nil {
		return nil, err
	}
	a, err := s.find(ctx, projectID, t.Ticker, CallbackKey(callback))
	if err != nil {
		return nil, err
	}
	pays, err := a.QueryPayments().
		Order(entdb.Asc(entpayment.FieldCreatedAt), entdb.Asc(entpayment.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load payments: %w", err)
	}
	logs := &Logs{Address: a, Payments: pays, Notifications: make(map[int64][]*entdb.Notification, len(pays))}
	if len(pays) == 0 {
		return logs, nil
	}
	// The notifier knows no payments: a payment's callbacks are the
	// address's notifications in the payment's sequence.
	bySeq := make(map[string]int64, len(pays))
	seqs := make([]string, len(pays))
	for i, p := range pays {
		seqs[i] = Sequence(p.ID)
		bySeq[seqs[i]] = p.ID
	}
	ns, err := s.db.Notification.Query().
		Where(notification.OwnerID(projectID), notification.Subject(a.AddressIn), notification.SequenceIn(seqs...)).
		Order(entdb.Asc(notification.FieldCreatedAt), entdb.Asc(notification.FieldID)).
		WithDeliveryAttempts(func(q *entdb.DeliveryAttemptQuery) {
			q.Order(entdb.Asc(deliveryattempt.FieldNumber))
		}).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load callbacks: %w", err)
	}
	for _, n := range ns {
		id := bySeq[*n.Sequence]
		logs.Notifications[id] = append(logs.Notifications[id], n)
	}
	return logs, nil
}
