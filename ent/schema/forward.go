package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Forward is the distribution of one payment to the merchant's wallets (or,
// Held, the record that its funds stay on the payment address): its share
// of an outgoing transaction (Outbound), which carries one payment's forward
// or a merchant address's group. It is recorded with its Outbound, in the
// transaction that plans them; the outbound engine signs, records, sends and
// follows the transaction, and the forward is done once it is sent. At most
// one Forward exists per payment.
type Forward struct{ ent.Schema }

// Mixin of the Forward.
func (Forward) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Forward.
func (Forward) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("payment_id").Unique().Immutable(),
		field.String("intent_id").NotEmpty().Unique().Immutable().
			Comment("Idempotency key of the broadcast."),
		field.Enum("status").Values("intent", "done").Default("intent"),
		field.JSON("outputs", []Output{}).Immutable(),
		field.Other("fee_coin", decimal.Decimal{}).SchemaType(moneyType).Immutable(),
		field.Other("network_fee", decimal.Decimal{}).SchemaType(moneyType).Immutable(),
		field.Other("value_forwarded_coin", decimal.Decimal{}).SchemaType(moneyType).Immutable(),
		field.String("txid_out").Default("").
			Comment("Hash of its Outbound's transaction, once sent."),
		field.Int64("outbound_id").Optional().Nillable().
			Comment("The outgoing transaction that carries it; NULL when held."),
		field.Bool("held").Default(false).Immutable().
			Comment("No forwarding address: the funds stay on the payment address, in the operator's wallet, until swept (payhook funds lists them); no transaction, no outputs."),
	}
}

// Edges of the Forward.
func (Forward) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("payment", Payment.Type).Ref("forward").
			Field("payment_id").Unique().Required().Immutable(),
		edge.From("outbound", Outbound.Type).Ref("forwards").
			Field("outbound_id").Unique(),
	}
}

// Indexes of the Forward.
func (Forward) Indexes() []ent.Index {
	return []ent.Index{
		// The outbound engine's forwarding handler finds the forwards of a
		// transaction it sent or replaced.
		index.Fields("outbound_id"),
	}
}
