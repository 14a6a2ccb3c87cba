package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// APIKey is a merchant credential. Only the SHA-256 of the key is stored; the
// key itself is shown once, when it is created.
type APIKey struct{ ent.Schema }

// Mixin of the APIKey.
func (APIKey) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("name").NotEmpty().
			Comment("Operator-chosen label."),
		field.String("prefix").NotEmpty().MaxLen(8).
			Comment("First 8 characters of the key, for display only."),
		field.String("hash").Unique().Match(sha256Hex).
			Comment("Lowercase hex SHA-256 of the key; looked up on every request."),
		field.Time("revoked_at").Optional().Nillable().
			Comment("Set when the key is revoked; a revoked key authenticates nothing."),
		field.Int64("project_id").Annotations(entsql.Default("0")).
			Comment("The project the key acts for (the column default only serves the migration that added it)."),
		field.Bool("operator").Default(false).Immutable().
			Comment("An operator's key: it alone may call the operator API (held funds, and later projects)."),
		field.JSON("scopes", []string{}).Default(append([]string(nil), AllScopes...)).
			Annotations(entsql.Default(`["read", "create", "payouts", "management"]`)).
			Comment("What the key may do (read, create, payouts, management); a call outside them is refused with 403 naming the scope it lacks."),
		field.Time("last_used_at").Optional().Nillable().
			Comment("When the key last authenticated a request, to the minute (written at most once a minute per key)."),
	}
}

// The scopes of a key. A key made before scopes existed has all of them.
const (
	// ScopeRead reads: lists, status, logs, estimates.
	ScopeRead = "read"
	// ScopeCreate creates payments: addresses, checkouts, deposits,
	// subscriptions, custom payments.
	ScopeCreate = "create"
	// ScopePayouts moves money out: payouts, refunds, wrong-asset releases.
	ScopePayouts = "payouts"
	// ScopeManagement changes the project: settings, wallets, secrets,
	// keys, test notifications.
	ScopeManagement = "management"
)

// AllScopes lists every scope, in the order they are documented.
var AllScopes = []string{ScopeRead, ScopeCreate, ScopePayouts, ScopeManagement}

// Edges of the APIKey.
func (APIKey) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("addresses", Address.Type),
		edge.To("payments", Payment.Type),
	}
}
