package price

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Provider fetches current prices from one rate service. Live asks all of
// its providers at each refresh and takes the median of their answers.
// Implementations are safe for concurrent use.
type Provider interface {
	// Name identifies the provider in logs and errors ("coingecko").
	Name() string
	// Fetch returns the USD prices of those of coins (lower-case asset
	// symbols such as "btc") the provider knows, and the fiat rates it
	// serves, if any. A coin the provider does not quote is left out, not an
	// error. Errors are *ProviderError wrapping ErrUnavailable or
	// ErrBadQuote; a quote is never partly invalid: one bad value fails the
	// whole answer.
	Fetch(ctx context.Context, coins []string) (Quote, error)
}

// Coverer is implemented by a Provider that says what it quotes: coin
// prices, fiat rates or both. Live uses it only to name, in the error of a
// missing price, the providers that could have quoted it; a Provider
// without it counts as quoting both.
type Coverer interface {
	Covers() (coins, fiat bool)
}

// covers reports what p quotes.
func covers(p Provider) (coins, fiat bool) {
	if c, ok := p.(Coverer); ok {
		return c.Covers()
	}
	return true, true
}

// Quote is one provider answer.
type Quote struct {
	// USD maps a lower-case asset symbol to the USD price of one unit:
	// > 0, below 10^15, at most MaxRatePlaces decimal places.
	USD map[string]decimal.Decimal
	// Fiat maps an ISO 4217 code to units per USD, with the same bounds;
	// nil when the provider serves no fiat rates.
	Fiat map[string]decimal.Decimal
	// Time is when the quote was fetched (the provider's clock). Live counts
	// the age of every value in the quote from it.
	Time time.Time
}

// maxBody bounds a provider answer. The largest expected one (Coinbase's
// exchange rates, several hundred entries) is a few tens of kilobytes.
const maxBody = 1 << 20

// DefaultHTTPTimeout bounds a provider request when its configuration gives
// no *http.Client.
const DefaultHTTPTimeout = 10 * time.Second

// defaultClient is the client of a provider configured without one: the
// default transport (environment proxy settings apply) with a timeout.
func defaultClient() *http.Client { return &http.Client{Timeout: DefaultHTTPTimeout} }

// checkBaseURL validates a provider's base URL: absolute http or https, a
// host, no user info (it would reach logs), no query or fragment (the
// provider adds its own).
func checkBaseURL(field, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s: %q is not a URL", ErrInvalidConfig, field, raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: %s: scheme must be http or https", ErrInvalidConfig, field)
	case u.Host == "":
		return fmt.Errorf("%w: %s: host is missing", ErrInvalidConfig, field)
	case u.User != nil:
		return fmt.Errorf("%w: %s: must not hold user info; use the provider's API key field", ErrInvalidConfig, field)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return fmt.Errorf("%w: %s: must not have a query or fragment", ErrInvalidConfig, field)
	}
	return nil
}

// getJSON performs GET base+path?query with the given extra headers and
// returns the body of a 200 answer, at most maxBody bytes.
func getJSON(ctx context.Context, client *http.Client, name, base, path string, query url.Values, header http.Header) ([]byte, error) {
	target := strings.TrimRight(base, "/") + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, &ProviderError{Provider: name, Err: fmt.Errorf("%w: %w", ErrUnavailable, err)}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "payhook")
	resp, err := client.Do(req)
	if err != nil {
		return nil, &ProviderError{Provider: name, Err: fmt.Errorf("%w: %w", ErrUnavailable, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody)) // lets the connection be reused
		return nil, &ProviderError{Provider: name, Err: fmt.Errorf("%w: HTTP status %d", ErrUnavailable, resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, &ProviderError{Provider: name, Err: fmt.Errorf("%w: reading the answer: %w", ErrUnavailable, err)}
	}
	if len(body) > maxBody {
		return nil, &ProviderError{Provider: name, Err: fmt.Errorf("%w: answer larger than %d bytes", ErrBadQuote, maxBody)}
	}
	return body, nil
}

// parseDecimal parses a decimal number as a provider writes it (a JSON
// number or the text of a JSON string; exponents allowed) and requires it to
// be > 0. It does not bound or round.
func parseDecimal(s string) (decimal.Decimal, error) {
	if len(s) > 64 {
		return decimal.Zero, fmt.Errorf("%w: %.64q... is too long", ErrBadQuote, s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, fmt.Errorf("%w: %q is not a decimal number", ErrBadQuote, s)
	}
	if d.Sign() <= 0 {
		return decimal.Zero, fmt.Errorf("%w: must be greater than 0, got %s", ErrBadQuote, s)
	}
	return d, nil
}

// quoted rounds a price or rate to MaxRatePlaces (half away from zero) and
// checks the table's bounds: > 0 once rounded, below 10^15.
func quoted(d decimal.Decimal, written string) (decimal.Decimal, error) {
	d = d.Round(MaxRatePlaces)
	switch {
	case d.Sign() <= 0:
		return decimal.Zero, fmt.Errorf("%w: %s is 0 at %d decimal places", ErrBadQuote, written, MaxRatePlaces)
	case d.GreaterThanOrEqual(maxRate):
		return decimal.Zero, fmt.Errorf("%w: must be below 10^15, got %s", ErrBadQuote, written)
	}
	return d, nil
}

// parseQuoted is parseDecimal then quoted.
func parseQuoted(s string) (decimal.Decimal, error) {
	d, err := parseDecimal(s)
	if err != nil {
		return decimal.Zero, err
	}
	return quoted(d, s)
}

// jsonNumber returns the text of raw if it is a JSON number, so that prices
// never pass through float64.
func jsonNumber(raw []byte) (string, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return "", fmt.Errorf("%w: %s is not a JSON number", ErrBadQuote, clip(s))
	}
	return s, nil
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw []byte) bool { return strings.TrimSpace(string(raw)) == "null" }

// clip shortens provider text quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
