package invoice

import (
	"context"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/db/predicate"
)

// Limits of a page of List.
const (
	// DefaultListLimit is a page's size when ListFilter.Limit is 0.
	DefaultListLimit = 50
	// MaxListLimit is the largest page.
	MaxListLimit = 500
)

// Statuses are the invoice_status values, in the order an invoice goes
// through them.
var Statuses = []Status{Waiting, Pending, Partial, Paid, Expired}

// ListFilter selects and pages a project's invoices of one kind. Empty
// fields select everything.
type ListFilter struct {
	// Status is an invoice_status as Logs computes it.
	Status Status
	// From and Until bound the creation time: From <= created_at < Until;
	// a zero time is no bound.
	From, Until time.Time
	// Limit is the most invoices returned: DefaultListLimit when 0, at
	// most MaxListLimit.
	Limit int
	// Cursor continues a listing: the cursor a previous List returned with
	// the same filter; empty for the first page.
	Cursor string
}

// Row is one invoice of a listing with what its payments add up to.
type Row struct {
	// Invoice is the invoice.
	Invoice *entdb.Invoice
	// Status is its invoice_status now, computed as Logs computes it.
	Status Status
	// Payments counts its payments that count toward it (dropped and
	// reverted ones left out).
	Payments int
	// PaidFiat is the confirmed incoming fiat (Logs' PaidFiat), rounded to
	// FiatPlaces.
	PaidFiat decimal.Decimal
	// Received is the incoming amount per coin of the counted payments,
	// in the order the coins were first paid.
	Received []CoinAmount
}

// CoinAmount is an amount of one coin.
type CoinAmount struct {
	// Coin is the coin as the merchant API names it (trc20_usdt).
	Coin string
	// Value is the amount in coin units.
	Value decimal.Decimal
}

// List returns a page of the project's invoices of kind that match f,
// newest first, and the cursor of the next page ("" when this page is the
// last). The cursor names the last invoice returned, so invoices created
// meanwhile do not shift the pages. A bad status, limit or cursor is an
// InvalidError naming the parameter.
//
// The status filter narrows the rows in SQL by the status the reactor
// stored with each change (and the expiry, which no change marks), then
// keeps the rows whose status computed from their payments, as Logs
// computes it, is the one asked for: a page may hold fewer rows than the
// limit and still have a next one.
func (s *Service) List(ctx context.Context, kind Kind, projectID int64, f ListFilter) ([]Row, string, error) {
	limit := f.Limit
	switch {
	case limit < 0 || limit > MaxListLimit:
		return nil, "", invalid("limit", "must be between 1 and %d", MaxListLimit)
	case limit == 0:
		limit = DefaultListLimit
	}
	now := s.cfg.Now()
	where := []predicate.Invoice{entinvoice.ProjectID(projectID), entinvoice.KindEQ(entinvoice.Kind(kind))}
	if f.Status != "" {
		p, err := statusPredicate(f.Status, now)
		if err != nil {
			return nil, "", err
		}
		where = append(where, p)
	}
	if !f.From.IsZero() {
		where = append(where, entinvoice.CreatedAtGTE(f.From))
	}
	if !f.Until.IsZero() {
		where = append(where, entinvoice.CreatedAtLT(f.Until))
	}
	var before int64
	if f.Cursor != "" {
		var err error
		before, err = strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || before <= 0 {
			return nil, "", invalid("cursor", "%q is not a cursor of this listing (the next link of the previous page)", truncate(f.Cursor))
		}
	}
	var out []Row
	// A status filter is confirmed in Go: bound the rows one page may
	// examine, and hand the rest to the next page (which may then be
	// short, or empty with a next link).
	scanned, scanLimit := 0, 20*(limit+1)
	for {
		q := s.cfg.DB.Invoice.Query().Where(where...)
		if before > 0 {
			q.Where(entinvoice.IDLT(before))
		}
		want := limit + 1 - len(out)
		invs, err := q.Order(entdb.Desc(entinvoice.FieldID)).Limit(want).All(ctx)
		if err != nil {
			return nil, "", err
		}
		rows, err := s.rows(ctx, invs, now)
		if err != nil {
			return nil, "", err
		}
		for _, r := range rows {
			if f.Status == "" || r.Status == f.Status {
				out = append(out, r)
			}
		}
		if len(invs) < want || len(out) > limit {
			break
		}
		before = invs[len(invs)-1].ID
		if scanned += len(invs); scanned >= scanLimit {
			// More may match below before: the next page goes on from there.
			return out, strconv.FormatInt(before, 10), nil
		}
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = strconv.FormatInt(out[limit-1].Invoice.ID, 10)
	}
	return out, next, nil
}

