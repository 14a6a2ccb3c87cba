package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	entdb "github.com/payhook/payhook/ent/db"
	entevent "github.com/payhook/payhook/ent/db/event"
	"github.com/payhook/payhook/server/address"
)

// Page sizes of the event log.
const (
	DefaultLogLimit = 100
	MaxLogLimit     = 500
)

// LoggedEvent is one event of a project's log, as GET /events/ answers it.
type LoggedEvent struct {
	// Cursor is its position (the row's id, as text).
	Cursor string
	// Row is the stored event.
	Row *entdb.Event
	// Data is the payload: the JSON a JSON notify_url received.
	Data json.RawMessage
}

// Log returns the project's events after the cursor after ("" for the
// oldest kept), oldest first, at most limit (DefaultLogLimit when 0),
// keeping only the types or patterns of types when given, and the cursor
// to continue from (after itself when the page is empty).
func (s *Service) Log(ctx context.Context, projectID int64, after string, limit int, types []string) ([]LoggedEvent, string, error) {
	var from int64
	if after != "" {
		n, err := strconv.ParseInt(after, 10, 64)
		if err != nil || n < 0 {
			return nil, "", address.Invalid("after", "%q is not a cursor of the event log (an event's cursor, or next_cursor)", truncate(after))
		}
		from = n
	}
	switch {
	case limit == 0:
		limit = DefaultLogLimit
	case limit < 0 || limit > MaxLogLimit:
		return nil, "", address.Invalid("limit", "must be 1 to %d", MaxLogLimit)
	}
	if len(types) > 0 {
		var err error
		if types, err = s.checkTypes(types); err != nil {
			return nil, "", err
		}
	}
	next := after
	var out []LoggedEvent
	for len(out) < limit {
		rows, err := s.db.Event.Query().Where(entevent.ProjectID(projectID), entevent.IDGT(from)).
			Order(entdb.Asc(entevent.FieldID)).Limit(limit).All(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("read the event log: %w", err)
		}
		for _, r := range rows {
			from = r.ID
			next = strconv.FormatInt(r.ID, 10)
			if len(types) > 0 && !slices.ContainsFunc(types, func(p string) bool { return Matches(p, r.Type) }) {
				continue
			}
			var env Envelope
			if err := json.Unmarshal(r.Payload, &env); err != nil {
				return nil, "", fmt.Errorf("event %s: %w", r.UUID, err)
			}
			out = append(out, LoggedEvent{Cursor: next, Row: r, Data: env.Data})
			if len(out) == limit {
				return out, next, nil
			}
		}
		if len(rows) < limit {
			break
		}
	}
	return out, next, nil
}
