package receiver

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// MinKeyBits is the smallest RSA key ParsePublicKeyPEM accepts.
const MinKeyBits = 2048

// ParsePublicKeyPEM parses the callback signing key: the "pubkey" value of
// GET /pubkey/, a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo). A PKCS#1
// "RSA PUBLIC KEY" block is accepted too. Text around the block is ignored.
// The key must be RSA of at least MinKeyBits.
func ParsePublicKeyPEM(pemBytes []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrBadKey)
	}
	var pub *rsa.PublicKey
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: %T is not an RSA key", ErrBadKey, k)
		}
		pub = rk
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
		}
		pub = k
	default:
		return nil, fmt.Errorf("%w: PEM block %q, want PUBLIC KEY", ErrBadKey, block.Type)
	}
	if pub.N.BitLen() < MinKeyBits {
		return nil, fmt.Errorf("%w: %d-bit key, at least %d bits required", ErrBadKey, pub.N.BitLen(), MinKeyBits)
	}
	return pub, nil
}
