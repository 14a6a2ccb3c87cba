package payload

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Request is an encoded callback: exactly what is sent, and (through
// SignedData) exactly what is signed.
type Request struct {
	// Method is "GET" or "POST".
	Method string
	// URL is the full request URL. For GET it carries the payload fields.
	URL string
	// ContentType is the Content-Type header of a POST, "" for GET.
	ContentType string
	// Body is the POST body, nil for GET.
	Body []byte
}

// SignedData returns the bytes the x-ca-signature header signs: for GET the
// full URL exactly as in r.URL, for POST the raw body.
func SignedData(r Request) []byte {
	if r.Method == http.MethodGet || r.Method == "" {
		return []byte(r.URL)
	}
	return r.Body
}

// Encode builds the request that delivers c to callbackURL with transport t.
//
// callbackURL is the final callback URL (the merchant's URL with cb_params
// appended); its query is kept byte for byte. An empty path is written as
// "/" ("https://shop.example?x=1" becomes "https://shop.example/?x=1"),
// which is what an HTTP client sends anyway.
//
//   - GET: URL is callbackURL, then "?" (or "&", or nothing after a trailing
//     "?" or "&"), then the payload fields as key=value pairs escaped with
//     url.QueryEscape. The custom parameters are not appended again: they are
//     already in callbackURL's query.
//   - Form POST: URL is callbackURL; the body holds the payload fields in
//     the same order and encoding, then the custom parameters c.Params.
//   - JSON POST: URL is callbackURL; the body is one JSON object with the
//     payload members in the same order, then the custom parameters as
//     strings.
//
// In POST bodies a custom parameter named like a payload field (see
// IsReserved) is left out: the payload field wins. In JSON a custom
// parameter repeated under one name keeps its first value; a form body
// keeps every occurrence, as the query did. Invalid UTF-8 in a custom
// parameter is carried as is by GET and form and replaced by U+FFFD in JSON
// (as encoding/json does); the fields built from c must be valid UTF-8.
//
// Encode returns an error wrapping ErrInvalid when c, callbackURL or t
// cannot be encoded.
func Encode(callbackURL string, t Transport, c Callback) (Request, error) {
	if !t.valid() {
		return Request{}, invalid("transport", "unknown transport %d", int(t))
	}
	base, err := checkCallbackURL(callbackURL)
	if err != nil {
		return Request{}, err
	}
	var fs fieldList
	if err := c.fields(&fs); err != nil {
		return Request{}, err
	}
	size := fs.size()
	switch t {
	case TransportGET:
		b := make([]byte, 0, len(base)+1+size+size/2)
		b = append(b, base...)
		switch {
		case !strings.Contains(base, "?"):
			b = append(b, '?')
		case strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&"):
		default:
			b = append(b, '&')
		}
		b = fs.appendQuery(b)
		return Request{Method: http.MethodGet, URL: string(b)}, nil
	case TransportForm:
		b := make([]byte, 0, size+size/2+paramsSize(c.Params))
		b = fs.appendQuery(b)
		for _, p := range c.Params {
			if IsReserved(p.Key) {
				continue
			}
			b = append(b, '&')
			b = appendQueryEscape(b, p.Key)
			b = append(b, '=')
			b = appendQueryEscape(b, p.Value)
		}
		return Request{Method: http.MethodPost, URL: base, ContentType: ContentTypeForm, Body: b}, nil
	default:
		b := make([]byte, 0, size+size/4+paramsSize(c.Params))
		b = fs.appendJSON(b)
		var seen map[string]bool
		if len(c.Params) > 16 {
			seen = make(map[string]bool, len(c.Params))
		}
		for i, p := range c.Params {
			if IsReserved(p.Key) || repeated(c.Params, i, seen) {
				continue
			}
			b = append(b, ',')
			b = appendJSONString(b, p.Key)
			b = append(b, ':')
			b = appendJSONString(b, p.Value)
		}
		b = append(b, '}')
		return Request{Method: http.MethodPost, URL: base, ContentType: ContentTypeJSON, Body: b}, nil
	}
}

// repeated reports whether a parameter before i has the same JSON member
// name as params[i] (names that differ only in invalid UTF-8 bytes can
// decode to the same name). seen, when not nil, is the set of names of
// params[:i] and is updated.
func repeated(params []Param, i int, seen map[string]bool) bool {
	k := jsonName(params[i].Key)
	if seen != nil {
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	}
	for _, p := range params[:i] {
		if jsonName(p.Key) == k {
			return true
		}
	}
	return false
}

// jsonName is s as a JSON reader sees it after appendJSONString: each
// invalid UTF-8 byte replaced by U+FFFD. It allocates only for invalid s.
func jsonName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func paramsSize(ps []Param) int {
	n := 0
	for _, p := range ps {
		n += len(p.Key) + len(p.Value) + 6
	}
	return n
}

// kind is how a field's text is written in JSON.
type kind uint8

const (
	kString kind = iota // a JSON string
	kNumber             // a JSON number; text is its exact literal
	kObject             // a JSON object; text is its exact literal
	kNull               // JSON null; left out of GET and form
)

type field struct {
	name string
	kind kind
	text string
}

// fieldList holds the payload fields of one callback in wire order.
type fieldList struct {
	f [len(fieldOrder)]field
	n int
}

func (l *fieldList) add(name string, k kind, text string) {
	l.f[l.n] = field{name: name, kind: k, text: text}
	l.n++
}

func (l *fieldList) size() int {
	n := 2
	for _, f := range l.f[:l.n] {
		n += len(f.name) + len(f.text) + 6
	}
	return n
}

// appendQuery writes the non-null fields as k=v pairs joined by "&".
func (l *fieldList) appendQuery(b []byte) []byte {
	first := true
	for _, f := range l.f[:l.n] {
		if f.kind == kNull {
			continue
		}
		if !first {
			b = append(b, '&')
		}
		first = false
		b = appendQueryEscape(b, f.name)
		b = append(b, '=')
		b = appendQueryEscape(b, f.text)
	}
	return b
}

// appendJSON writes "{" and the fields as members, without the closing "}".
func (l *fieldList) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, f := range l.f[:l.n] {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.name)
		b = append(b, ':')
		switch f.kind {
		case kString:
			b = appendJSONString(b, f.text)
		case kNumber, kObject:
			b = append(b, f.text...)
		case kNull:
			b = append(b, "null"...)
		}
	}
	return b
}

