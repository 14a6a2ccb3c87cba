package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Invoice is what a customer pays in the merchant interface: a checkout (a
// fixed or open amount with an expiry), a deposit (any amount, any number of
// payments, no expiry) or one renewal of a subscription. Its payments arrive
// on addresses handed out for it, one per coin (Address.invoice_id).
type Invoice struct{ ent.Schema }

// Mixin of the Invoice.
func (Invoice) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Invoice.
func (Invoice) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable(),
		field.String("public_id").NotEmpty().Unique().Immutable().
			Comment("payment_id (checkout, deposit) as the merchant knows it."),
		field.Enum("kind").Values("checkout", "deposit", "subscription").Immutable(),
		field.String("email").Default("").Immutable().
			Comment("The payer's email for a receipt (the request's email parameter); empty sends none."),
		field.Text("notify_url").Immutable().
			Comment("Webhook URL; empty sends no webhooks."),
		field.Text("redirect_url").Default("").Immutable(),
		field.String("currency").NotEmpty().Immutable().
			Comment("Fiat currency of value and of the fiat amounts of webhooks."),
		field.Other("value", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable().Immutable().
			Comment("Requested fiat amount; NULL for an open amount (and for deposits)."),
		field.Text("item_description").Default("").Immutable(),
		field.Time("expires_at").Optional().Nillable().Immutable().
			Comment("After it no new address is handed out and an unpaid invoice is expired; payments still count."),
		field.Bool("post").Default(false).Immutable(),
		field.Bool("json").Default(false).Immutable(),
		field.Bool("convert").Default(false).Immutable(),
		field.String("success_token").Default("").Immutable().
			Comment("Shown to the customer's browser on success; the merchant matches it."),
		field.Int64("subscription_id").Optional().Nillable().Immutable().
			Comment("The subscription a renewal invoice belongs to."),
		field.String("option").Default("").Immutable().
			Comment("A renewal's plan option period (e.g. 1m)."),
		field.Enum("status").Values("waiting", "pending", "partial", "paid", "expired").Default("waiting").
			Comment("invoice_status: waiting (nothing seen), pending (seen, not confirmed), partial (confirmed below value), paid, expired (unpaid at expiry)."),
		field.Time("paid_at").Optional().Nillable().
			Comment("When status became paid."),
		field.Other("underpaid_tolerance", decimal.Decimal{}).SchemaType(moneyType).Default(decimal.Zero).
			Annotations(entsql.Default("0")).Immutable().
			Comment("Percent of value the confirmed payments may lack and the invoice still be paid (the request's, else the project's at creation)."),
		field.Enum("late_payments").Values(LateCredit, LateRefund).Default(LateCredit).Immutable().
			Comment("Policy for payments detected after expires_at: credit, or refund (held for a refund; see Payment.hold_reason late_payment)."),
	}
}

// Indexes of the Invoice.
func (Invoice) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("project_id", "kind", "created_at"),
		index.Fields("subscription_id"),
	}
}
