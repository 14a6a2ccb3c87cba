package ratelimit

import (
	"fmt"
	"math"
	"time"
)

// Limits are the operator's request limits and quotas (payhook serve's
// flags). A zero field takes its default; a negative rate, cap or quota
// (Off) turns it off (bursts are at least 1). On the command line 0 turns
// a limit off (--key-rate 0): see FromFlag.
type Limits struct {
	// KeyRate is how many requests per second each API key may make on
	// average (--key-rate); a project's rate_limit replaces it for the
	// project's keys. DefaultKeyRate when 0.
	KeyRate float64
	// KeyBurst is how many requests a key may make at once before KeyRate
	// applies (--key-burst); a project's rate_burst replaces it.
	// DefaultKeyBurst when 0.
	KeyBurst int
	// AnonRate is how many requests per second one client network (an
	// IPv4 /24, an IPv6 /64) may make without a key (--anon-rate): hosted
	// pages, their status polling, and the API's methods that need no key.
	// DefaultAnonRate when 0.
	AnonRate float64
	// AnonBurst is how many such requests a network may make at once
	// (--anon-burst). DefaultAnonBurst when 0.
	AnonBurst int
	// InvoiceAddresses is the most addresses the hosted checkout and
	// deposit pages hand out for one invoice (--page-addresses-per-invoice):
	// a payer choosing yet another coin is refused. Addresses the merchant
	// asks for with its key do not count against it, but fill it.
	// DefaultInvoiceAddresses when 0.
	InvoiceAddresses int
	// SubscriptionAddresses is the most open addresses (of renewals neither
	// paid nor expired) one subscription link's hosted page hands out
	// (--page-addresses-per-subscription). DefaultSubscriptionAddresses
	// when 0.
	SubscriptionAddresses int
	// TestEvents is how many test webhooks (POST /notification/test/) a
	// project may send a day (--test-events-per-day): a bucket of that many
	// refilled over 24 hours. DefaultTestEvents when 0.
	TestEvents int
}

// Off turns a limit of Limits off.
const Off = -1

// Defaults of Limits.
const (
	DefaultKeyRate               = 50
	DefaultKeyBurst              = 100
	DefaultAnonRate              = 10
	DefaultAnonBurst             = 20
	DefaultInvoiceAddresses      = 5
	DefaultSubscriptionAddresses = 10
	DefaultTestEvents            = 100
)

// Bounds of the settings.
const (
	// MaxRefill is the longest a bucket may take to fill from empty
	// (burst / rate): a bucket untouched that long is full, so its row can
	// go. A limit slower than that is served with a smaller burst.
	MaxRefill = 24 * time.Hour
	// MaxRate and MaxBurst bound a rate (per second) and a burst.
	MaxRate  = 1e6
	MaxBurst = 1_000_000
)

// FromFlag is a command-line limit's value in Limits: the flags' 0 (off)
// is Off, anything else itself.
func FromFlag[T int | float64](v T) T {
	if v == 0 {
		return Off
	}
	return v
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if l.KeyRate == 0 {
		l.KeyRate = DefaultKeyRate
	}
	if l.AnonRate == 0 {
		l.AnonRate = DefaultAnonRate
	}
	def(&l.KeyBurst, DefaultKeyBurst)
	def(&l.AnonBurst, DefaultAnonBurst)
	def(&l.InvoiceAddresses, DefaultInvoiceAddresses)
	def(&l.SubscriptionAddresses, DefaultSubscriptionAddresses)
	def(&l.TestEvents, DefaultTestEvents)
	return l
}

// Validate reports the first bad setting, naming its flag.
func (l Limits) Validate() error {
	for _, r := range []struct {
		flag string
		v    float64
	}{{"--key-rate", l.KeyRate}, {"--anon-rate", l.AnonRate}} {
		if math.IsNaN(r.v) || math.IsInf(r.v, 0) || r.v > MaxRate {
			return fmt.Errorf("%s: %v is not a rate up to %g requests per second", r.flag, r.v, float64(MaxRate))
		}
	}
	for _, b := range []struct {
		flag string
		v    int
	}{{"--key-burst", l.KeyBurst}, {"--anon-burst", l.AnonBurst}} {
		if b.v < 1 {
			return fmt.Errorf("%s: %d is not a burst of at least 1 request", b.flag, b.v)
		}
	}
	for _, b := range []struct {
		flag string
		v    int
	}{
		{"--key-burst", l.KeyBurst}, {"--anon-burst", l.AnonBurst}, {"--page-addresses-per-invoice", l.InvoiceAddresses},
		{"--page-addresses-per-subscription", l.SubscriptionAddresses}, {"--test-events-per-day", l.TestEvents},
	} {
		if b.v > MaxBurst {
			return fmt.Errorf("%s: %d is above the most, %d", b.flag, b.v, MaxBurst)
		}
	}
	return nil
}

// Cap returns a cap of Limits as the services take it: 0 for none.
func Cap(v int) int { return max(v, 0) }

// Key is the per-key limit of l (no limit when l's is off).
func (l Limits) Key() Limit { return Limit{Rate: l.KeyRate, Burst: l.KeyBurst} }

// Anon is the per-network limit of l.
func (l Limits) Anon() Limit { return Limit{Rate: l.AnonRate, Burst: l.AnonBurst} }

// Tests is the test-webhook quota of l: TestEvents a day.
func (l Limits) Tests() Limit {
	if l.TestEvents <= 0 {
		return Limit{}
	}
	return Limit{Rate: float64(l.TestEvents) / MaxRefill.Seconds(), Burst: l.TestEvents}
}
