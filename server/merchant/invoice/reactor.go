package invoice

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
)

// Reactor is the one reactor of every invoice's addresses — checkouts,
// deposits and subscription renewals — with a kind's own part in Hooks. For
// the changes of one transaction it locks their invoices (in id order, so
// two watchers' transactions take turns on an invoice paid in two coins),
// values each new payment in its invoice's currency (once, when detected),
// computes each invoice_status from every payment of the invoice, records
// the statuses (and, the first time an invoice is paid, its kind's Paid),
// and stores each change's webhook as its kind builds it. The statements it
// runs do not grow with the number of changes. A checkout that carries
// the payer's email gets its receipt stored, in the same transaction, the
// first time it is paid.
type Reactor struct {
	db     dialect
	queue  address.Enqueuer
	prices price.Source
	scheme string
	now    func() time.Time
	hooks  map[Kind]Hooks
	mail   *mail.Outbox
}

// dialect says which database the reactor writes (bulk statements differ).
type dialect struct{ postgres bool }

// Hooks are what one kind of invoice adds to the reactor.
type Hooks interface {
	// Load reads, within tx, what the kind needs of invs (its invoices
	// among a transaction's changes) and returns it as a Batch.
	Load(ctx context.Context, tx *entdb.Tx, invs []*entdb.Invoice) (Batch, error)
}

// Batch is a kind's view of one transaction's invoices.
type Batch interface {
	// Paid runs, within tx, once when inv is paid for the first time.
	Paid(ctx context.Context, tx *entdb.Tx, inv *entdb.Invoice, now time.Time) error
	// Message builds the webhook of change c of inv, which now stands at
	// st (its invoice_status and amounts); ok is false when none is sent
	// (no notify URL).
	Message(c payment.Change, inv *entdb.Invoice, st Settlement) (m notifier.Message, ok bool, err error)
}

// NewReactor returns the reactor of checkouts and deposits, and of the
// other kinds hooks gives (subscription renewals); scheme names the
// notifier's per-attempt signer of merchant webhooks. postgres selects the
// PostgreSQL form of its bulk statements. receipts stores the payers'
// receipts (nil: email is off, none are sent).
func NewReactor(q address.Enqueuer, prices price.Source, scheme string, now func() time.Time, postgres bool, hooks map[Kind]Hooks, receipts *mail.Outbox) *Reactor {
	r := &Reactor{db: dialect{postgres}, queue: q, prices: prices, scheme: scheme, now: now, hooks: map[Kind]Hooks{}, mail: receipts}
	r.hooks[Checkout] = own{r}
	r.hooks[Deposit] = own{r}
	for k, h := range hooks {
		r.hooks[k] = h
	}
	return r
}

// own is the hooks of checkouts and deposits: no Paid, and the webhook of
// the Callback notification's merchant counterpart (message).
type own struct{ r *Reactor }

func (o own) Load(context.Context, *entdb.Tx, []*entdb.Invoice) (Batch, error) { return o, nil }

func (o own) Paid(context.Context, *entdb.Tx, *entdb.Invoice, time.Time) error { return nil }

func (o own) Message(c payment.Change, inv *entdb.Invoice, st Settlement) (notifier.Message, bool, error) {
	// Without a notify_url the message has no destination of its own: the
	// project's endpoints and event log still get its event (Fanout).
	m, err := o.r.message(c, inv, st)
	return m, err == nil, err
}