// fields validates c and writes its payload fields to l in wire order.
func (c *Callback) fields(l *fieldList) error {
	for _, s := range [...]struct{ name, v string }{
		{fUUID, c.UUID}, {fAddressIn, c.AddressIn}, {fTxidIn, c.TxidIn}, {fCoin, c.Coin},
	} {
		if s.v == "" {
			return invalid(s.name, "is required")
		}
	}
	for _, s := range [...]struct{ name, v string }{
		{fUUID, c.UUID}, {fAddressIn, c.AddressIn}, {fTxidIn, c.TxidIn}, {fTxidOut, c.TxidOut},
		{fCoin, c.Coin}, {fPaymentStatus, c.PaymentStatus},
	} {
		if !utf8.ValidString(s.v) {
			return invalid(s.name, "is not valid UTF-8")
		}
	}
	var progress bool
	switch c.PaymentStatus {
	case StatusPending, StatusConfirmed:
		progress = true
	case StatusCompleted:
	case "":
		return invalid(fPaymentStatus, "is required")
	default:
		return invalid(fPaymentStatus, "%q is not one of pending, confirmed, completed", c.PaymentStatus)
	}
	if c.Confirmations < 0 {
		return invalid(fConfirmations, "must not be negative, got %d", c.Confirmations)
	}
	if c.RequiredConfirmations < 1 {
		return invalid(fRequiredConfirmations, "must be at least 1, got %d", c.RequiredConfirmations)
	}
	if c.Decimals < 0 || c.Decimals > MaxDecimals {
		return invalid("decimals", "must be between 0 and %d, got %d", MaxDecimals, c.Decimals)
	}
	addressOut, err := addressOutJSON(c.AddressOut)
	if err != nil {
		return err
	}
	var price string
	if c.Price != nil {
		if r := checkDecimal(*c.Price); r != "" {
			return invalid(fPrice, "%s", r)
		}
		price = c.Price.String()
	}
	if r := checkDecimal(c.ValueCoin); r != "" {
		return invalid(fValueCoin, "%s", r)
	}
	for _, a := range [...]struct {
		name     string
		a        Amount
		nullable bool
	}{
		{fValueForwardedCoin, c.ValueForwardedCoin, false},
		{fFeeCoin, c.FeeCoin, true},
		{fNetworkFee, c.NetworkFee, true},
	} {
		switch {
		case a.a.Valid && a.a.Null:
			return invalid(a.name, "is both null and set")
		case a.a.Null && !a.nullable:
			return invalid(a.name, "cannot be null; leave it absent")
		case a.a.Valid:
			if r := checkDecimal(a.a.Value); r != "" {
				return invalid(a.name, "%s", r)
			}
		}
	}
	for _, cv := range [...]struct {
		name string
		v    *string
	}{{fValueCoinConvert, c.ValueCoinConvert}, {fValueForwardedCoinConvert, c.ValueForwardedCoinConvert}} {
		if cv.v == nil {
			continue
		}
		if !utf8.ValidString(*cv.v) || !json.Valid([]byte(*cv.v)) {
			return invalid(cv.name, "is not valid JSON text")
		}
	}
	for i, p := range c.Params {
		if p.Key == "" {
			return invalid("params["+strconv.Itoa(i)+"]", "has an empty name")
		}
	}

	l.add(fUUID, kString, c.UUID)
	l.add(fAddressIn, kString, c.AddressIn)
	l.add(fAddressOut, kObject, addressOut)
	l.add(fTxidIn, kString, c.TxidIn)
	if !progress && c.TxidOut != "" {
		l.add(fTxidOut, kString, c.TxidOut)
	}
	l.add(fConfirmations, kNumber, strconv.FormatInt(c.Confirmations, 10))
	l.add(fRequiredConfirmations, kNumber, strconv.FormatInt(c.RequiredConfirmations, 10))
	l.add(fPaymentStatus, kString, c.PaymentStatus)
	l.add(fCoin, kString, c.Coin)
	if c.Price != nil {
		l.add(fPrice, kString, price)
	}
	l.add(fValueCoin, kNumber, FormatAmount(c.ValueCoin, c.Decimals))
	if !progress {
		l.addAmount(fValueForwardedCoin, c.ValueForwardedCoin, c.Decimals)
		l.addAmount(fFeeCoin, c.FeeCoin, c.Decimals)
		l.addAmount(fNetworkFee, c.NetworkFee, c.Decimals)
	}
	if c.ValueCoinConvert != nil {
		l.add(fValueCoinConvert, kString, *c.ValueCoinConvert)
	}
	if !progress && c.ValueForwardedCoinConvert != nil {
		l.add(fValueForwardedCoinConvert, kString, *c.ValueForwardedCoinConvert)
	}
	return nil
}

