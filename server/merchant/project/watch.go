package project

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/watchonly"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/db/watchkey"
	"github.com/payhook/payhook/ent/store"
)

// DefaultGapLimit is a watch key's gap limit unless set: BIP 44's, what
// most wallets scan past their last used address.
const DefaultGapLimit = 20

// MaxGapLimit bounds a watch key's gap limit: wallets that scan further
// are rare, and a merchant's wallet must be told to.
const MaxGapLimit = 10000

// keyPrefixes are how extended public keys begin (SLIP-132, Litecoin's).
var keyPrefixes = []string{"xpub", "ypub", "zpub", "tpub", "upub", "vpub", "Ltub", "Mtub", "xprv", "yprv", "zprv", "tprv", "uprv", "vprv", "Ltpv", "Mtpv"}

// IsKeySpec reports whether a wallet value (what follows TICKER=) is an
// extended key or an output descriptor rather than a list of addresses:
// it has a descriptor's parentheses, origin or checksum, or begins as an
// extended key does and is as long as one (private ones too, so that they
// are refused as keys, naming the mistake, not as bad addresses). An
// extended key is 111 characters; no address is longer than 90 (bech32),
// so a Litecoin address that happens to begin with Ltub is an address.
func IsKeySpec(v string) bool {
	v = strings.TrimSpace(v)
	if strings.ContainsAny(v, "()[]#") {
		return true
	}
	return len(v) > 100 && !strings.ContainsAny(v, ",@") &&
		slices.ContainsFunc(keyPrefixes, func(p string) bool { return strings.HasPrefix(v, p) })
}

// WatchKeyParams are the inputs of SetWatchKey.
type WatchKeyParams struct {
	// Ticker is the coin the key serves.
	Ticker chains.Ticker
	// Key is the merchant's key (watchonly.Parse for Ticker).
	Key *watchonly.Key
	// GapLimit is the key's gap limit; 0 keeps the key's (DefaultGapLimit
	// for a new key).
	GapLimit int
}

// SetWatchKey makes p.Key project id's watch-only wallet of p.Ticker: the
// project's new addresses of the ticker are derived from it, and its
// payout wallets of the ticker are removed (nothing is forwarded). A key
// is one project's: another project's key is refused, so no two projects
// hand out one address. A key set before (in whatever spelling) is the
// same key and continues at its next index; its descriptor becomes the
// one given (an origin added later is kept for signing).
func SetWatchKey(ctx context.Context, db *entdb.Client, id int64, p WatchKeyParams, now time.Time) (*entdb.WatchKey, error) {
	var wk *entdb.WatchKey
	err := store.WithTx(ctx, db, func(tx *entdb.Tx) error {
		var err error
		wk, err = setWatchKeyTx(ctx, tx, id, p, now)
		return err
	})
	return wk, err
}

