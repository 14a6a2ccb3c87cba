package notifier

import (
	"context"
	"fmt"
	"net/url"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
)

// Envelope is one notification to store: where it goes, how, and what it says.
type Envelope struct {
	// AddressID, APIKeyID and PaymentID link the notification to its address,
	// owner and (when there is one) payment.
	AddressID, APIKeyID int64
	PaymentID           *int64
	// Ticker and AddressIn are copied onto the notification for event filters.
	Ticker, AddressIn string
	// CallbackURL is the address's callback URL (custom parameters included).
	CallbackURL string
	// Transport is GET, form POST or JSON POST.
	Transport payload.Transport
	// Callback is the payload; its UUID is generated when empty.
	Callback payload.Callback
}

// Enqueue stores a notification inside the caller's transaction: the frozen
// request (method, URL, body, content type), its signature and its schedule.
// The rows are written when the transaction commits (the returned row's ID
// is set then; a duplicate uuid fails the commit), and the dispatcher is
// woken; if it rolls back, nothing was stored and nothing is sent.
func (n *Notifier) Enqueue(ctx context.Context, tx *entdb.Tx, e Envelope) (*entdb.Notification, error) {
	if e.Callback.UUID == "" {
		e.Callback.UUID = uuid.NewString()
	}
	req, err := payload.Encode(e.CallbackURL, e.Transport, e.Callback)
	if err != nil {
		return nil, fmt.Errorf("encode notification: %w", err)
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("encode notification: %w", err)
	}
	sig, err := n.signer.Sign(payload.SignedData(req))
	if err != nil {
		return nil, fmt.Errorf("sign notification: %w", err)
	}
	body := req.Body
	if body == nil {
		body = []byte{} // GET: no body, stored as empty bytes
	}
	now := n.cfg.Clock.Now()
	next, expires := now, n.cfg.Policy.Expires(now)
	row := &entdb.Notification{
		UUID: e.Callback.UUID, AddressID: e.AddressID, PaymentID: e.PaymentID, APIKeyID: e.APIKeyID,
		Ticker: e.Ticker, AddressIn: e.AddressIn, Host: hostKey(u), PaymentStatus: e.Callback.PaymentStatus,
		Method: req.Method, URL: req.URL, Body: body, ContentType: req.ContentType,
		SignatureScheme: n.signer.Scheme(), Signature: sig, Status: notification.StatusPending,
		NextAttemptAt: &next, ExpiresAt: expires, CreatedAt: now, UpdatedAt: now,
	}
	// The rows of one transaction are inserted together just before it
	// commits (notifications, then their created events, in two statements),
	// so a payment or a batch costs a few round trips and the event-log lock
	// is held only for the commit.
	p, loaded := n.pendingTxs.LoadOrStore(tx, &pendingTx{})
	pt := p.(*pendingTx)
	pt.rows = append(pt.rows, row)
	if !loaded {
		tx.OnRollback(func(next entdb.Rollbacker) entdb.Rollbacker {
			return entdb.RollbackFunc(func(ctx context.Context, tx *entdb.Tx) error {
				n.pendingTxs.Delete(tx)
				return next.Rollback(ctx, tx)
			})
		})
		tx.OnCommit(func(next entdb.Committer) entdb.Committer {
			return entdb.CommitFunc(func(ctx context.Context, tx *entdb.Tx) error {
				p, _ := n.pendingTxs.LoadAndDelete(tx)
				rows := p.(*pendingTx).rows
				claims, err := n.claimOnStore(ctx, tx, rows)
				if err != nil {
					return err
				}
				evs, err := n.insertPending(ctx, tx, rows)
				if err == nil {
					err = next.Commit(ctx, tx)
				}
				if err != nil {
					// Nothing was stored (or, if only the commit's answer was
					// lost, the lease lapses and the rows are taken over).
					n.mu.Lock()
					for _, c := range claims {
						n.freeSlot(c.n)
					}
					n.mu.Unlock()
					return err
				}
				n.events.publish(evs)
				for _, c := range claims {
					cp := *c.n // the sender's copy (its id is set now); the caller keeps its row
					c.n = &cp
					go n.send(c)
				}
				if len(claims) < len(rows) {
					n.Wake() // the rest is for the dispatch loop
				}
				return nil
			})
		})
	}
	return row, nil
}

