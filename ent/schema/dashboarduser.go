package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DashboardUser is a person who signs in to the dashboard (/dashboard/) and
// sees one project. The operator creates users from the command line; only
// an argon2id hash of the password is stored.
type DashboardUser struct{ ent.Schema }

// Mixin of the DashboardUser.
func (DashboardUser) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the DashboardUser.
func (DashboardUser) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable().
			Comment("The one project the user sees."),
		field.String("email").NotEmpty().Unique().
			Comment("Sign-in name, stored in lower case."),
		field.String("password_hash").NotEmpty().Sensitive().
			Comment("argon2id PHC string: parameters, salt and hash."),
		field.Int("failed_signins").NonNegative().Default(0).
			Comment("Failed sign-ins since the last success or lockout."),
		field.Time("locked_until").Optional().Nillable().
			Comment("No sign-in succeeds before this time."),
	}
}

// Indexes of the DashboardUser.
func (DashboardUser) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id")}
}
