package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestListenEndsWithItsContext: a listener whose database cannot be reached
// (here: a database that does not exist) waits for it, retrying, but a
// cancelled context ends the wait and Listen returns; stopping a notifier
// on an unreachable database must not hang.
func TestListenEndsWithItsContext(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		if d != store.Postgres {
			continue
		}
		dsn := storetest.DSN(t, d)
		unreachable, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unreachable.Close() })
		// The database goes away: the listener's connection cannot be made.
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(u.Path, "/")
		u.Path = "/postgres"
		admin, err := sql.Open("postgres", u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		returned := make(chan error, 1)
		go func() {
			_, err := store.Listen(ctx, unreachable, "payhook_test", nil)
			returned <- err
		}()
		select {
		case err := <-returned:
			t.Fatalf("Listen returned %v before its context ended: it should wait for the database", err)
		case <-time.After(300 * time.Millisecond): // it is waiting (no event to wait on: a bounded look)
		}
		cancel()
		select {
		case err := <-returned:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Listen after cancel = %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Listen did not return after its context was cancelled")
		}
	}
}
