package price

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/payhook/payhook/internal/kind"
)

// ErrStale reports a price that Live cannot serve: none is known, or the
// last known one is older than MaxAge. The concrete error is a
// *StaleError saying which prices, why and how old; match it with
// errors.Is.
var ErrStale = errors.New("no fresh price")

// StaleValue is one price without a fresh value.
type StaleValue struct {
	// Coin is the asset symbol priced ("ltc"), or USDCoin for a fiat rate.
	Coin string
	// Currency is the ISO 4217 code it is priced in: "USD" for a coin.
	Currency string
	// Known is true when a value is known, however old: Age is its age.
	Known bool
	Age   time.Duration
}

// name is the value as errors name it: "ltc/USD", "USD/EUR".
func (v StaleValue) name() string {
	if v.Coin == USDCoin {
		return "USD/" + v.Currency
	}
	return v.Coin + "/" + v.Currency
}

// StaleError reports prices Live cannot serve and why. Its kind is
// Unavailable (retrying later may succeed: providers come back), and its
// text is what a caller is told, e.g.
//
//	no fresh ltc/USD price: providers coinbase, coingecko, kraken failed; last known 3h ago (max age 1h)
//
// It wraps ErrStale.
type StaleError struct {
	// Values are the prices without a fresh value, at least one.
	Values []StaleValue
	// Failed are the providers, of those that quote such values, that
	// failed at the last refresh, in configuration order.
	Failed []string
	// Pending is true when no refresh has finished since the start.
	Pending bool
	// MaxAge is the age limit; NoMaxAge when there is none.
	MaxAge time.Duration
}

// Error implements error.
func (e *StaleError) Error() string {
	var b strings.Builder
	if len(e.Values) == 1 {
		b.WriteString("no fresh " + e.Values[0].name() + " price")
	} else {
		names := make([]string, len(e.Values))
		for i, v := range e.Values {
			names[i] = v.name()
		}
		b.WriteString("no fresh price for " + strings.Join(names, ", "))
	}
	switch {
	case e.Pending:
		b.WriteString(": the first refresh of prices has not finished")
	case len(e.Failed) == 1:
		b.WriteString(": provider " + e.Failed[0] + " failed")
	case len(e.Failed) > 1:
		b.WriteString(": providers " + strings.Join(e.Failed, ", ") + " failed")
	default:
		b.WriteString(": no provider quotes it")
	}
	if len(e.Values) == 1 {
		if v := e.Values[0]; v.Known {
			b.WriteString("; last known " + FormatAge(v.Age) + " ago")
		} else {
			b.WriteString("; none known")
		}
	} else {
		b.WriteString("; last known:")
		for i, v := range e.Values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(" " + v.name())
			if v.Known {
				b.WriteString(" " + FormatAge(v.Age) + " ago")
			} else {
				b.WriteString(" never")
			}
		}
	}
	if e.MaxAge >= 0 {
		b.WriteString(" (max age " + FormatAge(e.MaxAge) + ")")
	}
	return b.String()
}

// Unwrap returns ErrStale.
func (e *StaleError) Unwrap() error { return ErrStale }

// Kind is kind.Unavailable.
func (e *StaleError) Kind() kind.Kind { return kind.Unavailable }

// Message is the error's own text, whatever wraps it.
func (e *StaleError) Message(error) string { return e.Error() }

// MergeStale returns one *StaleError listing the values of every
// *StaleError among errs (each value once, in order) with the union of
// their failed providers; nil when errs hold none.
func MergeStale(errs ...error) error {
	var out *StaleError
	for _, err := range errs {
		var se *StaleError
		if !errors.As(err, &se) {
			continue
		}
		if out == nil {
			out = &StaleError{MaxAge: se.MaxAge}
		}
		for _, v := range se.Values {
			if !slices.ContainsFunc(out.Values, func(w StaleValue) bool { return w.Coin == v.Coin && w.Currency == v.Currency }) {
				out.Values = append(out.Values, v)
			}
		}
		for _, f := range se.Failed {
			if !slices.Contains(out.Failed, f) {
				out.Failed = append(out.Failed, f)
			}
		}
		out.Pending = out.Pending || se.Pending
	}
	if out == nil {
		return nil
	}
	return out
}

// Why returns why src has no fresh price of coin (a symbol or ticker path,
// as for Source.USD) in currency (an ISO 4217 code): a *StaleError when
// src can say (a Live source), nil when src has a fresh price or cannot
// say why not (a Table prices what it lists, at any age: callers report a
// price it lacks in their own words).
func Why(src Source, coin, currency string) error {
	if w, ok := src.(explainer); ok {
		return w.Why(coin, currency)
	}
	return nil
}

// explainer is a Source that can say why it has no fresh price (Live).
type explainer interface {
	Why(coin, currency string) error
}

// FormatAge writes a duration as people read an age: whole seconds below
// a minute ("45s"), whole minutes above ("3h", "1h30m", "2m").
func FormatAge(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	s := d.Round(time.Minute).String() // "3h0m0s", "1h30m0s", "2m0s"
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// failedFor returns the names of the providers, in configuration order,
// that failed at the last refresh and quote coins (coin) or fiat rates
// (!coin).
func failedFor(providers []Provider, failed map[string]bool, coin bool) []string {
	var out []string
	for _, p := range providers {
		c, f := covers(p)
		if failed[p.Name()] && ((coin && c) || (!coin && f)) {
			out = append(out, p.Name())
		}
	}
	return out
}

// staleErr builds the error of values, coin values when coin is true.
func (l *Live) staleErr(values []StaleValue, coin bool) *StaleError {
	e := &StaleError{Values: values, Pending: !l.refreshed, MaxAge: l.cfg.MaxAge}
	if !e.Pending {
		e.Failed = failedFor(l.cfg.Providers, l.failed, coin)
	}
	return e
}
