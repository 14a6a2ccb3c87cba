package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/internal/seedbox"
	"github.com/payhook/payhook/server/admin"
)

// sealedSeedFile writes seed sealed under pass (the cheapest parameters:
// the tests derive many keys) to dir/seed, mode 0600, and returns its path
// and contents.
func sealedSeedFile(t *testing.T, dir string, seed []byte, pass string) (string, []byte) {
	t.Helper()
	data, err := seedbox.Seal(seed, []byte(pass), seedbox.MinParams)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "seed")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// writePassFile writes pass and a newline to dir/name, mode 0600.
func writePassFile(t *testing.T, dir, name, pass string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// noPrompt makes the new passphrase's prompt see no terminal (as under go
// test), or answer what answer returns.
func noPrompt(t *testing.T, answer func(string) ([]byte, bool, error)) {
	t.Helper()
	saved := promptNewPassphrase
	if answer == nil {
		answer = func(string) ([]byte, bool, error) { return nil, false, nil }
	}
	promptNewPassphrase = answer
	t.Cleanup(func() { promptNewPassphrase = saved })
}

// TestSeedPassphrase: seed passphrase seals the same seed again in place
// under the new passphrase (from --new-passphrase-file), with the file's
// Argon2id parameters and a new salt: the old passphrase (from
// PAYHOOK_SEED_PASSPHRASE, then out of the environment) no longer opens
// it, the new one does, serve derives the same seed, the mode stays 0600,
// no temporary file is left, and neither passphrase is printed.
func TestSeedPassphrase(t *testing.T) {
	noSeedPassphrase(t)
	noPrompt(t, nil)
	dir := t.TempDir()
	seed := bytes.Repeat([]byte{0x5e, 0xed}, 16)
	const oldPass, newPass = "the old passphrase", "a brand new passphrase"
	path, before := sealedSeedFile(t, dir, seed, oldPass)
	newFile := writePassFile(t, dir, "new", newPass)
	names := dirNames(t, dir)

	t.Setenv(admin.SeedPassphraseEnv, oldPass)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"seed", "passphrase", "--seed-file", path, "--new-passphrase-file", newFile}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if _, ok := os.LookupEnv(admin.SeedPassphraseEnv); ok {
		t.Fatal("seed passphrase left the old passphrase in the environment")
	}
	for _, p := range []string{oldPass, newPass} {
		if strings.Contains(out.String()+errOut.String(), p) {
			t.Fatalf("the output holds a passphrase:\n%s\n%s", out.String(), errOut.String())
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := seedbox.Open(after, []byte(newPass))
	if err != nil || !bytes.Equal(opened, seed) {
		t.Fatalf("the new passphrase opens %x (%v), want %x", opened, err, seed)
	}
	if _, err := seedbox.Open(after, []byte(oldPass)); !errors.Is(err, seedbox.ErrWrongPassphrase) {
		t.Fatalf("the old passphrase on the new file: %v, want %v", err, seedbox.ErrWrongPassphrase)
	}
	if p, err := seedbox.ParamsOf(after); err != nil || p != seedbox.MinParams {
		t.Fatalf("parameters %+v (%v), want the file's own %+v", p, err, seedbox.MinParams)
	}
	saltLine := func(data []byte) string { return strings.Split(string(data), "\n")[1] }
	if saltLine(after) == saltLine(before) {
		t.Fatalf("the salt did not change: %q", saltLine(after))
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("seed file %v (%v), want mode 0600", st, err)
	}
	if got := dirNames(t, dir); strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("the directory holds %v, want %v (a temporary file left?)", got, names)
	}
	// serve opens it with the new passphrase, to the same seed.
	admin.ForgetSeedPassphrase()
	served, err := servedSeed(t, "--seed-file", path, "--seed-passphrase-file", newFile)
	if err != nil || !bytes.Equal(served, seed) {
		t.Fatalf("serve with the new passphrase: %x, %v; want %x", served, err, seed)
	}

	// Back again, the old passphrase from a file and the new one from the
	// terminal (asked twice, which promptNewPassphrase does).
	oldFile := writePassFile(t, t.TempDir(), "old", newPass)
	noPrompt(t, func(string) ([]byte, bool, error) { return []byte(oldPass), true, nil })
	if err := run(context.Background(), []string{"seed", "passphrase", "--seed-file", path, "--seed-passphrase-file", oldFile}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if opened, err := seedbox.Open(data, []byte(oldPass)); err != nil || !bytes.Equal(opened, seed) {
		t.Fatalf("after the change back: %x (%v), want %x", opened, err, seed)
	}
}

// TestSeedPassphraseRefused: a wrong old passphrase (the error serve
// gives, without the passphrase), no new passphrase, a new one that is the
// old one, two prompts that differ, a new passphrase file others may read,
// and a plain seed file are refused, each leaving the seed file as it was.
func TestSeedPassphraseRefused(t *testing.T) {
	noSeedPassphrase(t)
	noPrompt(t, nil)
	dir := t.TempDir()
	seed := bytes.Repeat([]byte{0xab}, 32)
	const oldPass = "right passphrase"
	path, before := sealedSeedFile(t, dir, seed, oldPass)
	newFile := writePassFile(t, dir, "new", "next passphrase")
	wrongFile := writePassFile(t, dir, "wrong", "guessed wrong")
	oldFile := writePassFile(t, dir, "old", oldPass)
	looseFile := writePassFile(t, dir, "loose", "next passphrase")
	if err := os.Chmod(looseFile, 0o644); err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, dir)
	ctx := context.Background()

	for _, c := range []struct {
		name   string
		args   []string
		prompt func(string) ([]byte, bool, error)
		is     error
		want   string
	}{
		{name: "wrong old passphrase", args: []string{"--seed-passphrase-file", wrongFile, "--new-passphrase-file", newFile},
			is: seedbox.ErrWrongPassphrase, want: "it does not open this seed"},
		{name: "no old passphrase", args: []string{"--new-passphrase-file", newFile}, is: admin.ErrNoSeedPassphrase},
		{name: "no new passphrase", args: []string{"--seed-passphrase-file", oldFile}, want: "--new-passphrase-file"},
		{name: "the same passphrase", args: []string{"--seed-passphrase-file", oldFile, "--new-passphrase-file", oldFile}, want: "is the one it has"},
		{name: "prompts differ", args: []string{"--seed-passphrase-file", oldFile},
			prompt: func(string) ([]byte, bool, error) { return nil, true, errors.New("the two entries differ") }, want: "differ"},
		{name: "empty prompt", args: []string{"--seed-passphrase-file", oldFile},
			prompt: func(string) ([]byte, bool, error) { return nil, true, nil }, is: seedbox.ErrEmptyPassphrase},
		{name: "new passphrase file readable by others", args: []string{"--seed-passphrase-file", oldFile, "--new-passphrase-file", looseFile}, want: "chmod 600"},
	} {
		t.Run(c.name, func(t *testing.T) {
			noPrompt(t, c.prompt)
			admin.ForgetSeedPassphrase()
			var out, errOut bytes.Buffer
			err := run(ctx, append([]string{"seed", "passphrase", "--seed-file", path}, c.args...), &out, &errOut)
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %v and %q", err, c.is, c.want)
			}
			for _, p := range []string{oldPass, "guessed wrong", "next passphrase"} {
				if strings.Contains(err.Error()+out.String()+errOut.String(), p) {
					t.Fatalf("the error or output holds a passphrase: %v\n%s%s", err, out.String(), errOut.String())
				}
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
				t.Fatal("a refused change rewrote the seed file")
			}
			if got := dirNames(t, dir); strings.Join(got, " ") != strings.Join(names, " ") {
				t.Fatalf("the directory holds %v, want %v", got, names)
			}
		})
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"seed", "passphrase", "--seed-file", plain, "--seed-passphrase-file", oldFile, "--new-passphrase-file", newFile}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("a plain seed file: %v", err)
	}
}

