package invoice

import (
	"errors"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/address"
)

// Limits of the merchant API's parameters.
const (
	// MaxExpiry is how far in the future a checkout may expire.
	MaxExpiry = 30 * 24 * time.Hour
	// MaxDescription is the longest item_description, in bytes.
	MaxDescription = 1000
)

// MaxValue bounds an invoice's fiat amount (below 10^12): far above any
// real invoice, and small enough that every amount derived from it fits
// the numeric(38,18) money columns.
var MaxValue = decimal.New(1, 12)

// maxCoin bounds a quoted coin amount: money columns hold 20 digits before
// the decimal point.
var maxCoin = decimal.New(1, 20)

// ParseCurrency returns the ISO 4217 code of a currency the price table
// knows, with its minor unit; def is used when raw is empty.
func ParseCurrency(prices price.Source, raw, def string) (price.Currency, error) {
	code := strings.ToUpper(strings.TrimSpace(raw))
	if code == "" {
		code = def
	}
	if prices != nil {
		for _, c := range prices.Fiat() {
			if c.Code == code && c.PerUSD.IsPositive() {
				return c, nil
			}
		}
		// A known currency whose live rate is stale is still a currency:
		// amounts in it are accepted; conversions wait for a fresh rate.
		for _, c := range price.Currencies(prices) {
			if c.Code == code {
				return c, nil
			}
		}
	}
	return price.Currency{}, invalid("currency", "%q is not a currency payhook prices; use an ISO 4217 code such as USD or EUR", truncate(raw))
}

// ParseValue returns an invoice amount in currency units: empty is an open
// amount (nil); otherwise a positive decimal with at most the currency's
// minor unit of decimal places.
func ParseValue(raw string, c price.Currency) (*decimal.Decimal, error) {
	if raw == "" {
		return nil, nil
	}
	v, err := address.ParseAmount("value", raw, c.Decimals)
	var ae *address.InvalidError
	if errors.As(err, &ae) {
		return nil, invalid("value", "%s", ae.Reason)
	}
	if err != nil {
		return nil, err
	}
	if v.GreaterThanOrEqual(MaxValue) {
		return nil, invalid("value", "must be below %s", MaxValue)
	}
	return &v, nil
}

// ParseExpiry returns a checkout's expiry: expireAt in unix seconds, or
// def after now when 0. It must lie in the future and within MaxExpiry.
func ParseExpiry(expireAt int64, now time.Time, def time.Duration) (time.Time, error) {
	if expireAt == 0 {
		return now.Add(def), nil
	}
	if expireAt < 0 {
		return time.Time{}, invalid("expire_at", "must be unix seconds, got %d", expireAt)
	}
	t := time.Unix(expireAt, 0).UTC()
	if !t.After(now) {
		return time.Time{}, invalid("expire_at", "%d is in the past (now is %d)", expireAt, now.Unix())
	}
	if t.After(now.Add(MaxExpiry)) {
		return time.Time{}, invalid("expire_at", "%d is more than %d days ahead", expireAt, int(MaxExpiry/(24*time.Hour)))
	}
	return t, nil
}

// CheckNotifyURL checks a webhook URL of project projectID: a public
// HTTP(S) URL without credentials or fragment, or an operator's
// exact-endpoint exception for that project (another project's exception
// is refused like any private URL).
func CheckNotifyURL(rules *egress.Rules, projectID int64, param, raw string) (string, error) {
	norm, err := egress.CheckURL(raw)
	var ue *egress.URLError
	if errors.As(err, &ue) {
		return "", invalid(param, "%s", ue.Reason)
	}
	if err != nil {
		return "", invalid(param, "%v", err)
	}
	if _, err := rules.Check(projectID, norm); err != nil {
		if errors.As(err, &ue) {
			return "", invalid(param, "%s; webhooks must reach a public HTTP(S) address", ue.Reason)
		}
		return "", invalid(param, "%v", err)
	}
	return norm, nil
}

// CheckRedirectURL checks where the hosted page sends the customer: an
// absolute HTTP(S) URL (the customer's browser follows it, so private
// hosts are allowed); empty is none.
func CheckRedirectURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", invalid("redirect_url", "must be an absolute http or https URL without credentials")
	}
	return raw, nil
}

// MaxEmail is the longest email parameter: SMTP's path limit less its
// brackets.
const MaxEmail = 254

// CheckEmail checks a checkout's email parameter, the payer's address for
// a receipt: empty (none), or one plain address (name@example.com, no
// display name), which is returned trimmed.
func CheckEmail(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", nil
	}
	a, err := netmail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", invalid("email", "%q is not an email address (name@example.com)", truncate(raw))
	}
	if len(s) > MaxEmail {
		return "", invalid("email", "is longer than %d characters", MaxEmail)
	}
	return s, nil
}

// CheckDescription checks item_description.
func CheckDescription(s string) error {
	if !utf8.ValidString(s) {
		return invalid("item_description", "is not valid UTF-8")
	}
	if len(s) > MaxDescription {
		return invalid("item_description", "is longer than %d bytes", MaxDescription)
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%q", s)
	}
	return s
}