func setWatchKeyTx(ctx context.Context, tx *entdb.Tx, id int64, p WatchKeyParams, now time.Time) (*entdb.WatchKey, error) {
	if p.GapLimit < 0 || p.GapLimit > MaxGapLimit {
		return nil, invalid("gap_limit: must be from 1 to %d, got %d", MaxGapLimit, p.GapLimit)
	}
	pr, err := tx.Project.Get(ctx, id)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	space := p.Key.Space()
	wk, err := tx.WatchKey.Query().Where(watchkey.Space(space)).Only(ctx)
	switch {
	case entdb.IsNotFound(err):
		c := tx.WatchKey.Create().SetProjectID(id).SetSpace(space).SetDescriptor(p.Key.Descriptor()).
			SetCreatedAt(now).SetUpdatedAt(now)
		if p.GapLimit > 0 {
			c.SetGapLimit(int32(p.GapLimit))
		}
		if wk, err = c.Save(ctx); entdb.IsConstraintError(err) {
			return nil, fmt.Errorf("%w: the key was set concurrently; try again", ErrConcurrent)
		}
		if err != nil {
			return nil, fmt.Errorf("store watch key: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("find watch key: %w", err)
	case wk.ProjectID != id:
		return nil, invalid("wallet %s: this key is another project's wallet; a key serves one project, so that no two projects hand out the same address", p.Ticker.Ticker)
	default:
		u := tx.WatchKey.UpdateOne(wk).SetDescriptor(p.Key.Descriptor()).SetUpdatedAt(now)
		if p.GapLimit > 0 {
			u.SetGapLimit(int32(p.GapLimit))
		}
		if wk, err = u.Save(ctx); err != nil {
			return nil, fmt.Errorf("store watch key: %w", err)
		}
	}
	keys := maps.Clone(pr.WatchKeys)
	if keys == nil {
		keys = map[string]int64{}
	}
	keys[p.Ticker.Ticker] = wk.ID
	wallets := maps.Clone(pr.Wallets)
	delete(wallets, p.Ticker.Ticker)
	if err := tx.Project.UpdateOneID(id).SetWatchKeys(keys).SetWallets(wallets).SetUpdatedAt(now).Exec(ctx); err != nil {
		return nil, fmt.Errorf("store wallets of project %d: %w", id, err)
	}
	return wk, nil
}

// WatchWallet is a project's watch-only wallet of one ticker as the
// dashboard and the CLI show it.
type WatchWallet struct {
	// Ticker is the coin.
	Ticker string
	// Key is the stored key.
	Key *entdb.WatchKey
	// Handed is how many receive indexes were handed out (0 to Handed-1),
	// for every ticker the key serves.
	Handed int64
	// LastUsed is the highest index a payment was received on; -1 for none.
	LastUsed int64
	// LongestGap is the longest run of unused indexes followed by a used
	// one: a wallet whose gap limit is below it misses that payment until
	// it scans further.
	LongestGap int64
	// Tail is the unused indexes after LastUsed: a payment to any of them
	// is found by a wallet whose gap limit covers it.
	Tail int64
	// First are the key's first receive addresses as the ticker encodes
	// them (Service.WatchWallets only), for the merchant to compare with
	// their wallet's.
	First []IndexedAddress
}

// IndexedAddress is a key's receive address and its index.
type IndexedAddress struct {
	Index   uint32
	Address string
}

// WalletNeeds is the gap limit the merchant's wallet needs to find every
// payment so far and any to the addresses handed out: the longer of the
// longest gap before a used index and the unused tail.
func (w WatchWallet) WalletNeeds() int64 { return max(w.LongestGap, w.Tail) }

// Outrun reports that the merchant's wallet, scanning the key's gap
// limit, may miss a payment: WalletNeeds is beyond it.
func (w WatchWallet) Outrun() bool { return w.WalletNeeds() > int64(w.Key.GapLimit) }

// WatchWallets returns project pr's watch-only wallets, by ticker, with
// what their merchant's wallet needs to scan.
func WatchWallets(ctx context.Context, db *entdb.Client, pr *entdb.Project) ([]WatchWallet, error) {
	tickers := slices.Sorted(maps.Keys(pr.WatchKeys))
	out := make([]WatchWallet, 0, len(tickers))
	for _, t := range tickers {
		wk, err := db.WatchKey.Get(ctx, pr.WatchKeys[t])
		if err != nil {
			return nil, fmt.Errorf("watch key of %s: %w", t, err)
		}
		w := WatchWallet{Ticker: t, Key: wk, Handed: wk.NextIndex, LastUsed: -1}
		// The indexes that received a payment, in order: one row each.
		var used []struct {
			WatchIndex int64 `json:"watch_index"`
		}
		if err := db.Address.Query().
			Where(entaddress.WatchKeyID(wk.ID), entaddress.HasPaymentsWith(entpayment.StatusNEQ(entpayment.StatusDropped))).
			Order(entdb.Asc(entaddress.FieldWatchIndex)).
			Select(entaddress.FieldWatchIndex).Scan(ctx, &used); err != nil {
			return nil, fmt.Errorf("used indexes of %s: %w", t, err)
		}
		prev := int64(-1)
		for _, u := range used {
			if u.WatchIndex == prev {
				continue
			}
			w.LongestGap = max(w.LongestGap, u.WatchIndex-prev-1)
			prev = u.WatchIndex
		}
		w.LastUsed = prev
		w.Tail = wk.NextIndex - 1 - prev
		out = append(out, w)
	}
	return out, nil
}

// HasWatchKey reports whether project pr's addresses of ticker come from a
// merchant's watch-only key.
func HasWatchKey(pr *entdb.Project, ticker string) bool {
	_, ok := pr.WatchKeys[ticker]
	return ok
}
