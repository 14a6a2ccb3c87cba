package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/btcutil"

	"github.com/payhook/payhook/chains/watchonly"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web"
)

// The wallets section's watch-only wallets: a coin whose wallet is the
// merchant's own key (an extended public key or an output descriptor), as
// `payhook project wallet set TICKER=KEY` and `wallet show` do it. The
// wallet form takes a key in its addresses field (project.IsKeySpec); a
// refused key is never echoed back (it may be a private key pasted by
// mistake), and neither is a list of addresses holding a private key.

// watchRow is one coin's watch-only wallet as the settings page shows it.
type watchRow struct {
	Ticker, Label string
	// Offered is false for a ticker this server no longer offers (then
	// First is empty).
	Offered bool
	// Descriptor is the key in canonical form: what the merchant's wallet
	// imports.
	Descriptor string
	// First are the key's first receive addresses, for the merchant to
	// compare with their wallet's.
	First []project.IndexedAddress
	// Handed is how many of the key's addresses were handed out; LastUsed
	// is the highest index paid to, -1 for none.
	Handed, LastUsed int64
	// GapLimit is the key's gap limit; Needs is the gap limit the
	// merchant's wallet needs to see every payment (WalletNeeds), and
	// Outrun is set when it is beyond GapLimit.
	GapLimit int32
	Needs    int64
	Outrun   bool
}

// watchRows loads project p's watch-only wallets with their first
// addresses and what the merchant's wallet needs to scan.
func (h *Handler) watchRows(ctx context.Context, p *entdb.Project) ([]watchRow, error) {
	if len(p.WatchKeys) == 0 {
		return nil, nil
	}
	svc := project.NewService(project.ServiceConfig{DB: h.cfg.DB, Registry: h.cfg.Addresses.Registry(), Now: h.cfg.Now})
	ws, err := svc.WatchWallets(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	rows := make([]watchRow, 0, len(ws))
	for _, w := range ws {
		row := watchRow{
			Ticker: w.Ticker, Label: strings.ToUpper(w.Ticker), Descriptor: w.Key.Descriptor, First: w.First,
			Handed: w.Handed, LastUsed: w.LastUsed, GapLimit: w.Key.GapLimit, Needs: w.WalletNeeds(), Outrun: w.Outrun(),
		}
		if t, err := h.cfg.Addresses.Lookup(w.Ticker); err == nil {
			row.Label, row.Offered = web.CoinLabel(t), true
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// parseGap reads the wallet form's gap limit: blank is 0 (keep the key's,
// project.DefaultGapLimit for a new key).
func parseGap(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > project.MaxGapLimit {
		return 0, fmt.Errorf("the gap limit must be a whole number from 1 to %d (or blank: %d for a new key)", project.MaxGapLimit, project.DefaultGapLimit)
	}
	return n, nil
}

// setWatchKey makes the key typed in the wallet form the project's
// watch-only wallet of the coin chosen (project.SetWatchKey), with the gap
// limit typed (blank keeps the key's). A refusal is a 400 page (409 for a
// race) naming what is wrong, with the coin and gap limit kept and the
// key not echoed.
func (h *Handler) setWatchKey(w http.ResponseWriter, r *http.Request, s *session, tickerIn, key, gapIn string) {
	refuse := func(status int, err error) {
		h.showSettings(w, r, s, status, func(d *settingsData) {
			d.WalletTicker, d.WalletGap = tickerIn, gapIn
			d.WalletError = "The wallet was not saved: " + strings.TrimPrefix(err.Error(), project.ErrInvalid.Error()+": ")
			d.WalletKeyCleared = true
		})
	}
	t, err := h.coin(tickerIn)
	if err != nil {
		refuse(http.StatusBadRequest, err)
		return
	}
	gap, err := parseGap(gapIn)
	if err != nil {
		refuse(http.StatusBadRequest, err)
		return
	}
	k, err := watchonly.Parse(t, key)
	if err != nil {
		refuse(http.StatusBadRequest, err)
		return
	}
	_, err = project.SetWatchKey(r.Context(), h.cfg.DB, s.user.ProjectID, project.WatchKeyParams{Ticker: t, Key: k, GapLimit: gap}, h.cfg.Now())
	switch {
	case errors.Is(err, project.ErrInvalid):
		refuse(http.StatusBadRequest, err)
		return
	case errors.Is(err, project.ErrConcurrent):
		refuse(http.StatusConflict, errors.New("the key was saved by another request at the same time; look below, and try again if it is not listed"))
		return
	case err != nil:
		h.pages.Fail(w, "set watch key", err)
		return
	}
	settingsRedirect(w, r, "watch-saved", "watch-"+t.Ticker)
}

// hexSecret is how an EVM private key (or a transaction hash) is written:
// 32 bytes of hex.
var hexSecret = regexp.MustCompile(`^(0x)?[0-9a-fA-F]{64}$`)

// secretIn says why the wallet form's addresses field holds something
// other than addresses that must not be echoed back (a private key, or a
// key inside a list of addresses), or "" when it holds none.
func secretIn(addresses string) string {
	for part := range strings.SplitSeq(addresses, ",") {
		a, _, _ := strings.Cut(part, "@")
		a = strings.TrimSpace(a)
		switch {
		case a == "":
		case isWIF(a):
			return "this is a private key (WIF): never give payhook a private key; give your wallet's receiving addresses, or its extended public key (xpub...) alone for a watch-only wallet"
		case hexSecret.MatchString(a):
			return "64 hex digits are a private key (or a transaction hash), not an address: never give payhook a private key"
		case project.IsKeySpec(a):
			return "a key or descriptor goes alone in the field, not in a list of addresses"
		}
	}
	return ""
}

// isWIF reports whether s decodes as a private key in wallet import format
// (any network's): 33 or 34 bytes with a checksum, never an address's 25.
func isWIF(s string) bool {
	_, err := btcutil.DecodeWIF(s)
	return err == nil
}
