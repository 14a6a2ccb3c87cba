package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionFlag: payhook --version is payhook version.
func TestVersionFlag(t *testing.T) {
	var a, b, errOut bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, &a, &errOut); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"version"}, &b, &errOut); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !strings.HasPrefix(a.String(), "payhook ") {
		t.Fatalf("--version printed %q, version %q", a.String(), b.String())
	}
	// A test binary is not stamped: the commit says so, and how.
	if !strings.Contains(a.String(), "commit  unknown (not stamped: build with scripts/build.sh") {
		t.Fatalf("unstamped version: %q", a.String())
	}
}

// TestVersionStampedAtBuild: the commit given to the linker is what
// payhook version prints, in a build without VCS data.
func TestVersionStampedAtBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "payhook")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.commit=0123456789abcdef -X main.version=v9.8.7", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "payhook v9.8.7\ncommit  0123456789abcdef\n") {
		t.Fatalf("payhook --version: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "version", "--json").Output()
	var v map[string]string
	if err != nil || json.Unmarshal(out, &v) != nil || v["commit"] != "0123456789abcdef" {
		t.Fatalf("payhook version --json: %v %s", err, out)
	}
}
