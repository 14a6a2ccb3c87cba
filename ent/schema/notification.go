package schema

import (
	"entgo.io/ent"
	entsql "entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Notification is an outbox row: one callback to deliver, with the exact
// bytes and signature to send on every attempt. It is written in the same
// transaction as the state change that caused it.
type Notification struct{ ent.Schema }

// Mixin of the Notification.
func (Notification) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Notification.
func (Notification) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("uuid").NotEmpty().Unique().Immutable().
			Comment("Public identifier, sent to the merchant for de-duplication."),
		field.Int64("address_id").Immutable(),
		field.Int64("payment_id").Optional().Nillable().Immutable(),
		field.Int64("api_key_id").Immutable().
			Comment("Owner, copied from the address."),
		field.String("ticker").Default("").Immutable().
			Comment("Ticker of the address, copied for event filters."),
		field.String("address_in").Default("").Immutable().
			Comment("Payment address, copied for event filters."),
		field.String("host").Default("").Immutable().
			Comment("Destination host:port; bounds concurrent attempts per destination."),
		field.String("payment_status").Immutable().
			Comment("Payment status this notification reports."),
		field.String("method").NotEmpty().Immutable(),
		field.Text("url").NotEmpty().Immutable(),
		field.Bytes("body").Immutable().
			Comment("Exact request body; empty for GET."),
		field.String("content_type").Default("").Immutable(),
		field.String("signature_scheme").Default("").Immutable(),
		field.Text("signature").Default("").Immutable(),
		field.Enum("status").Values("pending", "retrying", "acknowledged", "failed").Default("pending"),
		field.Int("attempts").NonNegative().Default(0),
		field.Time("next_attempt_at").Optional().Nillable().
			Comment("When the next attempt is due; nil once acknowledged or failed."),
		field.Time("expires_at").
			Comment("No attempt starts after this time; the notification then fails."),
		field.Time("lease_until").Optional().Nillable().
			Comment("A dispatcher holds the row until then."),
		field.String("lease_owner").Optional().
			Comment("Identifier of the dispatcher holding the lease."),
	}
}

// Edges of the Notification.
func (Notification) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("address", Address.Type).Ref("notifications").
			Field("address_id").Unique().Required().Immutable(),
		edge.From("payment", Payment.Type).Ref("notifications").
			Field("payment_id").Unique().Immutable(),
		edge.From("api_key", APIKey.Type).Ref("notifications").
			Field("api_key_id").Unique().Required().Immutable(),
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
		// Queue depth per status, for metrics: like the due index it holds
		// only rows still to deliver, so a scrape counts the queue, not
		// every notification ever stored, and acknowledging a row adds no
		// entry to it.
		index.Fields("status").
			Annotations(entsql.IndexWhere("(next_attempt_at IS NOT NULL)")).
			StorageKey("notification_queued"),
		// Undelivered notifications of a payment: a notification is sent
		// as it is stored only when no earlier one of its payment is due.
		index.Fields("payment_id").
			Annotations(entsql.IndexWhere("((payment_id IS NOT NULL) AND (next_attempt_at IS NOT NULL))")).
			StorageKey("notification_payment_undelivered"),
	}
}
