package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// SigningKey is a key pair used to sign callbacks. The active key signs; older
// keys are kept so that their public halves can still be published.
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
	}
}