// claimOnStore claims, as they are stored, the notifications this instance
// has a free slot for: they are inserted already leased, with their first
// attempt counted, and sent as soon as the transaction commits, which saves
// the claim's query and update and its round trips. It applies the claim's
// rules: the dispatch loop runs, a worker and a slot of the destination are
// free, and no other notification of the same payment is in flight here or
// due before it. The others are left to the dispatch loop.
func (n *Notifier) claimOnStore(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification) ([]claim, error) {
	n.mu.Lock()
	on := n.handOff && n.active < n.cfg.Workers
	n.mu.Unlock()
	if !on {
		return nil, nil
	}
	now := n.cfg.Clock.Now()
	var paymentIDs []int64
	for _, r := range rows {
		if r.PaymentID != nil {
			paymentIDs = append(paymentIDs, *r.PaymentID)
		}
	}
	waiting := map[int64]bool{}
	if len(paymentIDs) > 0 {
		// An earlier notification of the payment that is due and not in
		// flight goes first, through the dispatch loop.
		var got []struct {
			PaymentID int64 `json:"payment_id"`
		}
		err := tx.Notification.Query().
			Where(notification.PaymentIDIn(paymentIDs...),
				notification.StatusIn(notification.StatusPending, notification.StatusRetrying),
				notification.NextAttemptAtLTE(now)).
			Select(notification.FieldPaymentID).
			Scan(ctx, &got)
		if err != nil {
			return nil, fmt.Errorf("check earlier notifications: %w", err)
		}
		for _, g := range got {
			waiting[g.PaymentID] = true
		}
	}
	until := now.Add(n.cfg.Lease)
	var claims []claim
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.handOff {
		return nil, nil
	}
	for _, r := range rows {
		if n.active >= n.cfg.Workers {
			break
		}
		if n.perHost[r.Host] >= n.cfg.PerHost {
			continue
		}
		if id := r.PaymentID; id != nil && (waiting[*id] || n.inflightPayments[*id] > 0) {
			continue
		}
		n.takeSlot(r, now)
		r.Attempts = 1
		r.LeaseUntil, r.LeaseOwner, r.NextAttemptAt = &until, n.cfg.InstanceID, &until
		claims = append(claims, claim{n: r, number: 1, started: now})
	}
	return claims, nil
}

// EnqueueNow stores one notification in its own transaction.
func (n *Notifier) EnqueueNow(ctx context.Context, e Envelope) (*entdb.Notification, error) {
	var row *entdb.Notification
	err := store.WithTx(ctx, n.db.Client, func(tx *entdb.Tx) error {
		var err error
		row, err = n.Enqueue(ctx, tx, e)
		return err
	})
	return row, err
}

// hostKey is the destination a per-host concurrency bound applies to.
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Hostname() + ":" + port
}

// pendingTx holds the notifications one transaction enqueued, written
// together when it commits.
type pendingTx struct {
	rows []*entdb.Notification
}

// insertPending writes a transaction's notifications and their created
// events.
func (n *Notifier) insertPending(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification) ([]*entdb.DeliveryEvent, error) {
	if err := n.insertNotifications(ctx, tx, rows); err != nil {
		return nil, fmt.Errorf("store notifications: %w", err)
	}
	evs := make([]*entdb.DeliveryEvent, len(rows))
	for i, r := range rows {
		// Due at once when created (a row claimed as it is stored carries
		// its lease's end instead).
		evs[i] = n.newEvent(r, deliveryevent.KindCreated, 0, "", nil, "", string(notification.StatusPending), &r.CreatedAt)
	}
	if err := n.insertEvents(ctx, tx, n.eventLock(ctx, tx), evs); err != nil {
		return nil, err
	}
	if err := n.notifyPeers(ctx, tx, evs); err != nil {
		return nil, err
	}
	return evs, nil
}
