package server_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/server"
)

// TestServeRefusesReadableKeyFiles: issue 24, finding 5. A seed, signing
// key or secrets key file that others may read stops the server at start,
// with the chmod that fixes it.
func TestServeRefusesReadableKeyFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := filepath.Join(dir, "payhook.seed")
	if err := os.WriteFile(seed, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "secrets.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("cd", 32)+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		name string
		keys server.KeysConfig
		want string
	}{
		{"seed", server.KeysConfig{SeedFile: seed}, "--seed-file " + seed + ": mode 0644"},
		{"secrets key", server.KeysConfig{Seed: make([]byte, 32), SecretsKeyFile: keyFile}, "--secrets-key-file " + keyFile + ": mode 0640"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := server.New(context.Background(), server.Config{
				Store: server.StoreConfig{DB: "sqlite:" + filepath.Join(t.TempDir(), "p.db")},
				API:   server.APIConfig{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"},
				Keys:  c.keys,
				Dev:   true,
				Out:   io.Discard,
			}, logger)
			if err == nil {
				_ = s.Stop()
				t.Fatal("server started")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "chmod 600") {
				t.Errorf("error %q; want it to name the file, its mode and chmod 600", err)
			}
		})
	}
}
