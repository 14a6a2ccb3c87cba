package admin

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestSeedPassphrasePrompt: on a terminal (the prompt replaced here) the
// passphrase is asked once to open a seed and twice for a new one (seed
// init --encrypt, seed encrypt): two different entries, or an empty one,
// are refused; the prompt names the seed file.
func TestSeedPassphrasePrompt(t *testing.T) {
	for _, k := range []string{SeedPassphraseEnv, SeedPassphraseFileEnv} {
		t.Setenv(k, "")
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
	ForgetSeedPassphrase()
	saved := promptPassphrase
	t.Cleanup(func() { promptPassphrase = saved })
	answers := func(entries ...string) *[]string {
		var prompts []string
		promptPassphrase = func(prompt string) ([]byte, bool, error) {
			prompts = append(prompts, prompt)
			if len(entries) == 0 {
				return nil, true, errors.New("no more input")
			}
			e := entries[0]
			entries = entries[1:]
			return []byte(e), true, nil
		}
		return &prompts
	}

	prompts := answers("open sesame")
	pass, from, err := SeedPassphrase("/srv/seed", "", false)
	if err != nil || !bytes.Equal(pass, []byte("open sesame")) || from != "the terminal" || len(*prompts) != 1 || !strings.Contains((*prompts)[0], "/srv/seed") {
		t.Fatalf("one prompt: %q from %q, %v; prompts %q", pass, from, err, *prompts)
	}
	prompts = answers("new one", "new one")
	if pass, _, err := SeedPassphrase("/srv/seed", "", true); err != nil || string(pass) != "new one" || len(*prompts) != 2 {
		t.Fatalf("confirmed: %q, %v; prompts %q", pass, err, *prompts)
	}
	answers("new one", "new 0ne")
	if _, _, err := SeedPassphrase("/srv/seed", "", true); err == nil || !strings.Contains(err.Error(), "differ") || strings.Contains(err.Error(), "new") {
		t.Fatalf("a mismatch: %v", err)
	}
	answers("", "")
	if _, _, err := SeedPassphrase("/srv/seed", "", true); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty passphrase: %v", err)
	}
	// The environment and a file win over the terminal.
	prompts = answers("typed")
	t.Setenv(SeedPassphraseEnv, "from the environment")
	if pass, from, err := SeedPassphrase("/srv/seed", "", true); err != nil || string(pass) != "from the environment" || from != SeedPassphraseEnv || len(*prompts) != 0 {
		t.Fatalf("environment over terminal: %q from %q, %v", pass, from, err)
	}
	ForgetSeedPassphrase()
}
