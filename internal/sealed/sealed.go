// Package sealed encrypts the secrets payhook keeps in its database (the
// projects' IPN secrets, the callback signing keys) so that a copy of the
// database, a backup or a replica does not hand them out.
//
// A Box seals with AES-256-GCM under a key derived with HKDF-SHA256 from the
// address seed, or read from a separate key file (--secrets-key-file). A
// sealed value is text: "sealed:v1:" followed by the standard Base64 of the
// nonce and the ciphertext. The name of the column a value belongs to is
// authenticated with it, so a sealed value copied into another column does
// not open.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Prefix starts every sealed value.
const Prefix = "sealed:v1:"

// KeySize is the size of a secrets key in bytes.
const KeySize = 32

// ErrOpen reports a sealed value that this Box cannot open: it was sealed
// under another key, or altered.
var ErrOpen = errors.New("sealed value does not open with this secrets key")

// Box seals and opens values under one key.
type Box struct {
	aead cipher.AEAD
}

// hkdfInfo separates the secrets key from every other key derived from the
// seed (addresses use BIP32 paths; nothing else uses HKDF).
const hkdfInfo = "payhook secrets at rest v1"

// FromSeed returns the Box whose key is derived from the address seed.
func FromSeed(seed []byte) (*Box, error) {
	if len(seed) < 16 {
		return nil, fmt.Errorf("secrets key: the seed is %d bytes, want at least 16", len(seed))
	}
	key, err := hkdf.Key(sha256.New, seed, nil, hkdfInfo, KeySize)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	return New(key)
}

// New returns the Box of a KeySize-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secrets key: %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// FromKeyFile reads a key file: KeySize bytes written as hex (as
// `openssl rand -hex 32` prints them), alone on its line. The file must not
// be readable by anyone but its owner (CheckPrivate).
func FromKeyFile(path string) (*Box, error) {
	if err := CheckPrivate(path, "--secrets-key-file"); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets-key-file: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("--secrets-key-file %s: want %d bytes as hex on one line (create one with `openssl rand -hex %d > %s && chmod 600 %s`)", path, KeySize, KeySize, path, path)
	}
	return New(key)
}

// CheckPrivate refuses a key or seed file that its group or others may
// read or write: flag names the option that named it, for the message. On
// Windows, where modes do not describe access, it checks nothing.
func CheckPrivate(path, flag string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s: mode %04o lets other users read or change it; it holds a key: run `chmod 600 %s`", flag, path, perm, path)
	}
	return nil
}

// IsSealed reports whether s is a sealed value.
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Seal returns plain sealed for column. An empty value stays empty (it
// means "none" in every column that holds secrets).
func (b *Box) Seal(plain, column string) (string, error) {
	if plain == "" {
		return "", nil
	}
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(column))
	return Prefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open returns the plain value of a value sealed for column. A value that
// is not sealed (empty, or stored before secrets were sealed) is returned
// as it is.
func (b *Box) Open(stored, column string) (string, error) {
	rest, ok := strings.CutPrefix(stored, Prefix)
	if !ok {
		return stored, nil
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", fmt.Errorf("%w (%s: not a sealed value)", ErrOpen, column)
	}
	ns := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:ns], raw[ns:], []byte(column))
	if err != nil {
		return "", fmt.Errorf("%w (%s)", ErrOpen, column)
	}
	return string(plain), nil
}
