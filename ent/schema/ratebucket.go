package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// RateBucket is one token bucket of the request limits and quotas, kept in
// the database so that every instance draws from the same bucket. A request
// takes a token in one statement (an upsert that refills by the time passed
// and takes one when there is one), so instances never race.
type RateBucket struct{ ent.Schema }

// Fields of the RateBucket.
func (RateBucket) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("key").NotEmpty().Unique().
			Comment(`What the bucket limits, e.g. "key:12", "net:203.0.113.0/24", "test:7".`),
		field.Float("tokens").
			Comment("Tokens left at updated_at."),
		field.Time("updated_at").
			Comment("When tokens was last computed; the refill since then is added at the next take."),
	}
}
