package subscription

import (
	"context"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/db/predicate"
	entsub "github.com/payhook/payhook/ent/db/subscription"
)

// Filter selects and pages a project's subscriptions for Filtered. Empty
// fields select everything.
type Filter struct {
	// Status is a status as StatusAt computes it: pending, active or
	// expired.
	Status Status
	// From and Until bound the creation time: From <= created_at < Until;
	// a zero time is no bound.
	From, Until time.Time
	// Limit is the most subscriptions returned: DefaultLimit when 0, at
	// most MaxLimit.
	Limit int
	// Cursor continues a listing: the cursor a previous call returned with
	// the same filter; empty for the first page.
	Cursor string
}

// Filtered is List with a filter by status and creation time: a page of
// the project's subscriptions that match f, newest first, and the cursor
// of the next page ("" at the end). A bad status, limit or cursor is an
// InvalidError naming the parameter.
func (s *Service) Filtered(ctx context.Context, projectID int64, f Filter) ([]View, string, error) {
	now := s.cfg.Now()
	where := []predicate.Subscription{entsub.ProjectID(projectID)}
	switch f.Status {
	case "":
	case Pending:
		where = append(where, entsub.ExpiresAtIsNil())
	case Active:
		where = append(where, entsub.ExpiresAtGT(now))
	case Expired:
		where = append(where, entsub.ExpiresAtLTE(now))
	default:
		return nil, "", invalid("status", "%s is not a subscription status (pending, active or expired)", quote(string(f.Status)))
	}
	if !f.From.IsZero() {
		where = append(where, entsub.CreatedAtGTE(f.From))
	}
	if !f.Until.IsZero() {
		where = append(where, entsub.CreatedAtLT(f.Until))
	}
	return s.page(ctx, where, f.Limit, f.Cursor, "the next link of the previous page")
}

// Detail is a subscription with everything its owner may look for.
type Detail struct {
	View
	// Open are its renewals without a payment yet, newest first, with
	// their invoice_status now.
	Open []Renewal
	// Notifications are its renewal webhooks, oldest first, with their
	// attempts.
	Notifications []*entdb.Notification
}

// Detail returns the project's subscription with token: Fetch's view,
// the renewals no payment has reached yet, and the renewal webhooks.
func (s *Service) Detail(ctx context.Context, projectID int64, tok string) (*Detail, error) {
	v, err := s.Fetch(ctx, projectID, tok)
	if err != nil {
		return nil, err
	}
	sub := v.Subscription
	paid := map[int64]bool{}
	for _, r := range v.Renewals {
		paid[r.Invoice.ID] = true
	}
	invs, err := s.cfg.DB.Invoice.Query().
		Where(entinvoice.SubscriptionID(sub.ID), entinvoice.KindEQ(entinvoice.KindSubscription)).
		Order(entdb.Desc(entinvoice.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	d := &Detail{View: *v}
	now := s.cfg.Now()
	for _, inv := range invs {
		if !paid[inv.ID] {
			d.Open = append(d.Open, Renewal{Invoice: inv, Status: renewalStatus(inv, now)})
		}
	}
	d.Notifications, err = s.cfg.DB.Notification.Query().
		Where(notification.OwnerID(projectID), notification.Subject(sub.Token), notification.Service(ServiceLabel)).
		Order(entdb.Asc(notification.FieldID)).
		WithDeliveryAttempts(func(q *entdb.DeliveryAttemptQuery) { q.Order(entdb.Asc(deliveryattempt.FieldNumber)) }).
		All(ctx)
	if err != nil {
		return nil, err
	}
	return d, nil
}
