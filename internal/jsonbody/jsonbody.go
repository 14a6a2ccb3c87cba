// Package jsonbody explains, in the API's words, why a JSON request body
// does not fit its request message: the field (by its proto name, the
// name the API documents) and the type it expects, with an example
// (`value_coin: must be a string, e.g. "0.5"`). protojson's own errors
// name the parser, a line and column, and the field's JSON name
// (`proto: (line 1:73): invalid value for string field valueCoin`); they
// are never shown to a client.
//
// Problem follows protojson's rules (the rules of
// google.golang.org/protobuf/encoding/protojson with DiscardUnknown): both
// the proto and the JSON name of a field are accepted, unknown fields are
// skipped, null is every field's default, 64-bit integers and floats may
// be strings, and well-known types have their JSON forms. It reports the
// first problem in document order. It never inspects protojson's error
// text; when protojson refuses a body Problem finds nothing wrong with
// (a rule it does not model), the caller says so in general words.
package jsonbody

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Problem returns what is wrong with data as a JSON body of md, or ""
// when it finds nothing wrong.
func Problem(data []byte, md protoreflect.MessageDescriptor) string {
	if !utf8.Valid(data) {
		return "request body: not valid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parse(dec)
	if err != nil {
		return syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "request body: must be one JSON object; something follows it"
	}
	if _, ok := v.(object); !ok {
		return "request body: must be a JSON object, e.g. {}"
	}
	return message("", v, md)
}

// syntax describes a JSON syntax error by its byte offset.
func syntax(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("request body: not valid JSON (at offset %d)", se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "request body: not valid JSON (it ends early)"
	case errors.Is(err, errDuplicate):
		return "request body: " + err.Error()
	}
	return "request body: not valid JSON"
}

// object is a JSON object with its members in document order.
type object []member

type member struct {
	key string
	val any
}

var errDuplicate = errors.New("duplicate member")

// parse reads one JSON value: object, []any, string, json.Number, bool or
// nil. A name given twice in one object is an error naming it.
func parse(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		var o object
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			if seen[k] {
				return nil, fmt.Errorf("%w: %q is given twice", errDuplicate, truncate(k))
			}
			seen[k] = true
			v, err := parse(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k, v})
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return o, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := parse(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// message checks v against md; name is the path of v ("" at the top).
func message(name string, v any, md protoreflect.MessageDescriptor) string {
	if msg, ok := wellKnown(name, v, md); ok {
		return msg
	}
	o, ok := v.(object)
	if !ok {
		return fmt.Sprintf("%s: must be a JSON object", label(name))
	}
	fields := md.Fields()
	set := map[protoreflect.FullName]string{}
	oneofs := map[protoreflect.FullName]string{}
	for _, m := range o {
		fd := fields.ByJSONName(m.key)
		if fd == nil {
			fd = fields.ByTextName(m.key)
		}
		if fd == nil {
			continue // unknown fields are discarded
		}
		path := join(name, string(fd.Name()))
		if prev, ok := set[fd.FullName()]; ok {
			return fmt.Sprintf("%s: given twice (as %s and %s)", path, prev, m.key)
		}
		set[fd.FullName()] = m.key
		if m.val == nil && !isValue(fd) {
			continue // null is the field's default
		}
		if of := fd.ContainingOneof(); of != nil && !of.IsSynthetic() {
			if other, ok := oneofs[of.FullName()]; ok {
				return fmt.Sprintf("%s: only one of %s and %s may be given", path, other, fd.Name())
			}
			oneofs[of.FullName()] = string(fd.Name())
		}
		if msg := fieldValue(path, m.val, fd); msg != "" {
			return msg
		}
	}
	return ""
}

// isValue reports whether fd is a google.protobuf.Value, whose null is a
// value of its own.
func isValue(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value"
}

func fieldValue(path string, v any, fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		o, ok := v.(object)
		if !ok {
			return fmt.Sprintf("%s: must be a JSON object", path)
		}
		for _, m := range o {
			p := fmt.Sprintf("%s[%q]", path, truncate(m.key))
			if msg := mapKey(p, m.key, fd.MapKey()); msg != "" {
				return msg
			}
			if m.val == nil && !isValue(fd.MapValue()) {
				return fmt.Sprintf("%s: must not be null", p)
			}
			if msg := single(p, m.val, fd.MapValue()); msg != "" {
				return msg
			}
		}
		return ""
	case fd.IsList():
		a, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("%s: must be a JSON array, e.g. [%s]", path, example(fd))
		}
		for i, e := range a {
			p := fmt.Sprintf("%s[%d]", path, i)
			if e == nil && !isValue(fd) {
				return fmt.Sprintf("%s: must not be null", p)
			}
			if msg := single(p, e, fd); msg != "" {
				return msg
			}
		}
		return ""
	}
	return single(path, v, fd)
}

// mapKey checks a map key: JSON object keys are strings, holding the
// key's value for an integer or boolean key type.
func mapKey(path, k string, fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if k != "true" && k != "false" {
			return fmt.Sprintf("%s: the key must be true or false", path)
		}
	case protoreflect.StringKind:
	default:
		if _, msg := integer(json.Number(k), fd.Kind()); msg != "" {
			return fmt.Sprintf("%s: the key %s", path, msg)
		}
	}
	return ""
}

