package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Endpoint is a project's webhook destination beside the per-payment
// notify_url: every merchant event whose type matches its filter is
// delivered to it, signed with its own secret (Standard Webhooks), on its
// own schedule. A failing endpoint is paused, never emptied: its
// notifications wait, and resuming delivers them oldest first.
type Endpoint struct{ ent.Schema }

// Mixin of the Endpoint.
func (Endpoint) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Endpoint.
func (Endpoint) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable(),
		field.String("public_id").NotEmpty().Unique().Immutable().
			Comment("The endpoint's id in the API (ep_...)."),
		field.Text("url").NotEmpty().
			Comment("Where its deliveries go (checked like every webhook URL: public HTTP(S) unless the operator's exception)."),
		field.String("description").Default(""),
		field.JSON("event_types", []string{}).Default([]string{}).
			Comment("The event types it receives: names or patterns with * (checkout.*, *.payment.completed, *)."),
		field.String("secret").Sensitive().
			Comment("Its signing secret (whsec_ + base64), sealed at rest (ent/store)."),
		field.String("previous_secret").Default("").Sensitive().
			Comment("The secret replaced by the last rotation; it also signs until previous_secret_until."),
		field.Time("previous_secret_until").Optional().Nillable(),
		field.Int("max_per_second").NonNegative().Default(0).
			Comment("The most deliveries a second the dispatcher makes to it; 0 is no limit."),
		field.Time("failing_since").Optional().Nillable().
			Comment("The first failed attempt since its last success; null while it succeeds."),
		field.Time("last_success_at").Optional().Nillable(),
		field.Time("paused_at").Optional().Nillable().
			Comment("When it was paused (its notifications wait, their window stopped); null while active."),
		field.Enum("paused_reason").Values("failing", "merchant", "operator").Optional().Nillable(),
		field.Time("deleted_at").Optional().Nillable().
			Comment("Deleted by the merchant: no new deliveries; kept for its notifications' logs."),
	}
}

// Indexes of the Endpoint.
func (Endpoint) Indexes() []ent.Index {
	return []ent.Index{
		// A project's live endpoints, matched against each of its events.
		index.Fields("project_id").
			Annotations(entsql.IndexWhere("(deleted_at IS NULL)")).
			StorageKey("endpoint_live"),
	}
}
