package admin

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/sealed"
)

// DefaultSeedFile is where the seed is when --seed-file (PAYHOOK_SEED_FILE)
// does not say.
const DefaultSeedFile = "payhook.seed"

// ReadSeed reads the hex master seed in path, refusing a file that other
// users may read (the seed is every payment address's private key).
func ReadSeed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--seed-file: %w", err)
	}
	if err := sealed.CheckPrivate(path, "--seed-file"); err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("--seed-file %s: not hex: %w", path, err)
	}
	if len(seed) < 16 || len(seed) > 64 {
		return nil, fmt.Errorf("--seed-file %s: %d bytes, want 16 to 64", path, len(seed))
	}
	return seed, nil
}

// secretsKeyFromEnv loads the key that seals the database's secrets the way
// `payhook serve` finds it, from the environment the admin commands share
// with it: PAYHOOK_SECRETS_KEY_FILE, else the seed in PAYHOOK_SEED, else the
// seed file PAYHOOK_SEED_FILE (default DefaultSeedFile). It runs only when
// a command writes or reads a secret (a project's creation or rotation, the
// default project's creation): other commands need no key.
func secretsKeyFromEnv() (*sealed.Box, error) {
	if f := os.Getenv("PAYHOOK_SECRETS_KEY_FILE"); f != "" {
		return sealed.FromKeyFile(f)
	}
	if v := strings.TrimSpace(os.Getenv("PAYHOOK_SEED")); v != "" {
		seed, err := hex.DecodeString(v)
		if err != nil {
			return nil, errors.New("PAYHOOK_SEED: not hex")
		}
		return sealed.FromSeed(seed)
	}
	path := os.Getenv("PAYHOOK_SEED_FILE")
	if path == "" {
		path = DefaultSeedFile
	}
	seed, err := ReadSeed(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: they are sealed with a key derived from the seed, and %s does not exist: set PAYHOOK_SEED_FILE to the server's seed file (or PAYHOOK_SECRETS_KEY_FILE to its --secrets-key-file), or start `payhook serve` once, which creates the seed", store.ErrNoSecretsKey, path)
	}
	if err != nil {
		return nil, err
	}
	return sealed.FromSeed(seed)
}
