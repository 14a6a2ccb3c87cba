package address

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
)

// QR code sizes, in pixels (width and height).
const (
	// MinQRSize is the smallest QR code image.
	MinQRSize = 64
	// MaxQRSize is the largest QR code image.
	MaxQRSize = 1024
	// DefaultQRSize is the size when none is asked for.
	DefaultQRSize = 300
)

// Bounds of amounts given as parameters, so that no input can grow into an
// unbounded computation or string.
const (
	// maxIntegerDigits is the most digits before the decimal point.
	maxIntegerDigits = 30
	// maxConvertPlaces is the most decimal places of a convert value.
	maxConvertPlaces = 18
	// ratePlaces is the precision of a division between two prices.
	ratePlaces = 18
)

// amountSyntax is a plain decimal: digits, optionally a point and more
// digits. No sign, exponent, spaces or thousands separators.
var amountSyntax = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseAmount parses param's value raw as a positive decimal with at most
// places decimal places (trailing zeros do not count) and at most 30 digits
// before the point. Errors are *InvalidError naming param.
func ParseAmount(param, raw string, places int32) (decimal.Decimal, error) {
	if raw == "" {
		return decimal.Zero, invalid(param, "is required")
	}
	if !amountSyntax.MatchString(raw) {
		return decimal.Zero, invalid(param, "%q is not a decimal number such as 12.5", Truncate(raw))
	}
	whole, frac, _ := strings.Cut(raw, ".")
	if len(strings.TrimLeft(whole, "0")) > maxIntegerDigits {
		return decimal.Zero, invalid(param, "has more than %d digits before the decimal point", maxIntegerDigits)
	}
	if n := len(strings.TrimRight(frac, "0")); n > int(places) {
		return decimal.Zero, invalid(param, "%q has more than %d decimal places", Truncate(raw), places)
	}
	d, err := decimal.NewFromString(raw)
	if err != nil { // unreachable after the syntax check; kept for safety
		return decimal.Zero, invalid(param, "%q is not a decimal number", Truncate(raw))
	}
	if !d.IsPositive() {
		return decimal.Zero, invalid(param, "must be positive, got %s", raw)
	}
	return d, nil
}

// QRRequest is a checked QR code request.
type QRRequest struct {
	// URI is the payment URI the code encodes.
	URI string
	// Size is the image's width and height in pixels.
	Size int
}

// ParseQRCode checks the parameters of a QR code for ticker t: addr must be
// valid for t's network, value (optional) a positive amount with at most
// t.Decimals places, size (optional, default DefaultQRSize) within
// MinQRSize..MaxQRSize. It returns the payment URI to draw.
func ParseQRCode(t chains.Ticker, addr, value string, size *int32) (QRRequest, error) {
	if err := checkAddress(t, addr); err != nil {
		return QRRequest{}, err
	}
	var amount *decimal.Decimal
	if value != "" {
		v, err := ParseAmount("value", value, t.Decimals)
		if err != nil {
			return QRRequest{}, err
		}
		amount = &v
	}
	px := DefaultQRSize
	if size != nil {
		if *size < MinQRSize || *size > MaxQRSize {
			return QRRequest{}, invalid("size", "must be between %d and %d pixels, got %d", MinQRSize, MaxQRSize, *size)
		}
		px = int(*size)
	}
	uri, err := PaymentURI(t, addr, amount)
	if err != nil {
		return QRRequest{}, err
	}
	return QRRequest{URI: uri, Size: px}, nil
}

// checkAddress requires addr, valid for t's network.
func checkAddress(t chains.Ticker, addr string) error {
	if addr == "" {
		return invalid("address", "is required")
	}
	if err := chains.ValidateAddress(t, addr); err != nil {
		return &InvalidError{Param: "address", Reason: err.Error()}
	}
	return nil
}

// DrawQRCode renders r as a PNG image of r.Size pixels (larger only when
// the code cannot fit, which the URI bounds rule out), with medium error
// correction.
func DrawQRCode(r QRRequest) ([]byte, error) {
	q, err := qrcode.New(r.URI, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("qr code: %w", err)
	}
	png, err := q.PNG(r.Size)
	if err != nil {
		return nil, fmt.Errorf("qr code png: %w", err)
	}
	return png, nil
}

// PaymentURI returns the URI a wallet opens to pay amount (nil: no amount)
// of t to addr, in the scheme of t's family (Family.PaymentURI: BIP21 for
// UTXO, EIP-681 for EVM, tron: for TRON, Solana Pay). A network without a
// known scheme is an *InvalidError on the ticker.
func PaymentURI(t chains.Ticker, addr string, amount *decimal.Decimal) (string, error) {
	uri, err := t.Rules().PaymentURI(t, addr, amount)
	if err != nil {
		return "", invalid("ticker", "no payment URI scheme is known for network %s", t.Network)
	}
	return uri, nil
}

// lenientPriorities are the level names a ticker without levels of its own
// accepts as its default: the family's client libraries send them for any
// coin.
var lenientPriorities = []string{"default", "economic", "fast"}