// React implements payment.Reactor.
func (r *Reactor) React(ctx context.Context, tx *entdb.Tx, cs []payment.Change) error {
	now := r.now()
	ids := make([]int64, 0, len(cs))
	for _, c := range cs {
		if c.Address.InvoiceID == nil {
			return fmt.Errorf("the %s address %s has no invoice", c.Address.Service, c.Address.AddressIn)
		}
		ids = append(ids, *c.Address.InvoiceID)
	}
	invs, err := lock(ctx, tx, ids, r.db.postgres)
	if err != nil {
		return err
	}
	batches := map[Kind]Batch{}
	byKind := map[Kind][]*entdb.Invoice{}
	for _, inv := range invs {
		byKind[Kind(inv.Kind)] = append(byKind[Kind(inv.Kind)], inv)
	}
	for k, kinvs := range byKind {
		h, ok := r.hooks[k]
		if !ok {
			return fmt.Errorf("no hooks for %s invoices", k)
		}
		if batches[k], err = h.Load(ctx, tx, kinvs); err != nil {
			return err
		}
	}
	byID := make(map[int64]*entdb.Invoice, len(invs))
	for _, inv := range invs {
		byID[inv.ID] = inv
	}
	// Value the new payments, once, in one statement.
	var valued []valuation
	for _, c := range cs {
		inv, p := byID[*c.Address.InvoiceID], c.Payment
		if p.ValueFiat == nil {
			if f := ValueFiat(r.prices, c.Ticker, c.Address, inv, p, c.ValueCoin); f != nil {
				p.ValueFiat = f
				valued = append(valued, valuation{p.ID, *f})
			}
		}
	}
	if err := r.db.setValueFiat(ctx, tx, valued); err != nil {
		return err
	}
	stored, err := paymentsOf(ctx, tx, ids)
	if err != nil {
		return err
	}
	// Each change's invoice_status: every payment of its invoice as stored,
	// the changed one as the change reports it.
	was := make(map[int64]Status, len(invs))
	for _, inv := range invs {
		was[inv.ID] = Status(inv.Status)
	}
	var msgs []notifier.Message
	var receipts []mail.Receipt
	for _, c := range cs {
		inv := byID[*c.Address.InvoiceID]
		st := statusAfter(inv, stored[inv.ID], c.Payment, c.Status, now)
		status := st.Status
		if status == Paid && inv.PaidAt == nil {
			paidAt := now
			inv.PaidAt = &paidAt
			if err := batches[Kind(inv.Kind)].Paid(ctx, tx, inv, now); err != nil {
				return err
			}
			if r.mail != nil && Kind(inv.Kind) == Checkout && inv.Email != "" {
				receipts = append(receipts, r.receipt(c, inv, stored[inv.ID], now))
			}
		}
		inv.Status = entinvoice.Status(status)
		m, ok, err := batches[Kind(inv.Kind)].Message(c, inv, st)
		if err != nil {
			return err
		}
		if ok {
			msgs = append(msgs, m)
		}
	}
	var changed []*entdb.Invoice
	for _, inv := range invs {
		if Status(inv.Status) != was[inv.ID] {
			changed = append(changed, inv)
		}
	}
	if err := r.db.setStatuses(ctx, tx, changed, now); err != nil {
		return err
	}
	for _, m := range msgs {
		if _, err := r.queue.Enqueue(ctx, tx, m); err != nil {
			return err
		}
	}
	return r.mail.Receipts(ctx, tx, receipts...)
}

// receipt is the payer's receipt of checkout inv, paid by change c (its
// payment as the change reports it) with the other payments pays stored:
// the amount, and every payment that counts toward it with its coin and
// transaction, in the order they were recorded.
func (r *Reactor) receipt(c payment.Change, inv *entdb.Invoice, pays []*entdb.Payment, paidAt time.Time) mail.Receipt {
	rc := mail.Receipt{ProjectID: inv.ProjectID, To: inv.Email, PaymentID: inv.PublicID, Description: inv.ItemDescription, PaidAt: paidAt}
	if inv.Value != nil {
		rc.Value = inv.Value.StringFixed(FiatPlaces(r.prices, inv.Currency)) + " " + inv.Currency
	}
	type paid struct {
		id int64
		rp mail.ReceiptPayment
	}
	all := []paid{{c.Payment.ID, mail.ReceiptPayment{Amount: payload.FormatAmount(c.ValueCoin, c.Ticker.Decimals), Coin: TickerName(c.Ticker), TxID: c.Payment.TxidIn}}}
	for _, p := range pays {
		if p.ID == c.Payment.ID || !countsToward(p) {
			continue
		}
		ticker := p.Ticker
		if ticker == "" {
			ticker = c.Ticker.Ticker // a row from before payments named their coin
		}
		all = append(all, paid{p.ID, mail.ReceiptPayment{Amount: p.ValueCoin.String(), Coin: CoinName(ticker), TxID: p.TxidIn}})
	}
	slices.SortFunc(all, func(a, b paid) int { return cmp.Compare(a.id, b.id) })
	for _, p := range all {
		rc.Payments = append(rc.Payments, p.rp)
	}
	return rc
}

