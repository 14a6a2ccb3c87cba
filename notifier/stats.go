package notifier

import (
	"context"
	"fmt"
	"sort"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
)

// MaxActivityAttempts bounds how many attempts ReadActivity loads: beyond
// it, the newest are counted and Activity.Truncated is set, so a busy
// project's page costs a bounded read.
const MaxActivityAttempts = 100_000

// ActivityHour is one clock hour (UTC) of an owner's delivery attempts,
// by the time they started.
type ActivityHour struct {
	// Start is the hour's first instant.
	Start time.Time
	// Acknowledged, Failed, Blocked and Interrupted count the finished
	// attempts by outcome; InFlight counts those not finished yet.
	Acknowledged, Failed, Blocked, Interrupted, InFlight int
	// Timed is how many attempts the latency figures are of: acknowledged
	// and failed ones, which made a request (a blocked attempt made none;
	// an interrupted one was cut short by a shutdown).
	Timed int
	// P50, P95 and Max are the median, 95th percentile (nearest rank) and
	// largest duration of the timed attempts; zero when Timed is 0.
	P50, P95, Max time.Duration
}

// Finished is the number of finished attempts of the hour.
func (h ActivityHour) Finished() int {
	return h.Acknowledged + h.Failed + h.Blocked + h.Interrupted
}

// Activity is an owner's delivery attempts per hour over a window of whole
// clock hours.
type Activity struct {
	// From and Until bound the window: From <= started_at < Until.
	From, Until time.Time
	// Hours are the window's hours, oldest first, every hour present.
	Hours []ActivityHour
	// Total sums the window (its Start is From); its latency figures are
	// of every timed attempt of the window.
	Total ActivityHour
	// Truncated reports that the window held more than
	// MaxActivityAttempts attempts and only the newest were counted.
	Truncated bool
}

// ReadActivity returns owner's delivery attempts per hour: hours buckets
// of one clock hour (UTC), the last being the one now falls in (partial),
// so the window is [start of now's hour - (hours-1)h, end of now's hour).
// Percentiles are computed here, the same on every database.
func ReadActivity(ctx context.Context, db *entdb.Client, owner int64, now time.Time, hours int) (*Activity, error) {
	if hours <= 0 {
		return nil, fmt.Errorf("%w: activity hours %d is not positive", ErrInvalidFilter, hours)
	}
	until := now.UTC().Truncate(time.Hour).Add(time.Hour)
	from := until.Add(-time.Duration(hours) * time.Hour)
	rows, err := db.DeliveryAttempt.Query().
		Where(
			deliveryattempt.HasNotificationWith(notification.OwnerID(owner)),
			deliveryattempt.StartedAtGTE(from),
			deliveryattempt.StartedAtLT(until),
		).
		Order(entdb.Desc(deliveryattempt.FieldStartedAt)).
		Limit(MaxActivityAttempts+1).
		Select(deliveryattempt.FieldStartedAt, deliveryattempt.FieldOutcome, deliveryattempt.FieldDurationMs).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read delivery activity: %w", err)
	}
	a := &Activity{From: from, Until: until, Hours: make([]ActivityHour, hours), Total: ActivityHour{Start: from}}
	if len(rows) > MaxActivityAttempts {
		rows, a.Truncated = rows[:MaxActivityAttempts], true
	}
	for i := range a.Hours {
		a.Hours[i].Start = from.Add(time.Duration(i) * time.Hour)
	}
	timed := make([][]time.Duration, hours)
	var all []time.Duration
	for _, r := range rows {
		i := int(r.StartedAt.Sub(from) / time.Hour)
		if i < 0 || i >= hours { // the query bounds it; a driver's rounding must not panic
			continue
		}
		for _, h := range []*ActivityHour{&a.Hours[i], &a.Total} {
			switch r.Outcome {
			case deliveryattempt.OutcomeAcknowledged:
				h.Acknowledged++
			case deliveryattempt.OutcomeFailed:
				h.Failed++
			case deliveryattempt.OutcomeBlocked:
				h.Blocked++
			case deliveryattempt.OutcomeInterrupted:
				h.Interrupted++
			default:
				h.InFlight++
			}
		}
		if r.Outcome == deliveryattempt.OutcomeAcknowledged || r.Outcome == deliveryattempt.OutcomeFailed {
			d := time.Duration(r.DurationMs) * time.Millisecond
			timed[i] = append(timed[i], d)
			all = append(all, d)
		}
	}
	for i, ds := range timed {
		latency(&a.Hours[i], ds)
	}
	latency(&a.Total, all)
	return a, nil
}

// latency sets h's latency figures from ds (which it sorts).
func latency(h *ActivityHour, ds []time.Duration) {
	h.Timed = len(ds)
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	h.P50, h.P95, h.Max = Percentile(ds, 50), Percentile(ds, 95), ds[len(ds)-1]
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest value that at least p% of the values
// are at or below. It returns 0 for no values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// rank = ceil(p/100 * n), computed in integers so 95% of 20 is 19, not
	// 19.000000000000004 rounded up to 20.
	rank := int((int64(p*100)*int64(n) + 9999) / 10000)
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}
