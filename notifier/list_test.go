package notifier

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
)

// TestListAndGet: an owner's notifications, newest first, filtered by
// status, service and event, in pages; Get returns one with its attempts.
func TestListAndGet(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		var mu sync.Mutex
		failing := false
		rs := newReceiver(t, func(int, *http.Request) (int, string) {
			mu.Lock()
			defer mu.Unlock()
			if failing {
				return 500, ""
			}
			return ok(0, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook")
		ctx := context.Background()
		put := func(service, event string, owner int64) *entdb.Notification {
			m := f.message(t, f.envelope(event, payload.TransportGET))
			m.Subject.Service, m.Owner = service, owner
			row, err := f.n.Queue.EnqueueNow(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			return row
		}
		var all []*entdb.Notification // oldest first
		for i := range 4 {
			all = append(all, put("address", []string{"pending", "confirmed"}[i%2], f.keyID))
		}
		put("address", "pending", 8) // another owner's
		f.run(t)                     // acknowledged
		mu.Lock()
		failing = true
		mu.Unlock()
		for range 3 {
			all = append(all, put("checkout", "checkout.payment.confirmed", f.keyID))
		}
		f.run(t) // retrying
		for range 2 {
			all = append(all, put("checkout", "checkout.payment.completed", f.keyID))
		}
		// pending (not attempted)

		list := func(fl ListFilter) ([]string, string) {
			t.Helper()
			rows, next, err := f.n.Queue.List(ctx, f.keyID, fl)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rows {
				if r.OwnerID != f.keyID {
					t.Fatalf("listed another owner's notification %s", r.UUID)
				}
				ids = append(ids, r.UUID)
			}
			return ids, next
		}
		newest := func(rows ...*entdb.Notification) string {
			var ids []string
			for i := len(rows) - 1; i >= 0; i-- {
				ids = append(ids, rows[i].UUID)
			}
			return strings.Join(ids, ",")
		}
		for _, tc := range []struct {
			name string
			f    ListFilter
			want string
		}{
			{"all", ListFilter{}, newest(all...)},
			{"acknowledged", ListFilter{Status: "acknowledged"}, newest(all[:4]...)},
			{"retrying", ListFilter{Status: "retrying"}, newest(all[4:7]...)},
			{"pending", ListFilter{Status: "pending"}, newest(all[7:]...)},
			{"failed", ListFilter{Status: "failed"}, ""},
			{"service", ListFilter{Service: "address"}, newest(all[:4]...)},
			{"event", ListFilter{Event: "confirmed"}, newest(all[1], all[3])},
			{"service and event", ListFilter{Service: "checkout", Event: "checkout.payment.completed"}, newest(all[7:]...)},
			{"status and service", ListFilter{Status: "acknowledged", Service: "checkout"}, ""},
			{"above the largest page", ListFilter{Limit: MaxListLimit + 1}, newest(all...)},
		} {
			ids, next := list(tc.f)
			if got := strings.Join(ids, ","); got != tc.want || next != "" {
				t.Fatalf("%s: %s (next %q), want %s", tc.name, got, next, tc.want)
			}
		}

		// Pages of 4: the cursor names the last notification returned, so
		// one stored meanwhile does not shift them.
		var pages []string
		cursor := ""
		for i := 0; ; i++ {
			ids, next := list(ListFilter{Limit: 4, Cursor: cursor})
			pages = append(pages, ids...)
			if i == 0 {
				put("address", "completed", f.keyID)
			}
			if next == "" {
				if len(ids) != 1 {
					t.Fatalf("last page has %d notifications, want 1", len(ids))
				}
				break
			}
			if len(ids) != 4 || i > 3 {
				t.Fatalf("page %d has %d notifications (next %q)", i, len(ids), next)
			}
			cursor = next
		}
		if got := strings.Join(pages, ","); got != newest(all...) {
			t.Fatalf("pages %s, want %s", got, newest(all...))
		}
		ids, next := list(ListFilter{Status: "retrying", Limit: 2})
		rest, last := list(ListFilter{Status: "retrying", Limit: 2, Cursor: next})
		if got := strings.Join(append(ids, rest...), ","); got != newest(all[4:7]...) || last != "" {
			t.Fatalf("filtered pages %s (next %q), want %s", got, last, newest(all[4:7]...))
		}

		for _, bad := range []ListFilter{{Status: "sent"}, {Limit: -1}, {Cursor: "x"}, {Cursor: formatCursor(1) + "="}} {
			if _, _, err := f.n.Queue.List(ctx, f.keyID, bad); !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("List(%+v): %v, want ErrInvalidFilter", bad, err)
			}
		}

		got, err := f.n.Queue.Get(ctx, f.keyID, all[5].UUID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != all[5].ID || len(got.Edges.DeliveryAttempts) != 1 || got.Edges.DeliveryAttempts[0].Outcome != deliveryattempt.OutcomeFailed {
			t.Fatalf("get: %+v with attempts %+v", got, got.Edges.DeliveryAttempts)
		}
		f.clock.Advance(time.Minute)
		f.run(t)
		if got, err = f.n.Queue.Get(ctx, f.keyID, all[5].UUID); err != nil || len(got.Edges.DeliveryAttempts) != 2 || got.Edges.DeliveryAttempts[0].Number != 1 || got.Edges.DeliveryAttempts[1].Number != 2 {
			t.Fatalf("get after a retry: %v, attempts %+v", err, got.Edges.DeliveryAttempts)
		}

		// WithAttempts: each listed notification with its attempts, in
		// the order made; without it, none are loaded.
		rows, _, err := f.n.Queue.List(ctx, f.keyID, ListFilter{Status: "retrying", WithAttempts: true})
		if err != nil || len(rows) < 3 {
			t.Fatalf("list with attempts: %v, %d rows", err, len(rows))
		}
		for _, r := range rows {
			as := r.Edges.DeliveryAttempts
			if len(as) != r.Attempts || len(as) == 0 || as[0].Number != 1 || as[len(as)-1].Number != len(as) {
				t.Fatalf("%s: %d attempts listed, %d made: %+v", r.UUID, len(as), r.Attempts, as)
			}
		}
		if rows, _, _ := f.n.Queue.List(ctx, f.keyID, ListFilter{Status: "retrying"}); rows[0].Edges.DeliveryAttempts != nil {
			t.Fatalf("attempts loaded without WithAttempts")
		}
	})
}
