package subscription

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

func TestParseOption(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, raw string
		places    int32
		want      string // period:value, or "" for an error
		reason    string // part of the error
	}{
		{"month", "1m:10.00", 2, "1m:10", ""},
		{"year", "12m:100.00", 2, "12m:100", ""},
		{"day", "7d:0.5", 2, "7d:0.5", ""},
		{"week", "2w:3", 2, "2w:3", ""},
		{"years", "10y:1000", 2, "10y:1000", ""},
		{"no decimals currency", "1m:100", 0, "1m:100", ""},
		{"longest days", "3660d:1", 2, "3660d:1", ""},
		{"no colon", "1m10", 2, "", "PERIOD:VALUE"},
		{"empty", "", 2, "", "PERIOD:VALUE"},
		{"empty period", ":10", 2, "", "period"},
		{"unit only", "m:10", 2, "", "period"},
		{"count only", "1:10", 2, "", "period"},
		{"unknown unit", "1h:10", 2, "", "period"},
		{"upper case unit", "1M:10", 2, "", "period"},
		{"zero count", "0m:10", 2, "", "period"},
		{"leading zero", "01m:10", 2, "", "period"},
		{"negative count", "-1m:10", 2, "", "period"},
		{"fractional count", "1.5m:10", 2, "", "period"},
		{"space", " 1m:10", 2, "", "period"},
		{"two units", "1mm:10", 2, "", "period"},
		{"over ten years", "11y:10", 2, "", "ten years"},
		{"too many months", "121m:10", 2, "", "ten years"},
		{"huge count", "99999999999999999999m:1", 2, "", "period"},
		{"empty value", "1m:", 2, "", "value"},
		{"zero value", "1m:0", 2, "", "positive"},
		{"negative value", "1m:-10", 2, "", "value"},
		{"non-numeric value", "1m:ten", 2, "", "value"},
		{"exponent", "1m:1e3", 2, "", "value"},
		{"too many places", "1m:10.001", 2, "", "decimal places"},
		{"second colon", "1m:10:5", 2, "", "value"},
	} {
		o, err := ParseOption(c.raw, c.places)
		if c.want != "" {
			if err != nil {
				t.Errorf("%s: %q: %v", c.name, c.raw, err)
			} else if got := o.Period.String() + ":" + o.Value.String(); got != c.want {
				t.Errorf("%s: %q parsed as %s, want %s", c.name, c.raw, got, c.want)
			}
			continue
		}
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Param != "option" || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %q: error %v, want an option error about %q", c.name, c.raw, err, c.reason)
		}
	}
}

func TestParseOptions(t *testing.T) {
	t.Parallel()
	many := make([]string, MaxOptions+1)
	for i := range many {
		many[i] = decimal.NewFromInt(int64(i+1)).String() + "d:1"
	}
	for _, c := range []struct {
		name   string
		raw    []string
		want   int
		reason string
	}{
		{"two", []string{"1m:10.00", "12m:100.00"}, 2, ""},
		{"twenty", many[:MaxOptions], MaxOptions, ""},
		{"none", nil, 0, "at least one"},
		{"too many", many, 0, "at most 20"},
		{"duplicate period", []string{"1m:10", "1m:12"}, 0, "twice"},
		{"one bad", []string{"1m:10", "1x:12"}, 0, "period"},
	} {
		got, err := ParseOptions(c.raw, 2)
		if c.reason == "" {
			if err != nil || len(got) != c.want {
				t.Errorf("%s: %d options, %v", c.name, len(got), err)
			}
			continue
		}
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Param != "option" || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: error %v, want an option error about %q", c.name, err, c.reason)
		}
	}
}

// FuzzParseOption: the parser never panics; what it accepts is a period
// within ten years and a positive value within the places, and its
// rendering parses back to the same option.
func FuzzParseOption(f *testing.F) {
	for _, s := range []string{"1m:10.00", "12m:100", "3660d:0.01", "10y:1", "0m:1", "1m:-1", "1m:1e9", "٣m:1", "1m:10:1", ":", ""} {
		f.Add(s, int32(2))
	}
	f.Fuzz(func(t *testing.T, raw string, places int32) {
		if places < 0 || places > 18 {
			places = 2
		}
		o, err := ParseOption(raw, places)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Param != "option" {
				t.Fatalf("%q: error %v is not an option error", raw, err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("%q: error message is not UTF-8: %q", raw, err.Error())
			}
			return
		}
		if o.Period.Count < 1 || o.Period.Count > maxCount[o.Period.Unit] || !o.Value.IsPositive() || -o.Value.Exponent() > places && !o.Value.Equal(o.Value.Truncate(places)) {
			t.Fatalf("%q: accepted %+v", raw, o)
		}
		again, err := ParseOption(o.Period.String()+":"+o.Value.String(), places)
		if err != nil || again.Period != o.Period || !again.Value.Equal(o.Value) {
			t.Fatalf("%q: %+v does not parse back: %+v %v", raw, o, again, err)
		}
		// Adding the period always moves time forward.
		start := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
		if !AddPeriod(start, o.Period).After(start) {
			t.Fatalf("%q: %s does not move %s forward", raw, o.Period, start)
		}
	})
}

func TestAddPeriod(t *testing.T) {
	t.Parallel()
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 30, 0, 0, time.UTC) }
	for _, c := range []struct {
		name   string
		from   time.Time
		period Period
		want   time.Time
	}{
		{"one day", at(2026, 3, 1, 9), Period{1, Day}, at(2026, 3, 2, 9)},
		{"days across a month", at(2026, 1, 30, 9), Period{3, Day}, at(2026, 2, 2, 9)},
		{"one week", at(2026, 12, 28, 9), Period{1, Week}, at(2027, 1, 4, 9)},
		{"one month", at(2026, 4, 15, 9), Period{1, Month}, at(2026, 5, 15, 9)},
		{"Jan 31 + 1m normalises past February", at(2026, 1, 31, 9), Period{1, Month}, at(2026, 3, 3, 9)},
		{"Jan 31 + 1m in a leap year", at(2028, 1, 31, 9), Period{1, Month}, at(2028, 3, 2, 9)},
		{"Mar 31 + 1m", at(2026, 3, 31, 9), Period{1, Month}, at(2026, 5, 1, 9)},
		{"Dec 31 + 2m", at(2026, 12, 31, 9), Period{2, Month}, at(2027, 3, 3, 9)},
		{"twelve months", at(2026, 5, 20, 9), Period{12, Month}, at(2027, 5, 20, 9)},
		{"one year", at(2026, 5, 20, 9), Period{1, Year}, at(2027, 5, 20, 9)},
		{"Feb 29 + 1y", at(2028, 2, 29, 9), Period{1, Year}, at(2029, 3, 1, 9)},
	} {
		if got := AddPeriod(c.from, c.period); !got.Equal(c.want) {
			t.Errorf("%s: %s + %s = %s, want %s", c.name, c.from, c.period, got, c.want)
		}
	}
}

func TestStatusAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Second), now.Add(-time.Second)
	for _, c := range []struct {
		name string
		exp  *time.Time
		want Status
	}{
		{"never paid", nil, Pending},
		{"paid until later", &later, Active},
		{"ends now", &now, Expired},
		{"ended", &earlier, Expired},
	} {
		if got := StatusAt(c.exp, now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
