package httpapi

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few messages of TRON's protocol (core/Tron.proto,
// core/contract/*.proto) that a forward needs, decoded by hand with
// protowire: what the node built is checked against what was asked before
// it is signed, so nothing it added or changed goes unseen.

// Field numbers of protocol.Transaction.
const (
	txRawData   = 1
	txSignature = 2
)

// Field numbers of protocol.Transaction.raw.
const (
	rawRefBlockBytes = 1
	rawRefBlockNum   = 3
	rawRefBlockHash  = 4
	rawExpiration    = 8
	rawAuths         = 9
	rawData          = 10
	rawContract      = 11
	rawScripts       = 12
	rawTimestamp     = 14
	rawFeeLimit      = 18
)

// Contract types (protocol.Transaction.Contract.ContractType) and their
// Any type URLs.
const (
	typeTransfer     = 1
	typeTrigger      = 31
	typeURLTransfer  = "type.googleapis.com/protocol.TransferContract"
	typeURLTrigger   = "type.googleapis.com/protocol.TriggerSmartContract"
	transferSelector = "a9059cbb" // transfer(address,uint256)
	transferTopic    = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
)

// rawTx is a decoded protocol.Transaction.raw with exactly one contract.
type rawTx struct {
	RefBlockBytes []byte
	RefBlockHash  []byte
	Expiration    int64
	Timestamp     int64
	FeeLimit      int64
	Type          int64
	TypeURL       string
	Value         []byte // the contract message
	PermissionID  int64
}

// transferContract is protocol.TransferContract.
type transferContract struct {
	Owner, To []byte
	Amount    int64
}

// triggerContract is protocol.TriggerSmartContract.
type triggerContract struct {
	Owner, Contract []byte
	CallValue       int64
	Data            []byte
	CallTokenValue  int64
	TokenID         int64
}

var errProto = errors.New("malformed protobuf")

// fields walks b's top-level fields, calling f with each field's number,
// type, its value bytes (varints decoded into v) and its full encoding.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errProto
		}
		var (
			v   uint64
			val []byte
			m   int
		)
		switch typ {
		case protowire.VarintType:
			v, m = protowire.ConsumeVarint(b[n:])
		case protowire.BytesType:
			val, m = protowire.ConsumeBytes(b[n:])
		default:
			return fmt.Errorf("%w: field %d has wire type %d", errProto, num, typ)
		}
		if m < 0 {
			return errProto
		}
		if err := f(num, typ, v, val); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

func want(typ, is protowire.Type, num protowire.Number) error {
	if typ != is {
		return fmt.Errorf("%w: field %d has wire type %d", errProto, num, typ)
	}
	return nil
}

// decodeRaw decodes a transaction's raw_data. It refuses fields a forward
// never asks for (authorities, scripts, a memo, more than one contract),
// so the node cannot slip them in.
func decodeRaw(b []byte) (rawTx, error) {
	var r rawTx
	contracts := 0
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch num {
		case rawRefBlockBytes:
			r.RefBlockBytes = val
			return want(typ, protowire.BytesType, num)
		case rawRefBlockHash:
			r.RefBlockHash = val
			return want(typ, protowire.BytesType, num)
		case rawRefBlockNum:
			return want(typ, protowire.VarintType, num)
		case rawExpiration:
			r.Expiration = int64(v)
			return want(typ, protowire.VarintType, num)
		case rawTimestamp:
			r.Timestamp = int64(v)
			return want(typ, protowire.VarintType, num)
		case rawFeeLimit:
			r.FeeLimit = int64(v)
			return want(typ, protowire.VarintType, num)
		case rawContract:
			contracts++
			if err := want(typ, protowire.BytesType, num); err != nil {
				return err
			}
			return decodeContract(val, &r)
		case rawData, rawAuths, rawScripts:
			return fmt.Errorf("%w: unexpected field %d (memo, authorities or scripts)", errProto, num)
		}
		return fmt.Errorf("%w: unknown field %d", errProto, num)
	})
	if err != nil {
		return rawTx{}, err
	}
	if contracts != 1 {
		return rawTx{}, fmt.Errorf("%w: %d contracts, want 1", errProto, contracts)
	}
	if len(r.RefBlockBytes) != 2 || len(r.RefBlockHash) != 8 {
		return rawTx{}, fmt.Errorf("%w: reference block of %d and %d bytes, want 2 and 8", errProto, len(r.RefBlockBytes), len(r.RefBlockHash))
	}
	return r, nil
}

