package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DashboardUser is a person who signs in to the dashboard (/dashboard/) and
// sees one project, with a role there. The operator creates users from the
// command line, an owner invites them; only an argon2id hash of the password
// is stored, and the TOTP secret is sealed at rest (ent/store).
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
		field.Enum("role").Values(RoleOwner, RoleDeveloper, RoleViewer).Default(RoleOwner).
			Comment("What the user may do in the project: owner (everything), developer (all but payouts, payout wallets and users), viewer (read only)."),
		field.Time("disabled_at").Optional().Nillable().
			Comment("Set when the user was disabled: they cannot sign in, their sessions ended then."),
		field.String("totp_secret").Default("").Sensitive().
			Comment("TOTP (RFC 6238) secret in base32, sealed at rest (ent/store); empty without two-factor sign-in or before enrolment starts."),
		field.Time("totp_enabled_at").Optional().Nillable().
			Comment("When the user confirmed their TOTP enrolment with a code; null: sign-in asks no code."),
		field.Int64("totp_last_step").Default(0).
			Comment("The 30-second step of the last TOTP code accepted: a code is accepted once."),
	}
}

// Indexes of the DashboardUser.
func (DashboardUser) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id")}
}

// The roles of a dashboard user, most powerful first.
const (
	RoleOwner     = "owner"
	RoleDeveloper = "developer"
	RoleViewer    = "viewer"
)