func (l *fieldList) addAmount(name string, a Amount, places int32) {
	switch {
	case a.Null:
		l.add(name, kNull, "")
	case a.Valid:
		l.add(name, kNumber, FormatAmount(a.Value, places))
	}
}

// addressOutJSON renders the destinations as {"address":share,...} in the
// order given.
func addressOutJSON(shares []Share) (string, error) {
	var seen map[string]bool
	if len(shares) > 16 {
		seen = make(map[string]bool, len(shares))
	}
	n := 2
	for _, s := range shares {
		n += len(s.Address) + 16
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, s := range shares {
		switch {
		case s.Address == "":
			return "", invalid(fAddressOut, "destination %d has no address", i+1)
		case !utf8.ValidString(s.Address):
			return "", invalid(fAddressOut, "destination %d is not valid UTF-8", i+1)
		}
		dup := false
		if seen != nil {
			dup = seen[s.Address]
			seen[s.Address] = true
		} else {
			for _, p := range shares[:i] {
				dup = dup || p.Address == s.Address
			}
		}
		if dup {
			return "", invalid(fAddressOut, "destination %s is listed twice", s.Address)
		}
		if r := checkDecimal(s.Share); r != "" {
			return "", invalid(fAddressOut, "share of destination %d %s", i+1, r)
		}
		if s.Share.Sign() == 0 {
			return "", invalid(fAddressOut, "share of destination %d must be positive", i+1)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s.Address)
		b = append(b, ':')
		b = append(b, s.Share.String()...)
	}
	b = append(b, '}')
	return string(b), nil
}

// ValidateCallbackURL reports whether raw can be used as a callback URL: an
// absolute http or https URL with a host, without credentials or fragment,
// made of printable ASCII only, and written exactly as an HTTP client puts
// it on the wire (scheme, host, then the request target; an empty path
// counts as "/"). The last rule is what lets a receiver verify a GET
// signature: it rebuilds the URL from the request line it received, so a
// URL a client would re-encode (a raw space, non-ASCII, "/a%zz") could never
// verify. The address API should apply it at creation; Encode applies it to
// every callback.
func ValidateCallbackURL(raw string) error {
	_, err := checkCallbackURL(raw)
	return err
}

// checkCallbackURL validates raw and returns it with an empty path written
// as "/".
func checkCallbackURL(raw string) (string, error) {
	const name = "callback_url"
	if raw == "" {
		return "", invalid(name, "is required")
	}
	for i := 0; i < len(raw); i++ {
		if b := raw[i]; b <= ' ' || b >= 0x7f {
			return "", invalid(name, "has a space, control or non-ASCII byte at offset %d; percent-encode it", i)
		}
	}
	if strings.Contains(raw, "#") {
		return "", invalid(name, "must not contain a fragment (#...)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", invalid(name, "is not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Opaque != "":
		return "", invalid(name, "must be an absolute http or https URL")
	case !strings.HasPrefix(raw, u.Scheme+"://"):
		return "", invalid(name, "scheme must be written in lower case")
	case u.User != nil:
		return "", invalid(name, "must not contain credentials (user:password@)")
	case u.Host == "" || u.Hostname() == "":
		return "", invalid(name, "must have a host")
	case strings.HasSuffix(u.Host, ":"):
		return "", invalid(name, "has an empty port")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", invalid(name, "port %s is not valid", p)
		}
	}
	norm := raw
	if u.Path == "" {
		rest := raw[len(u.Scheme)+3:]
		end := len(rest)
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			end = i
		}
		norm = raw[:len(u.Scheme)+3+end] + "/" + rest[end:]
	}
	if wire := u.Scheme + "://" + u.Host + u.RequestURI(); wire != norm {
		return "", invalid(name, "is not written as an HTTP client sends it (%s); a signature over it could not be verified", wire)
	}
	return norm, nil
}
