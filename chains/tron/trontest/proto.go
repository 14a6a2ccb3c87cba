package trontest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcutil/base58"
	"golang.org/x/crypto/sha3"
	"google.golang.org/protobuf/encoding/protowire"
)

// The node's own protobuf encoding of the few messages it builds
// (protocol.Transaction.raw with one TransferContract or
// TriggerSmartContract), written independently of the backend's decoder
// so that the two check each other.

const (
	typeTransfer    = 1
	typeTrigger     = 31
	typeURLTransfer = "type.googleapis.com/protocol.TransferContract"
	typeURLTrigger  = "type.googleapis.com/protocol.TriggerSmartContract"
	transferTopic   = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
)

// account is 0x41 and a 20-byte account.
type account [21]byte

func (a account) hex() string    { return hex.EncodeToString(a[:]) }
func (a account) evmHex() string { return hex.EncodeToString(a[1:]) }

// String returns the base58check form.
func (a account) String() string { return base58.CheckEncode(a[1:], 0x41) }

func parseBase58(s string) (account, error) {
	payload, version, err := base58.CheckDecode(s)
	if err != nil || version != 0x41 || len(payload) != 20 {
		return account{}, fmt.Errorf("%q is not a tron address", s)
	}
	var a account
	a[0] = 0x41
	copy(a[1:], payload)
	return a, nil
}

func parseHex(s string) (account, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 21 || b[0] != 0x41 {
		return account{}, errors.New("invalid address")
	}
	return account(b), nil
}

// keyAccount returns the account a secp256k1 key controls.
func keyAccount(pub *btcec.PublicKey) account {
	h := sha3.NewLegacyKeccak256()
	h.Write(pub.SerializeUncompressed()[1:])
	var a account
	a[0] = 0x41
	copy(a[1:], h.Sum(nil)[12:])
	return a
}

// selector returns the 4-byte function selector of a signature.
func selector(sig string) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(sig))
	return h.Sum(nil)[:4]
}

// rawTx is what the node knows of a transaction's raw data.
type rawTx struct {
	refBytes, refHash []byte
	expiration        int64
	timestamp         int64
	feeLimit          int64
	typ               int64
	owner             account
	to                account // TransferContract
	amount            int64   // TransferContract
	contract          account // TriggerSmartContract
	callValue         int64
	data              []byte // TriggerSmartContract
}

// encode returns raw_data as java-tron serialises it: fields in number
// order, zero values left out.
func (r rawTx) encode() []byte {
	var v []byte
	typeURL := typeURLTransfer
	if r.typ == typeTransfer {
		v = protowire.AppendTag(v, 1, protowire.BytesType)
		v = protowire.AppendBytes(v, r.owner[:])
		v = protowire.AppendTag(v, 2, protowire.BytesType)
		v = protowire.AppendBytes(v, r.to[:])
		v = protowire.AppendTag(v, 3, protowire.VarintType)
		v = protowire.AppendVarint(v, uint64(r.amount))
	} else {
		typeURL = typeURLTrigger
		v = protowire.AppendTag(v, 1, protowire.BytesType)
		v = protowire.AppendBytes(v, r.owner[:])
		v = protowire.AppendTag(v, 2, protowire.BytesType)
		v = protowire.AppendBytes(v, r.contract[:])
		if r.callValue != 0 {
			v = protowire.AppendTag(v, 3, protowire.VarintType)
			v = protowire.AppendVarint(v, uint64(r.callValue))
		}
		v = protowire.AppendTag(v, 4, protowire.BytesType)
		v = protowire.AppendBytes(v, r.data)
	}
	var anyMsg []byte
	anyMsg = protowire.AppendTag(anyMsg, 1, protowire.BytesType)
	anyMsg = protowire.AppendString(anyMsg, typeURL)
	anyMsg = protowire.AppendTag(anyMsg, 2, protowire.BytesType)
	anyMsg = protowire.AppendBytes(anyMsg, v)
	var c []byte
	c = protowire.AppendTag(c, 1, protowire.VarintType)
	c = protowire.AppendVarint(c, uint64(r.typ))
	c = protowire.AppendTag(c, 2, protowire.BytesType)
	c = protowire.AppendBytes(c, anyMsg)

	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, r.refBytes)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, r.refHash)
	b = protowire.AppendTag(b, 8, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(r.expiration))
	b = protowire.AppendTag(b, 11, protowire.BytesType)
	b = protowire.AppendBytes(b, c)
	b = protowire.AppendTag(b, 14, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(r.timestamp))
	if r.feeLimit != 0 {
		b = protowire.AppendTag(b, 18, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(r.feeLimit))
	}
	return b
}

