package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

// Outbound is one outgoing transaction of the outbound engine
// (server/outbound): a forward of payments today, and payouts, refunds and
// sweeps. It is planned (its inputs and outputs recorded, checked against
// the network's minimums), then signed and its bytes recorded before the
// first send, then sent, then followed until a block executes it. One
// Outbound is one transaction: it is never signed twice. When the network
// can never accept what was signed (an expired blockhash, a transaction
// that failed without moving funds) it is replaced by a new Outbound with
// the same content, which the allocations that named it move to.
type Outbound struct{ ent.Schema }

// Mixin of the Outbound.
func (Outbound) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Outbound.
func (Outbound) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("key").NotEmpty().Unique().Immutable().
			Comment("Idempotency key of the transaction: the caller's, plus #N for the N-th replacement."),
		field.String("ticker").NotEmpty().Immutable(),
		field.Enum("purpose").Values("forward", "sweep", "payout", "refund", "payout_psbt").Immutable().
			Comment("Which caller planned it; the caller completes its own records when it is sent. payout_psbt: a payout from a merchant's watch-only key, signed by the merchant (psbt)."),
		field.Int64("project_id").Default(0).Immutable().
			Comment("The project whose funds it moves; 0 for the operator's own."),
		field.String("from_address").NotEmpty().Immutable().
			Comment("The payhook address the funds leave (payout_psbt: the merchant's key, psbt:<watch key id>)."),
		field.Int64("from_index").NonNegative().Immutable().
			Comment("Derivation index of from_address's key."),
		field.JSON("inputs", []Transfer{}).Immutable().
			Comment("The incoming transfers it spends (UTXO) or whose balance it moves."),
		field.JSON("outputs", []Output{}).Immutable().
			Comment("Destinations and amounts, exactly as planned and checked; a destination may appear once."),
		field.Other("network_fee", decimal.Decimal{}).SchemaType(moneyType).Immutable().
			Comment("What the plan set aside for the network's fee, in coin units."),
		field.Int("gas_percent").Default(0).Immutable().
			Comment("An EVM transaction's gas price as a percent of the node's (its address's priority); 0 for the node's own."),
		field.Enum("state").Values("planned", "awaiting_signature", "signed", "sent", "landed", "failed", "replaced").Default("planned").
			Comment("planned: recorded, nothing signed; awaiting_signature: its psbt waits for the merchant's signature (nothing here can sign it); signed: bytes recorded (maybe sent); sent: the network accepted it; landed: a block executed it; failed: a block included it and it failed, or it can never be signed as planned (an operator must look); replaced: it can never land and a new Outbound carries its content."),
		field.Bytes("psbt").Optional().Nillable().Immutable().
			Comment("payout_psbt: the unsigned PSBT (BIP 174) as prepared; the merchant's signed one must pay exactly what it does."),
		field.Bytes("signed_tx").Optional().Nillable().
			Comment("The signed transaction(s), recorded before the first send; sent again, never re-signed."),
		field.String("txid").Default("").
			Comment("Hash of the signed transaction, once signed."),
		field.Int32("sends").NonNegative().Default(0).
			Comment("How many times it was handed to the network."),
		field.Text("last_error").Default("").
			Comment("The last failure to sign or send, for the operator; nothing branches on it."),
		field.Int64("replaces_id").Optional().Nillable().Immutable().
			Comment("The Outbound this one replaces."),
		field.Time("sent_at").Optional().Nillable(),
		field.Time("landed_at").Optional().Nillable(),
	}
}

// Edges of the Outbound.
func (Outbound) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("forwards", Forward.Type),
	}
}

// Indexes of the Outbound.
func (Outbound) Indexes() []ent.Index {
	return []ent.Index{
		// The engine resumes and follows the open transactions of a ticker.
		index.Fields("ticker", "state"),
		// A payout wallet's credited payment is matched to the sweep that
		// brought it, by transaction hash (server/merchant/payout).
		index.Fields("ticker", "txid"),
	}
}
