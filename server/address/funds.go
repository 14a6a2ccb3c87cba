package address

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/server/payment"
)

// HeldTicker is what payhook holds in one ticker: the completed payments to
// addresses created without a forwarding address, whose funds stay on the
// payment address in the operator's wallet.
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
	// DerivationIndex is the address's index; DerivationPath its key's path
	// under the operator's seed, which sweeping the funds needs.
	DerivationIndex int64
	DerivationPath  string
}

// HeldFunds lists the funds payhook holds, per ticker (sorted by ticker).
// A held payment is one whose forward is recorded as held (its address has
// no forwarding destination), or a merchant payment waiting for the
// minimum (payment.HeldForMinimumNote).
func (s *Service) HeldFunds(ctx context.Context) ([]HeldTicker, error) {
	fs, err := s.db.Forward.Query().
		Where(entforward.Held(true), entforward.HasPaymentWith(entpayment.StatusEQ(entpayment.StatusCompleted))).
		WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("held funds: %w", err)
	}
	// Merchant payments too small to forward alone wait on their address
	// until its next payments make the sum forwardable; until then they are
	// held funds too (an underpaid checkout's address may never get more).
	waiting, err := s.db.Payment.Query().
		Where(entpayment.StatusEQ(entpayment.StatusConfirmed), entpayment.Note(payment.HeldForMinimumNote), entpayment.Not(entpayment.HasForward())).
		WithAddress().
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payments held for the minimum: %w", err)
	}
	for _, p := range waiting {
		fs = append(fs, &entdb.Forward{ValueForwardedCoin: p.ValueCoin, Edges: entdb.ForwardEdges{Payment: p}})
	}
	byTicker := map[string]*HeldTicker{}
	byAddress := map[int64]*HeldAddress{}
	owner := map[int64]string{} // address id -> ticker
	for _, f := range fs {
		p := f.Edges.Payment
		a := p.Edges.Address
		ht := byTicker[a.Ticker]
		if ht == nil {
			t, err := s.Lookup(a.Ticker)
			if err != nil {
				t = chains.Ticker{Ticker: a.Ticker} // a ticker the registry no longer has: still listed
			}
			ht = &HeldTicker{Ticker: t}
			byTicker[a.Ticker] = ht
		}
		ht.Total = ht.Total.Add(f.ValueForwardedCoin)
		ht.Payments++
		ha := byAddress[a.ID]
		if ha == nil {
			ha = &HeldAddress{AddressIn: a.AddressIn, DerivationIndex: a.DerivationIndex,
				DerivationPath: chains.DerivationPath(ht.Ticker, uint32(a.DerivationIndex))}
			byAddress[a.ID] = ha
			owner[a.ID] = a.Ticker
		}
		ha.Balance = ha.Balance.Add(f.ValueForwardedCoin)
		ha.Payments++
	}
	for id, ha := range byAddress {
		ht := byTicker[owner[id]]
		ht.Addresses = append(ht.Addresses, *ha)
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
