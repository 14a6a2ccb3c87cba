package endpoint

import (
	"context"
	"fmt"
	"slices"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entevent "github.com/payhook/payhook/ent/db/event"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/address"
)

// MaxReplay is the most events one replay sends; a longer range is
// replayed in several calls (Replayed.Next says where to continue).
const MaxReplay = 10000

// replayBatch is how many events a replay reads and stores per
// transaction.
const replayBatch = 500

// ReplayRange is what a replay sends again.
type ReplayRange struct {
	// Since is the first event time included.
	Since time.Time
	// Until, when not zero, is the first event time excluded.
	Until time.Time
	// EventTypes, when not empty, narrows the endpoint's filter further
	// (names or patterns, as a filter's).
	EventTypes []string
}

// Replayed is what a replay did.
type Replayed struct {
	// Count is how many events it stored deliveries of.
	Count int
	// Next, when not zero, is where a replay stopped at MaxReplay: replay
	// again from it for the rest (events of that very instant already
	// sent are sent again; receivers tell them apart by data.uuid).
	Next time.Time
}

// Replay sends the project's endpoint id, again, every event of the range
// that its filter (and the range's types) matches: new deliveries with new
// ids, signed afresh at each attempt, scheduled like any (paused while the
// endpoint is). The event log keeps what happened, so a replay sends what
// an endpoint missed or wants again, whatever became of its deliveries.
func (s *Service) Replay(ctx context.Context, projectID int64, id string, r ReplayRange) (Replayed, error) {
	if r.Since.IsZero() {
		return Replayed{}, address.Invalid("since", "is required: the time of the first event to send again")
	}
	if !r.Until.IsZero() && !r.Until.After(r.Since) {
		return Replayed{}, address.Invalid("until", "must be after since")
	}
	var types []string
	if len(r.EventTypes) > 0 {
		var err error
		if types, err = s.checkTypes(r.EventTypes); err != nil {
			return Replayed{}, err
		}
	}
	e, err := s.Get(ctx, projectID, id)
	if err != nil {
		return Replayed{}, err
	}
	// inRange are the range's events after the event id after, in order.
	inRange := func(after int64) *entdb.EventQuery {
		q := s.db.Event.Query().Where(entevent.ProjectID(projectID), entevent.CreatedAtGTE(r.Since), entevent.IDGT(after))
		if !r.Until.IsZero() {
			q = q.Where(entevent.CreatedAtLT(r.Until))
		}
		return q.Order(entdb.Asc(entevent.FieldID))
	}
	var out Replayed
	after := int64(0)
	for out.Count < MaxReplay {
		evs, err := inRange(after).Limit(replayBatch).All(ctx)
		if err != nil {
			return out, fmt.Errorf("read the events to replay: %w", err)
		}
		if len(evs) == 0 {
			return out, nil
		}
		err = store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
			for _, ev := range evs {
				if out.Count >= MaxReplay {
					out.Next = ev.CreatedAt
					return nil
				}
				if !Wants(e, ev.Type) || (types != nil && !slices.ContainsFunc(types, func(p string) bool { return Matches(p, ev.Type) })) {
					continue
				}
				subject := notifier.Subject{Service: "endpoint", Event: ev.Type, Ref: ev.Ref}
				if _, err := s.queue.Enqueue(ctx, tx, delivery(e, subject, ev.Payload, ev.ID)); err != nil {
					return fmt.Errorf("replay event %s to %s: %w", ev.UUID, e.PublicID, err)
				}
				out.Count++
			}
			return nil
		})
		if err != nil {
			return Replayed{}, err
		}
		if !out.Next.IsZero() || len(evs) < replayBatch {
			return out, nil
		}
		after = evs[len(evs)-1].ID
	}
	// Stopped at MaxReplay at a batch's end: say where the rest starts.
	next, err := inRange(after).First(ctx)
	switch {
	case entdb.IsNotFound(err):
	case err != nil:
		return out, fmt.Errorf("read the events to replay: %w", err)
	default:
		out.Next = next.CreatedAt
	}
	return out, nil
}
