package retention_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	entemail "github.com/payhook/payhook/ent/db/email"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/db/predicate"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/retention"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// TestRun: a run deletes the notifications older than the age that are
// finished, with their attempts and delivery events, in batches, and keeps
// every one still to deliver, paused, being attempted, younger, or newer
// than its endpoint's last acknowledgement; it deletes the delivery event
// log older than the age, and old merchant events but one a paused
// delivery carries; a second run deletes nothing more.
func TestRun(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		old := now.Add(-100 * 24 * time.Hour)
		young := now.Add(-10 * 24 * time.Hour)
		okEP := c.Endpoint.Create().SetProjectID(1).SetPublicID("ep_ok").SetURL("https://a.example/h").SetSecret("whsec_x").
			SetLastSuccessAt(old.Add(time.Hour)).SetCreatedAt(old).SetUpdatedAt(old).SaveX(ctx)
		downEP := c.Endpoint.Create().SetProjectID(1).SetPublicID("ep_down").SetURL("https://b.example/h").SetSecret("whsec_x").
			SetLastSuccessAt(old.Add(-time.Hour)).SetCreatedAt(old).SetUpdatedAt(old).SaveX(ctx)
		goneEP := c.Endpoint.Create().SetProjectID(1).SetPublicID("ep_gone").SetURL("https://c.example/h").SetSecret("whsec_x").
			SetDeletedAt(old).SetCreatedAt(old).SetUpdatedAt(old).SaveX(ctx)
		evOld := c.Event.Create().SetProjectID(1).SetUUID("e1").SetType("checkout.payment.completed").SetPayload([]byte("{}")).SetCreatedAt(old).SaveX(ctx)
		evWaiting := c.Event.Create().SetProjectID(1).SetUUID("e2").SetType("checkout.payment.completed").SetPayload([]byte("{}")).SetCreatedAt(old).SaveX(ctx)
		evYoung := c.Event.Create().SetProjectID(1).SetUUID("e3").SetType("checkout.payment.completed").SetPayload([]byte("{}")).SetCreatedAt(young).SaveX(ctx)

		type row struct {
			name     string
			at       time.Time
			status   notification.Status
			next     bool
			lease    bool
			endpoint *entdb.Endpoint
			event    *entdb.Event
			gone     bool
		}
		rows := []row{
			{name: "old acknowledged", at: old, status: notification.StatusAcknowledged, event: evOld, gone: true},
			{name: "old failed", at: old, status: notification.StatusFailed, gone: true},
			{name: "old retrying", at: old, status: notification.StatusRetrying, next: true},
			{name: "old paused", at: old, status: notification.StatusPaused, event: evWaiting, endpoint: downEP},
			{name: "old, being attempted", at: old, status: notification.StatusAcknowledged, lease: true},
			{name: "old, before its endpoint's last success", at: old, status: notification.StatusAcknowledged, endpoint: okEP, gone: true},
			{name: "old, after its endpoint's last success", at: old, status: notification.StatusFailed, endpoint: downEP},
			{name: "old, of a deleted endpoint", at: old, status: notification.StatusFailed, endpoint: goneEP, gone: true},
			{name: "old acknowledged 2", at: old.Add(time.Minute), status: notification.StatusAcknowledged, gone: true},
			{name: "young acknowledged", at: young, status: notification.StatusAcknowledged, event: evYoung},
			{name: "young failed", at: young, status: notification.StatusFailed},
		}
		ids := map[string]int64{}
		for i, r := range rows {
			m := c.Notification.Create().SetUUID(fmt.Sprintf("n%d", i)).SetOwnerID(1).SetMethod("POST").SetURL("https://a.example/h").
				SetBody([]byte("{}")).SetStatus(r.status).SetExpiresAt(r.at.Add(48 * time.Hour)).SetCreatedAt(r.at).SetUpdatedAt(r.at)
			if r.next {
				m.SetNextAttemptAt(now.Add(time.Minute))
			}
			if r.lease {
				m.SetLeaseUntil(now.Add(time.Minute)).SetLeaseOwner("x")
			}
			if r.endpoint != nil {
				m.SetEndpointID(r.endpoint.ID)
			}
			if r.event != nil {
				m.SetEventID(r.event.ID)
			}
			n := m.SaveX(ctx)
			ids[r.name] = n.ID
			c.DeliveryAttempt.Create().SetNotificationID(n.ID).SetNumber(1).SetStartedAt(r.at).
				SetRequestMethod("POST").SetRequestURL("https://a.example/h").SaveX(ctx)
			c.DeliveryEvent.Create().SetNotificationID(n.ID).SetOwnerID(1).SetUUID(n.UUID).SetKind("created").
				SetDeliveryStatus("pending").SetCreatedAt(r.at).SaveX(ctx)
		}
		ledgerBefore := c.LedgerEntry.Query().CountX(ctx)
		// The email outbox: old sent and failed emails go, an old pending
		// one (its retries still running) and young ones stay.
		emails := map[string]bool{}
		for i, e := range []struct {
			at     time.Time
			status entemail.Status
			gone   bool
		}{{old, entemail.StatusSent, true}, {old, entemail.StatusPending, false}, {old, entemail.StatusFailed, true}, {old, entemail.StatusSent, true}, {young, entemail.StatusSent, false}, {old, entemail.StatusSent, false}} {
			key := fmt.Sprintf("receipt:%d:a@b.example", i)
			emails[key] = e.gone
			c.Email.Create().SetKind("receipt").SetDedupeKey(key).SetTo("a@b.example").SetSubject("s").SetTextBody("t").
				SetStatus(e.status).SetCreatedAt(e.at).SaveX(ctx)
		}

		job := retention.New(retention.Config{DB: c, Batch: 2, Now: func() time.Time { return now }})
		res, err := job.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, r := range rows {
			_, err := c.Notification.Get(ctx, ids[r.name])
			gone := entdb.IsNotFound(err)
			if gone != r.gone {
				t.Errorf("%s: deleted %v, want %v", r.name, gone, r.gone)
			}
			if r.gone {
				want++
			}
			na := c.DeliveryAttempt.Query().Where(deliveryAttemptOf(ids[r.name])).CountX(ctx)
			ne := c.DeliveryEvent.Query().Where(deliveryEventOf(ids[r.name])).CountX(ctx)
			if (na == 0) != r.gone || (ne == 0) != r.at.Before(now.Add(-retention.DefaultAge)) {
				t.Errorf("%s: %d attempts and %d delivery events left", r.name, na, ne)
			}
		}
		if res.Notifications != want || res.Attempts != want || res.DeliveryEvents != len(rows)-2 || res.Events != 1 || res.Batches < 3 {
			t.Errorf("result %+v, want %d notifications and attempts, %d delivery events, 1 event, in several batches", res, want, len(rows)-2)
		}
		for ev, keep := range map[*entdb.Event]bool{evOld: false, evWaiting: true, evYoung: true} {
			if _, err := c.Event.Get(ctx, ev.ID); entdb.IsNotFound(err) == keep {
				t.Errorf("event %s kept %v, want %v", ev.UUID, !entdb.IsNotFound(err), keep)
			}
		}
		for key, gone := range emails {
			n := c.Email.Query().Where(entemail.DedupeKey(key)).CountX(ctx)
			if (n == 0) != gone {
				t.Errorf("email %s: deleted %v, want %v", key, n == 0, gone)
			}
		}
		// The last old email was stored after a young one: the run stops at
		// the first young email (time order), so it waits for a later run.
		if res.Emails != 3 {
			t.Errorf("%d emails deleted, want 3", res.Emails)
		}
		if c.LedgerEntry.Query().CountX(ctx) != ledgerBefore {
			t.Error("the ledger was pruned")
		}
		again, err := job.Run(ctx)
		if err != nil || again.Notifications+again.Events != 0 {
			t.Fatalf("a second run deleted %+v (%v)", again, err)
		}
		// Negative age keeps everything.
		if res, err := retention.New(retention.Config{DB: c, Age: -1, Now: func() time.Time { return now.Add(1000 * time.Hour) }}).Run(ctx); err != nil || res.Notifications != 0 {
			t.Fatalf("negative age: %+v %v", res, err)
		}
	})
}

