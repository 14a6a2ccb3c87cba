package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// PayoutRequest is a merchant's request to send an amount of a coin to an
// address from the project's payout balance (this API family's
// `/{ticker}/payout/request/bulk/` and the older `/{ticker}/payout/`). It
// waits (pending) until a payout takes it (processing), and is done when
// that payout's transaction is sent; a payout that fails rejects it.
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
		field.Int64("project_id").Immutable().Annotations(entsql.Default("0")).
			Comment("The project whose balance pays it: the key's project."),
		field.Enum("status").Values("pending", "rejected", "processing", "done").Default("pending").
			Comment("pending: waiting for a payout; processing: in a payout not sent yet; done: sent; rejected: its payout failed."),
		field.Int64("payout_id").Optional().Nillable().
			Comment("The payout that carries it."),
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
	return []ent.Index{
		index.Fields("api_key_id", "created_at"),
		// A project's requests of a coin by status, in order (the list
		// endpoint, payout creation).
		index.Fields("project_id", "ticker", "status", "id"),
		index.Fields("payout_id"),
	}
}
