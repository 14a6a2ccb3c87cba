package notifier

import (
	"context"
	"fmt"
	"net/url"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
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
// The dispatcher is woken when the transaction commits; if it rolls back,
// nothing was stored and nothing is sent.
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
	row, err := tx.Notification.Create().
		SetUUID(e.Callback.UUID).
		SetAddressID(e.AddressID).
		SetNillablePaymentID(e.PaymentID).
		SetAPIKeyID(e.APIKeyID).
		SetTicker(e.Ticker).
		SetAddressIn(e.AddressIn).
		SetHost(hostKey(u)).
		SetPaymentStatus(e.Callback.PaymentStatus).
		SetMethod(req.Method).
		SetURL(req.URL).
		SetBody(body).
		SetContentType(req.ContentType).
		SetSignatureScheme(n.signer.Scheme()).
		SetSignature(sig).
		SetStatus(notification.StatusPending).
		SetNextAttemptAt(now).
		SetExpiresAt(n.cfg.Policy.Expires(now)).
		SetCreatedAt(now).
		SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("store notification: %w", err)
	}
	// The created event is inserted with the others of this transaction in
	// one statement just before it commits, so the event-log lock is held
	// only for the commit itself.
	p, loaded := n.pendingEvents.LoadOrStore(tx, &pendingEvents{})
	pe := p.(*pendingEvents)
	pe.creates = append(pe.creates, n.newEvent(tx, row, deliveryevent.KindCreated, 0, "", nil, "", string(notification.StatusPending), row.NextAttemptAt))
	if !loaded {
		tx.OnRollback(func(next entdb.Rollbacker) entdb.Rollbacker {
			return entdb.RollbackFunc(func(ctx context.Context, tx *entdb.Tx) error {
				n.pendingEvents.Delete(tx)
				return next.Rollback(ctx, tx)
			})
		})
		tx.OnCommit(func(next entdb.Committer) entdb.Committer {
			return entdb.CommitFunc(func(ctx context.Context, tx *entdb.Tx) error {
				p, _ := n.pendingEvents.LoadAndDelete(tx)
				pe := p.(*pendingEvents)
				if err := n.eventLock(ctx, tx)(); err != nil {
					return err
				}
				evs, err := tx.DeliveryEvent.CreateBulk(pe.creates...).Save(ctx)
				if err != nil {
					return fmt.Errorf("store notification events: %w", err)
				}
				if err := n.notifyPeers(ctx, tx, evs); err != nil {
					return err
				}
				if err := next.Commit(ctx, tx); err != nil {
					return err
				}
				n.events.publish(evs)
				n.Wake()
				return nil
			})
		})
	}
	return row, nil
}

// EnqueueNow stores one notification in its own transaction.
func (n *Notifier) EnqueueNow(ctx context.Context, e Envelope) (*entdb.Notification, error) {
	var row *entdb.Notification
	err := withTx(ctx, n.db, func(tx *entdb.Tx) error {
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

// pendingEvents are the created events of one transaction's notifications,
// inserted together when it commits.
type pendingEvents struct {
	creates []*entdb.DeliveryEventCreate
}
