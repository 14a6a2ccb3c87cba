package notifier

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
)

// The notifier's hot-path inserts (notifications, their events, attempt
// records) are written by hand rather than through ent's bulk builder,
// which cost about a fifth of payhook's CPU per delivery at the engine's
// ceiling: on PostgreSQL as INSERT ... SELECT FROM unnest (one array
// parameter per column, so the statement PostgreSQL parses and plans does
// not grow with the rows), on SQLite as multi-row VALUES. Column names come
// from the generated constants, so a renamed field fails to compile here,
// and TestBulkInsertsMapIDsAndValues reads every value back through ent.

// bulkChunk is the most rows per statement on SQLite: 23 columns x 500
// rows stays well below its 32,766 parameters.
const bulkChunk = 500

// insertRows inserts rows (each len(cols) values) into table and, when
// wantIDs, returns their new ids in row order. suffix follows the rows (an
// ON CONFLICT clause). PostgreSQL gets one statement taking one array per
// column, so the statement's size (and its parse and plan) does not grow
// with the rows; SQLite gets multi-row VALUES in chunks of bulkChunk.
func insertRows(ctx context.Context, tx *entdb.Tx, d store.Dialect, table string, cols []column, rows [][]any, suffix string, wantIDs bool) ([]int64, error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	for _, r := range rows {
		if len(r) != len(cols) {
			return nil, fmt.Errorf("insert into %s: row has %d values for %d columns", table, len(r), len(cols))
		}
	}
	head := "INSERT INTO " + table + " (" + strings.Join(names, ", ") + ") "
	chunk := bulkChunk
	if d == store.Postgres {
		chunk = max(len(rows), 1)
	}
	var ids []int64
	for start := 0; start < len(rows); start += chunk {
		part := rows[start:min(start+chunk, len(rows))]
		var source string
		var args []any
		if d == store.Postgres {
			source, args = unnestSource(cols, part)
		} else {
			source, args = valuesSource(len(cols), part)
		}
		q := head + source
		if suffix != "" {
			q += " " + suffix
		}
		if !wantIDs {
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return nil, fmt.Errorf("insert into %s: %w", table, err)
			}
			continue
		}
		got, err := queryIDs(ctx, tx, q+" RETURNING id", args)
		if err != nil {
			return nil, fmt.Errorf("insert into %s: %w", table, err)
		}
		if len(got) != len(part) {
			return nil, fmt.Errorf("insert into %s: %d ids returned for %d rows", table, len(got), len(part))
		}
		// One statement takes its ids in the order of its rows, but
		// RETURNING need not list them in that order.
		slices.Sort(got)
		ids = append(ids, got...)
	}
	return ids, nil
}

// column is a column of a hand-written insert: its name and, for
// PostgreSQL's unnest, the array type its values are sent as.
type column struct{ name, pgType string }

// valuesSource is "VALUES (?, ...), ..." for rows of width values.
func valuesSource(width int, rows [][]any) (string, []any) {
	var q strings.Builder
	q.Grow(8 + len(rows)*width*3)
	q.WriteString("VALUES ")
	args := make([]any, 0, len(rows)*width)
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?" + strings.Repeat(", ?", width-1) + ")")
		args = append(args, r...)
	}
	return q.String(), args
}

// unnestSource is "SELECT * FROM unnest($1::type[], ...)" with one array
// argument per column.
func unnestSource(cols []column, rows [][]any) (string, []any) {
	var q strings.Builder
	q.WriteString("SELECT * FROM unnest(")
	args := make([]any, len(cols))
	for i, c := range cols {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("$" + strconv.Itoa(i+1) + "::" + c.pgType + "[]")
		values := make([]any, len(rows))
		for j, r := range rows {
			values[j] = r[i]
			if b, ok := r[i].([]byte); ok && c.pgType == "bytea" {
				// In an array literal, bytes are text: send bytea's hex form.
				values[j] = `\x` + hex.EncodeToString(b)
			}
		}
		args[i] = store.Array(values)
	}
	q.WriteString(")")
	return q.String(), args
}

