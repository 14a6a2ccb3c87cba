package signer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/tron/httpapi"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// maxTronRawData bounds a TRON raw_data to sign.
const maxTronRawData = 16 << 10

// SignTron implements SignerService. The raw_data must hold one of the
// two payhook sends (httpapi.DecodeRawData): a TransferContract (of trx;
// of a token's ticker only to the seed's own keys: a gas top-up), or a
// TriggerSmartContract calling the ticker's token contract's
// transfer(address,uint256) with no TRX or TRC-10 value. It must be sent
// from the address of the key that signs it. Its recipient (the
// transfer's, for a token) is checked against the policy and counted in
// the ticker's units, unless it is one of the seed's own keys (the
// operator's, or those the request names, derived here). The daily cap
// counts one transaction once, by its id (the sha256 of raw_data).
func (s *Service) SignTron(ctx context.Context, r *signerv1.SignTronRequest) (*signerv1.SignTronResponse, error) {
	t, sc, err := s.context(r.GetContext(), familyTron)
	if err != nil {
		return nil, err
	}
	raw := r.GetRawData()
	if len(raw) == 0 || len(raw) > maxTronRawData {
		return nil, status.Errorf(codes.InvalidArgument, "raw_data: a raw_data of %d bytes", len(raw))
	}
	rd, err := httpapi.DecodeRawData(raw)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "raw_data: %v", err)
	}
	key := keyRef(r.GetKey())
	from, err := s.keyAddress(t, key)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "key: %v", err)
	}
	if rd.Owner != from {
		// A signature of one key on another account's transaction is
		// either useless or, under a permission naming the key, a way
		// around the policy: never made.
		return nil, status.Errorf(codes.InvalidArgument, "raw_data: the transaction is sent from %s, and %s controls %s", rd.Owner, keyName(key), from)
	}
	own, err := s.ownAddresses(t, keyRefs(r.GetOwn()))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "own: %v", err)
	}
	out, err := s.tronRecipient(t, rd, own)
	if err != nil {
		return nil, err
	}
	id := sha256.Sum256(raw)
	txKey := hex.EncodeToString(id[:])
	// The most it may pay the network: a call's fee limit (energy); a
	// TRX transfer burns only bandwidth, which its size bounds.
	sig, err := authorize(s, t, sc, []output{out}, decimal.New(rd.FeeLimit, -nativeDecimals(t)), txKey, func() ([]byte, error) {
		return s.local.SignTron(ctx, chains.TronSignRequest{Context: sc, RawData: raw, Key: key, Own: keyRefs(r.GetOwn())})
	})
	if err != nil {
		return nil, err
	}
	s.logger.Info("signed", "ticker", t.Ticker, "project", sc.ProjectID, "purpose", sc.Purpose, "key", sc.Key, "txid", txKey)
	return &signerv1.SignTronResponse{Signature: sig}, nil
}

// tronRecipient returns who rd pays, and how much in t's units: the
// recipient of a TRX transfer, the transfer's for a call of t's token
// contract. Anything else is refused.
func (s *Service) tronRecipient(t chains.Ticker, rd httpapi.RawData, own map[string]bool) (output, error) {
	if rd.Type == httpapi.ContractTransfer {
		if rd.Amount <= 0 {
			return output{}, status.Errorf(codes.InvalidArgument, "raw_data: a TRX transfer of %d sun", rd.Amount)
		}
		o := output{dest: rd.To, name: rd.To, value: decimal.New(rd.Amount, -t.Decimals), own: own[rd.To]}
		if t.Token && !o.own {
			// TRX under a token's policy: only a gas top-up to the seed's
			// own address is signed.
			return output{}, status.Errorf(codes.PermissionDenied, "%v: a %s transaction pays TRX to %s, which is none of the seed's own keys (only gas top-ups to them are signed under a token)",
				chains.ErrSignerRefused, t.Ticker, rd.To)
		}
		return o, nil
	}
	if !t.Token {
		return output{}, status.Errorf(codes.InvalidArgument, "raw_data: a %s transaction calls contract %s; the signer signs TRX transfers of a native coin", t.Ticker, rd.Contract)
	}
	contract, err := s.cfg.Policy.contract(t)
	if err != nil {
		return output{}, status.Errorf(codes.PermissionDenied, "%v: %v", chains.ErrSignerRefused, err)
	}
	switch {
	case rd.Contract != contract:
		return output{}, status.Errorf(codes.PermissionDenied, "%v: the transaction calls %s, not %s's contract %s", chains.ErrSignerRefused, rd.Contract, t.Ticker, contract)
	case rd.CallValue != 0:
		return output{}, status.Errorf(codes.InvalidArgument, "raw_data: a token transfer that also sends %d sun", rd.CallValue)
	case rd.CallTokenValue != 0 || rd.TokenID != 0:
		return output{}, status.Errorf(codes.InvalidArgument, "raw_data: a token transfer that also sends %d of TRC-10 token %d", rd.CallTokenValue, rd.TokenID)
	}
	to, amount, ok := rd.TokenTransfer()
	if !ok {
		return output{}, status.Errorf(codes.InvalidArgument, "raw_data: calls %s with data other than transfer(address,uint256)", rd.Contract)
	}
	return output{dest: to, name: to, value: decimal.NewFromBigInt(amount, -t.Decimals), own: own[to]}, nil
}

// keyAddress returns the address of t that k controls, from the seed.
func (s *Service) keyAddress(t chains.Ticker, k chains.KeyRef) (string, error) {
	if k.Operator {
		return s.cfg.Keys.OperatorAddress(t)
	}
	return s.address(t, k.Index)
}
