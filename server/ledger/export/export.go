package export

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/db/refund"
)

// Config configures an Exporter.
type Config struct {
	// DB is the database the journal is in.
	DB *entdb.Client
	// Tickers looks a ledger line's ticker up, for its decimals; a line of
	// a ticker it does not know fails the export (its amount could not be
	// converted).
	Tickers func(ticker string) (chains.Ticker, bool)
	// PageSize is how many lines one query reads; DefaultPageSize when 0.
	PageSize int
	// MaxPriceAge is how far from a line's time a stored price may have
	// been fetched to value it; DefaultMaxPriceAge when 0.
	MaxPriceAge time.Duration
	// FiatPlaces is the number of decimals of a fiat currency; 2 for every
	// currency when nil.
	FiatPlaces func(currency string) int32
}

// Defaults of Config.
const (
	// DefaultPageSize keeps a page's lines and references to a few
	// hundred kilobytes.
	DefaultPageSize = 1000
	// DefaultMaxPriceAge is the server's default --price-max-age: the age
	// at which payhook stops quoting a price as current.
	DefaultMaxPriceAge = time.Hour
)

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize
	}
	if c.MaxPriceAge == 0 {
		c.MaxPriceAge = DefaultMaxPriceAge
	}
	if c.FiatPlaces == nil {
		c.FiatPlaces = func(string) int32 { return 2 }
	}
	return c
}

// Validate names the first field that is wrong.
func (c Config) Validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("export: Config.DB is nil")
	case c.Tickers == nil:
		return fmt.Errorf("export: Config.Tickers is nil")
	case c.PageSize < 0:
		return fmt.Errorf("export: Config.PageSize %d is negative", c.PageSize)
	case c.MaxPriceAge < 0:
		return fmt.Errorf("export: Config.MaxPriceAge %s is negative", c.MaxPriceAge)
	}
	return nil
}

// Exporter writes accounting exports. It is safe for concurrent use.
type Exporter struct {
	cfg Config
}

// New returns an Exporter.
func New(cfg Config) (*Exporter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Exporter{cfg: cfg}, nil
}

// exported are the accounts whose lines are rows (see the package doc).
var exported = []entledger.Account{
	entledger.AccountReceived, entledger.AccountForwarded, entledger.AccountFee,
	entledger.AccountNetworkFee, entledger.AccountPayout, entledger.AccountDirect, entledger.AccountOwed,
}

// The row kinds.
const (
	KindPayment    = "payment"
	KindReversal   = "reversal"
	KindChange     = "change"
	KindSweep      = "sweep"
	KindForward    = "forward"
	KindFee        = "fee"
	KindNetworkFee = "network_fee"
	KindPayout     = "payout"
	KindRefund     = "refund"
	KindDirect     = "direct"
	KindFeeOwed    = "fee_owed"
)

// KindOf is the row kind of a line of event on account, refund telling a
// refund's payout from another; "" for a line that is not a row.
func KindOf(event entledger.Event, account entledger.Account, refund bool) string {
	switch account {
	case entledger.AccountReceived:
		switch event {
		case entledger.EventCredit:
			return KindPayment
		case entledger.EventReversal, entledger.EventRestore:
			return KindReversal
		case entledger.EventPayout:
			return KindChange
		case entledger.EventSweep:
			return KindSweep
		}
	case entledger.AccountForwarded:
		return KindForward
	case entledger.AccountFee:
		return KindFee
	case entledger.AccountNetworkFee:
		return KindNetworkFee
	case entledger.AccountDirect:
		return KindDirect
	case entledger.AccountOwed:
		return KindFeeOwed
	case entledger.AccountPayout:
		if refund {
			return KindRefund
		}
		return KindPayout
	}
	return ""
}

// Export writes the rows of project's lines journaled in r to w, page by
// page, flushing w after each page. It returns the number of rows written.
// On an error the rows written so far stay written, and the document is
// not closed.
func (e *Exporter) Export(ctx context.Context, project int64, r Range, w Writer) (int, error) {
	proj, err := e.cfg.DB.Project.Get(ctx, project)
	if err != nil {
		return 0, fmt.Errorf("export: project %d: %w", project, err)
	}
	prices, err := loadPrices(ctx, e.cfg.DB, e.cfg.MaxPriceAge)
	if err != nil {
		return 0, err
	}
	first, last, err := e.bounds(ctx, project, r)
	if err != nil {
		return 0, err
	}
	n := 0
	after := first - 1
	for first > 0 {
		// The project's lines between the range's first and last, in id
		// order: a range of the (project_id, id) index that stops at the
		// page's size. The range's times are checked here, not in the
		// query: a line dated out of the range lies between the two only
		// when the journal's clocks disagree with its ids, and a planner
		// that took both conditions for independent would sort the range
		// per page instead.
		page, err := e.cfg.DB.LedgerEntry.Query().
			Where(entledger.ProjectID(project), entledger.IDGT(after), entledger.IDLTE(last), entledger.AccountIn(exported...)).
			Order(entdb.Asc(entledger.FieldID)).Limit(e.cfg.PageSize).All(ctx)
		if err != nil {
			return n, fmt.Errorf("export: ledger lines after %d: %w", after, err)
		}
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1].ID
		lines := page[:0:0]
		for _, l := range page {
			if !l.CreatedAt.Before(r.From) && l.CreatedAt.Before(r.To) {
				lines = append(lines, l)
			}
		}
		refs, err := e.references(ctx, lines)
		if err != nil {
			return n, err
		}
		for _, l := range lines {
			row, err := e.row(l, refs, prices, proj.Currency)
			if err != nil {
				return n, err
			}
			if err := w.Write(row); err != nil {
				return n, err
			}
			n++
		}
		if err := w.Flush(); err != nil {
			return n, err
		}
		if len(page) < e.cfg.PageSize {
			return n, nil
		}
	}
	return n, w.Flush()
}

