package httpapi

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/big"
)

// Contract types RawData.Type takes (protocol.Transaction.Contract.ContractType).
const (
	// ContractTransfer is a TransferContract: TRX from Owner to To.
	ContractTransfer = typeTransfer
	// ContractTrigger is a TriggerSmartContract: a call of Contract.
	ContractTrigger = typeTrigger
)

// RawData is a transaction's raw_data as one who signs it reads it: its
// one contract, of one of the two types Sign builds. Addresses are in
// their base58check form (T...).
type RawData struct {
	// Type is ContractTransfer or ContractTrigger.
	Type int64
	// Owner is the account that sends the transaction, whose key signs it.
	Owner string
	// To and Amount (in sun) are a TransferContract's recipient and
	// amount.
	To     string
	Amount int64
	// Contract is the contract a TriggerSmartContract calls, Data the call
	// data, CallValue the sun and CallTokenValue the TRC-10 tokens (of
	// TokenID) it sends along.
	Contract       string
	Data           []byte
	CallValue      int64
	CallTokenValue int64
	TokenID        int64
	// FeeLimit is the most sun the transaction may burn for energy.
	FeeLimit int64
}

// DecodeRawData decodes raw, a transaction's protobuf raw_data, as Sign
// checks what a node built: exactly one contract, a TransferContract or a
// TriggerSmartContract under its own type URL and the owner's permission
// (0), and none of the fields a forward never asks for (memo, authorities,
// scripts, unknown fields). Errors name what was wrong.
func DecodeRawData(raw []byte) (RawData, error) {
	r, err := decodeRaw(raw)
	if err != nil {
		return RawData{}, err
	}
	if r.PermissionID != 0 {
		return RawData{}, fmt.Errorf("the contract is signed under permission %d, not the owner's (0)", r.PermissionID)
	}
	out := RawData{Type: r.Type, FeeLimit: r.FeeLimit}
	switch {
	case r.Type == typeTransfer && r.TypeURL == typeURLTransfer:
		c, err := decodeTransfer(r.Value)
		if err != nil {
			return RawData{}, fmt.Errorf("TransferContract: %w", err)
		}
		if out.Owner, err = accountString(c.Owner); err != nil {
			return RawData{}, fmt.Errorf("TransferContract: owner_address: %w", err)
		}
		if out.To, err = accountString(c.To); err != nil {
			return RawData{}, fmt.Errorf("TransferContract: to_address: %w", err)
		}
		out.Amount = c.Amount
	case r.Type == typeTrigger && r.TypeURL == typeURLTrigger:
		c, err := decodeTrigger(r.Value)
		if err != nil {
			return RawData{}, fmt.Errorf("TriggerSmartContract: %w", err)
		}
		if out.Owner, err = accountString(c.Owner); err != nil {
			return RawData{}, fmt.Errorf("TriggerSmartContract: owner_address: %w", err)
		}
		if out.Contract, err = accountString(c.Contract); err != nil {
			return RawData{}, fmt.Errorf("TriggerSmartContract: contract_address: %w", err)
		}
		out.Data, out.CallValue, out.CallTokenValue, out.TokenID = c.Data, c.CallValue, c.CallTokenValue, c.TokenID
	default:
		return RawData{}, fmt.Errorf("contract type %d (%s): neither a TransferContract nor a TriggerSmartContract", r.Type, clip(r.TypeURL))
	}
	return out, nil
}

// TokenTransfer decodes Data as a call of transfer(address,uint256), as
// Sign builds it for a TRC-20 token: the recipient (base58check) and the
// amount in the token's base units. ok is false for any other data.
func (r RawData) TokenTransfer() (to string, amount *big.Int, ok bool) {
	sel, _ := hex.DecodeString(transferSelector)
	if r.Type != typeTrigger || len(r.Data) != len(sel)+64 || !bytes.Equal(r.Data[:len(sel)], sel) {
		return "", nil, false
	}
	a, ok := fromWord(r.Data[len(sel) : len(sel)+32])
	if !ok {
		return "", nil, false
	}
	return a.String(), new(big.Int).SetBytes(r.Data[len(sel)+32:]), true
}

// accountString returns the base58check form of b, an account as the
// protobuf carries it (0x41 and 20 bytes).
func accountString(b []byte) (string, error) {
	if len(b) != len(account{}) || b[0] != tronPrefix {
		return "", fmt.Errorf("%s is not 21 bytes starting 0x41", clip(hex.EncodeToString(b)))
	}
	return account(b).String(), nil
}
