package outbound

import (
	"errors"
	"fmt"

	entdb "github.com/payhook/payhook/ent/db"
)

// ErrWatchOnly is an address of a merchant's watch-only key: payhook holds
// no private key of it, so nothing can be sent from it (the funds are in
// the merchant's own wallet).
var ErrWatchOnly = errors.New("the address is the merchant's own (watch-only key): payhook holds no key to spend from it")

// SeedIndex returns the operator-seed derivation index of address a, the
// index an Intent's FromIndex or Keys give the signer; an address of a
// merchant's watch-only key has none (ErrWatchOnly).
func SeedIndex(a *entdb.Address) (uint32, error) {
	if a.DerivationIndex == nil || a.WatchKeyID != nil {
		return 0, fmt.Errorf("%s: %w", a.AddressIn, ErrWatchOnly)
	}
	return uint32(*a.DerivationIndex), nil
}