func queryIDs(ctx context.Context, tx *entdb.Tx, query string, args []any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// nullable turns a nil pointer into a NULL argument and a set one into its
// value.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

var notificationColumns = []column{
	{notification.FieldCreatedAt, "timestamptz"}, {notification.FieldUpdatedAt, "timestamptz"}, {notification.FieldUUID, "text"},
	{notification.FieldOwnerID, "bigint"}, {notification.FieldService, "text"}, {notification.FieldEvent, "text"},
	{notification.FieldSubject, "text"}, {notification.FieldTopic, "text"}, {notification.FieldSequence, "text"}, {notification.FieldHost, "text"},
	{notification.FieldMethod, "text"}, {notification.FieldURL, "text"}, {notification.FieldBody, "bytea"}, {notification.FieldContentType, "text"},
	{notification.FieldSignatureScheme, "text"}, {notification.FieldSigningKey, "text"}, {notification.FieldSignature, "text"}, {notification.FieldStatus, "text"},
	{notification.FieldAttempts, "bigint"}, {notification.FieldNextAttemptAt, "timestamptz"}, {notification.FieldExpiresAt, "timestamptz"},
	{notification.FieldLeaseUntil, "timestamptz"}, {notification.FieldLeaseOwner, "text"},
}

// insertNotifications inserts rows and sets their ids.
func insertNotifications(ctx context.Context, tx *entdb.Tx, d store.Dialect, rows []*entdb.Notification) error {
	vals := make([][]any, len(rows))
	for i, r := range rows {
		vals[i] = []any{
			r.CreatedAt, r.UpdatedAt, r.UUID,
			r.OwnerID, r.Service, r.Event,
			r.Subject, r.Topic, nullable(r.Sequence), r.Host,
			r.Method, r.URL, r.Body, r.ContentType,
			r.SignatureScheme, r.SigningKey, r.Signature, string(r.Status),
			r.Attempts, nullable(r.NextAttemptAt), r.ExpiresAt,
			nullable(r.LeaseUntil), r.LeaseOwner,
		}
	}
	ids, err := insertRows(ctx, tx, d, notification.Table, notificationColumns, vals, "", true)
	if err != nil {
		return err
	}
	for i, r := range rows {
		r.ID = ids[i]
	}
	return nil
}

var eventColumns = []column{
	{deliveryevent.FieldCreatedAt, "timestamptz"}, {deliveryevent.FieldNotificationID, "bigint"}, {deliveryevent.FieldOwnerID, "bigint"},
	{deliveryevent.FieldUUID, "text"}, {deliveryevent.FieldService, "text"}, {deliveryevent.FieldEvent, "text"},
	{deliveryevent.FieldSubject, "text"}, {deliveryevent.FieldTopic, "text"},
	{deliveryevent.FieldKind, "text"}, {deliveryevent.FieldAttempt, "bigint"}, {deliveryevent.FieldOutcome, "text"}, {deliveryevent.FieldHTTPStatus, "bigint"},
	{deliveryevent.FieldError, "text"}, {deliveryevent.FieldDeliveryStatus, "text"}, {deliveryevent.FieldNextAttemptAt, "timestamptz"},
}

// insertEvents inserts evs and sets their ids, the watch cursor. The
// caller holds the event-log lock (Events.lock).
func insertEvents(ctx context.Context, tx *entdb.Tx, d store.Dialect, evs []*entdb.DeliveryEvent) error {
	vals := make([][]any, len(evs))
	for i, e := range evs {
		vals[i] = []any{
			e.CreatedAt, e.NotificationID, e.OwnerID,
			e.UUID, e.Service, e.Event,
			e.Subject, e.Topic,
			string(e.Kind), e.Attempt, e.Outcome, nullable(e.HTTPStatus),
			e.Error, e.DeliveryStatus, nullable(e.NextAttemptAt),
		}
	}
	ids, err := insertRows(ctx, tx, d, deliveryevent.Table, eventColumns, vals, "", true)
	if err != nil {
		return err
	}
	for i, e := range evs {
		e.ID = ids[i]
	}
	return nil
}

var attemptColumns = []column{
	{deliveryattempt.FieldNotificationID, "bigint"}, {deliveryattempt.FieldNumber, "bigint"},
	{deliveryattempt.FieldStartedAt, "timestamptz"}, {deliveryattempt.FieldFinishedAt, "timestamptz"},
	{deliveryattempt.FieldRequestMethod, "text"}, {deliveryattempt.FieldRequestURL, "text"},
	{deliveryattempt.FieldOutcome, "text"}, {deliveryattempt.FieldResponseStatus, "bigint"}, {deliveryattempt.FieldResponseBody, "text"},
	{deliveryattempt.FieldError, "text"}, {deliveryattempt.FieldDurationMs, "bigint"}, {deliveryattempt.FieldNextAttemptAt, "timestamptz"},
	{deliveryattempt.FieldSignatureHeaders, "text"},
}

// attemptUpsert makes a row another instance already wrote for the same
// attempt (it took the notification over and recorded the attempt as
// interrupted) take the real outcome.
var attemptUpsert = func() string {
	var b strings.Builder
	b.WriteString("ON CONFLICT (" + deliveryattempt.FieldNotificationID + ", " + deliveryattempt.FieldNumber + ") DO UPDATE SET ")
	for i, c := range attemptColumns[2:] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " = excluded." + c.name)
	}
	return b.String()
}()

// insertAttempts records attempt rows, taking over a row already written
// for the same attempt.
func insertAttempts(ctx context.Context, tx *entdb.Tx, d store.Dialect, at []*entdb.DeliveryAttempt) error {
	vals := make([][]any, len(at))
	for i, a := range at {
		vals[i] = []any{
			a.NotificationID, a.Number,
			a.StartedAt, nullable(a.FinishedAt),
			a.RequestMethod, a.RequestURL,
			string(a.Outcome), nullable(a.ResponseStatus), a.ResponseBody,
			a.Error, a.DurationMs, nullable(a.NextAttemptAt),
			a.SignatureHeaders,
		}
	}
	if _, err := insertRows(ctx, tx, d, deliveryattempt.Table, attemptColumns, vals, attemptUpsert, false); err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	return nil
}