// TestAuditRetention: a run deletes the audit entries older than the audit
// age (400 days by default, whatever the delivery records' age), in
// batches, and keeps the younger ones; a negative audit age keeps every
// entry, and the delivery records' age does not touch the audit log.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		// Ages in days, stored in this order; want are the ids kept under
		// the default audit age.
		ages := []time.Duration{700, 450, 401, 402, 399, 100, 1}
		var want []int64
		for i, days := range ages {
			e := c.AuditEntry.Create().SetProjectID(1).SetActorKind(auditentry.ActorKindOperator).SetActorID(0).SetActor("cli:root").
				SetAction(fmt.Sprintf("settings.%d", i)).SetCreatedAt(now.Add(-time.Duration(days) * 24 * time.Hour)).SaveX(ctx)
			if days < 400 {
				want = append(want, e.ID)
			}
		}
		kept := func() []int64 {
			return c.AuditEntry.Query().Order(entdb.Asc(auditentry.FieldID)).IDsX(ctx)
		}
		clk := func() time.Time { return now }

		// Keep everything: a negative audit age, whatever the delivery age.
		res, err := retention.New(retention.Config{DB: c, Age: time.Hour, AuditAge: -1, Now: clk}).Run(ctx)
		if err != nil || res.AuditEntries != 0 || len(kept()) != len(ages) {
			t.Fatalf("negative audit age: %+v %v, %d entries left of %d", res, err, len(kept()), len(ages))
		}
		// Delivery records kept forever do not keep the audit log: the
		// default audit age (AuditAge 0) deletes the four entries over 400
		// days old, in batches of two.
		var batches []int
		res, err = retention.New(retention.Config{DB: c, Age: -1, Batch: 2, Now: clk,
			Observe: func(table string, n int, _ time.Duration) {
				if table == "audit_entries" {
					batches = append(batches, n)
				}
			}}).Run(ctx)
		if err != nil || res.AuditEntries != 4 || res.Batches != 2 || fmt.Sprint(batches) != "[2 2]" {
			t.Fatalf("default audit age: %+v %v, batches %v; want 4 entries deleted in two batches", res, err, batches)
		}
		if got := kept(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("entries left %v, want %v (those under 400 days old)", got, want)
		}
		// A shorter audit age deletes more; a second run finds nothing.
		job := retention.New(retention.Config{DB: c, AuditAge: 30 * 24 * time.Hour, Now: clk})
		if res, err := job.Run(ctx); err != nil || res.AuditEntries != 2 {
			t.Fatalf("30-day audit age: %+v %v, want 2 entries deleted", res, err)
		}
		if res, err := job.Run(ctx); err != nil || res.AuditEntries != 0 || len(kept()) != 1 {
			t.Fatalf("second run: %+v %v, %d entries left, want 1", res, err, len(kept()))
		}
	})
}

