package notifier

import (
	"context"
	"fmt"
	"strings"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
)

// The notifier's hot-path inserts (notifications, their events, attempt
// records) go through store.InsertRows, not ent's bulk builder (see there);
// TestBulkInsertsMapIDsAndValues reads every value back through ent.

// column is a column of a hand-written insert.
type column = store.Column

func col(name, pgType string) column { return column{Name: name, PGType: pgType} }

var notificationColumns = []column{
	col(notification.FieldCreatedAt, "timestamptz"), col(notification.FieldUpdatedAt, "timestamptz"), col(notification.FieldUUID, "text"),
	col(notification.FieldOwnerID, "bigint"), col(notification.FieldService, "text"), col(notification.FieldEvent, "text"),
	col(notification.FieldSubject, "text"), col(notification.FieldTopic, "text"), col(notification.FieldSequence, "text"), col(notification.FieldHost, "text"),
	col(notification.FieldMethod, "text"), col(notification.FieldURL, "text"), col(notification.FieldBody, "bytea"), col(notification.FieldContentType, "text"),
	col(notification.FieldSignatureScheme, "text"), col(notification.FieldSigningKey, "text"), col(notification.FieldSignature, "text"), col(notification.FieldStatus, "text"),
	col(notification.FieldAttempts, "bigint"), col(notification.FieldNextAttemptAt, "timestamptz"), col(notification.FieldExpiresAt, "timestamptz"),
	col(notification.FieldLeaseUntil, "timestamptz"), col(notification.FieldLeaseOwner, "text"),
	col(notification.FieldEndpointID, "bigint"), col(notification.FieldEventID, "bigint"),
}

// insertNotifications inserts rows and sets their ids.
func insertNotifications(ctx context.Context, tx *entdb.Tx, d store.Dialect, rows []*entdb.Notification) error {
	vals := make([][]any, len(rows))
	for i, r := range rows {
		vals[i] = []any{
			r.CreatedAt, r.UpdatedAt, r.UUID,
			r.OwnerID, r.Service, r.Event,
			r.Subject, r.Topic, store.Nullable(r.Sequence), r.Host,
			r.Method, r.URL, r.Body, r.ContentType,
			r.SignatureScheme, r.SigningKey, r.Signature, string(r.Status),
			r.Attempts, store.Nullable(r.NextAttemptAt), r.ExpiresAt,
			store.Nullable(r.LeaseUntil), r.LeaseOwner,
			store.Nullable(r.EndpointID), store.Nullable(r.EventID),
		}
	}
	ids, err := store.InsertRows(ctx, tx, d, notification.Table, notificationColumns, vals, "", true)
	if err != nil {
		return err
	}
	for i, r := range rows {
		r.ID = ids[i]
	}
	return nil
}

var eventColumns = []column{
	col(deliveryevent.FieldCreatedAt, "timestamptz"), col(deliveryevent.FieldNotificationID, "bigint"), col(deliveryevent.FieldOwnerID, "bigint"),
	col(deliveryevent.FieldUUID, "text"), col(deliveryevent.FieldService, "text"), col(deliveryevent.FieldEvent, "text"),
	col(deliveryevent.FieldSubject, "text"), col(deliveryevent.FieldTopic, "text"),
	col(deliveryevent.FieldKind, "text"), col(deliveryevent.FieldAttempt, "bigint"), col(deliveryevent.FieldOutcome, "text"), col(deliveryevent.FieldHTTPStatus, "bigint"),
	col(deliveryevent.FieldError, "text"), col(deliveryevent.FieldDeliveryStatus, "text"), col(deliveryevent.FieldNextAttemptAt, "timestamptz"),
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
			string(e.Kind), e.Attempt, e.Outcome, store.Nullable(e.HTTPStatus),
			e.Error, e.DeliveryStatus, store.Nullable(e.NextAttemptAt),
		}
	}
	ids, err := store.InsertRows(ctx, tx, d, deliveryevent.Table, eventColumns, vals, "", true)
	if err != nil {
		return err
	}
	for i, e := range evs {
		e.ID = ids[i]
	}
	return nil
}

var attemptColumns = []column{
	col(deliveryattempt.FieldNotificationID, "bigint"), col(deliveryattempt.FieldNumber, "bigint"),
	col(deliveryattempt.FieldStartedAt, "timestamptz"), col(deliveryattempt.FieldFinishedAt, "timestamptz"),
	col(deliveryattempt.FieldRequestMethod, "text"), col(deliveryattempt.FieldRequestURL, "text"),
	col(deliveryattempt.FieldOutcome, "text"), col(deliveryattempt.FieldResponseStatus, "bigint"), col(deliveryattempt.FieldResponseBody, "text"),
	col(deliveryattempt.FieldError, "text"), col(deliveryattempt.FieldDurationMs, "bigint"), col(deliveryattempt.FieldNextAttemptAt, "timestamptz"),
	col(deliveryattempt.FieldSignatureHeaders, "text"),
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
		b.WriteString(c.Name + " = excluded." + c.Name)
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
			a.StartedAt, store.Nullable(a.FinishedAt),
			a.RequestMethod, a.RequestURL,
			string(a.Outcome), store.Nullable(a.ResponseStatus), a.ResponseBody,
			a.Error, a.DurationMs, store.Nullable(a.NextAttemptAt),
			a.SignatureHeaders,
		}
	}
	if _, err := store.InsertRows(ctx, tx, d, deliveryattempt.Table, attemptColumns, vals, attemptUpsert, false); err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	return nil
}
