package signer

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/signingkey"
	"github.com/payhook/payhook/internal/sealed"
	"github.com/payhook/payhook/notifier/payload"
)

// SchemeRSASHA256 names the low-level callback signature scheme.
const SchemeRSASHA256 = "rsa-sha256"

// SignatureHeader carries the RSA signature of low-level callbacks.
const SignatureHeader = "x-ca-signature"

// MinRSABits is the smallest RSA key payhook accepts.
const MinRSABits = 2048

// Signer signs the messages of one scheme; a Message names its signer by
// that scheme (Message.Signing). A signer signs in one of two ways, and
// implements the matching interface:
//
//   - StoredSigner signs a message once, when it is stored: the signature
//     covers the exact bytes built once (payload.SignedData), is stored
//     with them and sent unchanged with every attempt (RSA x-ca-signature).
//   - AttemptSigner signs every attempt anew, with that attempt's time and
//     the key current at that moment, so a rotated key signs the next
//     attempt (WebhookSigner, the merchant webhook scheme, whose headers
//     carry a timestamp).
//
// A signer may implement both (Both): its stored signature and its
// per-attempt headers are then sent together.
type Signer interface {
	// Scheme names the scheme, stored with each message.
	Scheme() string
}

// StoredSigner signs a message once, when it is stored.
type StoredSigner interface {
	Signer
	// Header is the header that carries the signature.
	Header() string
	// Sign returns the signature of a request with the key that key names
	// (its meaning is the signer's; "" is the signer's default key).
	Sign(key string, r payload.Request) (string, error)
}

// AttemptSigner signs each attempt of a message anew.
type AttemptSigner interface {
	Signer
	// SignAttempt returns the headers that sign one attempt, made at a.Time,
	// with the key that key names as it is at that moment. An error fails
	// the attempt (it is retried on the schedule).
	SignAttempt(ctx context.Context, key string, a Attempt) (http.Header, error)
}

// Attempt is what a per-attempt signature covers.
type Attempt struct {
	// UUID is the message's uuid.
	UUID string
	// Time is when the attempt is made.
	Time time.Time
	// Request is the message's stored request.
	Request payload.Request
	// Event is the message's event label (notifier.Subject.Event, e.g.
	// "checkout.payment.confirmed"); empty when it has none.
	Event string
}

// RSASigner signs with RSA PKCS#1 v1.5 over SHA-256 of the signed data
// (payload.SignedData: the GET URL or the POST body) and encodes the
// signature in standard Base64, as the x-ca-signature header carries it. It
// signs once, when a message is stored, with its one key (the key reference
// is ignored).
type RSASigner struct {
	key *rsa.PrivateKey
}

var _ StoredSigner = (*RSASigner)(nil)

// NewRSASigner returns a signer for key.
func NewRSASigner(key *rsa.PrivateKey) *RSASigner { return &RSASigner{key: key} }

// Scheme implements Signer.
func (s *RSASigner) Scheme() string { return SchemeRSASHA256 }

// Header implements StoredSigner.
func (s *RSASigner) Header() string { return SignatureHeader }

