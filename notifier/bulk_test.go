package notifier

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
)

// TestBulkInsertsMapIDsAndValues: the hand-written multi-row inserts give
// each row its own id (across statement chunks), store every value as the
// generated client reads it back, and an attempt record takes over a row
// already written for the same attempt.
func TestBulkInsertsMapIDsAndValues(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d, "http://127.0.0.1:1/hook")
		ctx := context.Background()
		const count = store.BulkChunk*2 + 7 // three statements
		var rows []*entdb.Notification
		err := store.WithTx(ctx, f.db.Client, func(tx *entdb.Tx) error {
			for i := range count {
				e := f.envelope("pending", payload.TransportJSON)
				e.UUID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
				if i%2 == 1 {
					e.Sequence = fmt.Sprintf("s-%d", i)
				}
				r, err := f.n.Enqueue(ctx, tx, f.message(t, e))
				if err != nil {
					return err
				}
				rows = append(rows, r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			got, err := f.db.Client.Notification.Get(ctx, r.ID)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			if got.UUID != r.UUID || string(got.Body) != string(r.Body) || got.Signature != r.Signature ||
				got.Status != notification.StatusPending || got.Attempts != 0 || got.LeaseUntil != nil ||
				got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(t0) || !got.ExpiresAt.Equal(r.ExpiresAt) ||
				got.Host != r.Host || got.OwnerID != f.keyID || got.Service != "address" || got.Event != "pending" ||
				got.Subject != testAddressIn || got.Topic != "btc" || got.SignatureScheme != signer.SchemeRSASHA256 || got.SigningKey != "" ||
				(i%2 == 0) != (got.Sequence == nil) || (got.Sequence != nil && *got.Sequence != fmt.Sprintf("s-%d", i)) {
				t.Fatalf("row %d read back as %+v, stored %+v", i, got, r)
			}
		}
		evs, err := f.db.Client.DeliveryEvent.Query().Order(entdb.Asc(deliveryevent.FieldID)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != count {
			t.Fatalf("%d created events, want %d", len(evs), count)
		}
		for i, e := range evs {
			if e.NotificationID != rows[i].ID || e.UUID != rows[i].UUID || e.Kind != deliveryevent.KindCreated ||
				e.OwnerID != f.keyID || e.Service != "address" || e.Event != "pending" || e.Subject != testAddressIn || e.Topic != "btc" ||
				e.HTTPStatus != nil || e.NextAttemptAt == nil || !e.NextAttemptAt.Equal(t0) {
				t.Fatalf("event %d: %+v for notification %d", i, e, rows[i].ID)
			}
		}

		// Bodies are bytes: backslashes, quotes, braces, NUL, invalid UTF-8
		// and nothing at all come back as they went in.
		odd := [][]byte{[]byte(`{"a":"\\\"x\u0000"}`), {0, 0xff, '\\', '"', ',', '{', '}'}, {}}
		err = store.WithTx(ctx, f.db.Client, func(tx *entdb.Tx) error {
			var batch []*entdb.Notification
			for i, b := range odd {
				c := *rows[0]
				c.ID, c.UUID, c.Body = 0, fmt.Sprintf("odd-%d", i), b
				batch = append(batch, &c)
			}
			if err := insertNotifications(ctx, tx, d, batch); err != nil {
				return err
			}
			for i, c := range batch {
				got, err := tx.Notification.Get(ctx, c.ID)
				if err != nil {
					return err
				}
				if string(got.Body) != string(odd[i]) {
					return fmt.Errorf("body %q read back as %q", odd[i], got.Body)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		// An interrupted record of attempt 1, then the real outcome.
		r := rows[0]
		if err := f.db.Client.DeliveryAttempt.Create().SetNotificationID(r.ID).SetNumber(1).SetStartedAt(t0).
			SetRequestMethod(r.Method).SetRequestURL(r.URL).SetOutcome(deliveryattempt.OutcomeInterrupted).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		status, finished := http.StatusOK, t0.Add(time.Second)
		const oddText = `ok "\ {x,y} NULL ' é`
		err = store.WithTx(ctx, f.db.Client, func(tx *entdb.Tx) error {
			return insertAttempts(ctx, tx, d, []*entdb.DeliveryAttempt{
				{NotificationID: r.ID, Number: 1, StartedAt: t0, FinishedAt: &finished, RequestMethod: r.Method, RequestURL: r.URL,
					Outcome: deliveryattempt.OutcomeAcknowledged, ResponseStatus: &status, ResponseBody: oddText, DurationMs: 1000},
				{NotificationID: rows[1].ID, Number: 1, StartedAt: t0, RequestMethod: r.Method, RequestURL: r.URL,
					Outcome: deliveryattempt.OutcomeFailed, Error: "boom", NextAttemptAt: &finished},
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		a := f.attempts(t, r)
		if len(a) != 1 || a[0].Outcome != deliveryattempt.OutcomeAcknowledged || a[0].ResponseStatus == nil || *a[0].ResponseStatus != 200 ||
			a[0].ResponseBody != oddText || a[0].DurationMs != 1000 || a[0].FinishedAt == nil || !a[0].FinishedAt.Equal(finished) {
			t.Fatalf("attempt after takeover: %+v", a)
		}
		b := f.attempts(t, rows[1])
		if len(b) != 1 || b[0].Outcome != deliveryattempt.OutcomeFailed || b[0].Error != "boom" || b[0].FinishedAt != nil ||
			b[0].ResponseStatus != nil || b[0].NextAttemptAt == nil || !b[0].NextAttemptAt.Equal(finished) {
			t.Fatalf("second attempt: %+v", b)
		}
	})
}
