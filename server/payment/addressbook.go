package payment

import (
	"context"
	"fmt"
	"sync"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
)

// addressBook is every payment address of the database, loaded
// incrementally and shared by a service's watchers, which ask it whether a
// transfer's address is theirs (Watcher.isWatched). A refresh reads the
// newest id (one row, by the primary key) and, only when addresses were
// created since the last, those rows (a range of the primary key): every
// poll can afford it, and an instance reads each address once however many
// tickers it watches. Reading by id is safe because address creation is
// serialised (the derivation-index lock in server/address; SQLite's single
// writer), so ids become visible in increasing order.
type addressBook struct {
	mu     sync.RWMutex
	lastID int64
	// byTicker are the addresses of each ticker; multiChain those of each
	// ticker created with multi_chain.
	byTicker, multiChain map[string]map[string]bool
	// rows are the addresses in id order, kept only when a backend must be
	// told of its addresses (chains.AddressWatcher); nil otherwise.
	rows     []bookRow
	keepRows bool
}

// bookRow is one address, for the backends told of their addresses.
type bookRow struct {
	ticker, address string
	multiChain      bool
}

func newAddressBook(backends map[string]chains.Backend) *addressBook {
	b := &addressBook{byTicker: map[string]map[string]bool{}, multiChain: map[string]map[string]bool{}}
	for _, be := range backends {
		if _, ok := be.(chains.AddressWatcher); ok {
			b.keepRows = true
		}
	}
	return b
}

// refresh adds the addresses created since the last refresh.
func (b *addressBook) refresh(ctx context.Context, db *entdb.Client) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	top, err := db.Address.Query().Order(entdb.Desc(entaddress.FieldID)).Limit(1).IDs(ctx)
	if err != nil {
		return fmt.Errorf("newest address: %w", err)
	}
	if len(top) == 0 || top[0] <= b.lastID {
		return nil
	}
	rows, err := db.Address.Query().
		Where(entaddress.IDGT(b.lastID), entaddress.IDLTE(top[0])).
		Order(entdb.Asc(entaddress.FieldID)).
		Select(entaddress.FieldID, entaddress.FieldTicker, entaddress.FieldAddressIn, entaddress.FieldMultiChain).
		All(ctx)
	if err != nil {
		return fmt.Errorf("addresses: %w", err)
	}
	for _, a := range rows {
		set := b.byTicker[a.Ticker]
		if set == nil {
			set = map[string]bool{}
			b.byTicker[a.Ticker] = set
		}
		set[a.AddressIn] = true
		if a.MultiChain {
			m := b.multiChain[a.Ticker]
			if m == nil {
				m = map[string]bool{}
				b.multiChain[a.Ticker] = m
			}
			m[a.AddressIn] = true
		}
		if b.keepRows {
			b.rows = append(b.rows, bookRow{ticker: a.Ticker, address: a.AddressIn, multiChain: a.MultiChain})
		}
	}
	// Every address up to top was visible to the read above.
	b.lastID = top[0]
	return nil
}

// watched reports whether address is one a watcher of ticker watches: an
// address of ticker, of one of same (its chain's other tickers, all their
// addresses), or a multi_chain one of other (the family's other chains).
func (b *addressBook) watched(ticker string, same, other []string, address string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.byTicker[ticker][address] {
		return true
	}
	for _, u := range same {
		if b.byTicker[u][address] {
			return true
		}
	}
	for _, u := range other {
		if b.multiChain[u][address] {
			return true
		}
	}
	return false
}

// since returns the rows after position *pos that a watcher of ticker
// watches (as watched decides), and moves *pos past them.
func (b *addressBook) since(pos *int, ticker string, same, other []string) []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []string
	for _, r := range b.rows[min(*pos, len(b.rows)):] {
		switch {
		case r.ticker == ticker, contains(same, r.ticker), r.multiChain && contains(other, r.ticker):
			out = append(out, r.address)
		}
	}
	*pos = len(b.rows)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
