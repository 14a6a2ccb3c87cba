package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AuditEntry records one change made to a project through the dashboard or
// the management API: who (a dashboard user or an API key), what (an action
// on a target), when and from where. Written in the transaction of the
// change where the change is the dashboard's own, after the call succeeded
// for the API (server/audit). Rows are never updated.
type AuditEntry struct{ ent.Schema }

// Mixin of the AuditEntry.
func (AuditEntry) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the AuditEntry.
func (AuditEntry) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable().
			Comment("The project changed."),
		field.Enum("actor_kind").Values("user", "api_key").Immutable().
			Comment("Who made the change: a dashboard user or an API key."),
		field.Int64("actor_id").Immutable().
			Comment("The DashboardUser's or the APIKey's id."),
		field.String("actor").Default("").Immutable().
			Comment("The user's email or the key's name, as they were then."),
		field.String("action").NotEmpty().Immutable().
			Comment("What was done: user.disable, settings.rotate_secret, PayoutService/ApprovePayout, ..."),
		field.String("target").Default("").Immutable().
			Comment("What it was done to (an id, an email, a ticker); empty when the project itself."),
		field.String("ip").Default("").Immutable().
			Comment("The client's address (through trusted proxies)."),
		field.String("user_agent").Default("").Immutable().
			Comment("The client's User-Agent, cut to 256 bytes."),
	}
}

// Indexes of the AuditEntry.
func (AuditEntry) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