var errProto = errors.New("malformed protobuf")

// walk calls f for each top-level field of b.
func walk(b []byte, f func(num protowire.Number, v uint64, val []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errProto
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return errProto
			}
			if err := f(num, v, nil); err != nil {
				return err
			}
			b = b[m:]
		case protowire.BytesType:
			val, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return errProto
			}
			if err := f(num, 0, val); err != nil {
				return err
			}
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return errProto
			}
			b = b[m:]
		}
	}
	return nil
}

// decodeTransaction decodes a signed protocol.Transaction as
// broadcasthex receives it. Unknown fields are skipped, as protobuf does.
func decodeTransaction(b []byte) (raw []byte, r rawTx, sigs [][]byte, err error) {
	err = walk(b, func(num protowire.Number, _ uint64, val []byte) error {
		switch num {
		case 1:
			raw = val
		case 2:
			sigs = append(sigs, val)
		}
		return nil
	})
	if err != nil {
		return nil, rawTx{}, nil, err
	}
	r, err = decodeRaw(raw)
	return raw, r, sigs, err
}

// errNoContract is java-tron's "No contract!" validation error.
var errNoContract = errors.New("No contract!") //nolint:staticcheck // java-tron's own words

func decodeRaw(raw []byte) (rawTx, error) {
	var r rawTx
	contracts := 0
	var value []byte
	err := walk(raw, func(num protowire.Number, v uint64, val []byte) error {
		switch num {
		case 1:
			r.refBytes = val
		case 4:
			r.refHash = val
		case 8:
			r.expiration = int64(v)
		case 14:
			r.timestamp = int64(v)
		case 18:
			r.feeLimit = int64(v)
		case 11:
			contracts++
			return walk(val, func(num protowire.Number, v uint64, val []byte) error {
				switch num {
				case 1:
					r.typ = int64(v)
				case 2:
					return walk(val, func(num protowire.Number, _ uint64, val []byte) error {
						if num == 2 {
							value = val
						}
						return nil
					})
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return rawTx{}, err
	}
	if contracts != 1 {
		return rawTx{}, errNoContract
	}
	addr := func(b []byte) (account, error) {
		if len(b) != 21 || b[0] != 0x41 {
			return account{}, errors.New("Invalid address") //nolint:staticcheck // java-tron's own words
		}
		return account(b), nil
	}
	err = walk(value, func(num protowire.Number, v uint64, val []byte) error {
		var err error
		switch {
		case num == 1:
			r.owner, err = addr(val)
		case num == 2 && r.typ == typeTransfer:
			r.to, err = addr(val)
		case num == 2 && r.typ == typeTrigger:
			r.contract, err = addr(val)
		case num == 3 && r.typ == typeTransfer:
			r.amount = int64(v)
		case num == 3 && r.typ == typeTrigger:
			r.callValue = int64(v)
		case num == 4 && r.typ == typeTrigger:
			r.data = val
		}
		return err
	})
	if err != nil {
		return rawTx{}, err
	}
	if r.typ != typeTransfer && r.typ != typeTrigger {
		return rawTx{}, fmt.Errorf("contract type %d is not served by trontest", r.typ)
	}
	return r, nil
}

// signer recovers the account that signed id with a 65-byte r || s || v
// signature (v 0, 1, 27 or 28), as java-tron does.
func signer(id [32]byte, sig []byte) (account, bool) {
	if len(sig) != 65 {
		return account{}, false
	}
	v := sig[64]
	if v < 27 {
		v += 27
	}
	compact := append([]byte{v}, sig[:64]...)
	pub, _, err := ecdsa.RecoverCompact(compact, id[:])
	if err != nil {
		return account{}, false
	}
	return keyAccount(pub), true
}

// sign signs id as TRON wallets do (r || s || v, v = 27 + recovery id).
func sign(key *btcec.PrivateKey, id [32]byte) []byte {
	c := ecdsa.SignCompact(key, id[:], false)
	return append(c[1:65:65], c[0])
}

// encodeSigned returns the protocol.Transaction of raw and sig.
func encodeSigned(raw, sig []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, sig)
	return b
}

func txID(raw []byte) string {
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])
}
