package web

import (
	"strconv"
	"strings"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// CoinLabel is how a coin is shown to people: BTC, USDT (TRC20).
func CoinLabel(t chains.Ticker) string {
	if t.Token {
		return strings.ToUpper(t.Coin) + " (" + strings.ToUpper(t.Network) + ")"
	}
	return strings.ToUpper(t.Coin)
}

// PeriodLabel says a subscription period in words: 1m is "1 month", 12m
// "12 months". A period that does not parse is shown as given.
func PeriodLabel(raw string) string {
	p, err := subscription.ParsePeriod(raw)
	if err != nil {
		return raw
	}
	unit := map[subscription.Unit]string{subscription.Day: "day", subscription.Week: "week", subscription.Month: "month", subscription.Year: "year"}[p.Unit]
	if p.Count != 1 {
		unit += "s"
	}
	return strconv.Itoa(p.Count) + " " + unit
}
