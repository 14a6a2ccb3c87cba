package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
)

// Balance is the sum of one account's lines for a project and ticker, in
// base units.
type Balance struct {
	// ProjectID and Ticker say whose and which coin.
	ProjectID int64
	Ticker    string
	// Account is the balance's account.
	Account Account
	// Units is the sum, in the coin's base units.
	Units decimal.Decimal
}

// Balances sums the journal per project, ticker and account, for the
// accounts given (every account when none is given), sorted by ticker,
// project and account. Zero balances are left out. Sums are exact on both
// dialects: the lines are added as decimals here, not by the database
// (SQLite would add TEXT amounts as floating point).
func Balances(ctx context.Context, c *entdb.Client, accounts ...Account) ([]Balance, error) {
	q := c.LedgerEntry.Query()
	if len(accounts) > 0 {
		q.Where(entledger.AccountIn(accounts...))
	}
	var rows []struct {
		ProjectID int64           `json:"project_id"`
		Ticker    string          `json:"ticker"`
		Account   Account         `json:"account"`
		Amount    decimal.Decimal `json:"amount"`
	}
	if err := q.Select(entledger.FieldProjectID, entledger.FieldTicker, entledger.FieldAccount, entledger.FieldAmount).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("ledger balances: %w", err)
	}
	type key struct {
		project int64
		ticker  string
		account Account
	}
	sums := map[key]decimal.Decimal{}
	for _, r := range rows {
		k := key{r.ProjectID, r.Ticker, r.Account}
		sums[k] = sums[k].Add(r.Amount)
	}
	out := make([]Balance, 0, len(sums))
	for k, v := range sums {
		if !v.IsZero() {
			out = append(out, Balance{ProjectID: k.project, Ticker: k.ticker, Account: k.account, Units: v})
		}
	}
	slices.SortFunc(out, func(a, b Balance) int {
		return cmp.Or(cmp.Compare(a.Ticker, b.Ticker), cmp.Compare(a.ProjectID, b.ProjectID), cmp.Compare(a.Account, b.Account))
	})
	return out, nil
}

// HeldAddress is what the journal holds on one payhook address.
type HeldAddress struct {
	// AddressID is the address; ProjectID and Ticker its owner and coin.
	AddressID int64
	ProjectID int64
	Ticker    string
	// Units is the held balance, in base units.
	Units decimal.Decimal
	// Payments is how many payments have funds held there.
	Payments int
	// Reasons are the hold reasons of those payments, sorted, each once.
	Reasons []string
}

// HeldPage lists the addresses with a held balance whose id is above after,
// in id order, at most limit of them (limit > 0), and whether more follow.
func HeldPage(ctx context.Context, c *entdb.Client, after int64, limit int) ([]HeldAddress, bool, error) {
	const chunk = 2000
	var out []HeldAddress
	var cur *HeldAddress
	perPayment := map[int64]decimal.Decimal{}
	reasons := map[int64]string{}
	flush := func() {
		if cur == nil || cur.Units.IsZero() {
			return
		}
		rs := map[string]bool{}
		for p, v := range perPayment {
			if !v.IsZero() {
				cur.Payments++
				if r := reasons[p]; r != "" {
					rs[r] = true
				}
			}
		}
		for r := range rs {
			cur.Reasons = append(cur.Reasons, r)
		}
		slices.Sort(cur.Reasons)
		out = append(out, *cur)
	}
	var lastAddr, lastID int64 // keyset: the (address, line) read last; none yet
	for {
		q := c.LedgerEntry.Query().
			Where(entledger.AccountEQ(Held), entledger.AddressIDGT(after)).
			Order(entdb.Asc(entledger.FieldAddressID), entdb.Asc(entledger.FieldID)).
			Limit(chunk)
		if lastID > 0 {
			q.Where(entledger.Or(entledger.AddressIDGT(lastAddr), entledger.And(entledger.AddressID(lastAddr), entledger.IDGT(lastID))))
		}
		lines, err := q.All(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("held funds: %w", err)
		}
		for _, l := range lines {
			if cur == nil || *l.AddressID != cur.AddressID {
				flush()
				if len(out) == limit {
					return out, true, nil
				}
				cur = &HeldAddress{AddressID: *l.AddressID, ProjectID: l.ProjectID, Ticker: l.Ticker}
				clear(perPayment)
				clear(reasons)
			}
			cur.Units = cur.Units.Add(l.Amount)
			if l.PaymentID != nil {
				perPayment[*l.PaymentID] = perPayment[*l.PaymentID].Add(l.Amount)
				if l.HoldReason != nil {
					reasons[*l.PaymentID] = string(*l.HoldReason)
				}
			}
			lastAddr, lastID = *l.AddressID, l.ID
		}
		if len(lines) < chunk {
			flush()
			return out, false, nil
		}
	}
}

// HeldTicker is what the journal holds in one ticker, all addresses
// together.
type HeldTicker struct {
	// Ticker is the coin.
	Ticker string
	// Units is the held balance, in base units.
	Units decimal.Decimal
	// Payments and Addresses count the payments and addresses with funds
	// held.
	Payments, Addresses int
	// ByReason splits Units and Payments by hold reason.
	ByReason map[string]HeldPart
}

