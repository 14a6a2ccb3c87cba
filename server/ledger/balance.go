package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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