// TestSeedPassphraseExitStatus: the payhook process given a wrong old
// passphrase exits with status 2 and serve's error, which does not repeat
// the passphrase. The test binary runs main itself, as payhook.
func TestSeedPassphraseExitStatus(t *testing.T) {
	if args := os.Getenv("PAYHOOK_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"payhook"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	dir := t.TempDir()
	path, before := sealedSeedFile(t, dir, bytes.Repeat([]byte{7}, 32), "right passphrase")
	wrong := writePassFile(t, dir, "wrong", "guessed wrong")
	next := writePassFile(t, dir, "new", "next passphrase")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSeedPassphraseExitStatus$")
	cmd.Env = append(os.Environ(), "PAYHOOK_TEST_MAIN_ARGS="+strings.Join([]string{
		"seed", "passphrase", "--seed-file", path, "--seed-passphrase-file", wrong, "--new-passphrase-file", next}, "\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want status 2; stderr:\n%s", err, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "wrong passphrase") || !strings.Contains(msg, path) || strings.Contains(msg, "guessed") {
		t.Fatalf("stderr %q: want the wrong passphrase error naming %s, without the passphrase", msg, path)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
		t.Fatal("a wrong passphrase rewrote the seed file")
	}
}

// TestReplaceFileFailure: when the last step of replaceFile (the rename)
// fails, its temporary file is removed and what was at the path is
// untouched; so an interrupted change leaves the old file or the new one
// whole, never a part of either.
func TestReplaceFileFailure(t *testing.T) {
	dir := t.TempDir()
	// A directory that is not empty cannot be renamed over.
	target := filepath.Join(dir, "seed")
	if err := os.MkdirAll(filepath.Join(target, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(target, []byte("new contents")); err == nil {
		t.Fatal("replaceFile over a directory succeeded")
	}
	if got := dirNames(t, dir); strings.Join(got, " ") != "seed" {
		t.Fatalf("the directory holds %v, want only seed (the temporary file removed)", got)
	}
	if got := dirNames(t, target); strings.Join(got, " ") != "inside" {
		t.Fatalf("the target holds %v, want it untouched", got)
	}
}
