package address

import (
	"errors"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/notifier/egress"
)

// MaxDestinations bounds how many wallets one address forwards to.
const MaxDestinations = 20

// shareScale is the most decimal places a share may have. Shares are sent as
// JSON numbers; with at most 8 decimal places (and a value of at most 1) the
// shortest float rendering reproduces the decimal exactly.
const shareScale = 8

// CallbackURL is a checked callback URL and the custom parameters it carries.
type CallbackURL struct {
	// URL is the final URL callbacks use: the callback with cb_params appended.
	URL string
	// Params are the custom parameters in order: the callback's own query,
	// then cb_params.
	Params []schema.Param
}

// ParseCallback checks the callback URL and appends cb_params to its query.
// The callback's own query is kept byte for byte, so a signature over the
// URL covers exactly what the merchant gave.
func ParseCallback(callback, cbParams string) (CallbackURL, error) {
	// The one set of destination URL rules (egress.CheckURL), which every
	// attempt applies again: refused here, a URL is never stored.
	if _, err := checkURL("callback", callback); err != nil {
		return CallbackURL{}, err
	}
	u, _ := url.Parse(callback) // checked above
	params, err := splitQuery("callback", u.RawQuery)
	if err != nil {
		return CallbackURL{}, err
	}
	final := callback
	if cbParams = strings.TrimPrefix(cbParams, "?"); cbParams != "" {
		if strings.Contains(cbParams, "#") {
			return CallbackURL{}, invalid("cb_params", "must not contain '#'")
		}
		extra, err := splitQuery("cb_params", cbParams)
		if err != nil {
			return CallbackURL{}, err
		}
		params = append(params, extra...)
		sep := "&"
		switch {
		case !strings.Contains(final, "?"):
			sep = "?"
		case u.RawQuery == "" || strings.HasSuffix(u.RawQuery, "&"):
			sep = ""
		}
		final += sep + cbParams
	}
	// The URL is sent, and signed, exactly as stored (with an empty path
	// written as "/", which is what an HTTP client sends).
	if _, err := checkURL("callback", final); err != nil {
		return CallbackURL{}, err
	}
	return CallbackURL{URL: final, Params: params}, nil
}

// checkURL applies egress.CheckURL, naming param in its error, and returns
// the URL as it is sent.
func checkURL(param, raw string) (string, error) {
	norm, err := egress.CheckURL(raw)
	var ue *egress.URLError
	switch {
	case errors.As(err, &ue):
		return "", invalid(param, "%s", ue.Reason)
	case err != nil:
		return "", invalid(param, "%v", err)
	}
	return norm, nil
}

// checkDestination applies the destination rules with the operator's
// exceptions for project projectID (the host rule among them) to the final
// callback URL, naming the callback parameter.
func checkDestination(rules *egress.Rules, projectID int64, raw string) error {
	_, err := rules.Check(projectID, raw)
	var ue *egress.URLError
	switch {
	case errors.As(err, &ue):
		return invalid("callback", "%s; callbacks must reach a public address", ue.Reason)
	case err != nil:
		return invalid("callback", "%v", err)
	}
	return nil
}

// splitQuery decodes a query string into ordered key/value pairs.
func splitQuery(param, raw string) ([]schema.Param, error) {
	var out []schema.Param
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, invalid(param, "query parameter %q is not URL-encoded correctly", k)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, invalid(param, "value of %q is not URL-encoded correctly", key)
		}
		if key == "" {
			return nil, invalid(param, "query parameter with an empty name")
		}
		if IsReserved(key) {
			return nil, invalid(param, "parameter %q is reserved for payhook's callback fields; rename it", key)
		}
		out = append(out, schema.Param{Key: key, Value: val})
	}
	return out, nil
}

// ParseDestinations parses the address parameter: one wallet, or several as
// `SHARE@ADDR|SHARE@ADDR` with positive shares that sum to exactly 1. Each
// address is validated for the ticker's network, and one destination may
// appear once, however it is spelled. A split the network cannot carry is
// refused: one that gives a destination less of the ticker's minimum
// payment than its network's smallest output to that address
// (distribute.CheckOutputs). An empty parameter means no forwarding (no
// destinations): the funds are held on the payment address.
func ParseDestinations(t chains.Ticker, raw string) ([]schema.Destination, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return []schema.Destination{}, nil
	}
	out, err := parseDestinations(t, raw)
	if err != nil {
		return nil, err
	}
	shares := make([]distribute.Share, len(out))
	for i, d := range out {
		shares[i] = distribute.Share{Address: d.Address, Share: d.Share}
	}
	if err := distribute.CheckOutputs(t, shares); err != nil {
		return nil, &InvalidError{Param: "address", Reason: err.Error()}
	}
	return out, nil
}

func parseDestinations(t chains.Ticker, raw string) ([]schema.Destination, error) {
	if !strings.ContainsAny(raw, "@|") {
		if err := chains.ValidateAddress(t, raw); err != nil {
			return nil, &InvalidError{Param: "address", Reason: err.Error()}
		}
		return []schema.Destination{{Address: raw, Share: decimal.NewFromInt(1)}}, nil
	}
	parts := strings.Split(raw, "|")
	if len(parts) > MaxDestinations {
		return nil, invalid("address", "at most %d destinations are allowed, got %d", MaxDestinations, len(parts))
	}
	seen := map[string]bool{}
	sum := decimal.Zero
	out := make([]schema.Destination, 0, len(parts))
	for i, p := range parts {
		shareStr, addr, ok := strings.Cut(p, "@")
		if !ok {
			return nil, invalid("address", "destination %d (%q) must be SHARE@ADDRESS", i+1, Truncate(p))
		}
		share, err := decimal.NewFromString(strings.TrimSpace(shareStr))
		if err != nil || strings.ContainsAny(shareStr, "eE") {
			return nil, invalid("address", "share %q of destination %d is not a decimal number", Truncate(shareStr), i+1)
		}
		if !share.IsPositive() {
			return nil, invalid("address", "share %s of destination %d must be positive", share, i+1)
		}
		if -share.Exponent() > shareScale && !share.Equal(share.Truncate(shareScale)) {
			return nil, invalid("address", "share %s of destination %d has more than %d decimal places", Truncate(share.String()), i+1, shareScale)
		}
		addr = strings.TrimSpace(addr)
		// DestinationKey validates addr. One destination may be spelled
		// several ways (EIP-55 or lower case, a CashAddr with or without
		// its prefix, ltc's two P2SH versions): compare what it pays to.
		key, err := t.Rules().DestinationKey(t, addr)
		if err != nil {
			return nil, &InvalidError{Param: "address", Reason: err.Error()}
		}
		if seen[key] {
			return nil, invalid("address", "destination %s is listed twice", addr)
		}
		seen[key] = true
		sum = sum.Add(share)
		out = append(out, schema.Destination{Address: addr, Share: share.Truncate(shareScale)})
	}
	if !sum.Equal(decimal.NewFromInt(1)) {
		return nil, invalid("address", "shares must sum to exactly 1, they sum to %s", sum)
	}
	return out, nil
}

// Truncate shortens what a caller sent to at most 64 bytes (and "...")
// for an error message that names it.
func Truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
