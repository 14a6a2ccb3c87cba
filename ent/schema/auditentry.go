package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AuditEntry records one change made to a project through the dashboard,
// the management API or the operator's CLI: who (a dashboard user, an API
// key or the operator), what (an action on a target), when and from where.
// Written in the transaction of the change where the change is the
// dashboard's own, after the call succeeded for the API (server/audit).
// Rows are never updated; the retention job deletes them once older than
// its audit age (server/retention).
type AuditEntry struct{ ent.Schema }

// Mixin of the AuditEntry.
func (AuditEntry) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the AuditEntry.
func (AuditEntry) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable().
			Comment("The project changed."),
		field.Enum("actor_kind").Values("user", "api_key", "operator").Immutable().
			Comment("Who made the change: a dashboard user, an API key, or the operator (a payhook CLI command)."),
		field.Int64("actor_id").Immutable().
			Comment("The DashboardUser's or the APIKey's id; 0 for the operator."),
		field.String("actor").Default("").Immutable().
			Comment("The user's email or the key's name, as they were then; cli:<OS user> for the operator."),
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
//
// The project's log reads (project_id, id) newest first; the retention job
// reads the whole table oldest first by the primary key (ids grow with
// time) and deletes by id: it needs no index of its own.
func (AuditEntry) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