// TestAuditRetentionFutureDated: an operator's entry dated 10 days ahead
// by the clock of the host that ran the command (written as the CLI
// writes it, audit.Record with that clock) neither holds back the older
// entries stored after it, which go in the same run whatever the batch,
// nor goes before it is older than the audit age by its own date. A
// whole batch of young entries in a row does end a run (the documented
// bound): the older entries after it wait for those to age.
func TestAuditRetentionFutureDated(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		const day = 24 * time.Hour
		// The entries were written 405 days before now, by the server (its
		// clock right) and by an operator's command (its clock 10 days
		// ahead); the last one 10 days before now.
		written := now.Add(-405 * day)
		record := func(kind auditentry.ActorKind, action string, at time.Time) int64 {
			t.Helper()
			if err := audit.Record(ctx, c, audit.Entry{ProjectID: 1, ActorKind: kind, Actor: "cli:root", Action: action, At: at}); err != nil {
				t.Fatal(err)
			}
			return c.AuditEntry.Query().Order(entdb.Desc(auditentry.FieldID)).FirstIDX(ctx)
		}
		kept := func() []int64 { return c.AuditEntry.Query().Order(entdb.Asc(auditentry.FieldID)).IDsX(ctx) }
		at := func(d time.Duration) func() time.Time { return func() time.Time { return now.Add(d) } }

		for _, batch := range []int{2, 3, 4, 0} {
			t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
				c.AuditEntry.Delete().ExecX(ctx)
				record(audit.APIKey, "server.1", written.Add(-2*day))
				record(audit.APIKey, "server.2", written.Add(-day))
				ahead := record(audit.Operator, "cli.ahead", written.Add(10*day))
				for i := range 5 {
					record(audit.APIKey, fmt.Sprintf("server.%d", i+3), written.Add(time.Duration(i+1)*time.Hour))
				}
				young := record(audit.User, "user.young", now.Add(-10*day))

				res, err := retention.New(retention.Config{DB: c, Age: -1, Batch: batch, Now: at(0)}).Run(ctx)
				if err != nil || res.AuditEntries != 7 {
					t.Fatalf("run: %+v %v, want the 7 entries over 400 days old deleted", res, err)
				}
				if got := kept(); fmt.Sprint(got) != fmt.Sprint([]int64{ahead, young}) {
					t.Fatalf("entries left %v, want %v (the one dated ahead, the young one)", got, []int64{ahead, young})
				}
				// Dated now-395 days: kept 4 days on, gone 6 days on.
				if res, err := retention.New(retention.Config{DB: c, Age: -1, Batch: batch, Now: at(4 * day)}).Run(ctx); err != nil || res.AuditEntries != 0 {
					t.Fatalf("4 days on: %+v %v, want nothing deleted (the entry is 399 days old by its date)", res, err)
				}
				if res, err := retention.New(retention.Config{DB: c, Age: -1, Batch: batch, Now: at(6 * day)}).Run(ctx); err != nil || res.AuditEntries != 1 {
					t.Fatalf("6 days on: %+v %v, want the entry dated ahead deleted", res, err)
				}
				if got := kept(); fmt.Sprint(got) != fmt.Sprint([]int64{young}) {
					t.Fatalf("entries left %v, want %v", got, []int64{young})
				}
			})
		}

		// The bound: a batch (2) of entries dated ahead in a row ends the
		// run before the old entry after them, which goes once they have
		// aged.
		c.AuditEntry.Delete().ExecX(ctx)
		record(audit.Operator, "cli.ahead.1", written.Add(10*day))
		record(audit.Operator, "cli.ahead.2", written.Add(10*day))
		record(audit.APIKey, "server.old", written)
		if res, err := retention.New(retention.Config{DB: c, Age: -1, Batch: 2, Now: at(0)}).Run(ctx); err != nil || res.AuditEntries != 0 {
			t.Fatalf("behind a whole batch dated ahead: %+v %v, want nothing deleted", res, err)
		}
		if res, err := retention.New(retention.Config{DB: c, Age: -1, Batch: 2, Now: at(6 * day)}).Run(ctx); err != nil || res.AuditEntries != 3 {
			t.Fatalf("6 days on: %+v %v, want all 3 deleted", res, err)
		}
	})
}

