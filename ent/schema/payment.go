package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Payment is one incoming transaction output to an Address and what became
// of it: its depth, and the forwarding transaction once it is sent.
type Payment struct{ ent.Schema }

// Mixin of the Payment.
func (Payment) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Payment.
func (Payment) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("address_id").Immutable(),
		field.Int64("api_key_id").Immutable().
			Comment("Owner, copied from the address so listings filter without a join."),
		field.String("ticker").Default("").Immutable().
			Comment("Ticker of the address, copied so a chain watcher finds the payments it tracks."),
		field.String("txid_in").NotEmpty().Immutable().
			Comment("Incoming transaction id."),
		field.Int64("output_index").NonNegative().Default(0).Immutable().
			Comment("Output (vout, log index) within txid_in; 0 for account chains."),
		field.Other("value_coin", decimal.Decimal{}).SchemaType(moneyType).
			Comment("Amount received, in coin units."),
		field.Int64("confirmations").NonNegative().Default(0),
		field.Enum("status").Values("pending", "confirmed", "completed", "dropped", "reverted").Default("pending").
			Comment("Callback statuses pending, confirmed, completed; dropped (left the chain before credit) and reverted (execution failed) send no callback."),
		field.Text("note").Default("").
			Comment("What the logs say beyond the status, for people only: no code decides anything on it (the typed columns below do)."),
		field.Enum("hold_reason").Values(HoldNone, HoldNoWallet, HoldBelowMinimum, HoldBelowDust, HoldWrongAsset, HoldOperator, HoldLatePayment).Default(HoldNone).
			Comment("Why the funds are held instead of forwarded: none; no_wallet (the address has no forwarding destination); below_minimum (below the coin's minimum, or the fees would consume it); below_dust (an output of its split is below what the network carries); wrong_asset; operator_hold; late_payment (paid a checkout after its expiry under the refund policy: held for a refund). The ledger's held balance holds the payments with a reason."),
		field.Bool("reorged").Default(false).
			Comment("The payment left the chain after it was credited and has not come back (a reorganisation); credit is not reversed, the ledger records the loss."),
		field.Int64("reorg_count").NonNegative().Default(0).
			Comment("How many times the payment left the chain after it was credited; numbers the ledger's reversal entries."),
		field.String("txid_out").Optional().
			Comment("Forwarding transaction id, once sent."),
		field.Other("value_forwarded_coin", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable(),
		field.Other("fee_coin", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable(),
		field.Other("network_fee", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable(),
		field.Other("value_fiat", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable().
			Comment("Incoming fiat of a merchant payment in its invoice's currency, valued once when detected; NULL when unknown."),
		field.Time("credited_at").Optional().Nillable(),
		field.Time("forwarded_at").Optional().Nillable(),
	}
}

// Edges of the Payment.
func (Payment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("address", Address.Type).Ref("payments").
			Field("address_id").Unique().Required().Immutable(),
		edge.From("api_key", APIKey.Type).Ref("payments").
			Field("api_key_id").Unique().Required().Immutable(),
		edge.To("forward", Forward.Type).Unique(),
	}
}

// Indexes of the Payment.
func (Payment) Indexes() []ent.Index {
	return []ent.Index{
		// A chain observation is applied at most once per output.
		index.Fields("address_id", "txid_in", "output_index").Unique(),
		index.Fields("api_key_id", "created_at"),
		// A watcher re-reads the payments of its ticker that are not final.
		index.Fields("ticker", "status"),
	}
}
