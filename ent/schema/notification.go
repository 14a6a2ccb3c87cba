package schema

import (
	"entgo.io/ent"
	entsql "entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Notification is an outbox row: one message to deliver, with the exact
// bytes to send on every attempt and how they are signed. It is written in
// the same transaction as the state change that caused it. It knows no
// domain: owner, service, event, subject, topic and sequence are labels its
// producer chose, for logs, filters and ordering.
type Notification struct{ ent.Schema }

// Mixin of the Notification.
func (Notification) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Notification.
func (Notification) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("uuid").NotEmpty().Unique().Immutable().
			Comment("Public identifier, sent to the merchant for de-duplication."),
		field.Int64("owner_id").Immutable().
			Comment("Owner: only its owner's watchers see its events (the API key that created what it is about)."),
		field.String("service").Default("").Immutable().
			Comment(`API that produced it, e.g. "address" for low-level callbacks.`),
		field.String("event").Default("").Immutable().
			Comment(`What it reports, e.g. a payment status ("pending") or "checkout.payment.confirmed".`),
		field.String("subject").Default("").Immutable().
			Comment("The object it is about, as its owner knows it (the payment address of a low-level callback)."),
		field.String("topic").Default("").Immutable().
			Comment("A grouping for filters (the ticker of a low-level callback)."),
		field.String("sequence").Optional().Nillable().Immutable().
			Comment("Notifications with the same sequence make their first attempts in the order stored, one at a time; NULL for none."),
		field.String("host").Default("").Immutable().
			Comment("Destination host:port; bounds concurrent attempts per destination."),
		field.String("method").NotEmpty().Immutable(),
		field.Text("url").NotEmpty().Immutable(),
		field.Bytes("body").Immutable().
			Comment("Exact request body; empty for GET."),
		field.String("content_type").Default("").Immutable(),
		field.String("signature_scheme").Default("").Immutable().
			Comment("Signer of the notification; empty for unsigned."),
		field.String("signing_key").Default("").Immutable().
			Comment("Which key of its signer signs it (the signer resolves it; a per-attempt signer reads its current value)."),
		field.Text("signature").Default("").
			Comment("Signature made once, by the first attempt, and stored with its record (set once, never changed); empty until then, and for unsigned and per-attempt signers."),
		field.Enum("status").Values("pending", "retrying", "acknowledged", "failed", "paused").Default("pending").
			Comment("paused: its endpoint is paused; it waits (next_attempt_at null, its window stopped) until resumed."),
		field.Int("attempts").NonNegative().Default(0),
		field.Time("next_attempt_at").Optional().Nillable().
			Comment("When the next attempt is due; nil once acknowledged or failed."),
		field.Time("expires_at").
			Comment("No attempt starts after this time; the notification then fails."),
		field.Bool("resend").Default(false).
			Comment("A manual resend asked for one attempt now: due even after expires_at; cleared by that attempt."),
		field.Time("lease_until").Optional().Nillable().
			Comment("A dispatcher holds the row until then."),
		field.String("lease_owner").Optional().
			Comment("Identifier of the dispatcher holding the lease."),
		field.Int64("endpoint_id").Optional().Nillable().Immutable().
			Comment("The endpoint it is delivered to; null for a notify_url, a callback or a payout webhook."),
		field.Int64("event_id").Optional().Nillable().Immutable().
			Comment("The merchant event it delivers (events); null for low-level callbacks and older rows."),
	}
}

// Edges of the Notification.
func (Notification) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("delivery_attempts", DeliveryAttempt.Type),
		edge.To("events", DeliveryEvent.Type),
	}
}

// Indexes of the Notification.
func (Notification) Indexes() []ent.Index {
	return []ent.Index{
		// The dispatcher claims due rows in due order. The index holds only
		// rows still to deliver (next_attempt_at is cleared once a row is
		// acknowledged or failed), so a queue of millions of finished rows
		// costs the claim nothing and the scan stays an index scan
		// (TestClaimUsesIndex). The predicate is written as PostgreSQL prints
		// it, so the schema and the database compare equal.
		index.Fields("next_attempt_at", "id").
			Annotations(entsql.IndexWhere("(next_attempt_at IS NOT NULL)")).
			StorageKey("notification_due"),
		// Parked first attempts of a destination (the dispatcher's
		// pullParked, one probe per destination): rows never attempted nor
		// leased, still to deliver. A row claimed as it is stored is
		// written leased and never enters it; a claimed row leaves it. The
		// predicate as PostgreSQL prints it (see notification_due).
		index.Fields("host", "next_attempt_at", "id").
			Annotations(entsql.IndexWhere("((attempts = 0) AND (lease_until IS NULL) AND (next_attempt_at IS NOT NULL))")).
			StorageKey("notification_parked"),
		// Queue depth per status, for metrics: like the due index it holds
		// only rows still to deliver, so a scrape counts the queue, not
		// every notification ever stored, and acknowledging a row adds no
		// entry to it.
		index.Fields("status").
			Annotations(entsql.IndexWhere("(next_attempt_at IS NOT NULL)")).
			StorageKey("notification_queued"),
		// Undelivered notifications of a sequence: a notification is sent
		// as it is stored only when no earlier one of its sequence is due.
		index.Fields("sequence").
			Annotations(entsql.IndexWhere("((sequence IS NOT NULL) AND (next_attempt_at IS NOT NULL))")).
			StorageKey("notification_sequence_undelivered"),
		// An owner's notifications, newest first (logs, dashboards).
		index.Fields("owner_id", "subject"),
		// An endpoint's notifications: pausing and resuming it, its log.
		index.Fields("endpoint_id", "id").
			Annotations(entsql.IndexWhere("(endpoint_id IS NOT NULL)")).
			StorageKey("notification_endpoint"),
		// The deliveries of a merchant event: retention keeps an event
		// while one of them waits.
		index.Fields("event_id").
			Annotations(entsql.IndexWhere("(event_id IS NOT NULL)")).
			StorageKey("notification_event"),
	}
}
