package keysign

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"math/big"

	"github.com/btcsuite/btcd/btcec/v2"
	becdsa "github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/payhook/payhook/chains"
)

// Local is the chains.Signer of the process's own keys. It is safe for
// concurrent use.
type Local struct {
	keys *chains.Keys
}

var _ chains.Signer = (*Local)(nil)

// New returns the Local signer of keys.
func New(keys *chains.Keys) *Local { return &Local{keys: keys} }

// Keys returns the keys Local signs with.
func (l *Local) Keys() *chains.Keys { return l.keys }

// String prints nothing of the keys.
func (l *Local) String() string { return "keysign.Local{redacted}" }

// Offline implements chains.Signer: Local needs no network.
func (l *Local) Offline() bool { return true }

// OperatorAddress implements chains.Signer.
func (l *Local) OperatorAddress(_ context.Context, t chains.Ticker) (string, error) {
	return l.keys.OperatorAddress(t)
}

// secp returns the secp256k1 private key k names for t.
func (l *Local) secp(t chains.Ticker, k chains.KeyRef) (*btcec.PrivateKey, error) {
	if k.Operator {
		return l.keys.OperatorSecp256k1(t)
	}
	return l.keys.Secp256k1(t, k.Index)
}

// keyName names k in errors.
func keyName(k chains.KeyRef) string {
	if k.Operator {
		return "the operator's key"
	}
	return fmt.Sprintf("key %d", k.Index)
}

func invalid(c chains.SignContext, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s %q: %s", chains.ErrInvalidForward, c.Ticker.Ticker, purpose(c), c.Key, fmt.Sprintf(format, args...))
}

func purpose(c chains.SignContext) string {
	if c.Purpose == "" {
		return "transaction"
	}
	return c.Purpose
}

// SignEVM implements chains.Signer: r.Tx decoded, signed for r.ChainID
// (types.LatestSignerForChainID) with r.Key's key, encoded again.
func (l *Local) SignEVM(_ context.Context, r chains.EVMSignRequest) ([]byte, error) {
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(r.Tx); err != nil {
		return nil, invalid(r.Context, "not an EVM transaction: %v", err)
	}
	chainID, ok := new(big.Int).SetString(r.ChainID, 10)
	if !ok || chainID.Sign() <= 0 {
		return nil, invalid(r.Context, "chain id %q", r.ChainID)
	}
	priv, err := l.secp(r.Context.Ticker, r.Key)
	if err != nil {
		return nil, invalid(r.Context, "%s: %v", keyName(r.Key), err)
	}
	key, err := crypto.ToECDSA(priv.Serialize())
	priv.Zero()
	if err != nil {
		return nil, invalid(r.Context, "%s is unusable", keyName(r.Key))
	}
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(chainID), key)
	if err != nil {
		return nil, invalid(r.Context, "sign: %v", err)
	}
	return signed.MarshalBinary()
}

// SignTron implements chains.Signer: sha256 of r.RawData (the transaction
// id) signed with r.Key's key, as TRON expects: r || s || v, v = 27 + the
// recovery id.
func (l *Local) SignTron(_ context.Context, r chains.TronSignRequest) ([]byte, error) {
	if len(r.RawData) == 0 {
		return nil, invalid(r.Context, "no raw_data")
	}
	priv, err := l.secp(r.Context.Ticker, r.Key)
	if err != nil {
		return nil, invalid(r.Context, "%s: %v", keyName(r.Key), err)
	}
	id := sha256.Sum256(r.RawData)
	compact := becdsa.SignCompact(priv, id[:], false) // v || r || s
	return append(compact[1:65:65], compact[0]), nil
}

// SignSolana implements chains.Signer: r.Message signed with each of
// r.Keys (ed25519).
func (l *Local) SignSolana(_ context.Context, r chains.SolanaSignRequest) ([][]byte, error) {
	if len(r.Message) == 0 || len(r.Keys) == 0 {
		return nil, invalid(r.Context, "no message or no keys")
	}
	out := make([][]byte, len(r.Keys))
	for i, k := range r.Keys {
		var priv ed25519.PrivateKey
		var err error
		if k.Operator {
			priv, err = l.keys.OperatorEd25519(r.Context.Ticker)
		} else {
			priv, err = l.keys.Ed25519(r.Context.Ticker, k.Index)
		}
		if err != nil {
			return nil, invalid(r.Context, "%s: %v", keyName(k), err)
		}
		out[i] = ed25519.Sign(priv, r.Message)
		clear(priv)
	}
	return out, nil
}