// single checks one value (a field's, a list element's or a map value's)
// of fd's kind.
func single(path string, v any, fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return message(path, v, fd.Message())
	case protoreflect.StringKind:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%s: must be a string, e.g. %s", path, example(fd, v))
		}
	case protoreflect.BytesKind:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("%s: must be a base64 string", path)
		}
		if !isBase64(s) {
			return fmt.Sprintf("%s: must be base64", path)
		}
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("%s: must be true or false (a JSON boolean, without quotes)", path)
		}
	case protoreflect.EnumKind:
		return enum(path, v, fd.Enum())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return float(path, v, fd.Kind())
	default:
		var n json.Number
		switch t := v.(type) {
		case json.Number:
			n = t
		case string:
			if strings.TrimSpace(t) != t || t == "" {
				return fmt.Sprintf("%s: must be an integer, e.g. 1", path)
			}
			n = json.Number(t)
		default:
			return fmt.Sprintf("%s: must be an integer, e.g. 1", path)
		}
		if _, msg := integer(n, fd.Kind()); msg != "" {
			return fmt.Sprintf("%s: %s", path, msg)
		}
	}
	return ""
}

// integer checks that n is an integer in the range of kind k; protojson
// takes an integral number in any notation (1, 1.0, 1e2).
func integer(n json.Number, k protoreflect.Kind) (*big.Int, string) {
	lo, hi := intRange(k)
	f, _, err := big.ParseFloat(string(n), 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return nil, "must be an integer, e.g. 1"
	}
	i, _ := f.Int(nil)
	if i.Cmp(lo) < 0 || i.Cmp(hi) > 0 {
		return nil, fmt.Sprintf("must be an integer from %s to %s", lo, hi)
	}
	return i, ""
}

func intRange(k protoreflect.Kind) (lo, hi *big.Int) {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return big.NewInt(0), big.NewInt(math.MaxUint32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return big.NewInt(0), new(big.Int).SetUint64(math.MaxUint64)
	}
	return big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
}

func float(path string, v any, k protoreflect.Kind) string {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = string(t)
	case string:
		switch t {
		case "NaN", "Infinity", "-Infinity":
			return ""
		}
		if strings.TrimSpace(t) != t || t == "" {
			return fmt.Sprintf("%s: must be a number, e.g. 0.5", path)
		}
		s = t
	default:
		return fmt.Sprintf("%s: must be a number, e.g. 0.5", path)
	}
	bits := 64
	if k == protoreflect.FloatKind {
		bits = 32
	}
	if _, err := strconv.ParseFloat(s, bits); err != nil {
		return fmt.Sprintf("%s: must be a number within the range of a %d-bit float", path, bits)
	}
	return ""
}

func enum(path string, v any, ed protoreflect.EnumDescriptor) string {
	switch t := v.(type) {
	case string:
		return "" // an unknown name is discarded, as unknown fields are
	case json.Number:
		if _, msg := integer(t, protoreflect.Int32Kind); msg == "" {
			return ""
		}
	}
	names := make([]string, 0, ed.Values().Len())
	for i := range ed.Values().Len() {
		names = append(names, string(ed.Values().Get(i).Name()))
	}
	return fmt.Sprintf("%s: must be one of %s", path, strings.Join(names, ", "))
}

// wellKnown checks the JSON forms of the well-known types: reports ok
// when md is one (msg then says what is wrong, or is "").
func wellKnown(name string, v any, md protoreflect.MessageDescriptor) (msg string, ok bool) {
	p := label(name)
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		if _, isStr := v.(string); !isStr {
			return fmt.Sprintf("%s: must be a timestamp string, e.g. \"2025-01-31T12:00:00Z\"", p), true
		}
		return "", true
	case "google.protobuf.Duration":
		if s, isStr := v.(string); !isStr || !strings.HasSuffix(s, "s") {
			return fmt.Sprintf("%s: must be a duration string in seconds, e.g. \"90s\"", p), true
		}
		return "", true
	case "google.protobuf.FieldMask":
		if _, isStr := v.(string); !isStr {
			return fmt.Sprintf("%s: must be a string of comma-separated field names", p), true
		}
		return "", true
	case "google.protobuf.Value":
		return "", true
	case "google.protobuf.Struct":
		if _, isObj := v.(object); !isObj {
			return fmt.Sprintf("%s: must be a JSON object", p), true
		}
		return "", true
	case "google.protobuf.ListValue":
		if _, isArr := v.([]any); !isArr {
			return fmt.Sprintf("%s: must be a JSON array", p), true
		}
		return "", true
	case "google.protobuf.StringValue", "google.protobuf.BytesValue", "google.protobuf.BoolValue",
		"google.protobuf.Int32Value", "google.protobuf.Int64Value", "google.protobuf.UInt32Value",
		"google.protobuf.UInt64Value", "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return single(p, v, md.Fields().ByName("value")), true
	}
	return "", false
}

// example renders a value of fd's kind for a message: for a string field
// sent a number, the number as a string (`"0.5"`).
func example(fd protoreflect.FieldDescriptor, sent ...any) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if len(sent) > 0 {
			if n, ok := sent[0].(json.Number); ok {
				return strconv.Quote(truncate(string(n)))
			}
			if b, ok := sent[0].(bool); ok {
				return strconv.Quote(strconv.FormatBool(b))
			}
		}
		return `"text"`
	case protoreflect.BoolKind:
		return "true"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "{...}"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "0.5"
	case protoreflect.EnumKind:
		if fd.Enum().Values().Len() > 0 {
			return strconv.Quote(string(fd.Enum().Values().Get(0).Name()))
		}
	case protoreflect.BytesKind:
		return `"aGVsbG8="`
	}
	return "1"
}

func isBase64(s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(s); err == nil {
			return true
		}
	}
	return false
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func label(name string) string {
	if name == "" {
		return "request body"
	}
	return name
}

// truncate shortens what a client sent to at most 64 bytes (and "...").
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
