package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DashboardSession is a signed-in dashboard user. The browser holds a random
// token in a cookie; only its SHA-256 is stored, so a copy of the database
// opens no session.
type DashboardSession struct{ ent.Schema }

// Mixin of the DashboardSession.
func (DashboardSession) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the DashboardSession.
func (DashboardSession) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("token_hash").Unique().Immutable().Match(sha256Hex).
			Comment("Lowercase hex SHA-256 of the session cookie's token."),
		field.Int64("user_id").Immutable().
			Comment("The signed-in DashboardUser."),
		field.String("csrf_token").NotEmpty().Sensitive().Immutable().
			Comment("Synchronizer token every form of the session posts back."),
		field.Time("expires_at").
			Comment("The session ends then; signing out deletes it sooner."),
		field.Enum("pending").Values("none", "totp", "enrol").Default("none").
			Comment("What the session must do before it opens any page: none, totp (give the code after the password), enrol (set up two-factor sign-in: the project requires it of owners)."),
		field.Time("reauth_at").Optional().Nillable().
			Comment("When the user last proved it is them (sign-in, or the password or a code given again): sensitive changes need it recent."),
	}
}

// Indexes of the DashboardSession.
func (DashboardSession) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id"), index.Fields("expires_at")}
}
