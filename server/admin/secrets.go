package admin

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/sealed"
)

// DefaultSeedFile is the seed file in the working directory, where
// earlier versions kept it, and the fallback of DefaultSeedPath.
const DefaultSeedFile = "payhook.seed"

// DefaultSeedPath is where serve, seed init and the admin commands find the
// address seed when --seed-file (PAYHOOK_SEED_FILE) is not given: the
// user's configuration directory ($XDG_CONFIG_HOME/payhook/seed, else
// ~/.config/payhook/seed on Linux; os.UserConfigDir elsewhere), outside any
// working tree, so that no clone of the repository ever holds it or commits
// it. Without a home directory it is DefaultSeedFile, in the working
// directory.
//
// A seed at DefaultSeedFile in the working directory (where earlier
// versions kept it) is used while the new place has none, with a notice
// on notice: funds may depend on it, so it is never silently replaced by a
// new one.
func DefaultSeedPath(notice io.Writer) string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return DefaultSeedFile
	}
	path := filepath.Join(dir, "payhook", "seed")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if _, err := os.Stat(DefaultSeedFile); err == nil {
		fmt.Fprintf(notice, "payhook: using the address seed in ./%s (where earlier versions kept it); move it to %s, or name it with --seed-file\n", DefaultSeedFile, path)
		return DefaultSeedFile
	}
	return path
}

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
// seed file PAYHOOK_SEED_FILE (default DefaultSeedPath). It runs only when
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
		path = DefaultSeedPath(io.Discard)
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
