package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DashboardInvitation is an owner's invitation of an email to the project's
// dashboard with a role. The email carries a one-time link; only the
// SHA-256 of its token is stored, so a copy of the database accepts none.
type DashboardInvitation struct{ ent.Schema }

// Mixin of the DashboardInvitation.
func (DashboardInvitation) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the DashboardInvitation.
func (DashboardInvitation) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable().
			Comment("The project the invitee joins."),
		field.String("email").NotEmpty().Immutable().
			Comment("Who is invited, in lower case: their sign-in name once they accept."),
		field.Enum("role").Values(RoleOwner, RoleDeveloper, RoleViewer).Immutable(),
		field.String("token_hash").Unique().Immutable().Match(sha256Hex).
			Comment("Lowercase hex SHA-256 of the link's token."),
		field.Int64("invited_by").Immutable().
			Comment("The DashboardUser who invited."),
		field.Time("expires_at").
			Comment("The link opens nothing after this time."),
		field.Time("accepted_at").Optional().Nillable().
			Comment("When the invitee set a password: the link is spent."),
		field.Time("revoked_at").Optional().Nillable().
			Comment("When an owner withdrew it."),
	}
}

// Indexes of the DashboardInvitation.
func (DashboardInvitation) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id")}
}
