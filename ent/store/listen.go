package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// Notification is a message received from PostgreSQL's NOTIFY.
type Notification struct {
	// Payload is the NOTIFY payload; empty after a reconnect, when messages
	// may have been missed and listeners should re-read everything.
	Payload string
}

// Listen subscribes to a PostgreSQL NOTIFY channel on a dedicated
// connection that reconnects by itself. It returns a channel of messages
// (closed when ctx ends) and reports nothing for SQLite, where every writer
// is in this process (the channel is nil and never receives). After a lost
// connection it sends an empty Payload: messages may have been missed.
func Listen(ctx context.Context, db *DB, channel string, problem func(error)) (<-chan Notification, error) {
	if db.Dialect != Postgres {
		return nil, nil
	}
	l := pq.NewListener(db.postgresDSN, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && problem != nil {
			problem(err)
		}
	})
	// Listen waits for a connection, retrying for as long as the database
	// is unreachable (or gone); ctx ends the wait: Close wakes it up.
	listened := make(chan error, 1)
	go func() { listened <- l.Listen(channel) }()
	select {
	case err := <-listened:
		if err != nil {
			_ = l.Close()
			return nil, fmt.Errorf("listen %s: %w", channel, err)
		}
	case <-ctx.Done():
		_ = l.Close()
		<-listened //nolint:errcheck // waits for the Listen that Close ended: its error is Close's doing
		return nil, fmt.Errorf("listen %s: %w", channel, ctx.Err())
	}
	out := make(chan Notification, 64)
	go func() {
		defer close(out)
		defer l.Close()
		ping := time.NewTicker(30 * time.Second)
		defer ping.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case n := <-l.Notify:
				msg := Notification{}
				if n != nil {
					msg.Payload = n.Extra
				}
				select {
				case out <- msg:
				default: // the reader is behind; it re-reads the database anyway
				}
			case <-ping.C:
				go func() { _ = l.Ping() }()
			}
		}
	}()
	return out, nil
}
