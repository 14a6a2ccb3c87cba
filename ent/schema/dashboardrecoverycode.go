package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DashboardRecoveryCode is one of a dashboard user's one-time codes that
// stand in for a TOTP code (a lost phone). They are shown once, at
// enrolment; only their SHA-256 is stored (each has 80 random bits).
type DashboardRecoveryCode struct{ ent.Schema }

// Mixin of the DashboardRecoveryCode.
func (DashboardRecoveryCode) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the DashboardRecoveryCode.
func (DashboardRecoveryCode) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("user_id").Immutable().
			Comment("The DashboardUser whose code it is."),
		field.String("code_hash").Immutable().Match(sha256Hex).
			Comment("Lowercase hex SHA-256 of the code (without its dashes)."),
		field.Time("used_at").Optional().Nillable().
			Comment("When it signed the user in: a code is used once."),
	}
}

// Indexes of the DashboardRecoveryCode.
func (DashboardRecoveryCode) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id", "code_hash").Unique()}
}
