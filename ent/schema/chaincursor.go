package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// ChainCursor is a chain watcher's durable position: the last block height
// it scanned for a ticker, so it catches up after a restart.
type ChainCursor struct{ ent.Schema }

// Mixin of the ChainCursor.
func (ChainCursor) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the ChainCursor.
func (ChainCursor) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("ticker").NotEmpty().Unique().Immutable(),
		field.Int64("height").NonNegative().Default(0),
	}
}
