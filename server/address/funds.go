package address

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// HeldTicker is what payhook holds in one ticker: the payments whose funds
// stay on their payment address, in the operator's wallet, until swept.
type HeldTicker struct {
	// Ticker is the ticker.
	Ticker chains.Ticker
	// Total is the sum held, in coin units.
	Total decimal.Decimal
	// Payments is how many payments make up Total; Addresses how many
	// addresses hold it.
	Payments, Addresses int
	// ByReason splits Total by why the payments are held (schema.Hold*),
	// sorted by reason.
	ByReason []HeldReason
}

// HeldReason is the part of a ticker's held funds held for one reason.
type HeldReason struct {
	// Reason is the hold reason.
	Reason string
	// Total is in coin units; Payments counts the payments.
	Total    decimal.Decimal
	Payments int
}

// HeldAddress is one payment address holding funds.
type HeldAddress struct {
	// ID is the address's id (the listing's order).
	ID int64
	// Ticker is its coin; ProjectID owns the funds.
	Ticker    chains.Ticker
	ProjectID int64
	// AddressIn is the payment address.
	AddressIn string
	// Balance is what is held on it, in coin units.
	Balance decimal.Decimal
	// Payments is how many payments make up Balance.
	Payments int
	// Reasons are why those payments are held (schema.Hold*), sorted.
	Reasons []string
	// DerivationIndex is the address's index; DerivationPath its key's path
	// under the operator's seed, which sweeping the funds needs.
	DerivationIndex int64
	DerivationPath  string
}

// HeldFunds is one page of the funds payhook holds.
type HeldFunds struct {
	// Tickers totals every ticker with held funds (all pages), sorted by
	// ticker.
	Tickers []HeldTicker
	// Addresses are this page's addresses, in the order they were created.
	Addresses []HeldAddress
	// Next is the id the next page starts after; 0 on the last page.
	Next int64
}

// DefaultHeldPage and MaxHeldPage bound a page of HeldFunds.
const (
	DefaultHeldPage = 100
	MaxHeldPage     = 1000
)

// HeldFunds lists the funds payhook holds — the journal's held balance
// (server/ledger), whatever the reason: no forwarding address, below the
// minimum, below dust, held for the operator — as ticker totals and a page
// of at most size addresses (DefaultHeldPage when 0) whose id is above
// after.
func (s *Service) HeldFunds(ctx context.Context, size int, after int64) (HeldFunds, error) {
	if size <= 0 {
		size = DefaultHeldPage
	}
	size = min(size, MaxHeldPage)
	var out HeldFunds
	sums, err := ledger.HeldSummary(ctx, s.db)
	if err != nil {
		return out, err
	}
	tickers := map[string]chains.Ticker{}
	lookup := func(name string) (chains.Ticker, error) {
		if t, ok := tickers[name]; ok {
			return t, nil
		}
		t, err := s.Lookup(name)
		if err != nil {
			return t, fmt.Errorf("held funds of %s: the ticker registry lacks it (its decimals convert the journal's base units): %w", name, err)
		}
		tickers[name] = t
		return t, nil
	}
	for _, h := range sums {
		t, err := lookup(h.Ticker)
		if err != nil {
			return out, err
		}
		ht := HeldTicker{Ticker: t, Total: ledger.Coins(t, h.Units), Payments: h.Payments, Addresses: h.Addresses}
		for r, part := range h.ByReason {
			ht.ByReason = append(ht.ByReason, HeldReason{Reason: r, Total: ledger.Coins(t, part.Units), Payments: part.Payments})
		}
		slices.SortFunc(ht.ByReason, func(x, y HeldReason) int { return cmp.Compare(x.Reason, y.Reason) })
		out.Tickers = append(out.Tickers, ht)
	}
	page, more, err := ledger.HeldPage(ctx, s.db, after, size)
	if err != nil {
		return out, err
	}
	ids := make([]int64, len(page))
	for i, h := range page {
		ids[i] = h.AddressID
	}
	addrs, err := s.db.Address.Query().Where(entaddress.IDIn(ids...)).All(ctx)
	if err != nil {
		return out, fmt.Errorf("held funds: %w", err)
	}
	byID := make(map[int64]*entdb.Address, len(addrs))
	for _, a := range addrs {
		byID[a.ID] = a
	}
	for _, h := range page {
		a := byID[h.AddressID]
		if a == nil {
			return out, fmt.Errorf("held funds: address %d is missing", h.AddressID)
		}
		t, err := lookup(h.Ticker)
		if err != nil {
			return out, err
		}
		index, err := outbound.SeedIndex(a)
		if err != nil {
			// Nothing a merchant's key receives is journaled as held.
			return out, fmt.Errorf("held funds: %w", err)
		}
		out.Addresses = append(out.Addresses, HeldAddress{ID: a.ID, Ticker: t, ProjectID: h.ProjectID, AddressIn: a.AddressIn,
			Balance: ledger.Coins(t, h.Units), Payments: h.Payments, Reasons: h.Reasons,
			DerivationIndex: int64(index), DerivationPath: chains.DerivationPath(t, index)})
	}
	if more && len(page) > 0 {
		out.Next = page[len(page)-1].AddressID
	}
	return out, nil
}
