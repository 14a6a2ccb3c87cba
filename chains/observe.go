package chains

import (
	"context"

	"github.com/shopspring/decimal"
)

// Commitment is a Solana commitment level; other families leave it at
// CommitmentNone.
type Commitment int

// Solana commitment levels, weakest first.
const (
	CommitmentNone Commitment = iota
	CommitmentProcessed
	CommitmentConfirmed
	CommitmentFinalized
)

// String returns the level's name as Solana spells it.
func (c Commitment) String() string {
	switch c {
	case CommitmentProcessed:
		return "processed"
	case CommitmentConfirmed:
		return "confirmed"
	case CommitmentFinalized:
		return "finalized"
	}
	return "none"
}

// Transfer is value that a transaction moves to an address: one UTXO output,
// one token Transfer log, or one native transfer. (TxID, Index) identifies
// it; each is one payment.
type Transfer struct {
	// TxID is the transaction hash.
	TxID string
	// Index is the output index (UTXO), log index (EVM and TRON tokens) or
	// instruction index (Solana); 0 for a native EVM/TRON value transfer.
	Index int64
	// To is the receiving address.
	To string
	// Value is the amount in coin units.
	Value decimal.Decimal
	// Height is the block (or slot) that includes the transaction.
	Height int64
	// BlockHash is the hash of the block at Height that includes the
	// transaction, so a watcher can tell that the transfers it read belong
	// to the blocks whose hashes it stores.
	BlockHash string
}

// TxState is what the chain shows of a transaction now.
type TxState struct {
	// Present is false once the transaction has left the chain (a
	// reorganisation dropped it and it was not included again).
	Present bool
	// Confirmations is the depth: 1 when in the newest block, 0 when not in a
	// block.
	Confirmations int64
	// Executed reports a successful execution: a successful receipt and, for
	// tokens, a Transfer log of the token to the address. Always true for UTXO
	// and Solana transfers the backend reports.
	Executed bool
	// Solidified reports (TRON) that the block is at or below the solidified
	// head, i.e. the receipt is final.
	Solidified bool
	// Commitment is the Solana commitment level reached.
	Commitment Commitment
}

// Observation is a transfer and its current state, as a watcher hands it to
// the payment code.
type Observation struct {
	Transfer
	State TxState
}

// Head is the chain's tip.
type Head struct {
	// Height is the newest block (slot) height.
	Height int64
	// Solidified is TRON's solidified (irreversible) height; equal to Height
	// elsewhere.
	Solidified int64
	// Hash is the tip's block hash ("" before the first block). A watcher
	// whose stored tip has the same height and hash knows nothing changed.
	Hash string
}

// Block identifies one block (slot) of the chain and links it to its
// parent. A block's hash commits to its parent's, as on every real chain: a
// block whose hash a watcher stored is unchanged, and so are all blocks
// below it. That is how a watcher finds where a reorganisation started.
type Block struct {
	// Height is the block's height (slot).
	Height int64
	// Hash is the block's hash.
	Hash string
	// Parent is the hash of the block at Height-1; "" for the first block.
	Parent string
}

// Output is one forwarding destination and amount.
type Output struct {
	Address string
	Amount  decimal.Decimal
	// Key is the derivation index of Address when it is a payhook address
	// (a sweep into a project's payout wallet): a remote signer's policy
	// counts money paid back to the seed's own keys as staying, once it has
	// derived the address itself. Nil for anyone else's address.
	Key *uint32
}