// bounds returns the ids of the first and last of project's lines dated
// in r (0, 0 when there is none): one read of the range's entries of the
// (project_id, created_at, id) index, whatever the journal holds before or
// after it. The count is there to keep it that read: a query of min and
// max alone lets PostgreSQL look for each in id order instead, from the
// project's first line (min) and from its last (max), through every line
// out of the range.
func (e *Exporter) bounds(ctx context.Context, project int64, r Range) (first, last int64, err error) {
	var v []struct {
		N  int64         `sql:"n"`
		Lo sql.NullInt64 `sql:"lo"`
		Hi sql.NullInt64 `sql:"hi"`
	}
	err = e.cfg.DB.LedgerEntry.Query().
		Where(entledger.ProjectID(project), entledger.CreatedAtGTE(r.From), entledger.CreatedAtLT(r.To)).
		Aggregate(
			func(s *entsql.Selector) string { return entsql.As(entsql.Count("*"), "n") },
			func(s *entsql.Selector) string { return entsql.As(entsql.Min(s.C(entledger.FieldID)), "lo") },
			func(s *entsql.Selector) string { return entsql.As(entsql.Max(s.C(entledger.FieldID)), "hi") },
		).Scan(ctx, &v)
	if err != nil {
		return 0, 0, fmt.Errorf("export: the range's ledger lines: %w", err)
	}
	if len(v) != 1 || v[0].N == 0 {
		return 0, 0, nil
	}
	return v[0].Lo.Int64, v[0].Hi.Int64, nil
}

// refs are what a page's lines refer to, by id.
type refs struct {
	payments  map[int64]*entdb.Payment
	invoices  map[int64]*entdb.Invoice // by address id
	outbounds map[int64]*entdb.Outbound
	payouts   map[int64]*entdb.Payout // by outbound id
	refunds   map[int64]*entdb.Refund // by payout id
	refundInv map[int64]*entdb.Invoice
}

