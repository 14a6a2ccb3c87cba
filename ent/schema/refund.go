package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Refund sends part or all of an invoice payment (a checkout's or a
// deposit's) back to an address the merchant or the payer gives. It is
// paid by a payout of the project's balance (server/merchant/payout) that
// carries one request, so limits, approval, fees and the journal are the
// payouts'; the refund follows its payout: processing while it is queued
// or sent, completed when it is done, failed when it fails.
type Refund struct{ ent.Schema }

// Mixin of the Refund.
func (Refund) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Refund.
func (Refund) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("uuid").NotEmpty().Unique().Immutable().
			Comment("refund_id as the merchant knows it."),
		field.Int64("project_id").Immutable(),
		field.Int64("invoice_id").Immutable().
			Comment("The checkout or deposit whose payment it refunds."),
		field.Int64("payment_id").Immutable().
			Comment("The payment it refunds (its txid_in)."),
		field.String("ticker").NotEmpty().Immutable(),
		field.String("address").NotEmpty().Immutable().
			Comment("Where the refund is sent."),
		field.Other("value", decimal.Decimal{}).SchemaType(moneyType).Immutable().
			Comment("The amount refunded, in coin units."),
		field.Enum("status").Values("requested", "pending", "completed", "failed").Default("pending").
			Comment("requested: the payer asked for it on the hosted page, the merchant has not approved it; pending: its payout is queued, waits for approval or is being sent; completed: the network accepted it; failed: it can never be sent (error says why)."),
		field.String("reason").Default("").
			Comment("Why the payer may ask for it (overpaid, expired, late); empty for the merchant's own refunds."),
		field.String("approved_by").Default("").
			Comment("Who approved a requested refund: a dashboard user, the merchant's API key, or auto."),
		field.Int64("payout_id").Optional().Nillable().
			Comment("The payout that pays it."),
		field.String("txid").Default(""),
		field.Text("error").Default("").
			Comment("Why it failed, for the merchant; nothing branches on it."),
	}
}

// Indexes of the Refund.
func (Refund) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("payment_id"),
		index.Fields("payout_id"),
		index.Fields("project_id", "id"),
	}
}
