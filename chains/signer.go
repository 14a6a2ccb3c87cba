package chains

import (
	"context"
	"errors"

	"github.com/payhook/payhook/internal/kind"
)

// Signer is what a node backend asks of whoever holds the keys: it builds a
// transaction, unsigned and whole, and the signer signs it. The signer may
// be the process's own (chains/keysign.Local, over Keys) or another process
// on another machine (payhook signer) that enforces a policy of its own.
// So that such a signer can decide, every request carries the whole
// transaction and what it is for (SignContext), never a bare digest: the
// signer computes what it signs itself, from the transaction, and can see
// whom it pays and how much.
//
// A signer refuses what its policy forbids with an error wrapping
// ErrSignerRefused (and ErrInvalidForward, so that the outbound engine
// fails the transaction instead of retrying it); an unreachable signer
// answers errors wrapping ErrSignerUnavailable (retried). A family it does
// not sign for answers ErrSignerUnsupported.
type Signer interface {
	// Offline reports whether signing needs neither network nor wait (the
	// process's own keys): backends then implement OfflineSigner.
	Offline() bool
	// OperatorAddress returns the operator's address of t (Keys'
	// OperatorAddress), where change and service fees go and whence gas
	// top-ups come.
	OperatorAddress(ctx context.Context, t Ticker) (string, error)
	// SignUTXO signs every input of r.Tx and returns the signed
	// transaction (serialised, with its witnesses).
	SignUTXO(ctx context.Context, r UTXOSignRequest) ([]byte, error)
	// SignEVM signs r.Tx and returns it signed (EIP-2718 binary).
	SignEVM(ctx context.Context, r EVMSignRequest) ([]byte, error)
	// SignTron signs r.RawData (the transaction id is its sha256) and
	// returns the 65-byte signature r || s || v, v = 27 + recovery id.
	SignTron(ctx context.Context, r TronSignRequest) ([]byte, error)
	// SignSolana signs r.Message with each key of r.Keys and returns the
	// 64-byte ed25519 signatures in that order.
	SignSolana(ctx context.Context, r SolanaSignRequest) ([][]byte, error)
}

// Purposes of a signed transaction (SignContext.Purpose): the outbound
// engine's callers.
const (
	PurposeForward = "forward"
	PurposePayout  = "payout"
	PurposeSweep   = "sweep"
	PurposeRefund  = "refund"
)

// SignContext is what a transaction is for. A remote signer's policy reads
// it; it cannot prove it (the server that asks may be compromised), so a
// policy never trusts it to widen what it allows: see docs/decisions.md.
type SignContext struct {
	// Ticker is the coin and network, with its Net.
	Ticker Ticker
	// Purpose is forward, payout, sweep or refund ("" when the caller does
	// not say).
	Purpose string
	// ProjectID owns the funds; 0 for the operator's.
	ProjectID int64
	// Key is the outbound transaction's key (Forward.ID): one intent, one
	// key, however often it is signed. A signer logs it; one that counts
	// amounts against a limit counts one transaction once by its own
	// identity (its hash), not by this key, which the asker chooses.
	Key string
}

// KeyRef names a key of the seed without holding it: the payment address
// key of Index, or the operator's key (Keys.OperatorSecp256k1,
// Keys.OperatorEd25519).
type KeyRef struct {
	// Operator selects the operator's key; Index is then ignored.
	Operator bool
	// Index is the payment address's derivation index.
	Index uint32
}

// UTXOInput is what the signer needs to sign one input: the output it
// spends, and which key controls it.
type UTXOInput struct {
	// Value is the spent output's amount in base units (the BIP143 digest
	// commits to it).
	Value int64
	// Script is the spent output's locking script; the signer checks that
	// Key's public key is what it locks to.
	Script []byte
	// Key is the payment address key that controls it.
	Key uint32
}