// references reads what lines refer to: one query per table.
func (e *Exporter) references(ctx context.Context, lines []*entdb.LedgerEntry) (*refs, error) {
	db := e.cfg.DB
	out := &refs{
		payments: map[int64]*entdb.Payment{}, invoices: map[int64]*entdb.Invoice{}, outbounds: map[int64]*entdb.Outbound{},
		payouts: map[int64]*entdb.Payout{}, refunds: map[int64]*entdb.Refund{}, refundInv: map[int64]*entdb.Invoice{},
	}
	payIDs, obIDs := map[int64]bool{}, map[int64]bool{}
	for _, l := range lines {
		if l.PaymentID != nil {
			payIDs[*l.PaymentID] = true
		}
		if l.OutboundID != nil {
			obIDs[*l.OutboundID] = true
		}
	}
	if len(payIDs) > 0 {
		ps, err := db.Payment.Query().Where(entpayment.IDIn(slices.Collect(maps.Keys(payIDs))...)).
			Select(entpayment.FieldID, entpayment.FieldAddressID, entpayment.FieldTxidIn, entpayment.FieldValueCoin, entpayment.FieldValueFiat).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("export: payments: %w", err)
		}
		addrIDs := map[int64]bool{}
		for _, p := range ps {
			out.payments[p.ID] = p
			addrIDs[p.AddressID] = true
		}
		as, err := db.Address.Query().Where(entaddress.IDIn(slices.Collect(maps.Keys(addrIDs))...), entaddress.InvoiceIDNotNil()).
			Select(entaddress.FieldID, entaddress.FieldInvoiceID).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("export: addresses: %w", err)
		}
		invOf := map[int64][]int64{}
		for _, a := range as {
			invOf[*a.InvoiceID] = append(invOf[*a.InvoiceID], a.ID)
		}
		if len(invOf) > 0 {
			invs, err := db.Invoice.Query().Where(entinvoice.IDIn(slices.Collect(maps.Keys(invOf))...)).
				Select(entinvoice.FieldID, entinvoice.FieldPublicID, entinvoice.FieldCurrency).All(ctx)
			if err != nil {
				return nil, fmt.Errorf("export: invoices: %w", err)
			}
			for _, inv := range invs {
				for _, a := range invOf[inv.ID] {
					out.invoices[a] = inv
				}
			}
		}
	}
	if len(obIDs) > 0 {
		ids := slices.Collect(maps.Keys(obIDs))
		obs, err := db.Outbound.Query().Where(entoutbound.IDIn(ids...)).
			Select(entoutbound.FieldID, entoutbound.FieldTxid, entoutbound.FieldPurpose).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("export: outbounds: %w", err)
		}
		for _, o := range obs {
			out.outbounds[o.ID] = o
		}
		pos, err := db.Payout.Query().Where(payout.OutboundIDIn(ids...)).Select(payout.FieldID, payout.FieldOutboundID).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("export: payouts: %w", err)
		}
		var poIDs []int64
		for _, p := range pos {
			out.payouts[*p.OutboundID] = p
			poIDs = append(poIDs, p.ID)
		}
		if len(poIDs) > 0 {
			rs, err := db.Refund.Query().Where(refund.PayoutIDIn(poIDs...)).
				Select(refund.FieldID, refund.FieldUUID, refund.FieldPayoutID, refund.FieldInvoiceID).All(ctx)
			if err != nil {
				return nil, fmt.Errorf("export: refunds: %w", err)
			}
			invIDs := map[int64]bool{}
			for _, r := range rs {
				out.refunds[*r.PayoutID] = r
				invIDs[r.InvoiceID] = true
			}
			if len(invIDs) > 0 {
				invs, err := db.Invoice.Query().Where(entinvoice.IDIn(slices.Collect(maps.Keys(invIDs))...)).
					Select(entinvoice.FieldID, entinvoice.FieldPublicID).All(ctx)
				if err != nil {
					return nil, fmt.Errorf("export: refunded invoices: %w", err)
				}
				for _, inv := range invs {
					out.refundInv[inv.ID] = inv
				}
			}
		}
	}
	return out, nil
}

// row converts line l with its references.
func (e *Exporter) row(l *entdb.LedgerEntry, rf *refs, prices *priceBook, currency string) (*Row, error) {
	t, ok := e.cfg.Tickers(l.Ticker)
	if !ok {
		return nil, fmt.Errorf("export: ledger line %d: ticker %q is not known to this server", l.ID, l.Ticker)
	}
	var (
		p   *entdb.Payment
		inv *entdb.Invoice
		po  *entdb.Payout
		ref *entdb.Refund
	)
	if l.PaymentID != nil {
		p = rf.payments[*l.PaymentID]
		if p != nil {
			inv = rf.invoices[p.AddressID]
		}
	}
	row := &Row{
		EntryID: strconv.FormatInt(l.ID, 10),
		Time:    l.CreatedAt.UTC().Format(time.RFC3339Nano),
		Coin:    strings.ReplaceAll(t.Ticker, "/", "_"),
	}
	if l.OutboundID != nil {
		if o := rf.outbounds[*l.OutboundID]; o != nil {
			row.TxID = o.Txid
		}
		if po = rf.payouts[*l.OutboundID]; po != nil {
			row.PayoutID = strconv.FormatInt(po.ID, 10)
			if ref = rf.refunds[po.ID]; ref != nil {
				row.RefundID = ref.UUID
				if ri := rf.refundInv[ref.InvoiceID]; ri != nil && inv == nil {
					row.InvoiceID = ri.PublicID
				}
			}
		}
	} else if p != nil {
		row.TxID = p.TxidIn
	}
	if inv != nil {
		row.InvoiceID = inv.PublicID
	}
	row.Kind = KindOf(l.Event, l.Account, ref != nil)
	amount := l.Amount.Neg().Shift(-t.Decimals)
	row.Amount = amount.String()
	// The valuation: the payment's own, else a stored price of the time.
	switch {
	case p != nil && inv != nil && p.ValueFiat != nil && p.ValueCoin.IsPositive():
		rate := p.ValueFiat.Div(p.ValueCoin)
		row.FiatCurrency, row.FiatSource = inv.Currency, "payment"
		row.FiatValue = amount.Mul(rate).StringFixed(e.cfg.FiatPlaces(inv.Currency))
	default:
		if rate, source, ok := prices.at(t, currency, l.CreatedAt); ok {
			row.FiatCurrency, row.FiatSource = currency, source
			row.FiatValue = amount.Mul(rate).StringFixed(e.cfg.FiatPlaces(currency))
		}
	}
	return row, nil
}
