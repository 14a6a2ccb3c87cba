package export

import (
	"fmt"
	"strings"
	"time"
)

// MaxRange is the longest range one export covers: a calendar year, leap
// years included. A longer period is several exports (each row has its
// entry_id, so they join without overlap).
const MaxRange = 366 * 24 * time.Hour

// Range is a half-open interval of time, [From, To), in UTC.
type Range struct {
	From, To time.Time
}

// ParseRange reads the from and to parameters: each a date (2026-01-31,
// midnight UTC) or an RFC 3339 time. to is exclusive: from=2026-01-01 and
// to=2027-01-01 is the year 2026. An empty, malformed, reversed or empty
// range, or one longer than MaxRange, is an error wrapping ErrRange that
// names the parameter.
func ParseRange(from, to string) (Range, error) {
	f, err := parseTime("from", from)
	if err != nil {
		return Range{}, err
	}
	t, err := parseTime("to", to)
	if err != nil {
		return Range{}, err
	}
	switch {
	case !t.After(f):
		return Range{}, &rangeError{fmt.Sprintf("to: must be after from (%s), as the range is [from, to)", f.Format(time.RFC3339))}
	case t.Sub(f) > MaxRange:
		return Range{}, &rangeError{fmt.Sprintf("to: the range is longer than %d days; export a year at most at once", int(MaxRange/(24*time.Hour)))}
	}
	return Range{From: f, To: t}, nil
}

func parseTime(name, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, &rangeError{name + ": required, a date (2026-01-31) or an RFC 3339 time"}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, &rangeError{fmt.Sprintf("%s: %q is neither a date (2026-01-31) nor an RFC 3339 time", name, s)}
}

// Name is a file name for the export of r in format: ledger-FROM-TO.csv,
// dates when r's ends are midnights.
func (r Range) Name(f Format) string {
	return "ledger-" + stamp(r.From) + "-" + stamp(r.To) + "." + string(f)
}

func stamp(t time.Time) string {
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format("2006-01-02T150405Z")
}
