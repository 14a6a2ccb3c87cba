package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// PriceQuote is the last known good price of a coin in a fiat currency: the
// median of the providers that answered, kept so that a restart without
// network access still knows a price and its age.
type PriceQuote struct{ ent.Schema }

// Fields of the PriceQuote.
func (PriceQuote) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("coin").NotEmpty().
			Comment("The coin's ticker, lowercase (btc, eth, usdt)."),
		field.String("currency").NotEmpty().
			Comment("ISO 4217 code, uppercase."),
		field.Other("price", decimal.Decimal{}).SchemaType(moneyType).
			Comment("One coin in currency."),
		field.JSON("sources", []string{}).Default([]string{}).
			Comment("The providers whose answers made the median."),
		field.Time("fetched_at").
			Comment("When the providers answered."),
	}
}

// Indexes of the PriceQuote.
func (PriceQuote) Indexes() []ent.Index {
	return []ent.Index{index.Fields("coin", "currency").Unique()}
}
