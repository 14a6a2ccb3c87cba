package signer

import (
	"bytes"
	"context"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// selectorTransfer is ERC-20 transfer(address,uint256)'s selector.
var selectorTransfer = []byte{0xa9, 0x05, 0x9c, 0xbb}

// maxEVMTx bounds an EVM transaction to sign.
const maxEVMTx = 16 << 10

// SignEvm implements SignerService. The transaction must be for the chain
// id the policy configures for the ticker, of a type payhook sends (legacy,
// signed under EIP-155, or EIP-1559), and be one of payhook's two
// transfers: a value transfer without call data (of a native ticker; of a
// token's only to the seed's own keys: a gas top-up), or a call of the
// ticker's token contract's transfer(address,uint256) with no value. Its
// recipient (the transfer's, for a token) is checked against the policy
// and counted in the ticker's units, unless it is one of the seed's own
// keys (the operator's, or those the request names, derived here). The
// daily cap counts one transaction once, by its signing hash.
func (s *Service) SignEvm(ctx context.Context, r *signerv1.SignEvmRequest) (*signerv1.SignEvmResponse, error) {
	t, sc, err := s.context(r.GetContext(), familyEVM)
	if err != nil {
		return nil, err
	}
	chainID, err := s.cfg.Policy.chainID(t)
	if err != nil {
		return nil, status.Errorf(codes.PermissionDenied, "%v: %v", chains.ErrSignerRefused, err)
	}
	if want := strconv.FormatUint(chainID, 10); r.GetChainId() != want {
		return nil, status.Errorf(codes.PermissionDenied, "%v: %s: the signer's policy signs for chain id %s; the server asked for %q", chains.ErrSignerRefused, t.Ticker, want, r.GetChainId())
	}
	if len(r.GetTx()) == 0 || len(r.GetTx()) > maxEVMTx {
		return nil, status.Errorf(codes.InvalidArgument, "tx: a transaction of %d bytes", len(r.GetTx()))
	}
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(r.GetTx()); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "tx: not an EVM transaction: %v", err)
	}
	if tx.Type() != types.LegacyTxType && tx.Type() != types.DynamicFeeTxType {
		// Payhook sends no other type: a blob transaction pays blob gas
		// besides, a set-code one carries authorizations.
		return nil, status.Errorf(codes.InvalidArgument, "tx: a transaction of type %d; the signer signs legacy and EIP-1559 (type 2) transactions only", tx.Type())
	}
	id := new(big.Int).SetUint64(chainID)
	if tx.Type() != types.LegacyTxType && tx.ChainId().Cmp(id) != 0 {
		return nil, status.Errorf(codes.PermissionDenied, "%v: %s: the transaction is for chain id %s, not %s", chains.ErrSignerRefused, t.Ticker, tx.ChainId(), id)
	}
	if tx.To() == nil {
		return nil, status.Error(codes.InvalidArgument, "tx: creates a contract; the signer signs transfers only")
	}
	own, err := s.ownAddresses(t, keyRefs(r.GetOwn()))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "own: %v", err)
	}
	out, err := s.evmRecipient(t, tx, own)
	if err != nil {
		return nil, err
	}
	signer := types.LatestSignerForChainID(id)
	txKey := signer.Hash(tx).Hex()
	// The most it may pay the network: its gas limit at its fee cap (the
	// gas price of a legacy transaction).
	maxFee := decimal.NewFromBigInt(new(big.Int).Mul(new(big.Int).SetUint64(tx.Gas()), tx.GasFeeCap()), -nativeDecimals(t))
	signed, err := authorize(s, t, sc, []output{out}, maxFee, txKey, func() ([]byte, error) {
		return s.local.SignEVM(ctx, chains.EVMSignRequest{Context: sc, Tx: r.GetTx(), ChainID: id.String(), Key: keyRef(r.GetKey())})
	})
	if err != nil {
		return nil, err
	}
	s.logger.Info("signed", "ticker", t.Ticker, "project", sc.ProjectID, "purpose", sc.Purpose, "key", sc.Key, "tx", txKey)
	return &signerv1.SignEvmResponse{Tx: signed}, nil
}

// evmRecipient returns who tx pays, and how much in t's units: the value's
// recipient for a plain transfer, the transfer's for a call of t's token
// contract. Anything else is refused.
func (s *Service) evmRecipient(t chains.Ticker, tx *types.Transaction, own map[string]bool) (output, error) {
	to := *tx.To()
	data := tx.Data()
	if len(data) == 0 {
		dest := strings.ToLower(to.Hex())
		o := output{dest: dest, name: to.Hex(), value: decimal.NewFromBigInt(tx.Value(), -t.Decimals), own: own[dest]}
		if t.Token && !o.own {
			// The native coin under a token's policy: only a gas top-up to
			// the seed's own address is signed.
			return output{}, status.Errorf(codes.PermissionDenied, "%v: a %s transaction pays the native coin to %s, which is none of the seed's own keys (only gas top-ups to them are signed under a token)",
				chains.ErrSignerRefused, t.Ticker, to.Hex())
		}
		return o, nil
	}
	contract, err := s.cfg.Policy.contract(t)
	if err != nil {
		return output{}, status.Errorf(codes.PermissionDenied, "%v: %v", chains.ErrSignerRefused, err)
	}
	switch {
	case !t.Token:
		return output{}, status.Errorf(codes.InvalidArgument, "tx: a %s transaction with call data; the signer signs value transfers of a native coin", t.Ticker)
	case !strings.EqualFold(to.Hex(), contract):
		return output{}, status.Errorf(codes.PermissionDenied, "%v: the transaction calls %s, not %s's contract %s", chains.ErrSignerRefused, to.Hex(), t.Ticker, contract)
	case tx.Value().Sign() != 0:
		return output{}, status.Errorf(codes.InvalidArgument, "tx: a token transfer that also sends %s wei", tx.Value())
	case len(data) != 4+32+32 || !bytes.Equal(data[:4], selectorTransfer) || !bytes.Equal(data[4:16], make([]byte, 12)):
		return output{}, status.Errorf(codes.InvalidArgument, "tx: calls %s with data other than transfer(address,uint256)", to.Hex())
	}
	recipient := common.BytesToAddress(data[16:36])
	amount := new(big.Int).SetBytes(data[36:68])
	dest := strings.ToLower(recipient.Hex())
	return output{dest: dest, name: recipient.Hex(), value: decimal.NewFromBigInt(amount, -t.Decimals), own: own[dest]}, nil
}
