package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/payhook/payhook/internal/sealed"
	"github.com/payhook/payhook/internal/seedbox"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
)

// seedFileDefaultText describes defaultSeedFile in --help.
const seedFileDefaultText = "$XDG_CONFIG_HOME/payhook/seed, else ~/.config/payhook/seed"

// seedPassphraseFileUsage is --seed-passphrase-file's help, serve's and the
// seed commands'.
const seedPassphraseFileUsage = "file (mode 0600) whose first line is the passphrase of an encrypted seed file; else PAYHOOK_SEED_PASSPHRASE holds it, else it is asked on the terminal"

// defaultSeedFile is where serve and seed init keep the address seed when
// --seed-file (PAYHOOK_SEED_FILE) is not given (admin.DefaultSeedPath: the
// user's configuration directory, or ./payhook.seed of earlier versions
// with a notice on stderr).
func defaultSeedFile(stderr io.Writer) string { return admin.DefaultSeedPath(stderr) }

// seedFlags are the seed commands' flags: the seed file and where the
// passphrase comes from.
func seedFlags(fs *flag.FlagSet, what string) (path, passFile *string) {
	path = fs.String("seed-file", "", what+" (default "+seedFileDefaultText+")")
	passFile = fs.String("seed-passphrase-file", "", seedPassphraseFileUsage)
	return path, passFile
}

// seedInit: payhook seed init [--seed-file PATH] [--encrypt
// [--seed-passphrase-file FILE]].
func seedInit(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook seed init", stderr)
	path, passFile := seedFlags(fs, "where to write the new master seed (mode 0600); never overwritten")
	encrypt := fs.Bool("encrypt", false, "encrypt the seed under a passphrase (asked twice on a terminal; else PAYHOOK_SEED_PASSPHRASE or --seed-passphrase-file), which serve then needs at every start")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *path == "" {
		*path = defaultSeedFile(stderr)
	}
	if !*encrypt {
		if err := server.InitSeed(*path); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote a new master seed to %s (mode 0600).\nBack it up now, offline: every payment address and its funds derive from it, and nothing else can recover them.\n", *path)
		return nil
	}
	if _, err := os.Stat(*path); err == nil {
		return fmt.Errorf("%s exists: payhook seed init never overwrites a seed (funds may depend on it); payhook seed encrypt encrypts it", *path)
	}
	pass, _, err := admin.SeedPassphrase(*path, *passFile, true)
	if err != nil {
		return err
	}
	seed := make([]byte, 64)
	if _, err := rand.Read(seed); err != nil {
		return fmt.Errorf("generate seed: %w", err)
	}
	data, err := seedbox.Seal(seed, pass, seedbox.Params{})
	if err != nil {
		return err
	}
	clear(seed)
	if err := os.MkdirAll(filepath.Dir(*path), 0o700); err != nil {
		return fmt.Errorf("--seed-file: %w", err)
	}
	f, err := os.OpenFile(*path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("--seed-file: %w", err)
	}
	if err := writeSync(f, data); err != nil {
		// Nothing was written that holds a seed: the next init may try again.
		_ = os.Remove(*path)
		return fmt.Errorf("--seed-file: %w", err)
	}
	syncDir(filepath.Dir(*path))
	fmt.Fprintf(stdout, "wrote a new master seed, encrypted under your passphrase, to %s (mode 0600).\nBack up the file and the passphrase now, apart: every payment address and its funds derive from the seed, and neither alone recovers them. serve needs the passphrase at every start.\n", *path)
	return nil
}

// seedEncrypt: payhook seed encrypt [--seed-file PATH]
// [--seed-passphrase-file FILE]: the plain seed file encrypted in place,
// the same seed.
func seedEncrypt(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook seed encrypt", stderr)
	path, passFile := seedFlags(fs, "the hex seed file to encrypt in place")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *path == "" {
		*path = defaultSeedFile(stderr)
	}
	raw, err := os.ReadFile(*path)
	if err != nil {
		return fmt.Errorf("--seed-file: %w", err)
	}
	if seedbox.IsSealed(raw) {
		return fmt.Errorf("--seed-file %s is already encrypted", *path)
	}
	seed, err := admin.ReadSeed(*path)
	if err != nil {
		return err
	}
	pass, _, err := admin.SeedPassphrase(*path, *passFile, true)
	if err != nil {
		return err
	}
	data, err := seedbox.Seal(seed, pass, seedbox.Params{})
	if err != nil {
		return err
	}
	// What is written opens to the same seed, before the plain one goes.
	if back, err := seedbox.Open(data, pass); err != nil || !bytes.Equal(back, seed) {
		return fmt.Errorf("encrypt: the sealed seed does not open to the same seed (%v); %s is unchanged", err, *path)
	}
	if err := replaceFile(*path, data); err != nil {
		return fmt.Errorf("--seed-file %s: %w (the file is unchanged)", *path, err)
	}
	fmt.Fprintf(stdout, "encrypted the master seed in %s under your passphrase (the same seed: addresses and keys do not change).\nBack up the passphrase apart from the file; copies of the plain file made before (backups) still hold the seed in clear. serve needs the passphrase at every start.\n", *path)
	return nil
}

