package admin_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/seedbox"
	"github.com/payhook/payhook/server/admin"
)

const testPassphrase = "tr0ub4dor&3 horse"

// sealedSeed writes seed, encrypted under testPassphrase (with the least
// Argon2id parameters, for speed), to a 0600 file and returns its path.
func sealedSeed(t *testing.T, seed []byte) string {
	t.Helper()
	data, err := seedbox.Seal(seed, []byte(testPassphrase), seedbox.MinParams)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seed")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noPassphrase clears every source of a seed passphrase for the test.
func noPassphrase(t *testing.T) {
	t.Helper()
	for _, k := range []string{admin.SeedPassphraseEnv, admin.SeedPassphraseFileEnv} {
		t.Setenv(k, "")
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
	admin.ForgetSeedPassphrase()
	t.Cleanup(admin.ForgetSeedPassphrase)
}

// TestReadSeedPlainAndEncrypted: a hex seed file reads as it always did;
// an encrypted one reads to the same seed with the passphrase from
// PAYHOOK_SEED_PASSPHRASE, which is then gone from the environment (and
// kept for the process's later reads), or from a passphrase file (0600;
// --seed-passphrase-file, PAYHOOK_SEED_PASSPHRASE_FILE).
func TestReadSeedPlainAndEncrypted(t *testing.T) {
	noPassphrase(t)
	seed := bytes.Repeat([]byte{0x5a, 0x17}, 32)
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte(hex.EncodeToString(seed)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := admin.ReadSeed(plain); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("plain seed: %x, %v", got, err)
	}
	enc := sealedSeed(t, seed)

	t.Setenv(admin.SeedPassphraseEnv, testPassphrase)
	if got, err := admin.ReadSeed(enc); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("encrypted seed, passphrase in the environment: %x, %v", got, err)
	}
	if v, ok := os.LookupEnv(admin.SeedPassphraseEnv); ok {
		t.Fatalf("%s is still in the environment: %q", admin.SeedPassphraseEnv, v)
	}
	if got, err := admin.ReadSeed(enc); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("second read: %x, %v", got, err)
	}
	admin.ForgetSeedPassphrase()

	passFile := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(passFile, []byte(testPassphrase+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := admin.OpenSeed(enc, passFile); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("passphrase file: %x, %v", got, err)
	}
	t.Setenv(admin.SeedPassphraseFileEnv, passFile)
	if got, err := admin.ReadSeed(enc); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("PAYHOOK_SEED_PASSPHRASE_FILE: %x, %v", got, err)
	}
	// Both the passphrase and a file: one way only.
	t.Setenv(admin.SeedPassphraseEnv, testPassphrase)
	if _, err := admin.ReadSeed(enc); err == nil || !strings.Contains(err.Error(), "one way") {
		t.Fatalf("both given: %v", err)
	}
	// A passphrase file others may read is refused, like the seed file.
	if err := os.Chmod(passFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.OpenSeed(enc, passFile); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("passphrase file 0644: %v", err)
	}
	if err := os.WriteFile(passFile, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(passFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.OpenSeed(enc, passFile); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty passphrase file: %v", err)
	}
}

// TestReadSeedPassphraseErrors: a wrong passphrase is ErrWrongPassphrase
// naming where it came from and never containing it; no passphrase at all
// (standard input no terminal) is ErrNoSeedPassphrase naming the three
// ways to give one; a damaged file says so before any passphrase is asked.
func TestReadSeedPassphraseErrors(t *testing.T) {
	noPassphrase(t)
	enc := sealedSeed(t, bytes.Repeat([]byte{1}, 32))

	t.Setenv(admin.SeedPassphraseEnv, "not the passphrase")
	_, err := admin.ReadSeed(enc)
	if !errors.Is(err, seedbox.ErrWrongPassphrase) || !strings.Contains(err.Error(), admin.SeedPassphraseEnv) || strings.Contains(err.Error(), "not the passphrase") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	// The wrong one is not kept.
	_, err = admin.ReadSeed(enc)
	if !errors.Is(err, admin.ErrNoSeedPassphrase) {
		t.Fatalf("no passphrase: %v", err)
	}
	for _, way := range []string{admin.SeedPassphraseEnv, "--seed-passphrase-file", admin.SeedPassphraseFileEnv, "terminal", enc} {
		if !strings.Contains(err.Error(), way) {
			t.Errorf("the error %q does not name %s", err, way)
		}
	}
	data, _ := os.ReadFile(enc)
	if err := os.WriteFile(enc, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ReadSeed(enc); !errors.Is(err, seedbox.ErrMalformed) {
		t.Fatalf("truncated file: %v", err)
	}
}

// TestSecretsKeyFromEncryptedSeed: the admin commands that seal a secret
// read an encrypted PAYHOOK_SEED_FILE with PAYHOOK_SEED_PASSPHRASE, as
// serve does, and fail with a clear error without it or with a wrong one.
// Both dialects.
func TestSecretsKeyFromEncryptedSeed(t *testing.T) {
	noPassphrase(t)
	t.Setenv("PAYHOOK_SEED", "")
	if err := os.Unsetenv("PAYHOOK_SEED"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAYHOOK_SEED_FILE", sealedSeed(t, bytes.Repeat([]byte{7}, 64)))
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := t.Context()
			dsn := storetest.DSN(t, d)
			if _, err := admin.Migrate(ctx, dsn, ""); err != nil {
				t.Fatal(err)
			}
			admin.ForgetSeedPassphrase()
			if _, err := admin.CreateProject(ctx, dsn, "", &payhookv1.CreateProjectRequest{Name: "none"}); !errors.Is(err, admin.ErrNoSeedPassphrase) {
				t.Fatalf("without a passphrase: %v", err)
			}
			t.Setenv(admin.SeedPassphraseEnv, "wrong")
			if _, err := admin.CreateProject(ctx, dsn, "", &payhookv1.CreateProjectRequest{Name: "wrong"}); !errors.Is(err, seedbox.ErrWrongPassphrase) {
				t.Fatalf("with a wrong passphrase: %v", err)
			}
			t.Setenv(admin.SeedPassphraseEnv, testPassphrase)
			created, err := admin.CreateProject(ctx, dsn, "", &payhookv1.CreateProjectRequest{Name: "shop"})
			if err != nil || created.GetIpnSecret() == "" {
				t.Fatalf("with the passphrase: %v", err)
			}
		})
	}
}