// TestAuditRetentionPlan, on PostgreSQL: the audit retention's batch read
// and delete are ranges of the primary key (an index scan, never a
// sequential one) on a table of 50,000 entries.
func TestAuditRetentionPlan(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, `
INSERT INTO audit_entries (created_at, project_id, actor_kind, actor_id, actor, action)
SELECT now() - (50000 - g) * interval '1 hour', 1 + g % 7, 'operator', 0, 'cli:root', 'settings.branding' FROM generate_series(1, 50000) g;
ANALYZE audit_entries`); err != nil {
		t.Fatal(err)
	}
	explainBatch(t, db.SQL, []string{
		`SELECT id, created_at FROM audit_entries WHERE id > 1000 ORDER BY id LIMIT 1000`,
		`DELETE FROM audit_entries WHERE id IN (1001, 1002, 1003)`,
	}, "audit_entries_pkey")
}

// TestJobStops: a started job stops, and so does one never started.
func TestJobStops(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	j := retention.New(retention.Config{DB: db.Client, Interval: time.Millisecond})
	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	j.Stop()
	retention.New(retention.Config{DB: db.Client}).Stop()
}

func deliveryAttemptOf(id int64) predicate.DeliveryAttempt { return deliveryattempt.NotificationID(id) }
func deliveryEventOf(id int64) predicate.DeliveryEvent     { return deliveryevent.NotificationID(id) }
