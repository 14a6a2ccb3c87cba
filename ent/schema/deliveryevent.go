package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DeliveryEvent is one entry of the delivery event log that WatchDeliveries
// streams: a notification was stored, an attempt finished, or the
// notification failed for good. Its id is the stream cursor: it only grows,
// so a watcher that reconnects with the last id it saw misses nothing.
type DeliveryEvent struct{ ent.Schema }

// Mixin of the DeliveryEvent.
func (DeliveryEvent) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the DeliveryEvent.
func (DeliveryEvent) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("notification_id").Immutable(),
		field.Int64("owner_id").Immutable().
			Comment("Owner of the notification: only its watchers see the event."),
		field.String("uuid").Immutable(),
		field.String("service").Default("").Immutable(),
		field.String("event").Default("").Immutable(),
		field.String("subject").Default("").Immutable(),
		field.String("topic").Default("").Immutable(),
		field.Enum("kind").Values("created", "attempt", "expired").Immutable().
			Comment("created: stored; attempt: an attempt finished; expired: the window closed."),
		field.Int("attempt").NonNegative().Default(0).Immutable(),
		field.String("outcome").Default("").Immutable().
			Comment("Attempt outcome: acknowledged, failed, blocked, interrupted."),
		field.Int("http_status").Optional().Nillable().Immutable(),
		field.Text("error").Default("").Immutable(),
		field.String("delivery_status").Immutable().
			Comment("Notification status after the event."),
		field.Time("next_attempt_at").Optional().Nillable().Immutable(),
	}
}

// Edges of the DeliveryEvent.
func (DeliveryEvent) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("notification", Notification.Type).Ref("events").
			Field("notification_id").Unique().Required().Immutable(),
	}
}

// Indexes of the DeliveryEvent.
func (DeliveryEvent) Indexes() []ent.Index {
	return []ent.Index{
		// A watcher reads its owner's events after a cursor.
		index.Fields("owner_id", "id"),
	}
}
