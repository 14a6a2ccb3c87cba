package jsonrpc

import "errors"

// Sentinel errors of this package. Every error the Backend returns, other
// than a cancelled context, wraps exactly one of them or one of chains'
// (chains.ErrNode, chains.ErrInvalidForward, chains.ErrWrongNetwork);
// classify with errors.Is.
var (
	// ErrInvalidConfig reports a Config that fails Validate.
	ErrInvalidConfig = errors.New("invalid evm json-rpc config")

	// ErrInvalidRange reports a Transfers or Blocks range that is negative,
	// inverted, or reaches beyond the node's tip. A reorganisation that
	// shortened the chain since the caller read the head gives it too: read
	// the head again.
	ErrInvalidRange = errors.New("invalid block range")

	// ErrInvalidTxID reports a transaction hash that is not 0x and 64 hex
	// digits.
	ErrInvalidTxID = errors.New("invalid transaction hash")

	// ErrWatchOnly reports a Sign on a backend configured without keys.
	ErrWatchOnly = errors.New("watch-only backend: no signing keys")

	// ErrOperatorFunds reports a token forward whose gas top-up the
	// operator's gas address cannot pay. The forward is valid: fund the
	// operator's address (the signer's OperatorAddress) and sign it again.
	ErrOperatorFunds = errors.New("operator gas address cannot pay the gas top-up")
)
