package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// PayoutRequest is a merchant's request that the operator send an amount of
// a coin to an address (this API family's `/{ticker}/payout/`). It is only
// recorded: nothing is sent automatically, the operator fulfils it by hand
// from the funds payhook holds for the merchant.
type PayoutRequest struct{ ent.Schema }

// Mixin of the PayoutRequest.
func (PayoutRequest) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the PayoutRequest.
func (PayoutRequest) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("api_key_id").Immutable().
			Comment("The merchant key that asked."),
		field.String("uuid").NotEmpty().Unique().Immutable().
			Comment("Public id of the request."),
		field.String("ticker").NotEmpty().Immutable(),
		field.String("address").NotEmpty().Immutable().
			Comment("Destination, valid for the ticker's network."),
		field.Other("value", decimal.Decimal{}).SchemaType(moneyType).Immutable().
			Comment("Amount in coin units."),
		field.Enum("status").Values("requested").Default("requested").
			Comment("requested: recorded, not yet handled by the operator."),
	}
}

// Edges of the PayoutRequest.
func (PayoutRequest) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("api_key", APIKey.Type).Field("api_key_id").Unique().Required().Immutable(),
	}
}

// Indexes of the PayoutRequest.
func (PayoutRequest) Indexes() []ent.Index {
	return []ent.Index{index.Fields("api_key_id", "created_at")}
}
