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
)

// HeldTicker is what payhook holds in one ticker: the payments whose funds
// stay on their payment address, in the operator's wallet, until swept.
type HeldTicker struct {
	// Ticker is the ticker.
	Ticker chains.Ticker
	// Total is the sum held, in coin units.
	Total decimal.Decimal
	// Payments is how many payments make up Total.
	Payments int
	// Addresses are the addresses holding funds, largest balance first.
	Addresses []HeldAddress
}

// HeldAddress is one payment address holding funds.
type HeldAddress struct {
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

// HeldFunds lists the funds payhook holds, per ticker (sorted by ticker):
// the journal's held balance (server/ledger) of every address, whatever the
// reason (no forwarding address, below the minimum, below dust, held for
// the operator).
func (s *Service) HeldFunds(ctx context.Context) ([]HeldTicker, error) {
	var held []ledger.HeldAddress
	for after := int64(0); ; {
		page, more, err := ledger.HeldPage(ctx, s.db, after, 1000)
		if err != nil {
			return nil, err
		}
		held = append(held, page...)
		if !more || len(page) == 0 {
			break
		}
		after = page[len(page)-1].AddressID
	}
	ids := make([]int64, len(held))
	for i, h := range held {
		ids[i] = h.AddressID
	}
	addrs, err := s.db.Address.Query().Where(entaddress.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("held funds: %w", err)
	}
	byID := make(map[int64]*entdb.Address, len(addrs))
	for _, a := range addrs {
		byID[a.ID] = a
	}
	byTicker := map[string]*HeldTicker{}
	for _, h := range held {
		a := byID[h.AddressID]
		if a == nil {
			return nil, fmt.Errorf("held funds: address %d is missing", h.AddressID)
		}
		ht := byTicker[h.Ticker]
		if ht == nil {
			t, err := s.Lookup(h.Ticker)
			if err != nil {
				return nil, fmt.Errorf("held funds of %s: the ticker registry lacks it (its decimals convert the journal's base units): %w", h.Ticker, err)
			}
			ht = &HeldTicker{Ticker: t}
			byTicker[h.Ticker] = ht
		}
		balance := ledger.Coins(ht.Ticker, h.Units)
		ht.Total = ht.Total.Add(balance)
		ht.Payments += h.Payments
		ht.Addresses = append(ht.Addresses, HeldAddress{AddressIn: a.AddressIn, Balance: balance, Payments: h.Payments,
			Reasons: h.Reasons, DerivationIndex: a.DerivationIndex, DerivationPath: chains.DerivationPath(ht.Ticker, uint32(a.DerivationIndex))})
	}
	out := make([]HeldTicker, 0, len(byTicker))
	for _, ht := range byTicker {
		slices.SortFunc(ht.Addresses, func(x, y HeldAddress) int {
			if c := y.Balance.Cmp(x.Balance); c != 0 {
				return c
			}
			return cmp.Compare(x.AddressIn, y.AddressIn)
		})
		out = append(out, *ht)
	}
	slices.SortFunc(out, func(x, y HeldTicker) int { return cmp.Compare(x.Ticker.Ticker, y.Ticker.Ticker) })
	return out, nil
}
