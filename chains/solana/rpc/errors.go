package rpc

import (
	"errors"
	"fmt"

	"github.com/payhook/payhook/chains"
)

// Sentinel errors of this package. Errors about the node itself (down, slow,
// refusing, answering garbage) wrap chains.ErrNode instead; a forward that
// is refused wraps chains.ErrInvalidForward; Probe's network mismatch wraps
// chains.ErrWrongNetwork.
var (
	// ErrInvalidConfig reports a Config that New cannot use; the message
	// names the field.
	ErrInvalidConfig = errors.New("invalid solana backend configuration")

	// ErrInvalidRange reports a Blocks or Transfers range that is not
	// 0 <= after <= upTo <= the node's confirmed slot.
	ErrInvalidRange = errors.New("invalid slot range")

	// ErrWatchOnly reports a Sign on a backend built without keys.
	ErrWatchOnly = errors.New("watch-only backend: no keys to sign with")

	// ErrInsufficientFunds reports a forward whose payment address (or
	// token account) holds less than the forward spends at the node's
	// confirmed commitment: the inputs are not visible yet, or are gone.
	// Retried at the next poll.
	ErrInsufficientFunds = errors.New("the payment address does not hold what the forward spends")

	// ErrOperatorUnfunded reports that the operator's address cannot pay
	// what the forward needs from it: the fees and new token accounts of an
	// SPL forward, or the rent-exempt minimum when a SOL forward's
	// remainder would open it. The operator funds it (the message says how
	// much); the forward is then retried unchanged.
	ErrOperatorUnfunded = errors.New("the operator's address lacks the SOL the forward needs")

	// ErrExpired reports (from Send) a signed transaction that can never be
	// included: the node has never seen its signature and the finalized
	// block height is past the transaction's last valid block height. It
	// is then safe to sign the forward again (a new transaction, a new
	// txid); sending the old bytes again never succeeds.
	ErrExpired error = &neverLands{"the signed transaction expired without reaching the chain"}

	// ErrFailed reports (from Send) a signed transaction that the chain
	// included and whose execution failed: its fee is spent and nothing
	// else moved. Sending it again never succeeds; signing the forward
	// again is safe once the cause (the message quotes the chain's error)
	// is fixed.
	ErrFailed error = &neverLands{"the signed transaction failed on chain"}
)

// RPCError is a JSON-RPC error object a node answered with. It wraps
// chains.ErrNode: whatever the node refused, the caller retries later.
type RPCError struct {
	// Method is the JSON-RPC method called.
	Method string
	// Code and Message are the node's JSON-RPC error code and message
	// (the message cut to a few hundred bytes).
	Code    int64
	Message string
	// Reason is data.err of a refused sendTransaction ("BlockhashNotFound",
	// "AlreadyProcessed", or a JSON object such as
	// {"InstructionError":[0,...]}), "" otherwise.
	Reason string
}

// Error implements error.
func (e *RPCError) Error() string {
	s := fmt.Sprintf("%s: %s: error %d: %s", chains.ErrNode, e.Method, e.Code, e.Message)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// Unwrap returns chains.ErrNode.
func (e *RPCError) Unwrap() error { return chains.ErrNode }

// nodeError wraps chains.ErrNode with what went wrong calling method.
func nodeError(method, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", chains.ErrNode, method, fmt.Sprintf(format, args...))
}

// JSON-RPC error codes of the Solana node that the backend tells apart.
const (
	codeBlockNotAvailable = -32004 // block not available for slot (not yet, or purged)
	codeSlotSkipped       = -32007 // slot skipped, or missing after a snapshot jump
	codeLongTermSkipped   = -32009 // slot skipped, or missing in long-term storage
)

// neverLands is a Send error after which signing anew is safe: it matches
// chains.ErrNeverLands with errors.Is.
type neverLands struct{ msg string }

func (e *neverLands) Error() string { return e.msg }

// Is reports chains.ErrNeverLands.
func (e *neverLands) Is(target error) bool { return target == chains.ErrNeverLands }