// Forward is a distribution transaction to sign and send: the payments'
// funds, less fees, from address_in to the merchant's wallets.
type Forward struct {
	// ID is the forwarding intent's identifier (unique per transaction).
	ID string
	// From is the payment address the funds leave.
	From string
	// FromIndex is From's derivation index: the backend signs with the key
	// chains.Keys derives for it.
	FromIndex uint32
	// Inputs are the payments whose funds the forward moves. A UTXO
	// backend spends exactly these outputs; account backends use them to
	// check the balance.
	Inputs []Transfer
	// Outputs are the destinations and the amounts they receive, exactly.
	Outputs []Output
	// NetworkFee is what the plan set aside for network costs, in coin
	// units. A UTXO backend pays exactly this fee and returns the rest of
	// the inputs (the service fee) to the operator's address; an EVM or
	// TRON native forward pays its gas from what stays on From.
	NetworkFee decimal.Decimal
	// Keys are the derivation indexes of the payhook addresses, other than
	// From, whose outputs Inputs spend (by Inputs[i].To): a UTXO payout
	// spends the held outputs of several addresses in one transaction.
	// Nil when every input is on From. A UTXO backend signs each input
	// with its address's key and refuses an input on an address that is
	// neither From nor in Keys; account-chain backends, whose transactions
	// leave one account, refuse any input on another address.
	Keys map[string]uint32
	// Purpose is what the transaction is for (PurposeForward, ...) and
	// ProjectID whose funds it moves (0: the operator's): the context a
	// Signer's policy reads (SignContext).
	Purpose   string
	ProjectID int64
	// GasPercent is the gas price an EVM backend offers, as a percent of
	// the node's (the payment address's priority, chains.Priority); 0 (or
	// 100) for the node's own. Other families ignore it: a UTXO fee is
	// NetworkFee, planned at the priority's confirmation target.
	GasPercent int
}

// KeyOf returns the derivation index of the key that controls address
// addr in f: FromIndex for From, Keys[addr] for another input address.
func (f Forward) KeyOf(addr string) (uint32, bool) {
	if addr == f.From {
		return f.FromIndex, true
	}
	i, ok := f.Keys[addr]
	return i, ok
}

// FeeQuoter is implemented by backends whose network fee depends on the
// transaction's size (UTXO): FeeFor quotes, in coin units, the fee of a
// transaction spending inputs outputs into outputs outputs, at the rate
// NetworkFee uses, and never below what the network relays. A planner of
// transactions of other shapes than a forward's (a payout of many outputs)
// asks it; backends without it charge NetworkFee whatever the size.
type FeeQuoter interface {
	FeeFor(ctx context.Context, inputs, outputs int) (decimal.Decimal, error)
}

// Signed is a forwarding transaction, signed: payhook records it before it
// is sent, and after a crash sends the same bytes again, so a forward is
// never paid twice.
type Signed struct {
	// TxID is the hash reported as txid_out ("" when the network gives
	// none). When Raw holds several transactions (an EVM token forward
	// with its gas top-up), the one that pays the destinations.
	TxID string
	// Raw is the backend's serialised transaction(s), opaque to payhook.
	Raw []byte
}

// Backend is one chain as payhook sees it: the devnet simulator, or a node's
// RPC. Watchers poll it; the forwarding code signs and sends through it.
type Backend interface {
	// Head returns the tip.
	Head(ctx context.Context) (Head, error)
	// Transfers returns the transfers in blocks after `after` up to and
	// including `upTo`, to the addresses watched reports true for.
	Transfers(ctx context.Context, after, upTo int64, watched func(address string) bool) ([]Transfer, error)
	// Blocks returns the blocks after `after` up to and including `upTo`, in
	// height order, with their hashes and their parents' hashes.
	Blocks(ctx context.Context, after, upTo int64) ([]Block, error)
	// State returns what the chain shows now of a transfer's transaction.
	State(ctx context.Context, t Transfer) (TxState, error)
	// NetworkFee estimates the network cost of forwarding, in coin units.
	NetworkFee(ctx context.Context) (decimal.Decimal, error)
	// Sign builds and signs f without sending it. It validates f (addresses
	// of the backend's network, amounts in whole base units, inputs that
	// cover outputs and fee) and errors wrap ErrInvalidForward when f is
	// wrong, so the caller does not retry it unchanged.
	Sign(ctx context.Context, f Forward) (Signed, error)
	// Send broadcasts s. It is idempotent: sending bytes the network
	// already has (in its mempool or in a block) succeeds.
	Send(ctx context.Context, s Signed) error
}

