package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// ChainBlock is a block a chain watcher has processed: its height and hash.
// The next poll compares the stored hashes with the chain's to notice a
// reorganisation and walk back to the common ancestor. Only the newest
// blocks of each ticker are kept.
type ChainBlock struct{ ent.Schema }

// Fields of the ChainBlock.
func (ChainBlock) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("ticker").NotEmpty().Immutable(),
		field.Int64("height").Positive().Immutable(),
		field.String("hash").NotEmpty().Immutable(),
	}
}

// Indexes of the ChainBlock.
func (ChainBlock) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("ticker", "height").Unique(),
	}
}

// WatchedTransfer is a transfer to a payment address that a chain watcher
// still follows: the block height that includes it and the chain height at
// which it must be looked at again (its depth reaches a value that changes
// something: the next confirmation count of a pending payment, the TRON
// distribution depth, a Solana commitment). A poll reads the transfers that
// are due, never every open payment. A transfer with nothing left to wait
// for keeps its row (due empty) while its block is among the newest, so a
// reorganisation finds the payments it touches.
type WatchedTransfer struct{ ent.Schema }

// Fields of the WatchedTransfer.
func (WatchedTransfer) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("ticker").NotEmpty().Immutable(),
		field.String("address_in").NotEmpty().Immutable(),
		field.String("txid").NotEmpty().Immutable(),
		field.Int64("output_index").NonNegative().Default(0).Immutable(),
		field.Other("value_coin", decimal.Decimal{}).SchemaType(moneyType).Immutable(),
		field.Int64("height").NonNegative().Default(0).
			Comment("Block height that includes the transfer; 0 while unknown (its block was reorganised away)."),
		field.Int64("due").Optional().Nillable().
			Comment("Chain height at which the transfer is evaluated again; empty when nothing is left to wait for."),
		field.Int64("payment_id").Optional().Nillable().
			Comment("The payment recorded for the transfer, once there is one."),
	}
}

// Indexes of the WatchedTransfer.
func (WatchedTransfer) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("ticker", "address_in", "txid", "output_index").Unique(),
		index.Fields("ticker", "due"),
		index.Fields("ticker", "height"),
		index.Fields("payment_id"),
	}
}
