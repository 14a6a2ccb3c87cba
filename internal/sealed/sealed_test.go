package sealed_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/internal/sealed"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b, err := sealed.FromSeed([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	s1, err := b.Seal("whsec_x", "projects.ipn_secret")
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := b.Seal("whsec_x", "projects.ipn_secret")
	if s1 == s2 || !sealed.IsSealed(s1) || strings.Contains(s1, "whsec_x") {
		t.Errorf("seals %q, %q: want two different sealed values without the plain text", s1, s2)
	}
	if got, err := b.Open(s1, "projects.ipn_secret"); err != nil || got != "whsec_x" {
		t.Errorf("Open = %q, %v", got, err)
	}
	if _, err := b.Open(s1, "signing_keys.private_pem"); !errors.Is(err, sealed.ErrOpen) {
		t.Errorf("Open in another column = %v; want ErrOpen", err)
	}
	other, _ := sealed.FromSeed([]byte("another seed of sixteen bytes or more"))
	if _, err := other.Open(s1, "projects.ipn_secret"); !errors.Is(err, sealed.ErrOpen) {
		t.Errorf("Open with another key = %v; want ErrOpen", err)
	}
	if got, err := b.Open("whsec_plain", "projects.ipn_secret"); err != nil || got != "whsec_plain" {
		t.Errorf("Open of a value stored in clear = %q, %v; want it as it is", got, err)
	}
	if got, _ := b.Seal("", "c"); got != "" {
		t.Errorf("Seal(\"\") = %q; want empty", got)
	}
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "secrets.key")
	if err := os.WriteFile(path, []byte(strings.Repeat("ab", sealed.KeySize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.FromKeyFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key file = %v; want a refusal saying chmod 600", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.FromKeyFile(path); err != nil {
		t.Errorf("a private key file: %v", err)
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.FromKeyFile(path); err == nil || !strings.Contains(err.Error(), "openssl rand -hex 32") {
		t.Errorf("a bad key file = %v; want the way to make one", err)
	}
}