// writeSync writes data to f, flushes it to the disk and closes f.
func writeSync(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write's error is the one to report
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// replaceFile replaces path with data atomically: a temporary file (mode
// 0600) in its directory, written and flushed, renamed over it; the
// directory is flushed too, so that the rename survives a crash.
func replaceFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if err := writeSync(f, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir flushes directory dir, so that a file created or renamed in it
// survives a crash; not every system flushes a directory, and what was
// done is done, so it reports nothing.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// openSealedSeed returns the seed of an encrypted seed file at path, opened
// with the passphrase (--seed-passphrase-file's passFile,
// PAYHOOK_SEED_PASSPHRASE, or the terminal), or nil when path holds a plain
// seed or nothing: serve opens it before anything starts, so that a wrong
// passphrase stops it at once.
func openSealedSeed(path, passFile string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !seedbox.IsSealed(raw)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--seed-file: %w", err)
	}
	return admin.OpenSeed(path, passFile)
}

// newPassphraseFileUsage is seed passphrase's --new-passphrase-file help.
const newPassphraseFileUsage = "file (mode 0600) whose first line is the new passphrase; else it is asked twice on the terminal"

// promptNewPassphrase asks for a new passphrase on the terminal, without
// echo, twice; ok is false when standard input is no terminal. Tests
// replace it.
var promptNewPassphrase = func(path string) (pass []byte, ok bool, err error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return nil, false, nil
	}
	fmt.Fprintf(os.Stderr, "new passphrase of the address seed %s: ", path)
	pass, err = term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return nil, true, err
	}
	fmt.Fprint(os.Stderr, "the same new passphrase again: ")
	again, err := term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return nil, true, err
	}
	if !bytes.Equal(pass, again) {
		return nil, true, errors.New("the two entries differ")
	}
	return pass, true, nil
}

// maxPassphraseFile bounds a passphrase file, as admin does for the old
// one: a larger one is likely the wrong file.
const maxPassphraseFile = 1024

// newSeedPassphrase returns the new passphrase of the seed file path: the
// first line of file (mode 0600) when given, else what the terminal is
// told twice. It is never in an error.
func newSeedPassphrase(path, file string) ([]byte, error) {
	if file == "" {
		pass, ok, err := promptNewPassphrase(path)
		switch {
		case !ok:
			return nil, fmt.Errorf("--seed-file %s: no new passphrase: name a file (mode 0600) whose first line is it with --new-passphrase-file (or PAYHOOK_NEW_PASSPHRASE_FILE), or run payhook on a terminal, which asks for it twice", path)
		case err != nil:
			return nil, fmt.Errorf("new passphrase: %w", err)
		case len(pass) == 0:
			return nil, fmt.Errorf("new passphrase: %w", seedbox.ErrEmptyPassphrase)
		}
		return pass, nil
	}
	if err := sealed.CheckPrivate(file, "--new-passphrase-file"); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--new-passphrase-file: %w", err)
	}
	if len(b) > maxPassphraseFile {
		return nil, fmt.Errorf("--new-passphrase-file %s: %d bytes, more than a passphrase (%d at most): is it the right file?", file, len(b), maxPassphraseFile)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return nil, fmt.Errorf("--new-passphrase-file %s: the first line is empty", file)
	}
	return line, nil
}

// seedPassphrase: payhook seed passphrase [--seed-file PATH]
// [--seed-passphrase-file FILE] [--new-passphrase-file FILE]: the
// encrypted seed file sealed again in place under a new passphrase (the
// same seed, the same Argon2id parameters, a new salt and nonce).
func seedPassphrase(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook seed passphrase", stderr)
	path, passFile := seedFlags(fs, "the encrypted seed file whose passphrase changes, in place")
	newPassFile := fs.String("new-passphrase-file", "", newPassphraseFileUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *path == "" {
		*path = defaultSeedFile(stderr)
	}
	raw, err := os.ReadFile(*path)
	if err != nil {
		return fmt.Errorf("--seed-file: %w", err)
	}
	if !seedbox.IsSealed(raw) {
		return fmt.Errorf("--seed-file %s is not encrypted: payhook seed encrypt encrypts it", *path)
	}
	params, err := seedbox.ParamsOf(raw)
	if err != nil {
		return fmt.Errorf("--seed-file %s: %w", *path, err)
	}
	// The old passphrase, the way serve finds it (and the same error when
	// it is wrong); it is forgotten when the command ends.
	defer admin.ForgetSeedPassphrase()
	seed, err := admin.OpenSeed(*path, *passFile)
	if err != nil {
		return err
	}
	defer clear(seed)
	pass, err := newSeedPassphrase(*path, *newPassFile)
	if err != nil {
		return err
	}
	defer clear(pass)
	if _, err := seedbox.Open(raw, pass); err == nil {
		return fmt.Errorf("--seed-file %s: the new passphrase is the one it has; %s is unchanged", *path, *path)
	}
	data, err := seedbox.Seal(seed, pass, params)
	if err != nil {
		return err
	}
	// What is written opens to the same seed under the new passphrase,
	// before the old file goes.
	if back, err := seedbox.Open(data, pass); err != nil || !bytes.Equal(back, seed) {
		return fmt.Errorf("passphrase: the sealed seed does not open to the same seed (%v); %s is unchanged", err, *path)
	}
	if err := replaceFile(*path, data); err != nil {
		return fmt.Errorf("--seed-file %s: %w (the file is unchanged)", *path, err)
	}
	fmt.Fprintf(stdout, "sealed the master seed in %s under the new passphrase (the same seed: addresses and keys do not change).\nThe old passphrase no longer opens this file, but still opens copies made before (backups): replace them. serve needs the new passphrase from its next start.\n", *path)
	return nil
}
