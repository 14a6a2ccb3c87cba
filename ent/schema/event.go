package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Event is one merchant event of a project, as its endpoints receive it
// (the JSON payload): the log that GET /events/ pages through in order and
// that replays send again. Its id is the cursor: it only grows.
type Event struct{ ent.Schema }

// Mixin of the Event.
func (Event) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable(),
		field.String("uuid").NotEmpty().Unique().Immutable().
			Comment("The event's id: the payload's uuid."),
		field.String("type").NotEmpty().Immutable().
			Comment("Its event type (GET /events/types/)."),
		field.String("ref").Default("").Immutable().
			Comment("What it is about: a payment_id, payout or refund id."),
		field.Bytes("payload").Immutable().
			Comment("The JSON payload, exactly as a JSON endpoint receives it."),
	}
}

// Indexes of the Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		// A project's events in order (the pull API's pages, replays by time).
		index.Fields("project_id", "id"),
		index.Fields("project_id", "created_at"),
		// Retention deletes the oldest first.
		index.Fields("created_at"),
	}
}
