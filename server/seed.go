package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/payhook/payhook/internal/sealed"
	"github.com/payhook/payhook/server/admin"
)

// loadOrCreateSeed reads the hex master seed from path, or creates the file
// with a fresh 64-byte seed (mode 0600, its directory 0700 when missing)
// when it does not exist. created
// reports the latter, so the caller can tell the operator to back it up.
func loadOrCreateSeed(path string) (seed []byte, created bool, err error) {
	seed, err = admin.ReadSeed(path)
	if err == nil {
		return seed, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	seed = make([]byte, 64)
	if _, err := rand.Read(seed); err != nil {
		return nil, false, fmt.Errorf("generate seed: %w", err)
	}
	// The default lives in the user's configuration directory, which a
	// fresh machine may not have yet; only its owner may list it.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("--seed-file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return loadOrCreateSeed(path) // another process created it first
	}
	if err != nil {
		return nil, false, fmt.Errorf("--seed-file: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(seed) + "\n"); err != nil {
		_ = f.Close() // the write's error is the one to report
		return nil, false, fmt.Errorf("--seed-file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, false, fmt.Errorf("--seed-file: %w", err)
	}
	return seed, true, nil
}

// loadSeed reads the hex master seed from path; a missing file is an error
// that says how to make one (payhook seed init).
func loadSeed(path string) ([]byte, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--seed-file %s: no such file: with chain nodes configured the seed is never generated silently; create it with `payhook seed init --seed-file %s` and back it up, or keep the seed off this server with a remote signer (--signer-url, payhook signer)", path, path)
	}
	seed, _, err := loadOrCreateSeed(path)
	return seed, err
}

// SecretsKey is the key that seals the secrets kept in the database: the
// --secrets-key-file when given, else the key derived from seed (c.Seed, or
// the seed in c.SeedFile, when seed is nil).
func (c KeysConfig) SecretsKey(seed []byte) (*sealed.Box, error) {
	if c.SecretsKeyFile != "" {
		return sealed.FromKeyFile(c.SecretsKeyFile)
	}
	if seed == nil {
		seed = c.Seed
	}
	if seed == nil {
		var err error
		if seed, err = admin.ReadSeed(c.SeedFile); err != nil {
			return nil, err
		}
	}
	return sealed.FromSeed(seed)
}

// InitSeed writes a new random 64-byte master seed, hex-encoded, to path
// with mode 0600, refusing to overwrite an existing file.
func InitSeed(path string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists: payhook seed init never overwrites a seed (funds may depend on it)", path)
	}
	_, created, err := loadOrCreateSeed(path)
	if err != nil {
		return err
	}
	if !created {
		return fmt.Errorf("%s was created by another process meanwhile", path)
	}
	return nil
}
