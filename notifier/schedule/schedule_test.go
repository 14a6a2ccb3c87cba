package schedule_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/schedule"
)

var created = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return created.Add(d) }

func TestNext(t *testing.T) {
	t.Parallel()
	def := schedule.Default()
	custom := schedule.Policy{Delays: []time.Duration{10 * time.Second, 30 * time.Second}, Window: time.Hour}
	const h, m = time.Hour, time.Minute
	tests := []struct {
		name     string
		policy   schedule.Policy
		finished time.Time
		attempt  int
		want     time.Time
		ok       bool
	}{
		{"after attempt 1 wait 1m", def, at(0), 1, at(1 * m), true},
		{"after attempt 2 wait 5m", def, at(1 * m), 2, at(6 * m), true},
		{"after attempt 3 wait 15m", def, at(6 * m), 3, at(21 * m), true},
		{"after attempt 4 wait 1h", def, at(21 * m), 4, at(1*h + 21*m), true},
		{"after attempt 5 wait 3h", def, at(1*h + 21*m), 5, at(4*h + 21*m), true},
		{"after attempt 6 the 3h repeats", def, at(4*h + 21*m), 6, at(7*h + 21*m), true},
		{"after attempt 19 the 3h still repeats", def, at(43*h + 21*m), 19, at(46*h + 21*m), true},
		{"attempt finished late: delay counts from finish", def, at(30*time.Second + 29*time.Second), 1, at(59*time.Second + 1*m), true},
		{"slow attempt of 30s before the 5m delay", def, at(1*m + 30*time.Second), 2, at(6*m + 30*time.Second), true},
		{"next start exactly at the deadline is allowed", def, at(45 * h), 7, at(48 * h), true},
		{"one nanosecond past the deadline fails", def, at(45*h + 1), 7, time.Time{}, false},
		{"attempt past the window fails", def, at(46*h + 21*m), 20, time.Time{}, false},
		{"attempt finished after the deadline fails", def, at(49 * h), 3, time.Time{}, false},
		{"short delay that still lands past the window fails", def, at(48*h - 30*time.Second), 1, time.Time{}, false},
		{"attempt 0 is treated as 1", def, at(0), 0, at(1 * m), true},
		{"custom first delay", custom, at(0), 1, at(10 * time.Second), true},
		{"custom last delay repeats", custom, at(20 * m), 9, at(20*m + 30*time.Second), true},
		{"custom window boundary", custom, at(59*m + 30*time.Second), 2, at(h), true},
		{"custom past window", custom, at(59*m + 31*time.Second), 2, time.Time{}, false},
		{"invalid policy never schedules", schedule.Policy{Window: h}, at(0), 1, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := tt.policy.Next(created, tt.finished, tt.attempt)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Errorf("Next(created, %s, %d) = %s, %v; want %s, %v",
					tt.finished.Sub(created), tt.attempt, got.Sub(created), ok, tt.want.Sub(created), tt.ok)
			}
		})
	}
}

// TestDefaultScheduleWithinWindow enumerates the default schedule from one
// creation time with attempts that take no time. docs/decisions.md quotes
// the count.
func TestDefaultScheduleWithinWindow(t *testing.T) {
	t.Parallel()
	p := schedule.Default()
	starts := []time.Duration{0}
	finished := created
	for attempt := 1; ; attempt++ {
		next, ok := p.Next(created, finished, attempt)
		if !ok {
			break
		}
		starts = append(starts, next.Sub(created))
		finished = next
		if attempt > 1000 {
			t.Fatal("schedule never ends")
		}
	}
	const h, m = time.Hour, time.Minute
	want := []time.Duration{0, 1 * m, 6 * m, 21 * m, 1*h + 21*m}
	for k := time.Duration(0); 4*h+21*m+3*h*k <= 48*h; k++ {
		want = append(want, 4*h+21*m+3*h*k)
	}
	if !reflect.DeepEqual(starts, want) {
		t.Errorf("attempt starts = %v\nwant %v", starts, want)
	}
	if len(starts) != 20 {
		t.Errorf("%d attempts within 48h, want 20", len(starts))
	}
	if last := starts[len(starts)-1]; last != 46*h+21*m {
		t.Errorf("last attempt at %s, want 46h21m", last)
	}
}

func TestExpires(t *testing.T) {
	t.Parallel()
	if got, want := schedule.Default().Expires(created), created.Add(48*time.Hour); !got.Equal(want) {
		t.Errorf("Expires = %s, want %s", got, want)
	}
}

func TestParseDelays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []time.Duration
		wantErr string // substring; empty means success
	}{
		{"default", "1m,5m,15m,1h,3h", schedule.Default().Delays, ""},
		{"spaces around elements", " 30s , 2m ", []time.Duration{30 * time.Second, 2 * time.Minute}, ""},
		{"single", "90s", []time.Duration{90 * time.Second}, ""},
		{"empty", "", nil, "no delays"},
		{"blank", "   ", nil, "no delays"},
		{"empty element", "1m,,5m", nil, "delay 2 is empty"},
		{"trailing comma", "1m,", nil, "delay 2 is empty"},
		{"not a duration", "1m,5x", nil, `delay 2 "5x" is not a duration`},
		{"bare number", "1m,5m,60", nil, `delay 3 "60" is not a duration`},
		{"zero", "0s", nil, `delay 1 "0s" must be positive`},
		{"negative", "1m,-5m", nil, `delay 2 "-5m" must be positive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := schedule.ParseDelays(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, schedule.ErrInvalidPolicy) {
					t.Fatalf("ParseDelays(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseDelays(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		policy  schedule.Policy
		wantErr string
	}{
		{"default", schedule.Default(), ""},
		{"no delays", schedule.Policy{Window: time.Hour}, "no delays"},
		{"zero delay", schedule.Policy{Delays: []time.Duration{time.Minute, 0}, Window: time.Hour}, "delay 2 (0s) must be positive"},
		{"negative delay", schedule.Policy{Delays: []time.Duration{-time.Minute}, Window: time.Hour}, "delay 1 (-1m0s) must be positive"},
		{"zero window", schedule.Policy{Delays: []time.Duration{time.Minute}}, "window 0s must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.policy.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, schedule.ErrInvalidPolicy) {
				t.Fatalf("Validate() = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