// AddressWatcher is implemented by backends that must know the watched
// addresses themselves, because their node is asked per address (Solana's
// getSignaturesForAddress). The watcher calls Watch with every address it
// loads, before the Transfers call that may need it; Transfers still
// filters with its watched function.
type AddressWatcher interface {
	Watch(addresses ...string)
}

// OfflineSigner is implemented by backends whose Sign needs nothing but
// the keys they hold: no node, no network, no wait (the devnet; a UTXO
// node backend, which builds and signs with its own keys). The outbound
// engine signs their transactions as it plans them, and records the bytes
// in the planning transaction instead of a database transaction of its
// own. A backend that asks a node or a remote signer does not implement
// it, or answers false.
type OfflineSigner interface {
	SignsOffline() bool
}

// SignsOffline reports whether b is an OfflineSigner that answers true.
func SignsOffline(b Backend) bool {
	o, ok := b.(OfflineSigner)
	return ok && o.SignsOffline()
}

// NodeInfo is what a node says of itself.
type NodeInfo struct {
	// Network is the node's network as the node names it ("regtest",
	// "main", a chain id such as "31337").
	Network string
	// Version is the node's software and version, when it says.
	Version string
	// Height is the node's tip.
	Height int64
}

// Prober is implemented by node backends: Probe asks the node who it is
// and errors (wrapping ErrWrongNetwork) when the node's network is not the
// ticker's Net, so that payhook never derives mainnet addresses against a
// regtest node or the reverse.
type Prober interface {
	Probe(ctx context.Context) (NodeInfo, error)
}

// Ephemeral is implemented by backends whose chain lives only as long as
// the process (the devnet, in memory with a random seed): a restarted
// server finds a new chain, so blocks it stored that the chain does not
// have are a reset, not a reorganisation.
type Ephemeral interface {
	// Ephemeral reports that the chain starts anew with every process.
	Ephemeral() bool
}

// Status is a payment's lifecycle status.
type Status string

// Payment statuses. Pending, Confirmed and Completed are the callback
// statuses; the others are recorded in the logs and send no callback.
const (
	StatusNone      Status = ""
	StatusPending   Status = "pending"
	StatusConfirmed Status = "confirmed"
	StatusCompleted Status = "completed"
	// StatusDropped: the transaction left the chain before it was credited.
	StatusDropped Status = "dropped"
	// StatusReverted: the transaction's execution failed; never credited.
	StatusReverted Status = "reverted"
)

// PaymentState is what payhook has recorded of a payment.
type PaymentState struct {
	// Status is the recorded status (StatusNone for a new transfer).
	Status Status
	// Confirmations is the highest depth recorded.
	Confirmations int64
}

// Step is the rules' verdict on one observation.
type Step struct {
	// Status is the payment's status after the observation. It never
	// regresses: a completed or confirmed payment stays so.
	Status Status
	// Confirmations is the depth to record and report; it never decreases.
	Confirmations int64
	// Notify is true when the observation deserves a callback: a new status,
	// or (while pending) a higher confirmation count.
	Notify bool
	// Credit is true exactly once: when the payment becomes confirmed.
	Credit bool
	// Forwardable is true when the funds may be distributed now (credited and,
	// on TRON, past the distribution depth with a solidified receipt).
	Forwardable bool
}

// Rules decides, from what the chain shows, a payment's status and whether
// it may be credited and forwarded. Implementations are pure.
type Rules interface {
	// Evaluate applies one observation of a transfer to the recorded state.
	// required is the address's required confirmations.
	Evaluate(t Ticker, required int64, prev PaymentState, s TxState) Step
}
