package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SigningKey is a key pair used to sign callbacks. Each project has its own
// (project_id); project_id 0 is the server's key, which signs the callbacks
// of the default project until its operator gives it its own. The active key
// of an owner signs; a key replaced by a rotation is kept, inactive, and its
// public half is still published until previous_until.
type SigningKey struct{ ent.Schema }

// Mixin of the SigningKey.
func (SigningKey) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the SigningKey.
func (SigningKey) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("algorithm").NotEmpty().
			Comment(`Signature algorithm, e.g. "rsa-sha256".`),
		field.Text("private_pem").Sensitive().NotEmpty().
			Comment("PEM-encoded private key; never printed or serialised by the generated code."),
		field.Text("public_pem").NotEmpty().
			Comment("PEM-encoded public key, published to merchants."),
		field.Bool("active").Default(false),
		field.Int64("project_id").Default(0).
			Comment("The project whose callbacks the key signs; 0 is the server's key."),
		field.Time("previous_until").Optional().Nillable().
			Comment("For a key replaced by a rotation: until when its public half is still published beside the new one."),
	}
}

// Indexes of the SigningKey.
func (SigningKey) Indexes() []ent.Index {
	return []ent.Index{
		// A callback's signer reads its project's active key.
		index.Fields("project_id", "active"),
	}
}
