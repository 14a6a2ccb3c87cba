package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Address is a deposit address handed to a merchant, with the callback and
// forwarding settings that apply to every payment it receives.
type Address struct{ ent.Schema }

// Mixin of the Address.
func (Address) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Address.
func (Address) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("api_key_id").Immutable().
			Comment("The API key that created the address."),
		field.Int64("project_id").Immutable().Annotations(entsql.Default("0")).
			Comment("Owner of the address: the key's project (the column default only serves the migration that added it)."),
		field.String("service").NotEmpty().Default("address").Immutable().
			Comment("What the address serves: address (low-level), custom (low-level with a project's merchant headers), checkout, deposit or subscription."),
		field.Int64("invoice_id").Optional().Nillable().Immutable().
			Comment("The invoice (checkout, deposit, renewal) the address was handed out for."),
		field.Other("quote_rate", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable().Immutable().
			Comment("Held exchange rate: invoice currency per coin, valid until quote_expires_at."),
		field.Other("quote_value_coin", decimal.Decimal{}).SchemaType(moneyType).Optional().Nillable().Immutable().
			Comment("Amount quoted to the customer, in coin; NULL for an open amount."),
		field.Time("quote_expires_at").Optional().Nillable().Immutable(),
		field.Time("late_hold_from").Optional().Nillable().Immutable().
			Comment("Payments detected at or after it are held (hold_reason late_payment) for a refund instead of forwarded: its checkout's expiry when the checkout's late_payments is refund; NULL otherwise."),
		field.String("ticker").NotEmpty().Immutable().
			Comment(`Coin ticker, e.g. "btc" or "trc20/usdt".`),
		field.String("family").NotEmpty().Immutable().
			Comment(`Chain family that derives and watches the address, e.g. "utxo".`),
		field.String("address_in").NotEmpty().Unique().Immutable().
			Comment("The deposit address."),
		field.Int64("derivation_index").NonNegative().Optional().Nillable().Unique().Immutable().
			Comment("HD derivation index of address_in under the operator's seed; never reused. NULL for an address of a merchant's watch-only key (watch_key_id), which payhook holds no key of."),
		field.Int64("watch_key_id").Optional().Nillable().Immutable().
			Comment("The merchant's watch-only key (watch_keys) address_in was derived from; NULL for the operator's seed. Such an address's payments are never forwarded: they are in the merchant's wallet."),
		field.Int64("watch_index").NonNegative().Optional().Nillable().Immutable().
			Comment("Receive index of address_in under its watch key (KEY/0/watch_index)."),
		field.Text("callback_url").NotEmpty().
			Comment("Final URL that callbacks are sent to."),
		field.String("callback_key").Match(sha256Hex).
			Comment("Lowercase hex SHA-256 of callback_url; makes (api_key_id, ticker, callback_url) unique."),
		field.JSON("destinations", []Destination{}).
			Comment("Forwarding targets and their shares."),
		field.Bool("post").Default(false).
			Comment("Send callbacks as POST instead of GET."),
		field.Bool("json").Default(false).
			Comment("With post: send a JSON body instead of a form."),
		field.Bool("convert").Default(false).
			Comment("Include fiat conversion values in callbacks."),
		field.JSON("custom_params", []Param{}).Default(func() []Param { return []Param{} }).
			Comment("Merchant parameters echoed back in callbacks, in order."),
		field.Int32("required_confirmations").NonNegative().
			Comment("Depth at which a payment counts as confirmed."),
		field.String("priority").NotEmpty().Default("default").
			Comment("Forwarding fee priority."),
		field.Bool("multi_token").Default(false).Immutable().
			Comment("multi_token=1 at creation: another asset of the address's chain (a token sent to an ETH address) is credited and notified under its own ticker; otherwise it is held as wrong_asset."),
		field.Bool("multi_chain").Default(false).Immutable().
			Comment("multi_chain=1 at creation (EVM): the address is watched on every EVM chain the operator runs; a payment there is credited under that chain's ticker."),
	}
}

// Edges of the Address.
func (Address) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("api_key", APIKey.Type).Ref("addresses").
			Field("api_key_id").Unique().Required().Immutable(),
		edge.To("payments", Payment.Type),
	}
}

// Indexes of the Address.
func (Address) Indexes() []ent.Index {
	return []ent.Index{
		// One address per (project, coin, callback; an invoice's addresses
		// use the invoice as their callback key): the unique index is the
		// one a create looks up by, so concurrent creates through any of a
		// project's keys, or its hosted pages, settle on one address. Its
		// prefix also serves the project's per-coin listings.
		index.Fields("project_id", "ticker", "callback_key").Unique(),
		index.Fields("invoice_id"),
		// Each index of a merchant's key is handed out once.
		index.Fields("watch_key_id", "watch_index").Unique(),
	}
}
