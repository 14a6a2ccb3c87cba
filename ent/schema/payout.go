package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Payout is one payment out of a project's payout balance in one coin, to
// the outputs of its payout requests, sent by the outbound engine as one
// transaction (UTXO chains). It is created from pending requests, queued
// (processing: its transaction is planned, its inputs taken from the
// balance in the same database transaction), and done once the network
// accepted the transaction, or error when it can never be sent (its
// inputs return to the balance).
type Payout struct{ ent.Schema }

// Mixin of the Payout.
func (Payout) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Payout.
func (Payout) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable(),
		field.Int64("api_key_id").Immutable().
			Comment("The merchant key that created it."),
		field.String("ticker").NotEmpty().Immutable(),
		field.Enum("status").Values("created", "pending_approval", "processing", "done", "error").Default("created").
			Comment("created: waiting to be queued; pending_approval: queued above the project's limits, waiting for a dashboard user's approval; processing: its transaction is planned and being sent; done: the network accepted it; error: it can never be sent (error says why)."),
		field.Other("total_requested", decimal.Decimal{}).SchemaType(moneyType).Immutable().
			Comment("The sum of its requests' amounts, in coin units."),
		field.Other("fee", decimal.Decimal{}).SchemaType(moneyType).Default(decimal.Zero).
			Comment("The operator's payout fee, set when it is queued."),
		field.Other("blockchain_fee", decimal.Decimal{}).SchemaType(moneyType).Default(decimal.Zero).
			Comment("The network's fee, set when it is queued."),
		field.String("from_address").Default("").
			Comment("The project's payout wallet, set when it is queued."),
		field.JSON("inputs", []PayoutInput{}).Optional().
			Comment("The held payments its transaction spends, set when it is queued."),
		field.Int64("outbound_id").Optional().Nillable().
			Comment("Its transaction (outbounds), once queued."),
		field.String("txid").Default(""),
		field.Text("error").Default("").
			Comment("Why it failed, for the merchant; nothing branches on it."),
		field.Text("approval_reason").Default("").
			Comment("Which limit of the project made it wait for approval."),
		field.String("approved_by").Default("").
			Comment("The dashboard user who approved it."),
		field.Time("approved_at").Optional().Nillable(),
		field.Time("queued_at").Optional().Nillable(),
		field.Time("done_at").Optional().Nillable(),
	}
}

// Indexes of the Payout.
func (Payout) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("project_id", "ticker", "status", "id"),
		index.Fields("outbound_id"),
	}
}

// PayoutInput is one held payment a payout spends, as the journal held it
// when the payout was queued.
type PayoutInput struct {
	// PaymentID and AddressID are the payment and the payhook address that
	// holds it.
	PaymentID int64 `json:"payment_id"`
	AddressID int64 `json:"address_id"`
	// Value is what the journal held of it, in coin units.
	Value decimal.Decimal `json:"value"`
	// HoldReason is why it was held: it is held again for that reason if
	// the payout fails.
	HoldReason string `json:"hold_reason"`
}

// PayoutLimit is what a project may pay out of one coin without a
// dashboard user's approval; a zero amount is no limit.
type PayoutLimit struct {
	// PerPayout bounds one payout's total requested, in coin units.
	PerPayout decimal.Decimal `json:"per_payout"`
	// PerDay bounds the total requested of the payouts queued in one UTC
	// day, in coin units.
	PerDay decimal.Decimal `json:"per_day"`
}
