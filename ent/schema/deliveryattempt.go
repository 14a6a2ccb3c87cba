package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DeliveryAttempt records one try at delivering a Notification. It is written
// before the attempt starts (outcome in_flight) and completed after it, so a
// crash mid-attempt leaves a visible trace.
type DeliveryAttempt struct{ ent.Schema }

// Fields of the DeliveryAttempt.
func (DeliveryAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("notification_id").Immutable(),
		field.Int("number").Positive().Immutable().
			Comment("1 for the first attempt of a notification, then 2, 3, ..."),
		field.Time("started_at").Immutable(),
		field.Time("finished_at").Optional().Nillable(),
		field.String("request_method").NotEmpty().Immutable(),
		field.Text("request_url").NotEmpty().Immutable(),
		field.Int("response_status").Optional().Nillable(),
		field.Text("response_body").Default("").
			Comment("Start of the response body, as much as the notifier keeps."),
		field.Text("error").Default("").
			Comment("Why the attempt failed, if it did; safe to show to the merchant."),
		field.Enum("outcome").Values("acknowledged", "failed", "blocked", "interrupted", "in_flight").Default("in_flight"),
		field.Int64("duration_ms").NonNegative().Default(0),
		field.Time("next_attempt_at").Optional().Nillable().
			Comment("When the notification was rescheduled after this attempt, if it was."),
		field.Text("signature_headers").Default("").
			Comment("The headers signed for this attempt alone (a per-attempt HMAC signature and its timestamp), as \"Name: value\" lines; the notification's own headers complete what was sent. Empty for a scheme that signs once, and for an attempt whose process died."),
	}
}

// Edges of the DeliveryAttempt.
func (DeliveryAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("notification", Notification.Type).Ref("delivery_attempts").
			Field("notification_id").Unique().Required().Immutable(),
	}
}

// Indexes of the DeliveryAttempt.
func (DeliveryAttempt) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("notification_id", "number").Unique(),
	}
}
