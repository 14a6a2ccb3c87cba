package notifier

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
)

// List page sizes.
const (
	// DefaultListLimit is the page size of a List without a limit.
	DefaultListLimit = 50
	// MaxListLimit is the largest page List returns; a larger limit is
	// lowered to it.
	MaxListLimit = 500
)

// ListFilter selects and pages an owner's notifications for List. Empty
// fields select everything.
type ListFilter struct {
	// Status is a delivery status: pending, retrying, acknowledged or
	// failed.
	Status string
	// Service and Event must equal the notification's labels (Subject).
	Service string
	Event   string
	// From and Until bound the creation time: From <= created_at < Until;
	// a zero time is no bound.
	From, Until time.Time
	// Limit is the most notifications returned: DefaultListLimit when 0,
	// at most MaxListLimit.
	Limit int
	// Cursor continues a listing: the next cursor a previous List returned
	// with the same filter; empty for the first page.
	Cursor string
	// WithAttempts loads each notification's attempts (Edges.
	// DeliveryAttempts, in the order made), as Get does, in one more query
	// for the page.
	WithAttempts bool
}

// List returns owner's notifications that match f, newest first, and the
// cursor of the next page ("" when this page is the last). Notifications
// stored meanwhile do not shift the pages: the cursor names the last
// notification returned. Errors wrap ErrInvalidFilter for a bad status,
// limit or cursor.
func (q *Queue) List(ctx context.Context, owner int64, f ListFilter) ([]*entdb.Notification, string, error) {
	limit := f.Limit
	switch {
	case limit < 0:
		return nil, "", fmt.Errorf("%w: limit %d is negative", ErrInvalidFilter, limit)
	case limit == 0:
		limit = DefaultListLimit
	case limit > MaxListLimit:
		limit = MaxListLimit
	}
	sel := q.db.Client.Notification.Query().Where(notification.OwnerID(owner))
	if f.Status != "" {
		st := notification.Status(f.Status)
		if notification.StatusValidator(st) != nil {
			return nil, "", fmt.Errorf("%w: status %q is not pending, retrying, acknowledged or failed", ErrInvalidFilter, f.Status)
		}
		sel.Where(notification.StatusEQ(st))
	}
	if f.Service != "" {
		sel.Where(notification.Service(f.Service))
	}
	if f.Event != "" {
		sel.Where(notification.Event(f.Event))
	}
	if !f.From.IsZero() {
		sel.Where(notification.CreatedAtGTE(f.From))
	}
	if !f.Until.IsZero() {
		sel.Where(notification.CreatedAtLT(f.Until))
	}
	if f.Cursor != "" {
		before, err := parseCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		sel.Where(notification.IDLT(before))
	}
	if f.WithAttempts {
		sel.WithDeliveryAttempts(func(aq *entdb.DeliveryAttemptQuery) {
			aq.Order(entdb.Asc(deliveryattempt.FieldNumber))
		})
	}
	rows, err := sel.Order(entdb.Desc(notification.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("list notifications: %w", err)
	}
	if len(rows) <= limit {
		return rows, "", nil
	}
	rows = rows[:limit]
	return rows, formatCursor(rows[limit-1].ID), nil
}

// Get returns owner's notification uuid with its attempts (Edges.
// DeliveryAttempts, in the order made). Another owner's uuid is ErrNotFound,
// as an unknown one is.
func (q *Queue) Get(ctx context.Context, owner int64, uuid string) (*entdb.Notification, error) {
	n, err := q.db.Client.Notification.Query().
		Where(notification.UUID(uuid), notification.OwnerID(owner)).
		WithDeliveryAttempts(func(aq *entdb.DeliveryAttemptQuery) {
			aq.Order(entdb.Asc(deliveryattempt.FieldNumber))
		}).
		Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("get %q: %w", uuid, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", uuid, err)
	}
	return n, nil
}

// cursorPrefix versions the cursor's format, so it can change without old
// cursors being misread.
const cursorPrefix = "n1."

// formatCursor makes the opaque cursor of the page after the notification
// id.
func formatCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(id, 10)))
}

// parseCursor reads a cursor formatCursor made. A cursor only narrows the
// owner's own notifications, so a forged one reveals nothing.
func parseCursor(c string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if s, ok := strings.CutPrefix(string(b), cursorPrefix); ok {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil && id > 0 {
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: cursor %q was not returned by List", ErrInvalidFilter, c)
}