// ResolvePriority returns t's forwarding fee level named name ("" is
// default): one of t's levels (chains.Family.Priorities), or, for a
// ticker with the default level only, the default for the names the
// family's libraries send anyway. Anything else is refused naming the
// levels.
func ResolvePriority(t chains.Ticker, name string) (chains.Priority, error) {
	if p, ok := chains.PriorityOf(t, name); ok {
		return p, nil
	}
	names := chains.PriorityNames(t)
	if len(names) == 1 {
		for _, ok := range lenientPriorities {
			if strings.EqualFold(name, ok) {
				return chains.DefaultPriority, nil
			}
		}
	}
	return chains.Priority{}, invalid("priority", "must be one of %s for %s, got %q", strings.Join(names, ", "), t.Ticker, Truncate(name))
}

// Estimate is the estimated network cost of forwarding one payment.
type Estimate struct {
	// Cost is in coin units.
	Cost decimal.Decimal
	// Fiat maps each currency code of the price table to the cost in that
	// currency, rounded to its minor unit; empty when the coin has no price.
	Fiat map[string]string
}

// EstimateFee returns what payhook deducts for the network when it forwards
// a payment of t at priority (ResolvePriority): its family's fee model
// (Family.NetworkFee, the ticker's network fee estimate rounded up to the
// coin's precision, as forwarding rounds it) at the default level, scaled
// by the level's static model (chains.Priority.Scale) at the others.
// addresses (1 to MaxDestinations, default 1) is checked; it does not
// change the result, since one payment is forwarded with one deduction.
func EstimateFee(t chains.Ticker, prices price.Source, addresses *int32, priority string) (Estimate, error) {
	if addresses != nil && (*addresses < 1 || *addresses > MaxDestinations) {
		return Estimate{}, invalid("addresses", "must be between 1 and %d, got %d", MaxDestinations, *addresses)
	}
	p, err := ResolvePriority(t, priority)
	if err != nil {
		return Estimate{}, err
	}
	cost := p.Scale(t.Rules().NetworkFee(t), t.Decimals)
	est := Estimate{Cost: cost, Fiat: map[string]string{}}
	usd, ok := price.USDValue(prices, t.Ticker, cost)
	if !ok {
		// A live price gone stale is said (503), not answered as an
		// empty map; a coin the table does not price has no map.
		if err := price.Why(prices, t.Ticker, "USD"); err != nil {
			return Estimate{}, err
		}
	}
	if ok {
		for _, c := range prices.Fiat() {
			est.Fiat[c.Code] = usd.Mul(c.PerUSD).StringFixed(c.Decimals)
		}
	}
	return est, nil
}

// Conversion is an amount converted into a ticker's coin.
type Conversion struct {
	// ValueCoin is the amount in coin units, rounded half away from zero to
	// the coin's decimals.
	ValueCoin decimal.Decimal
	// ExchangeRate is the price of one coin unit in units of from.
	ExchangeRate decimal.Decimal
}

// Convert converts value, counted in from, into t's coin at the rates of
// prices. from is an ISO 4217 code of the price table (any case), a ticker
// (`trc20/usdt` or `trc20_usdt`) or an asset symbol the table
// prices (`usdt`); lookup resolves tickers (Service.Lookup). value is a
// positive decimal with at most 18 decimal places. Errors are
// *InvalidError naming value, from or ticker, or a *price.StaleError
// (kind Unavailable) when a live price or rate it needs is too old.
func Convert(t chains.Ticker, lookup func(string) (chains.Ticker, error), prices price.Source, value, from string) (Conversion, error) {
	v, err := ParseAmount("value", value, maxConvertPlaces)
	if err != nil {
		return Conversion{}, err
	}
	if from == "" {
		return Conversion{}, invalid("from", "is required")
	}
	coinUSD, ok := positivePrice(prices, t.Ticker)
	if !ok {
		if err := price.Why(prices, t.Ticker, "USD"); err != nil {
			return Conversion{}, err
		}
		return Conversion{}, invalid("ticker", "%s has no price in the price table", t.Ticker)
	}
	// A fiat currency: its rate is units per USD.
	for _, c := range prices.Fiat() {
		if strings.EqualFold(c.Code, from) && c.PerUSD.IsPositive() {
			rate := coinUSD.Mul(c.PerUSD)
			return Conversion{ValueCoin: v.DivRound(rate, t.Decimals), ExchangeRate: rate.Round(ratePlaces)}, nil
		}
	}
	// A known currency whose live rate is too old.
	if err := price.Why(prices, t.Ticker, from); err != nil {
		return Conversion{}, err
	}
	// A coin: a registry ticker, or a symbol the table prices.
	key := strings.ToLower(strings.Replace(from, "_", "/", 1))
	if ft, err := lookup(key); err == nil {
		key = ft.Ticker
	} else if strings.Contains(key, "/") {
		key = ""
	}
	fromUSD, ok := positivePrice(prices, key)
	if key != "" && !ok {
		if err := price.Why(prices, key, "USD"); err != nil {
			return Conversion{}, err
		}
	}
	if key == "" || !ok {
		return Conversion{}, invalid("from", "%q is neither a fiat currency code (such as USD) nor a priced coin (such as btc or trc20_usdt)", Truncate(from))
	}
	return Conversion{
		ValueCoin:    v.Mul(fromUSD).DivRound(coinUSD, t.Decimals),
		ExchangeRate: coinUSD.DivRound(fromUSD, ratePlaces),
	}, nil
}

func positivePrice(prices price.Source, coin string) (decimal.Decimal, bool) {
	if prices == nil || coin == "" {
		return decimal.Zero, false
	}
	p, ok := prices.USD(coin)
	return p, ok && p.IsPositive()
}
