package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"github.com/shopspring/decimal"
)

// Forward is the distribution of one payment to the merchant's wallets (or,
// Held, the record that its funds stay on the payment address). It is
// recorded as an intent, then its signed transaction is recorded
// (signed_tx, txid_out) before it is sent, and it is marked done after, so a
// crash at any point is reconciled by sending the same bytes again (or, if
// nothing was recorded, signing anew: nothing was sent) instead of paying
// twice. At most one Forward exists per payment.
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
		field.String("txid_out").Default(""),
		field.Time("landed_at").Optional().Nillable().
			Comment("When the watcher saw the sent transaction executed in a block; until then it is sent again at each poll (a node may drop what it accepted)."),
		field.Bytes("signed_tx").Optional().Nillable().
			Comment("The signed forwarding transaction(s), recorded before the first send; every forward of one transaction holds the same bytes."),
		field.Bool("held").Default(false).Immutable().
			Comment("No forwarding address: the funds stay on the payment address, in the operator's wallet, until swept (payhook funds lists them); no transaction, no outputs."),
	}
}

// Edges of the Forward.
func (Forward) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("payment", Payment.Type).Ref("forward").
			Field("payment_id").Unique().Required().Immutable(),
	}
}
