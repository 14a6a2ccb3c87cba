package store

import (
	"database/sql/driver"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Array wraps the values of one column as a PostgreSQL array parameter
// (for INSERT ... SELECT FROM unnest($1::type[], ...), which PostgreSQL
// parses once for any number of rows). A nil element is NULL.
func Array(values []any) any {
	return arrayLiteral(values)
}

// ByteaArray wraps byte strings as a PostgreSQL bytea[] parameter (see
// Array).
func ByteaArray(values [][]byte) any {
	return pq.ByteaArray(values)
}

// arrayLiteral is Array's parameter: its text form ({1,"a",NULL}), written
// in one buffer without reflection for the types the hot paths send
// (integers, strings, booleans, times, and values whose driver.Valuer gives
// one of them); any other element hands the whole array to lib/pq's
// GenericArray. lib/pq's own encoder reflects and allocates per element,
// which cost about a sixth of payhook's allocations end to end.
type arrayLiteral []any

// Value implements driver.Valuer.
func (a arrayLiteral) Value() (driver.Value, error) {
	if a == nil {
		return nil, nil
	}
	// One buffer of the literal's size (strings' quotes and escapes
	// counted), handed over as the string without a copy.
	size := 2 + len(a)
	for _, v := range a {
		if s, ok := v.(string); ok {
			size += 2 + len(s) + strings.Count(s, `"`) + strings.Count(s, `\`)
		} else {
			size += 36 // a time, an integer, NULL, a short decimal
		}
	}
	var b strings.Builder
	b.Grow(size)
	var tmp [64]byte
	b.WriteByte('{')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		if !appendElement(&b, tmp[:0], v) {
			return pq.GenericArray{A: []any(a)}.Value()
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}

// appendElement writes v as an array element to b (tmp is scratch space);
// false for a type it does not write.
func appendElement(b *strings.Builder, tmp []byte, v any) bool {
	switch v := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		b.Write(strconv.AppendInt(tmp, v, 10))
	case int:
		b.Write(strconv.AppendInt(tmp, int64(v), 10))
	case int32:
		b.Write(strconv.AppendInt(tmp, int64(v), 10))
	case uint32:
		b.Write(strconv.AppendUint(tmp, uint64(v), 10))
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeQuoted(b, v)
	case time.Time:
		b.WriteByte('"')
		if y := v.Year(); y >= 1 && y <= 9999 {
			b.Write(v.UTC().AppendFormat(tmp, "2006-01-02 15:04:05.999999999Z07:00"))
		} else {
			b.Write(pq.FormatTimestamp(v)) // BC, or past 9999
		}
		b.WriteByte('"')
	case driver.Valuer:
		dv, err := v.Value()
		if err != nil {
			return false
		}
		if _, again := dv.(driver.Valuer); again {
			return false
		}
		return appendElement(b, tmp, dv)
	default:
		return false
	}
	return true
}

// writeQuoted writes s as a quoted array element: a backslash before each
// double quote and backslash.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for {
		i := strings.IndexAny(s, `"\`)
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteByte('\\')
		b.WriteByte(s[i])
		s = s[i+1:]
	}
	b.WriteString(s)
	b.WriteByte('"')
}
