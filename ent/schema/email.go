package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Email is an email payhook sends (to a project's users, or a payer's
// receipt), stored before it is sent, in the transaction that causes it,
// and retried until the SMTP server takes it: the outbox.
type Email struct{ ent.Schema }

// Mixin of the Email.
func (Email) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the Email.
func (Email) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Default(0).Immutable().
			Comment("The project it is about; 0 for the operator's."),
		field.String("kind").NotEmpty().Immutable().
			Comment("What it says: endpoint_paused, payout_approval, price_degraded, receipt, invitation, ..."),
		field.String("dedupe_key").NotEmpty().Unique().Immutable().
			Comment("One email per cause and recipient (kind:cause:recipient)."),
		field.String("to").NotEmpty().Immutable(),
		field.String("subject").NotEmpty().Immutable(),
		field.Text("text_body").Immutable(),
		field.Text("html_body").Default("").Immutable(),
		field.Enum("status").Values("pending", "sent", "failed").Default("pending"),
		field.Int("attempts").NonNegative().Default(0),
		field.Time("next_attempt_at").Optional().Nillable().
			Comment("When to try again; null once sent or given up."),
		field.Text("last_error").Default(""),
		field.Time("sent_at").Optional().Nillable(),
		field.Time("lease_until").Optional().Nillable().
			Comment("An instance sending it holds it until then."),
	}
}

// Indexes of the Email.
func (Email) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("next_attempt_at", "id").
			Annotations(entsql.IndexWhere("(next_attempt_at IS NOT NULL)")).
			StorageKey("email_due"),
	}
}
