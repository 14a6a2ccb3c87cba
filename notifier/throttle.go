package notifier

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
)

// Throttling. A webhook endpoint may set a maximum rate (max_per_second):
// its deliveries, first attempts, retries and resends alike, start no
// faster than that, whatever the instance starting them, and other
// endpoints are not slowed. Each start takes a token of the endpoint's
// bucket (Config.Throttle: payhook's are in the database, shared by every
// instance; the burst is one second's worth). The dispatcher takes tokens
// ahead, as many as the due rows it found waiting for them (at most one
// second's worth), and keeps them in memory (reserve); a row of an
// endpoint without a token is left due and never held in memory or claimed
// as stored. An endpoint whose bucket is empty is dry until it holds a
// token again: claims skip its rows meanwhile, so its backlog is scanned
// once per refill, not at every claim.

// Throttle grants tokens of endpoints' rate limits.
type Throttle interface {
	// TakeUpTo takes up to n tokens of endpoint id's bucket (perSecond
	// tokens a second, as many at most) and returns how many it took and,
	// when none, how long until it holds one.
	TakeUpTo(ctx context.Context, id int64, perSecond, n int) (int, time.Duration, error)
}

// rateTTL is how long the dispatcher trusts an endpoint's rate it has read
// (its instance forgets it at once when it changes: ForgetRate).
const rateTTL = 10 * time.Second

// throttled returns row's endpoint's rate when it has one (d.mu held).
func (d *Dispatcher) throttled(row *entdb.Notification) (int64, int, bool) {
	if row.EndpointID == nil {
		return 0, 0, false
	}
	r, ok := d.limited[*row.EndpointID]
	return *row.EndpointID, r, ok
}

// ForgetRate makes the dispatcher read endpoint id's rate again (it
// changed).
func (d *Dispatcher) ForgetRate(id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.rates, id)
	delete(d.limited, id)
	delete(d.dryUntil, id)
}

// loadRates reads the rates of the endpoints of rows it does not know (or
// read more than rateTTL ago), in one query; rows without an endpoint cost
// nothing.
func (d *Dispatcher) loadRates(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification) error {
	now := d.cfg.Now()
	var ids []int64
	d.mu.Lock()
	var seen map[int64]bool // made at the first endpoint's row: callbacks have none
	for _, r := range rows {
		if r.EndpointID == nil || seen[*r.EndpointID] {
			continue
		}
		if seen == nil {
			seen = map[int64]bool{}
		}
		seen[*r.EndpointID] = true
		if at, ok := d.rates[*r.EndpointID]; !ok || now.Sub(at) >= rateTTL || now.Before(at) {
			ids = append(ids, *r.EndpointID)
		}
	}
	d.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	var found []struct {
		ID           int64 `json:"id"`
		MaxPerSecond int   `json:"max_per_second"`
	}
	if err := tx.Endpoint.Query().Where(entendpoint.IDIn(ids...)).
		Select(entendpoint.FieldID, entendpoint.FieldMaxPerSecond).Scan(ctx, &found); err != nil {
		return fmt.Errorf("read endpoints' rates: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		d.rates[id] = now // deleted: no limit
		delete(d.limited, id)
	}
	for _, f := range found {
		if f.MaxPerSecond > 0 {
			d.limited[f.ID] = f.MaxPerSecond
		} else {
			delete(d.limited, f.ID)
			delete(d.reserve, f.ID)
		}
	}
	return nil
}

// addThrottles adds to c the tokens in reserve of every throttled endpoint
// it does not have yet (rates read since c was made). d.mu must be held.
func (d *Dispatcher) addThrottles(c *capacity) {
	if c.tokens == nil {
		c.tokens = map[int64]int{}
	}
	for id := range d.limited {
		if _, ok := c.tokens[id]; !ok {
			c.tokens[id] = d.reserve[id]
		}
	}
}

// dryEndpoints returns the throttled endpoints with no token in reserve
// whose bucket is known to be empty now: claims skip their rows.
func (d *Dispatcher) dryEndpoints(now time.Time) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []int64
	for id, until := range d.dryUntil {
		switch {
		case !now.Before(until):
			delete(d.dryUntil, id)
		case d.reserve[id] <= 0:
			out = append(out, id)
		}
	}
	return out
}

// spendToken counts a start of row against its endpoint's reserve. d.mu
// must be held.
func (d *Dispatcher) spendToken(row *entdb.Notification) {
	if id, _, ok := d.throttled(row); ok && d.reserve[id] > 0 {
		d.reserve[id]--
	}
}

// refill takes tokens for the endpoints whose due rows waited for one
// (want: how many rows each), at most a second's worth each. It returns
// how many it took, and when to look again: at once when it took some,
// when the first bucket holds a token again otherwise (0: nothing
// waited).
func (d *Dispatcher) refill(ctx context.Context, want map[int64]int) (took int, again time.Duration, err error) {
	if len(want) == 0 {
		return 0, 0, nil
	}
	now := d.cfg.Now()
	for id, n := range want {
		d.mu.Lock()
		rate := d.limited[id]
		d.mu.Unlock()
		if rate <= 0 {
			again = atOnce
			continue
		}
		got, retry, err := d.throttle.TakeUpTo(ctx, id, rate, min(n, rate))
		if err != nil {
			return took, atOnce, err
		}
		took += got
		d.mu.Lock()
		if got > 0 {
			d.reserve[id] += got
			delete(d.dryUntil, id)
			again = atOnce
		} else {
			retry = max(retry, time.Millisecond)
			d.dryUntil[id] = now.Add(retry)
			if again != atOnce && (again == 0 || retry < again) {
				again = retry
			}
		}
		d.mu.Unlock()
	}
	return took, again, nil
}

// localThrottle is the Throttle of a dispatcher given none: token buckets
// in this process, on the dispatcher's clock.
type localThrottle struct {
	now     func() time.Time
	mu      sync.Mutex
	buckets map[int64]*localBucket
}

type localBucket struct {
	tokens float64
	at     time.Time
}

func (l *localThrottle) TakeUpTo(_ context.Context, id int64, perSecond, n int) (int, time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[id]
	if !ok {
		b = &localBucket{tokens: float64(perSecond), at: now}
		l.buckets[id] = b
	}
	if now.After(b.at) {
		b.tokens = math.Min(float64(perSecond), b.tokens+float64(perSecond)*now.Sub(b.at).Seconds())
		b.at = now
	}
	got := min(n, int(math.Floor(b.tokens+1e-9)))
	if got <= 0 {
		wait := time.Duration(math.Ceil((1 - b.tokens) / float64(perSecond) * float64(time.Second)))
		return 0, wait, nil
	}
	b.tokens -= float64(got)
	return got, 0, nil
}