// statusPredicate selects the invoices that may have status st at now.
// The expiry part is exact (Compute: expired is unpaid past the expiry);
// paid or not is the status the reactor stored with the last change,
// which List's computation then confirms.
func statusPredicate(st Status, now time.Time) (predicate.Invoice, error) {
	switch st {
	case Paid:
		return entinvoice.StatusEQ(entinvoice.StatusPaid), nil
	case Expired:
		return entinvoice.And(entinvoice.StatusNEQ(entinvoice.StatusPaid), entinvoice.ExpiresAtLTE(now)), nil
	case Waiting, Pending, Partial:
		return entinvoice.And(
			entinvoice.StatusIn(entinvoice.StatusWaiting, entinvoice.StatusPending, entinvoice.StatusPartial),
			entinvoice.Or(entinvoice.ExpiresAtIsNil(), entinvoice.ExpiresAtGT(now))), nil
	}
	return nil, invalid("status", "%q is not an invoice_status (waiting, pending, partial, paid or expired)", truncate(string(st)))
}

// rows loads the payments of invs and computes their rows.
func (s *Service) rows(ctx context.Context, invs []*entdb.Invoice, now time.Time) ([]Row, error) {
	if len(invs) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(invs))
	for i, inv := range invs {
		ids[i] = inv.ID
	}
	byInvoice, err := PaymentsByInvoice(ctx, s.cfg.DB, ids, false)
	if err != nil {
		return nil, err
	}
	out := make([]Row, len(invs))
	for i, inv := range invs {
		ps := byInvoice[inv.ID]
		r := Row{Invoice: inv, PaidFiat: decimal.Zero}
		states := States(ps)
		r.Payments = len(states)
		for _, st := range states {
			if st.Confirmed && st.Fiat != nil {
				r.PaidFiat = r.PaidFiat.Add(*st.Fiat)
			}
		}
		r.PaidFiat = r.PaidFiat.Round(FiatPlaces(s.cfg.Prices, inv.Currency))
		for _, p := range ps {
			if !counts(p.Status) {
				continue
			}
			coin := CoinName(p.Ticker)
			if p.Ticker == "" && p.Edges.Address != nil {
				coin = CoinName(p.Edges.Address.Ticker)
			}
			r.Received = addCoin(r.Received, coin, p.ValueCoin)
		}
		r.Status = Compute(inv.Value, inv.UnderpaidTolerance, pastExpiry(inv, now), states)
		out[i] = r
	}
	return out, nil
}

func addCoin(list []CoinAmount, coin string, v decimal.Decimal) []CoinAmount {
	for i := range list {
		if list[i].Coin == coin {
			list[i].Value = list[i].Value.Add(v)
			return list
		}
	}
	return append(list, CoinAmount{Coin: coin, Value: v})
}

// PaymentsByInvoice returns the payments to the addresses of invoices ids,
// each with its address, oldest first, by invoice id; counting leaves out
// dropped and reverted ones.
func PaymentsByInvoice(ctx context.Context, db *entdb.Client, ids []int64, counting bool) (map[int64][]*entdb.Payment, error) {
	q := db.Payment.Query().Where(entpayment.HasAddressWith(entaddress.InvoiceIDIn(ids...)))
	if counting {
		q.Where(entpayment.StatusNotIn(entpayment.StatusDropped, entpayment.StatusReverted))
	}
	pays, err := q.WithAddress().Order(entdb.Asc(entpayment.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	byInvoice := map[int64][]*entdb.Payment{}
	for _, p := range pays {
		if a := p.Edges.Address; a != nil && a.InvoiceID != nil {
			byInvoice[*a.InvoiceID] = append(byInvoice[*a.InvoiceID], p)
		}
	}
	return byInvoice, nil
}
