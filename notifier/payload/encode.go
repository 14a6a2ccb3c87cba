package payload

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/payhook/payhook/notifier/egress"
)

// Request is an encoded notification: exactly what is sent, and (through
// SignedData) exactly what a stored signature signs.
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

// SignedData returns the bytes a signature over a request covers: for GET
// the full URL exactly as in r.URL, for POST the raw body.
func SignedData(r Request) []byte {
	if r.Method == http.MethodGet || r.Method == "" {
		return []byte(r.URL)
	}
	return r.Body
}

// Kind is how a field's text is written in JSON.
type Kind uint8

// Field kinds.
const (
	// KindString is a JSON string.
	KindString Kind = iota
	// KindNumber is a JSON number; the field's text is its exact literal.
	KindNumber
	// KindObject is a JSON object; the field's text is its exact literal.
	KindObject
	// KindNull is JSON null; the field is left out of GET and form payloads
	// (they have no way to say null).
	KindNull
)

// Field is one payload field: its wire name, how it is written in JSON and
// its text. In GET and form payloads every field is its text, as a string.
type Field struct {
	// Name is the wire name; it must not be empty.
	Name string
	// Kind is the field's JSON type.
	Kind Kind
	// Text is the value: the string itself, or the exact JSON literal of a
	// number or object.
	Text string
}

// String returns a string field.
func String(name, v string) Field { return Field{Name: name, Kind: KindString, Text: v} }

// Int returns an integer number field.
func Int(name string, v int64) Field {
	return Field{Name: name, Kind: KindNumber, Text: strconv.FormatInt(v, 10)}
}

// Object returns a field holding the JSON object literal text.
func Object(name, text string) Field { return Field{Name: name, Kind: KindObject, Text: text} }

// Money returns the field of an optional amount rounded to places (see
// FormatAmount): a number, null, or nothing (ok false) when a is absent.
// a must have passed CheckDecimal.
func Money(name string, a Amount, places int32) (f Field, ok bool) {
	switch {
	case a.Null:
		return Field{Name: name, Kind: KindNull}, true
	case a.Valid:
		return Field{Name: name, Kind: KindNumber, Text: FormatAmount(a.Value, places)}, true
	}
	return Field{}, false
}

// Encode builds the request that delivers fields, in the order given, to
// notifyURL with transport t.
//
// notifyURL must pass egress.CheckURL (the one set of destination URL
// rules); its query is kept byte for byte, and an empty path is written as
// "/", which is what an HTTP client sends anyway.
//
//   - GET: URL is notifyURL, then "?" (or "&", or nothing after a trailing
//     "?" or "&"), then the non-null fields as key=value pairs escaped with
//     url.QueryEscape. params are not appended: they are expected in
//     notifyURL's query already.
//   - Form POST: URL is notifyURL; the body holds the non-null fields in
//     the same order and encoding, then params.
//   - JSON POST: URL is notifyURL; the body is one JSON object with the
//     fields as members, in order, then params as strings.
//
// Deterministic: the same input gives the same bytes (nothing iterates a
// map), so the bytes can be built once, stored and sent unchanged on every
// retry. A param named like a field is left out of POST bodies (the field
// wins). In JSON a param repeated under one name keeps its first value; a
// form body keeps every occurrence, as a query does. Invalid UTF-8 in a
// param is carried as is by GET and form and replaced by U+FFFD in JSON (as
// encoding/json does); field names and string fields must be valid UTF-8.
//
// Errors wrap ErrInvalid; most are a *FieldError naming the field
// ("notify_url" for the URL).
func Encode(notifyURL string, t Transport, fields []Field, params []Param) (Request, error) {
	if notifyURL == "" {
		return Request{}, Invalid("notify_url", "is required")
	}
	if !t.valid() {
		return Request{}, Invalid("transport", "unknown transport %d", int(t))
	}
	base, err := egress.CheckURL(notifyURL)
	if err != nil {
		var ue *egress.URLError
		if errors.As(err, &ue) {
			return Request{}, Invalid("notify_url", "%s", ue.Reason)
		}
		return Request{}, Invalid("notify_url", "%v", err)
	}
	size := 2
	for i, f := range fields {
		switch {
		case f.Name == "":
			return Request{}, Invalid("fields["+strconv.Itoa(i)+"]", "has an empty name")
		case !utf8.ValidString(f.Name):
			return Request{}, Invalid("fields["+strconv.Itoa(i)+"]", "name is not valid UTF-8")
		case f.Kind == KindString && !utf8.ValidString(f.Text):
			return Request{}, Invalid(f.Name, "is not valid UTF-8")
		case f.Kind > KindNull:
			return Request{}, Invalid(f.Name, "has unknown kind %d", f.Kind)
		}
		size += len(f.Name) + len(f.Text) + 6
	}
	for i, p := range params {
		if p.Key == "" {
			return Request{}, Invalid("params["+strconv.Itoa(i)+"]", "has an empty name")
		}
	}
	owned := func(name string) bool {
		for _, f := range fields {
			if f.Name == name {
				return true
			}
		}
		return false
	}
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
		b = appendQuery(b, fields)
		return Request{Method: http.MethodGet, URL: string(b)}, nil
	case TransportForm:
		b := make([]byte, 0, size+size/2+paramsSize(params))
		b = appendQuery(b, fields)
		for _, p := range params {
			if owned(p.Key) {
				continue
			}
			b = append(b, '&')
			b = appendQueryEscape(b, p.Key)
			b = append(b, '=')
			b = appendQueryEscape(b, p.Value)
		}
		return Request{Method: http.MethodPost, URL: base, ContentType: ContentTypeForm, Body: b}, nil
	default:
		b := make([]byte, 0, size+size/4+paramsSize(params))
		b = appendJSON(b, fields)
		var seen map[string]bool
		if len(params) > 16 {
			seen = make(map[string]bool, len(params))
		}
		for i, p := range params {
			if owned(p.Key) || repeated(params, i, seen) {
				continue
			}
			b = append(b, ',')
			b = AppendJSONString(b, p.Key)
			b = append(b, ':')
			b = AppendJSONString(b, p.Value)
		}
		b = append(b, '}')
		return Request{Method: http.MethodPost, URL: base, ContentType: ContentTypeJSON, Body: b}, nil
	}
}