// decodeContract decodes protocol.Transaction.Contract into r.
func decodeContract(b []byte, r *rawTx) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch num {
		case 1: // type
			r.Type = int64(v)
			return want(typ, protowire.VarintType, num)
		case 2: // parameter (google.protobuf.Any)
			if err := want(typ, protowire.BytesType, num); err != nil {
				return err
			}
			return fields(val, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
				switch num {
				case 1:
					r.TypeURL = string(val)
				case 2:
					r.Value = val
				default:
					return fmt.Errorf("%w: unknown Any field %d", errProto, num)
				}
				return want(typ, protowire.BytesType, num)
			})
		case 5: // Permission_id
			r.PermissionID = int64(v)
			return want(typ, protowire.VarintType, num)
		}
		return fmt.Errorf("%w: unexpected contract field %d", errProto, num)
	})
}

// decodeTransfer decodes protocol.TransferContract.
func decodeTransfer(b []byte) (transferContract, error) {
	var c transferContract
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch num {
		case 1:
			c.Owner = val
			return want(typ, protowire.BytesType, num)
		case 2:
			c.To = val
			return want(typ, protowire.BytesType, num)
		case 3:
			c.Amount = int64(v)
			return want(typ, protowire.VarintType, num)
		}
		return fmt.Errorf("%w: unknown TransferContract field %d", errProto, num)
	})
	return c, err
}

// decodeTrigger decodes protocol.TriggerSmartContract.
func decodeTrigger(b []byte) (triggerContract, error) {
	var c triggerContract
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch num {
		case 1:
			c.Owner = val
			return want(typ, protowire.BytesType, num)
		case 2:
			c.Contract = val
			return want(typ, protowire.BytesType, num)
		case 3:
			c.CallValue = int64(v)
			return want(typ, protowire.VarintType, num)
		case 4:
			c.Data = val
			return want(typ, protowire.BytesType, num)
		case 5:
			c.CallTokenValue = int64(v)
			return want(typ, protowire.VarintType, num)
		case 6:
			c.TokenID = int64(v)
			return want(typ, protowire.VarintType, num)
		}
		return fmt.Errorf("%w: unknown TriggerSmartContract field %d", errProto, num)
	})
	return c, err
}

// withExpiration returns raw with its expiration replaced, every other
// field kept byte for byte and in place, so the encoding stays the one
// java-tron produces (it hashes its own re-serialisation of raw_data).
func withExpiration(raw []byte, exp int64) ([]byte, error) {
	out := make([]byte, 0, len(raw)+4)
	found := false
	b := raw
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errProto
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, errProto
		}
		if num == rawExpiration && typ == protowire.VarintType {
			out = protowire.AppendTag(out, rawExpiration, protowire.VarintType)
			out = protowire.AppendVarint(out, uint64(exp))
			found = true
		} else {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if !found {
		return nil, fmt.Errorf("%w: no expiration to extend", errProto)
	}
	return out, nil
}

// encodeSigned returns the protocol.Transaction of raw and its signature:
// the bytes /wallet/broadcasthex takes.
func encodeSigned(raw, sig []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, txRawData, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	b = protowire.AppendTag(b, txSignature, protowire.BytesType)
	b = protowire.AppendBytes(b, sig)
	return b
}

// decodeSigned returns the raw_data of a signed protocol.Transaction and
// its hash, the transaction id.
func decodeSigned(b []byte) (raw []byte, id [32]byte, err error) {
	sigs := 0
	err = fields(b, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
		switch num {
		case txRawData:
			raw = val
		case txSignature:
			sigs++
		default:
			return fmt.Errorf("%w: unexpected transaction field %d", errProto, num)
		}
		return want(typ, protowire.BytesType, num)
	})
	if err == nil && (raw == nil || sigs != 1) {
		err = fmt.Errorf("%w: transaction without raw data or with %d signatures", errProto, sigs)
	}
	if err != nil {
		return nil, id, err
	}
	return raw, sha256.Sum256(raw), nil
}
