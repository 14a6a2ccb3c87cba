package chains

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
)

// SLIP-0010 key derivation for ed25519
// (https://github.com/satoshilabs/slips/blob/master/slip-0010.md). No
// maintained Go implementation is reachable from this module's proxy; the
// scheme is HMAC-SHA512 over the parent key and is tested with the
// specification's test vector 1 for ed25519.

// hardened is the first hardened child index (2^31).
const hardened uint32 = 1 << 31

// slip10Node is an ed25519 extended private key: the 32-byte private key
// (an ed25519 seed in crypto/ed25519 terms) and the chain code.
type slip10Node struct {
	key       [32]byte
	chainCode [32]byte
}

// slip10Master derives the ed25519 master node from a seed.
func slip10Master(seed []byte) slip10Node {
	return slip10Split(hmacSHA512([]byte("ed25519 seed"), seed))
}

// child derives the hardened child i (i includes the 2^31 offset). ed25519
// under SLIP-0010 defines hardened derivation only.
func (n slip10Node) child(i uint32) (slip10Node, error) {
	if i < hardened {
		return slip10Node{}, fmt.Errorf("ed25519 derivation supports hardened indices only, got %d", i)
	}
	var data [1 + 32 + 4]byte // 0x00 || ser256(k_par) || ser32(i)
	copy(data[1:33], n.key[:])
	binary.BigEndian.PutUint32(data[33:], i)
	return slip10Split(hmacSHA512(n.chainCode[:], data[:])), nil
}

// publicKey returns the node's ed25519 public key.
func (n slip10Node) publicKey() ed25519.PublicKey {
	return ed25519.NewKeyFromSeed(n.key[:]).Public().(ed25519.PublicKey)
}

func slip10Split(i []byte) slip10Node {
	var n slip10Node
	copy(n.key[:], i[:32])
	copy(n.chainCode[:], i[32:])
	return n
}

func hmacSHA512(key, data []byte) []byte {
	m := hmac.New(sha512.New, key)
	m.Write(data)
	return m.Sum(nil)
}