// JSON returns fields as the JSON object a JSON POST carries (the body
// Encode makes for TransportJSON, without params). Errors are Encode's for
// the same fields.
func JSON(fields []Field) ([]byte, error) {
	for i, f := range fields {
		switch {
		case f.Name == "":
			return nil, Invalid("fields["+strconv.Itoa(i)+"]", "has an empty name")
		case !utf8.ValidString(f.Name):
			return nil, Invalid("fields["+strconv.Itoa(i)+"]", "name is not valid UTF-8")
		case f.Kind == KindString && !utf8.ValidString(f.Text):
			return nil, Invalid(f.Name, "is not valid UTF-8")
		case f.Kind > KindNull:
			return nil, Invalid(f.Name, "has unknown kind %d", f.Kind)
		}
	}
	return append(appendJSON(nil, fields), '}'), nil
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

// appendQuery writes the non-null fields as k=v pairs joined by "&".
func appendQuery(b []byte, fields []Field) []byte {
	first := true
	for _, f := range fields {
		if f.Kind == KindNull {
			continue
		}
		if !first {
			b = append(b, '&')
		}
		first = false
		b = appendQueryEscape(b, f.Name)
		b = append(b, '=')
		b = appendQueryEscape(b, f.Text)
	}
	return b
}

// appendJSON writes "{" and the fields as members, without the closing "}".
func appendJSON(b []byte, fields []Field) []byte {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, f.Name)
		b = append(b, ':')
		switch f.Kind {
		case KindString:
			b = AppendJSONString(b, f.Text)
		case KindNumber, KindObject:
			b = append(b, f.Text...)
		case KindNull:
			b = append(b, "null"...)
		}
	}
	return b
}

// Param is one merchant custom parameter (cb_params or the notification
// URL's own query), echoed as a string field.
type Param struct {
	// Key is the parameter name; it must not be empty.
	Key string
	// Value is the decoded parameter value.
	Value string
}

// EncodeOptional is Encode for a merchant event whose notify URL is
// optional: without one (notifyURL empty) it returns the empty Request, a
// message with no destination of its own, whose event still reaches the
// project's event log and webhook endpoints (server/merchant/endpoint's
// Fanout, which stores no notification for it).
func EncodeOptional(notifyURL string, t Transport, fields []Field, params []Param) (Request, error) {
	if notifyURL == "" {
		return Request{}, nil
	}
	return Encode(notifyURL, t, fields, params)
}
