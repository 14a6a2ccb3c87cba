package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// WatchKey is a merchant's watch-only key (chains/watchonly): an extended
// public key or output descriptor from which payhook derives a project's
// payment addresses, instead of from the operator's seed, for the tickers
// the project's watch_keys map to it. Payments to them land in the
// merchant's own wallet and are never forwarded. The key's receive indexes
// are handed out once each, in order, whichever of its tickers asks (an
// EVM key serves eth and its tokens from one sequence); a key set again
// continues where it stopped.
type WatchKey struct{ ent.Schema }

// Mixin of the WatchKey.
func (WatchKey) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the WatchKey.
func (WatchKey) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable().
			Comment("The project the key belongs to: a key is one project's, so no two projects hand out the same address."),
		field.Text("space").NotEmpty().Unique().Immutable().
			Comment("The key's address space (watchonly.Key.Space: its script and account key, without origin or checksum): two spellings of one key are one row."),
		field.Text("descriptor").NotEmpty().
			Comment("The key in canonical form as last set (watchonly.Key.Descriptor: a descriptor with its checksum; an EVM account xpub): what the merchant's wallet imports."),
		field.Int64("next_index").NonNegative().Default(0).
			Comment("The next receive index to hand out (KEY/0/next_index); only grows."),
		field.Int64("next_change").NonNegative().Default(0).
			Comment("The next change index a PSBT payout's change goes to (KEY/1/next_change); only grows."),
		field.Int32("gap_limit").Positive().Default(20).
			Comment("How many unused addresses in a row the merchant's wallet scans past its last used one; payhook reports when its addresses outrun it."),
	}
}
