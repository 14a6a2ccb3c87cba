package notifier

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/signingkey"
)

// SchemeRSASHA256 names the low-level callback signature scheme.
const SchemeRSASHA256 = "rsa-sha256"

// MinRSABits is the smallest RSA key payhook accepts.
const MinRSABits = 2048

// Signer signs the bytes of a notification. The scheme is chosen per
// notification: low-level callbacks are signed once, at enqueue, with RSA;
// merchant webhooks will carry an HMAC with a fresh timestamp per attempt.
type Signer interface {
	// Scheme names the signature scheme, stored with each notification.
	Scheme() string
	// Sign returns the header value for data.
	Sign(data []byte) (string, error)
}

// RSASigner signs with RSA PKCS#1 v1.5 over SHA-256 and encodes the
// signature in standard Base64, as the x-ca-signature header carries it.
type RSASigner struct {
	key *rsa.PrivateKey
}

// NewRSASigner returns a signer for key.
func NewRSASigner(key *rsa.PrivateKey) *RSASigner { return &RSASigner{key: key} }

// Scheme implements Signer.
func (s *RSASigner) Scheme() string { return SchemeRSASHA256 }

// Sign implements Signer.
func (s *RSASigner) Sign(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	sig, err := rsa.SignPKCS1v15(nil, s.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("rsa sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// PublicKeyPEM returns the public key as a PEM SubjectPublicKeyInfo block.
func (s *RSASigner) PublicKeyPEM() (string, error) { return publicPEM(&s.key.PublicKey) }

func publicPEM(pub *rsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("marshal public key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

// LoadRSAKeyFile reads an RSA private key from a PEM file (PKCS#1
// "RSA PRIVATE KEY" or PKCS#8 "PRIVATE KEY") of at least MinRSABits.
func LoadRSAKeyFile(path string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	return parseRSAKey(b, path)
}

func parseRSAKey(b []byte, source string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%w: %s holds no PEM block", ErrBadKey, source)
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadKey, source, err)
		}
		key = k
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadKey, source, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: %s is not an RSA key", ErrBadKey, source)
		}
		key = rk
	default:
		return nil, fmt.Errorf("%w: %s holds a %q block, want an RSA private key", ErrBadKey, source, block.Type)
	}
	if key.N.BitLen() < MinRSABits {
		return nil, fmt.Errorf("%w: %s is %d bits, at least %d are required", ErrBadKey, source, key.N.BitLen(), MinRSABits)
	}
	return key, nil
}

// EnsureRSAKey returns the active RSA signing key stored in the database,
// generating and storing a new one of bits size when there is none. When
// instances race on an empty database, all of them end up using the oldest
// active key.
func EnsureRSAKey(ctx context.Context, db *entdb.Client, bits int, now time.Time) (*rsa.PrivateKey, error) {
	if k, err := activeRSAKey(ctx, db); err != nil || k != nil {
		return k, err
	}
	if bits < MinRSABits {
		bits = MinRSABits
	}
	key, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	pub, err := publicPEM(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if _, err := db.SigningKey.Create().
		SetAlgorithm(SchemeRSASHA256).
		SetPrivatePem(string(priv)).
		SetPublicPem(pub).
		SetActive(true).
		SetCreatedAt(now).
		Save(ctx); err != nil {
		return nil, fmt.Errorf("store signing key: %w", err)
	}
	return activeRSAKey(ctx, db)
}

func activeRSAKey(ctx context.Context, db *entdb.Client) (*rsa.PrivateKey, error) {
	k, err := db.SigningKey.Query().
		Where(signingkey.Algorithm(SchemeRSASHA256), signingkey.Active(true)).
		Order(entdb.Asc(signingkey.FieldID)).
		First(ctx)
	if entdb.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load signing key: %w", err)
	}
	return parseRSAKey([]byte(k.PrivatePem), fmt.Sprintf("signing key %d", k.ID))
}

// SchemeHMACSHA256 names the HMAC-SHA256 signature scheme.
const SchemeHMACSHA256 = "hmac-sha256"

// HMACSigner signs with HMAC-SHA256 and a shared secret, hex-encoded. It is
// the cheap signer merchant webhooks will use (with a timestamp per attempt);
// the benchmark uses it to measure the delivery engine without RSA's cost.
type HMACSigner struct {
	secret []byte
}

// NewHMACSigner returns a signer for secret.
func NewHMACSigner(secret []byte) *HMACSigner { return &HMACSigner{secret: secret} }

// Scheme implements Signer.
func (s *HMACSigner) Scheme() string { return SchemeHMACSHA256 }

// Sign implements Signer.
func (s *HMACSigner) Sign(data []byte) (string, error) {
	m := hmac.New(sha256.New, s.secret)
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil)), nil
}