// lock locks the invoices ids within tx, in id order, and reads them, so
// that the transactions of two watchers (two coins paying one invoice at
// once) take turns on an invoice: the second waits for the first to commit,
// then reads its payments and its status. Without it each could count only
// its own payment, and an invoice paid by the two together would stay
// partial (and a subscription unextended). SQLite transactions are serial
// already.
func lock(ctx context.Context, tx *entdb.Tx, ids []int64, postgres bool) ([]*entdb.Invoice, error) {
	q := tx.Invoice.Query().Where(entinvoice.IDIn(uniqueIDs(ids)...)).Order(entdb.Asc(entinvoice.FieldID))
	if postgres {
		q.ForUpdate()
	}
	invs, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock %d invoices: %w", len(ids), err)
	}
	return invs, nil
}

func uniqueIDs(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// paymentsOf returns the stored payments of each invoice of ids (by
// invoice id): their addresses first, then the addresses' payments, each
// by its index.
func paymentsOf(ctx context.Context, tx *entdb.Tx, ids []int64) (map[int64][]*entdb.Payment, error) {
	addrs, err := tx.Address.Query().Where(entaddress.InvoiceIDIn(uniqueIDs(ids)...)).
		Select(entaddress.FieldID, entaddress.FieldInvoiceID).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("addresses of %d invoices: %w", len(ids), err)
	}
	owner := make(map[int64]int64, len(addrs))
	aids := make([]int64, len(addrs))
	for i, a := range addrs {
		owner[a.ID], aids[i] = *a.InvoiceID, a.ID
	}
	out := map[int64][]*entdb.Payment{}
	if len(aids) == 0 {
		return out, nil
	}
	pays, err := tx.Payment.Query().Where(entpayment.AddressIDIn(aids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payments of %d invoices: %w", len(ids), err)
	}
	for _, p := range pays {
		out[owner[p.AddressID]] = append(out[owner[p.AddressID]], p)
	}
	return out, nil
}

// statusAfter computes inv's Settlement at now from its stored payments,
// the changed one as it is after a change to status st.
func statusAfter(inv *entdb.Invoice, pays []*entdb.Payment, changed *entdb.Payment, st chains.Status, now time.Time) Settlement {
	states := make([]PaymentState, 0, len(pays)+1)
	seen := false
	late := changed.HoldReason == entpayment.HoldReasonLatePayment // held for a refund: counts for nothing
	for _, p := range pays {
		if p.ID == changed.ID {
			seen = true
			if !late {
				states = append(states, PaymentState{Confirmed: st != chains.StatusPending, Fiat: changed.ValueFiat})
			}
			continue
		}
		if countsToward(p) {
			states = append(states, stateOf(p))
		}
	}
	if !seen && !late {
		states = append(states, PaymentState{Confirmed: st != chains.StatusPending, Fiat: changed.ValueFiat})
	}
	return Settle(inv.Value, inv.UnderpaidTolerance, pastExpiry(inv, now), states)
}

// ValueFiat values payment p of inv's address a in inv's currency: at the
// address's held rate when detected before the quote expired, otherwise at
// the current rate; nil when no rate is known.
func ValueFiat(prices price.Source, t chains.Ticker, a *entdb.Address, inv *entdb.Invoice, p *entdb.Payment, value decimal.Decimal) *decimal.Decimal {
	var rate decimal.Decimal
	var ok bool
	if a.QuoteRate != nil && a.QuoteExpiresAt != nil && !p.CreatedAt.After(*a.QuoteExpiresAt) {
		rate, ok = *a.QuoteRate, true
	} else {
		rate, ok = Rate(prices, t, inv.Currency)
	}
	if !ok {
		return nil
	}
	v := value.Mul(rate)
	return &v
}

// valuation is a payment's fiat value to record.
type valuation struct {
	payment int64
	fiat    decimal.Decimal
}

// setValueFiat records the valuations vs within tx, in one statement on
// PostgreSQL.
func (d dialect) setValueFiat(ctx context.Context, tx *entdb.Tx, vs []valuation) error {
	if len(vs) == 0 {
		return nil
	}
	if !d.postgres {
		for _, v := range vs {
			if err := tx.Payment.UpdateOneID(v.payment).SetValueFiat(v.fiat).Exec(ctx); err != nil {
				return fmt.Errorf("value payment %d: %w", v.payment, err)
			}
		}
		return nil
	}
	ids, fiats := make([]any, len(vs)), make([]any, len(vs))
	for i, v := range vs {
		ids[i], fiats[i] = v.payment, v.fiat.String()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payments AS p SET value_fiat = v.fiat
		FROM unnest($1::bigint[], $2::numeric[]) AS v(id, fiat) WHERE p.id = v.id AND p.id = ANY($1::bigint[])`, store.Array(ids), store.Array(fiats)); err != nil {
		return fmt.Errorf("value %d payments: %w", len(vs), err)
	}
	return nil
}

// setStatuses records the statuses (and first paid_at) of invs within tx,
// in one statement on PostgreSQL.
func (d dialect) setStatuses(ctx context.Context, tx *entdb.Tx, invs []*entdb.Invoice, now time.Time) error {
	if len(invs) == 0 {
		return nil
	}
	if !d.postgres {
		for _, inv := range invs {
			if err := tx.Invoice.UpdateOneID(inv.ID).SetStatus(inv.Status).SetNillablePaidAt(inv.PaidAt).SetUpdatedAt(now).Exec(ctx); err != nil {
				return fmt.Errorf("update invoice %s: %w", inv.PublicID, err)
			}
		}
		return nil
	}
	ids, statuses, paid := make([]any, len(invs)), make([]any, len(invs)), make([]any, len(invs))
	for i, inv := range invs {
		ids[i], statuses[i] = inv.ID, string(inv.Status)
		if inv.PaidAt != nil {
			paid[i] = *inv.PaidAt
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE invoices AS i SET status = v.status, paid_at = coalesce(i.paid_at, v.paid_at), updated_at = $4
		FROM unnest($1::bigint[], $2::text[], $3::timestamptz[]) AS v(id, status, paid_at) WHERE i.id = v.id AND i.id = ANY($1::bigint[])`,
		store.Array(ids), store.Array(statuses), store.Array(paid), now); err != nil {
		return fmt.Errorf("update %d invoices: %w", len(invs), err)
	}
	return nil
}

// EventType is the event type of a payment stage of kind.
func EventType(kind Kind, status string) string { return string(kind) + ".payment." + status }

// Sequence orders a payment's webhooks (pending before confirmed before
// completed).
func Sequence(paymentID int64) string { return "invoice-payment:" + strconv.FormatInt(paymentID, 10) }

// message builds the webhook of c, whose invoice now stands at st.
func (r *Reactor) message(c payment.Change, inv *entdb.Invoice, st Settlement) (notifier.Message, error) {
	status := st.Status
	t, p := c.Ticker, c.Payment
	kind := Kind(inv.Kind)
	id := uuid.NewString()
	event := EventType(kind, string(c.Status))
	places := FiatPlaces(r.prices, inv.Currency)
	// Every field through its catalogue definition (eventtype.Invoice).
	f := &eventtype.Invoice
	fields := []payload.Field{
		f.EventType.Of(event),
		f.UUID.Of(id),
		f.PaymentID.Of(inv.PublicID),
		f.PaymentStatus.Of(string(c.Status)),
		f.InvoiceStatus.Of(string(status)),
	}
	if kind == Checkout {
		fields = append(fields, f.Value.Of(inv.Value, places))
	}
	confs := c.Confirmations
	if n, fixed := t.Rules().FixedConfirmations(t); fixed {
		confs = n
	}
	var netFiat *decimal.Decimal
	if c.Forward != nil {
		netFiat = NetFiat(p.ValueFiat, c.ValueCoin, c.Forward.ValueForwardedCoin)
	}
	fb := Fallback(p.ValueFiat, inv.Value, netFiat)
	fields = append(fields,
		f.Currency.Of(inv.Currency),
		f.PaidCoin.Of(TickerName(t)),
		f.PaidAmount.Of(c.ValueCoin, t.Decimals),
		f.PaidAmountFiat.Of(fb.Paid, places),
	)
	if c.Status == chains.StatusCompleted && c.Forward != nil {
		fields = append(fields,
			f.ReceivedAmount.Of(c.Forward.ValueForwardedCoin, t.Decimals),
			f.ReceivedAmountFiat.Of(fb.Received, places),
		)
	}
	ex := exceptionsOf(r.prices, &t, inv, p, c.ValueCoin, st, places)
	if ex.DueFiat != nil {
		fields = append(fields, f.AmountDue.Of(ex.Due, t.Decimals), f.AmountDueFiat.Of(*ex.DueFiat, places))
	}
	if ex.OverpaidFiat != nil {
		fields = append(fields, f.OverpaidAmount.Of(ex.Overpaid, t.Decimals), f.OverpaidAmountFiat.Of(*ex.OverpaidFiat, places))
	}
	if p.HoldReason == entpayment.HoldReasonLatePayment {
		// Credited, never forwarded: held until the merchant refunds it.
		fields = append(fields, f.HoldReason.Of(string(p.HoldReason)))
	}
	fields = append(fields, f.TxidIn.Of(p.TxidIn))
	if c.Forward != nil && c.Forward.TxidOut != "" {
		fields = append(fields, f.TxidOut.Of(c.Forward.TxidOut))
	}
	fields = append(fields, f.Confirmations.Of(confs))
	req, err := payload.EncodeOptional(inv.NotifyURL, payload.TransportFor(inv.Post, inv.JSON), fields, nil)
	if err != nil {
		return notifier.Message{}, fmt.Errorf("encode webhook of %s: %w", inv.PublicID, err)
	}
	return notifier.Message{
		UUID:  id,
		Owner: inv.ProjectID,
		Subject: notifier.Subject{
			Service:  string(inv.Kind),
			Event:    event,
			Ref:      inv.PublicID,
			Topic:    t.Ticker,
			Sequence: Sequence(p.ID),
			// A payment recorded by this transaction has had no webhook.
			FirstOfSequence: c.First,
		},
		Request: req,
		Signing: notifier.Signing{Scheme: r.scheme, Key: project.KeyRef(inv.ProjectID)},
		Payload: fields,
	}, nil
}

// FiatPlaces is the minor unit of currency (2 when unknown).
func FiatPlaces(prices price.Source, currency string) int32 {
	if prices != nil {
		for _, c := range price.Currencies(prices) {
			if c.Code == currency {
				return c.Decimals
			}
		}
	}
	return 2
}

// TickerName is a ticker as the merchant API names coins: trc20_usdt for
// trc20/usdt.
func TickerName(t chains.Ticker) string { return CoinName(t.Ticker) }

// CoinName is TickerName of a ticker's name.
func CoinName(ticker string) string { return strings.ReplaceAll(ticker, "/", "_") }

// Exceptions are the amounts of a payment exception that a webhook and the
// logs carry: what a partial invoice still lacks, or what a paid one
// received above its value, in the currency and in one coin.
type Exceptions struct {
	// DueFiat is amount_due_fiat, rounded up to the currency's minor unit;
	// nil unless the invoice is partial. Due is amount_due, the same in the
	// coin, rounded up to its decimals; nil when the coin has no rate.
	Due, DueFiat *decimal.Decimal
	// OverpaidFiat is overpaid_amount_fiat, rounded down to the currency's
	// minor unit; nil unless the invoice is paid above its value by at
	// least one minor unit and (when the coin has a rate) one base unit of
	// the coin: paying a quote, which is rounded up, is not an
	// overpayment. Overpaid is overpaid_amount, the same in the coin,
	// rounded down; nil when the coin has no rate.
	Overpaid, OverpaidFiat *decimal.Decimal
}

// exceptionsOf converts st's amount due or overpaid into coin t (nil:
// fiat only), at the valuation of payment p of inv (its value_fiat for
// valueCoin, which is its held or detection rate), or at the current rate
// when p has none; places is the currency's minor unit.
func exceptionsOf(prices price.Source, t *chains.Ticker, inv *entdb.Invoice, p *entdb.Payment, valueCoin decimal.Decimal, st Settlement, places int32) Exceptions {
	toCoin := func(fiat decimal.Decimal, up bool) *decimal.Decimal {
		if t == nil {
			return nil
		}
		var v decimal.Decimal
		switch {
		case p.ValueFiat != nil && p.ValueFiat.IsPositive() && valueCoin.IsPositive():
			v = InCoin(fiat.Mul(valueCoin), *p.ValueFiat, t.Decimals, up)
		default:
			rate, ok := Rate(prices, *t, inv.Currency)
			if !ok {
				return nil
			}
			v = InCoin(fiat, rate, t.Decimals, up)
		}
		return &v
	}
	var ex Exceptions
	if st.Due != nil {
		f := RoundFiat(*st.Due, places, true)
		ex.DueFiat, ex.Due = &f, toCoin(*st.Due, true)
	}
	if st.Overpaid != nil {
		f := RoundFiat(*st.Overpaid, places, false)
		c := toCoin(*st.Overpaid, false)
		if f.IsPositive() && (c == nil || c.IsPositive()) {
			ex.OverpaidFiat, ex.Overpaid = &f, c
		}
	}
	return ex
}
