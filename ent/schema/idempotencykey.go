package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// IdempotencyKey records a mutating call made with an Idempotency-Key
// header (or gRPC metadata), so that a retry with the same key and body is
// answered with the stored response instead of acting twice. It is written
// before the call runs (status 0) and completed with the response after it.
// Every transaction the call commits marks the row (committed_at) inside
// itself, so a call cut off by a crash is known to have done nothing (no
// mark: a retry runs it) or something (marked: a retry is told to look it
// up).
type IdempotencyKey struct{ ent.Schema }

// Mixin of the IdempotencyKey.
func (IdempotencyKey) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the IdempotencyKey.
func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("api_key_id").Immutable().
			Comment("The key that made the call; keys are scoped per API key."),
		field.String("key").NotEmpty().MaxLen(255).Immutable().
			Comment("The client's Idempotency-Key."),
		field.String("method").NotEmpty().Immutable().
			Comment("The call: the REST method and path, or the gRPC full method."),
		field.String("request_hash").Match(sha256Hex).Immutable().
			Comment("SHA-256 of the call's method, path, query and body; another body with the same key is a 409."),
		field.Int("status").Default(0).
			Comment("The response's HTTP status; 0 while the call is in progress."),
		field.Bytes("response").Optional().
			Comment("The response body as sent."),
		field.String("content_type").Default("").
			Comment("The response's Content-Type."),
		field.Time("committed_at").Optional().Nillable().
			Comment("When the call first wrote (set in the transaction that wrote); null while it has written nothing."),
	}
}

// Indexes of the IdempotencyKey.
func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("api_key_id", "key").Unique(),
		// The garbage collector deletes keys older than a day.
		index.Fields("created_at"),
	}
}