// Sign implements StoredSigner.
func (s *RSASigner) Sign(_ string, r payload.Request) (string, error) {
	sum := sha256.Sum256(payload.SignedData(r))
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
	if err := sealed.CheckPrivate(path, "--signing-key-file"); err != nil {
		return nil, err
	}
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

// EnsureRSAKey returns the server's active RSA signing key (project_id 0)
// stored in the database,
// generating and storing a new one of bits size when there is none. When
// instances race on an empty database, all of them end up using the oldest
// active key.
func EnsureRSAKey(ctx context.Context, db *entdb.Client, bits int, now time.Time) (*rsa.PrivateKey, error) {
	if k, err := activeRSAKey(ctx, db); err != nil || k != nil {
		return k, err
	}
	_, priv, pub, err := GenerateRSAKey(bits)
	if err != nil {
		return nil, err
	}
	if _, err := db.SigningKey.Create().
		SetAlgorithm(SchemeRSASHA256).
		SetPrivatePem(priv).
		SetPublicPem(pub).
		SetActive(true).
		SetCreatedAt(now).
		Save(ctx); err != nil {
		return nil, fmt.Errorf("store signing key: %w", err)
	}
	return activeRSAKey(ctx, db)
}

// GenerateRSAKey returns a new RSA key of bits (at least MinRSABits) and
// its private (PKCS#1) and public (SubjectPublicKeyInfo) PEM forms.
func GenerateRSAKey(bits int) (key *rsa.PrivateKey, privPEM, pubPEM string, err error) {
	if bits < MinRSABits {
		bits = MinRSABits
	}
	key, err = rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, "", "", fmt.Errorf("generate signing key: %w", err)
	}
	pub, err := publicPEM(&key.PublicKey)
	if err != nil {
		return nil, "", "", err
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return key, string(priv), pub, nil
}

// ParseRSAKey parses a PEM RSA private key (PKCS#1 or PKCS#8) of at least
// MinRSABits; source names it in errors.
func ParseRSAKey(pemText, source string) (*rsa.PrivateKey, error) {
	return parseRSAKey([]byte(pemText), source)
}

// PublicKeyPEM returns the PEM SubjectPublicKeyInfo form of pub.
func PublicKeyPEM(pub *rsa.PublicKey) (string, error) { return publicPEM(pub) }

func activeRSAKey(ctx context.Context, db *entdb.Client) (*rsa.PrivateKey, error) {
	k, err := db.SigningKey.Query().
		Where(signingkey.Algorithm(SchemeRSASHA256), signingkey.Active(true), signingkey.ProjectID(0)).
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

// SchemeRSAWebhook names the custom payment flow's callbacks: the
// low-level RSA x-ca-signature, signed once, and the merchant webhook
// headers, signed at every attempt (NewBoth(SchemeRSAWebhook, rsa,
// webhook)).
const SchemeRSAWebhook = SchemeRSASHA256 + "+" + SchemeWebhook

// Both signs a message in both ways: once, when it is stored, with a
// StoredSigner (its signature is resent unchanged), and at every attempt
// with an AttemptSigner (its headers are computed anew). A message's key
// reference is the attempt signer's; the stored signer signs with its
// key reference too: RSARing signs with that owner's RSA key, RSASigner
// with its one key.
type Both struct {
	scheme  string
	stored  StoredSigner
	attempt AttemptSigner
}

var (
	_ StoredSigner  = (*Both)(nil)
	_ AttemptSigner = (*Both)(nil)
)

// NewBoth returns a signer of scheme that signs with stored once and with
// attempt at every attempt.
func NewBoth(scheme string, stored StoredSigner, attempt AttemptSigner) *Both {
	return &Both{scheme: scheme, stored: stored, attempt: attempt}
}

// Scheme implements Signer.
func (b *Both) Scheme() string { return b.scheme }

// Header implements StoredSigner: the stored signer's header.
func (b *Both) Header() string { return b.stored.Header() }

// Sign implements StoredSigner: both signers read the same key reference
// (a project's, project.KeyRef), each for its own key of that owner.
func (b *Both) Sign(key string, r payload.Request) (string, error) { return b.stored.Sign(key, r) }

// SignAttempt implements AttemptSigner with the attempt signer.
func (b *Both) SignAttempt(ctx context.Context, key string, a Attempt) (http.Header, error) {
	return b.attempt.SignAttempt(ctx, key, a)
}

// RSAKeys gives the RSA key that signs for a key reference: "" is the
// server's key; a project's reference (project.KeyRef) its own key.
type RSAKeys interface {
	RSAKey(ctx context.Context, ref string) (*rsa.PrivateKey, error)
}

// RSARing signs like RSASigner, each message with the RSA key its key
// reference names (RSAKeys), so one tenant's callbacks never verify
// against another's key.
type RSARing struct {
	keys RSAKeys
}

var _ StoredSigner = (*RSARing)(nil)

// NewRSARing returns a signer that signs with the keys of keys.
func NewRSARing(keys RSAKeys) *RSARing { return &RSARing{keys: keys} }

// Scheme implements Signer.
func (s *RSARing) Scheme() string { return SchemeRSASHA256 }

// Header implements StoredSigner.
func (s *RSARing) Header() string { return SignatureHeader }

// keyTimeout bounds the read (or first creation) of a key.
const keyTimeout = 30 * time.Second

// Sign implements StoredSigner.
func (s *RSARing) Sign(key string, r payload.Request) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), keyTimeout)
	defer cancel()
	k, err := s.keys.RSAKey(ctx, key)
	if err != nil {
		return "", fmt.Errorf("signing key %q: %w", key, err)
	}
	return NewRSASigner(k).Sign("", r)
}
