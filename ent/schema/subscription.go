package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PlanOption is one plan of a subscription: a period and its price.
type PlanOption struct {
	// Period is a count and a unit: d, w, m or y ("1m", "12m").
	Period string `json:"period"`
	// Value is the price in the subscription's currency, a decimal string.
	Value string `json:"value"`
}

// Subscription is a customer's recurring plan in a project: each renewal
// is an invoice, and a paid renewal extends expires_at by its option's
// period.
type Subscription struct{ ent.Schema }

// Mixin of the Subscription.
func (Subscription) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Subscription.
func (Subscription) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable(),
		field.String("token").NotEmpty().Unique().Immutable(),
		field.Text("notify_url").Immutable(),
		field.String("currency").NotEmpty().Immutable(),
		field.JSON("options", []PlanOption{}).Immutable(),
		field.Text("customer").Default("").Immutable(),
		field.Bool("post").Default(false).Immutable(),
		field.Bool("json").Default(false).Immutable(),
		field.Time("expires_at").Optional().Nillable().
			Comment("End of the paid period; NULL until the first renewal is paid."),
	}
}

// Indexes of the Subscription.
func (Subscription) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "created_at")}
}