// HeldPart is the held balance of one hold reason.
type HeldPart struct {
	// Units is in base units.
	Units decimal.Decimal
	// Payments counts the payments.
	Payments int
}

// HeldSummary sums the held balance per ticker (sorted by ticker), split
// by hold reason; a payment counts under the reason of its last hold.
func HeldSummary(ctx context.Context, c *entdb.Client) ([]HeldTicker, error) {
	var lines []struct {
		Ticker     string          `json:"ticker"`
		Amount     decimal.Decimal `json:"amount"`
		PaymentID  *int64          `json:"payment_id"`
		AddressID  *int64          `json:"address_id"`
		HoldReason *string         `json:"hold_reason"`
	}
	if err := c.LedgerEntry.Query().Where(entledger.AccountEQ(Held)).Order(entdb.Asc(entledger.FieldID)).
		Select(entledger.FieldTicker, entledger.FieldAmount, entledger.FieldPaymentID, entledger.FieldAddressID, entledger.FieldHoldReason).
		Scan(ctx, &lines); err != nil {
		return nil, fmt.Errorf("held funds: %w", err)
	}
	type key struct {
		ticker string
		id     int64
	}
	perPayment := map[key]decimal.Decimal{}
	reason := map[key]string{}
	perAddress := map[key]decimal.Decimal{}
	for _, l := range lines {
		var pid, aid int64
		if l.PaymentID != nil {
			pid = *l.PaymentID
		}
		if l.AddressID != nil {
			aid = *l.AddressID
		}
		pk := key{l.Ticker, pid}
		perPayment[pk] = perPayment[pk].Add(l.Amount)
		if l.HoldReason != nil {
			reason[pk] = *l.HoldReason
		}
		ak := key{l.Ticker, aid}
		perAddress[ak] = perAddress[ak].Add(l.Amount)
	}
	byTicker := map[string]*HeldTicker{}
	get := func(ticker string) *HeldTicker {
		h := byTicker[ticker]
		if h == nil {
			h = &HeldTicker{Ticker: ticker, ByReason: map[string]HeldPart{}}
			byTicker[ticker] = h
		}
		return h
	}
	for k, v := range perPayment {
		if v.IsZero() {
			continue
		}
		h := get(k.ticker)
		h.Units = h.Units.Add(v)
		h.Payments++
		part := h.ByReason[reason[k]]
		part.Units, part.Payments = part.Units.Add(v), part.Payments+1
		h.ByReason[reason[k]] = part
	}
	for k, v := range perAddress {
		if !v.IsZero() {
			get(k.ticker).Addresses++
		}
	}
	out := make([]HeldTicker, 0, len(byTicker))
	for _, h := range byTicker {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b HeldTicker) int { return cmp.Compare(a.Ticker, b.Ticker) })
	return out, nil
}

// FeesOwed is what a project's watch-only keys owe the operator in one
// coin: the service fees of payments that landed in the merchant's own
// wallet, which nothing deducted.
type FeesOwed struct {
	// Ticker is the coin.
	Ticker string
	// Accrued is the fees owed by payments journaled in the period, in
	// base units.
	Accrued decimal.Decimal
	// Settled is what the operator recorded as paid in the period.
	Settled decimal.Decimal
	// Outstanding is what is owed at the end of the period, all time.
	Outstanding decimal.Decimal
}

// OwedFees returns project's fees owed per coin (sorted), accrued and settled
// in [from, to) (zero times leave the bound open), and outstanding up to
// to. Sums are exact (decimals added here, as Balances does).
func OwedFees(ctx context.Context, c *entdb.Client, project int64, from, to time.Time) ([]FeesOwed, error) {
	q := c.LedgerEntry.Query().Where(entledger.ProjectID(project), entledger.AccountEQ(entledger.AccountOwed))
	if !to.IsZero() {
		q.Where(entledger.CreatedAtLT(to))
	}
	var rows []struct {
		Ticker    string          `json:"ticker"`
		Event     Event           `json:"event"`
		Amount    decimal.Decimal `json:"amount"`
		CreatedAt time.Time       `json:"created_at"`
	}
	if err := q.Select(entledger.FieldTicker, entledger.FieldEvent, entledger.FieldAmount, entledger.FieldCreatedAt).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("fees owed: %w", err)
	}
	by := map[string]*FeesOwed{}
	for _, r := range rows {
		f := by[r.Ticker]
		if f == nil {
			f = &FeesOwed{Ticker: r.Ticker}
			by[r.Ticker] = f
		}
		f.Outstanding = f.Outstanding.Sub(r.Amount) // owed lines are negative
		if !from.IsZero() && r.CreatedAt.Before(from) {
			continue
		}
		if r.Event == entledger.EventSettle {
			f.Settled = f.Settled.Add(r.Amount)
		} else {
			f.Accrued = f.Accrued.Sub(r.Amount)
		}
	}
	out := make([]FeesOwed, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b FeesOwed) int { return cmp.Compare(a.Ticker, b.Ticker) })
	return out, nil
}
