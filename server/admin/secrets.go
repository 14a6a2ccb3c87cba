package admin

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/sealed"
	"github.com/payhook/payhook/internal/seedbox"
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

// ReadSeed reads the master seed in path, refusing a file that other users
// may read (the seed is every payment address's private key). The file is
// the seed in hex, or the seed encrypted under a passphrase (package
// seedbox, `payhook seed init --encrypt`, `payhook seed encrypt`), which
// opens with the passphrase SeedPassphrase finds.
func ReadSeed(path string) ([]byte, error) { return OpenSeed(path, "") }

// OpenSeed is ReadSeed with passFile naming the file of the passphrase
// (serve's --seed-passphrase-file), which wins over
// PAYHOOK_SEED_PASSPHRASE_FILE.
func OpenSeed(path, passFile string) ([]byte, error) {
	b, err := readSeedFile(path)
	if err != nil {
		return nil, err
	}
	if seedbox.IsSealed(b) {
		if _, err := seedbox.ParamsOf(b); err != nil {
			return nil, fmt.Errorf("--seed-file %s: %w", path, err)
		}
		pass, from, err := SeedPassphrase(path, passFile, false)
		if err != nil {
			return nil, err
		}
		seed, err := seedbox.Open(b, pass)
		if errors.Is(err, seedbox.ErrWrongPassphrase) {
			ForgetSeedPassphrase()
			return nil, fmt.Errorf("--seed-file %s: %w (from %s): it does not open this seed", path, err, from)
		}
		if err != nil {
			return nil, fmt.Errorf("--seed-file %s: %w", path, err)
		}
		return seed, nil
	}
	return ParseHexSeed(path, b)
}

// readSeedFile returns the contents of the seed file path (hex or
// encrypted), refusing a file other users may read.
func readSeedFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--seed-file: %w", err)
	}
	if err := sealed.CheckPrivate(path, "--seed-file"); err != nil {
		return nil, err
	}
	return b, nil
}

// ParseHexSeed parses b, the contents of a plain seed file path: 16 to 64
// bytes in hex.
func ParseHexSeed(path string, b []byte) ([]byte, error) {
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("--seed-file %s: not hex: %w", path, err)
	}
	if len(seed) < 16 || len(seed) > 64 {
		return nil, fmt.Errorf("--seed-file %s: %d bytes, want 16 to 64", path, len(seed))
	}
	return seed, nil
}

// The passphrase of an encrypted seed file comes from one of three places.
const (
	// SeedPassphraseEnv holds the passphrase itself. It is taken out of the
	// process's environment when read (os.Unsetenv), so that no process
	// payhook starts inherits it.
	SeedPassphraseEnv = "PAYHOOK_SEED_PASSPHRASE"
	// SeedPassphraseFileEnv names a file (mode 0600) whose first line is
	// the passphrase: serve's --seed-passphrase-file.
	SeedPassphraseFileEnv = "PAYHOOK_SEED_PASSPHRASE_FILE"
)

// ErrNoSeedPassphrase: the seed file is encrypted and no passphrase was
// given.
var ErrNoSeedPassphrase = errors.New("the seed file is encrypted and no passphrase was given")

// maxPassphrase bounds a passphrase file: a larger one is likely the wrong
// file.
const maxPassphrase = 1024

// seedPass keeps the passphrase taken out of the environment, for the
// process's later reads of the seed.
var seedPass struct {
	sync.Mutex
	pass []byte
}

// ForgetSeedPassphrase drops the passphrase kept from
// PAYHOOK_SEED_PASSPHRASE.
func ForgetSeedPassphrase() {
	seedPass.Lock()
	defer seedPass.Unlock()
	clear(seedPass.pass)
	seedPass.pass = nil
}

// promptPassphrase asks for a passphrase on the terminal (without echo);
// ok is false when standard input is no terminal.
var promptPassphrase = func(prompt string) (pass []byte, ok bool, err error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return nil, false, nil
	}
	fmt.Fprint(os.Stderr, prompt)
	pass, err = term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	return pass, true, err
}

// SeedPassphrase finds the passphrase of the encrypted seed file path:
// PAYHOOK_SEED_PASSPHRASE (then taken out of the environment and kept in
// memory for the process's later reads), else the file passFile (else the
// one PAYHOOK_SEED_PASSPHRASE_FILE names; mode 0600, its first line), else
// a prompt when standard input is a terminal (twice when confirm, for a
// new passphrase). from names where it came from, for messages; the
// passphrase itself is never in an error.
func SeedPassphrase(path, passFile string, confirm bool) (pass []byte, from string, err error) {
	if passFile == "" {
		passFile = os.Getenv(SeedPassphraseFileEnv)
	}
	seedPass.Lock()
	defer seedPass.Unlock()
	if v, ok := os.LookupEnv(SeedPassphraseEnv); ok {
		if err := os.Unsetenv(SeedPassphraseEnv); err != nil {
			return nil, "", fmt.Errorf("%s: %w", SeedPassphraseEnv, err)
		}
		if v = strings.TrimRight(v, "\r\n"); v != "" {
			if passFile != "" {
				return nil, "", fmt.Errorf("%s and --seed-passphrase-file (or %s) are both set: give the passphrase one way", SeedPassphraseEnv, SeedPassphraseFileEnv)
			}
			seedPass.pass = []byte(v)
		}
	}
	if seedPass.pass != nil && passFile == "" {
		return bytes.Clone(seedPass.pass), SeedPassphraseEnv, nil
	}
	if passFile != "" {
		pass, err := readPassphraseFile(passFile)
		return pass, passFile, err
	}
	prompt := fmt.Sprintf("passphrase of the address seed %s: ", path)
	pass, ok, err := promptPassphrase(prompt)
	if !ok {
		return nil, "", fmt.Errorf("--seed-file %s: %w: set %s to it, name a file (mode 0600) that holds it with --seed-passphrase-file or %s, or run payhook on a terminal, which asks for it", path, ErrNoSeedPassphrase, SeedPassphraseEnv, SeedPassphraseFileEnv)
	}
	if err != nil {
		return nil, "", fmt.Errorf("passphrase: %w", err)
	}
	if len(pass) == 0 {
		return nil, "", errors.New("passphrase: empty")
	}
	if confirm {
		again, _, err := promptPassphrase("the same passphrase again: ")
		if err != nil {
			return nil, "", fmt.Errorf("passphrase: %w", err)
		}
		if !bytes.Equal(pass, again) {
			return nil, "", errors.New("passphrase: the two entries differ")
		}
	}
	return pass, "the terminal", nil
}

// readPassphraseFile reads the passphrase in path: its first line, the
// file private to its owner.
func readPassphraseFile(path string) ([]byte, error) {
	if err := sealed.CheckPrivate(path, "--seed-passphrase-file"); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--seed-passphrase-file: %w", err)
	}
	if len(b) > maxPassphrase {
		return nil, fmt.Errorf("--seed-passphrase-file %s: %d bytes, more than a passphrase (%d at most): is it the right file?", path, len(b), maxPassphrase)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return nil, fmt.Errorf("--seed-passphrase-file %s: the first line is empty", path)
	}
	return line, nil
}

// secretsKeyFromEnv loads the key that seals the database's secrets the way
// `payhook serve` finds it, from the environment the admin commands share
// with it: PAYHOOK_SECRETS_KEY_FILE, else the seed in PAYHOOK_SEED, else the
// seed file PAYHOOK_SEED_FILE (default DefaultSeedPath; an encrypted one
// opens with the passphrase SeedPassphrase finds). It runs only when
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
