package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// LedgerEntry is one line of the append-only journal (server/ledger): a
// signed amount, in the coin's base units, on one account of one project
// and ticker. Every event writes a set of lines that sum to zero, in the
// database transaction of the change it records; a balance is the sum of
// an account's lines. Nothing updates or deletes a line.
type LedgerEntry struct{ ent.Schema }

// Mixin of the LedgerEntry.
func (LedgerEntry) Mixin() []ent.Mixin { return []ent.Mixin{CreateTimeMixin{}} }

// Fields of the LedgerEntry.
func (LedgerEntry) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("project_id").Immutable(),
		field.String("ticker").NotEmpty().Immutable(),
		field.Enum("event").Values("credit", "hold", "release", "plan", "send", "unplan", "bounce", "reversal", "restore", "sweep", "payout", "refund", "direct", "settle").Immutable().
			Comment("What happened: see server/ledger for the lines each event writes."),
		field.Enum("account").Values("received", "pending", "held", "outgoing", "forwarded", "fee", "network_fee", "loss", "swept", "payout", "refund", "direct", "owed", "settled").Immutable().
			Comment("Which balance the line moves."),
		field.Other("amount", decimal.Decimal{}).SchemaType(unitsType).Immutable().
			Comment("Signed amount in the coin's base units (satoshi, wei, ...)."),
		field.String("key").NotEmpty().Immutable().
			Comment("The event's idempotency key (credit:<payment>, ...): an event is journaled once."),
		field.Int64("payment_id").Optional().Nillable().Immutable(),
		field.Int64("address_id").Optional().Nillable().Immutable().
			Comment("The payhook address that holds the funds the line is about."),
		field.Int64("outbound_id").Optional().Nillable().Immutable(),
		field.Enum("hold_reason").Values(HoldNone, HoldNoWallet, HoldBelowMinimum, HoldBelowDust, HoldWrongAsset, HoldOperator, HoldLatePayment).Optional().Nillable().Immutable().
			Comment("On hold lines: why the funds are held."),
	}
}

// Indexes of the LedgerEntry.
func (LedgerEntry) Indexes() []ent.Index {
	return []ent.Index{
		// An event writes each account once: a second write of the same
		// event fails instead of counting twice.
		index.Fields("key", "account").Unique(),
		// The held funds, address by address (the operator's listing).
		// Only held lines are indexed here: every line is written once and
		// read seldom, so this index does not tax the writes of the hot
		// path (a credited and forwarded payment writes eight lines, none
		// held).
		// (SQLite keeps the predicate as written, PostgreSQL as it prints it: see TestMigrationsMatchSchema.)
		index.Fields("address_id", "id").
			Annotations(entsql.IndexWhere("account = 'held'")).
			StorageKey("ledgerentry_held_address_id_id"),
		// The accounting export (server/ledger/export) of a project and a
		// date range, in id order, on a journal that is never pruned: the
		// first finds the range's first and last ids by reading the
		// range's entries alone (an index-only scan, not the project's
		// older years), the second reads the pages between them in id
		// order, each a range scan that stops at the page's size.
		index.Fields("project_id", "created_at", "id"),
		index.Fields("project_id", "id"),
	}
}