// UTXOOwnOutput marks an output of a UTXO transaction that pays one of the
// seed's own keys (change to the operator, or to a payhook address): the
// signer derives the address itself and checks that the output pays it.
// A policy does not count such an output as money leaving.
type UTXOOwnOutput struct {
	// Output is the index of the output in the transaction.
	Output int
	// Key is the key it pays.
	Key KeyRef
}

// UTXOSignRequest is a UTXO transaction to sign (BIP143 for P2WPKH, legacy
// P2PKH, SIGHASH_FORKID for bch, as the ticker's network signs).
type UTXOSignRequest struct {
	// Context is what the transaction is for.
	Context SignContext
	// Tx is the unsigned transaction, serialised without witnesses or
	// signature scripts.
	Tx []byte
	// Inputs are Tx's inputs' spent outputs and keys, in input order.
	Inputs []UTXOInput
	// Own lists the outputs paying the seed's own keys.
	Own []UTXOOwnOutput
}

// EVMSignRequest is an EVM transaction to sign.
type EVMSignRequest struct {
	// Context is what the transaction is for.
	Context SignContext
	// Tx is the unsigned transaction (EIP-2718 binary, zero signature).
	Tx []byte
	// ChainID is the chain the transaction is signed for (decimal).
	ChainID string
	// Key signs it.
	Key KeyRef
	// Own are the seed's keys the transaction may pay (its recipient, or
	// a token transfer's) without the money leaving: a gas top-up to a
	// payment address, a sweep into a payout wallet. The signer derives
	// their addresses itself; the operator's address is always its own.
	Own []KeyRef
}

// TronSignRequest is a TRON transaction to sign.
type TronSignRequest struct {
	// Context is what the transaction is for.
	Context SignContext
	// RawData is the transaction's raw_data, protobuf-encoded: the
	// transaction id and the signed digest are its sha256.
	RawData []byte
	// Key signs it.
	Key KeyRef
	// Own are the seed's keys the transaction may pay without the money
	// leaving (EVMSignRequest.Own).
	Own []KeyRef
}

// SolanaSignRequest is a Solana transaction to sign.
type SolanaSignRequest struct {
	// Context is what the transaction is for.
	Context SignContext
	// Message is the transaction's serialised message, which each
	// signature signs.
	Message []byte
	// Keys sign it, in the order of the signatures returned.
	Keys []KeyRef
	// Own are the seed's keys the transaction may pay without the money
	// leaving (EVMSignRequest.Own); the signers' keys (Keys) are own too.
	Own []KeyRef
}

// Signer errors.
var (
	// ErrSignerRefused reports a transaction a signer's policy refuses to
	// sign (a destination it does not allow, a daily cap reached). Errors
	// wrapping it also wrap ErrInvalidForward: asking again unchanged is
	// refused again.
	ErrSignerRefused = kind.New(kind.Forbidden, "refused by the signer's policy")
	// ErrSignerUnavailable reports a signer that cannot be reached or
	// failed: transient (kind.Unavailable: an API call that needs the
	// signer, such as creating a Solana address on a server without the
	// seed, answers 503).
	ErrSignerUnavailable = kind.New(kind.Unavailable, "signer unavailable")
	// ErrSignerUnsupported reports a family (or request) the signer does
	// not sign for.
	ErrSignerUnsupported = errors.New("not supported by the signer")
)

// SignContext returns what f is for, as a Signer reads it: t, f's purpose,
// project and ID.
func (f Forward) SignContext(t Ticker) SignContext {
	return SignContext{Ticker: t, Purpose: f.Purpose, ProjectID: f.ProjectID, Key: f.ID}
}

// OwnKeys returns the keys of f's outputs that pay payhook addresses
// (Output.Key), for an account family's sign request (EVMSignRequest.Own).
func (f Forward) OwnKeys() []KeyRef {
	var out []KeyRef
	for _, o := range f.Outputs {
		if o.Key != nil {
			out = append(out, KeyRef{Index: *o.Key})
		}
	}
	return out
}
