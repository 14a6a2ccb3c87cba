package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/payhook/payhook/ent/store"
)

// ScratchDB is a database created for one benchmark run.
type ScratchDB struct {
	// DSN names the scratch database as payhook's --db takes it.
	DSN string

	admin *store.DB // PostgreSQL: the connection that created it, and drops it
	name  string    // PostgreSQL: its name
	dir   string    // SQLite: the temporary directory holding its file
}

// CreateDB creates a scratch database on server: "sqlite" (or any
// "sqlite:..." DSN) makes a file in a new temporary directory; a
// "postgres://" URL creates a database named payhook_bench_<random> on that
// PostgreSQL server, through the database the URL names.
func CreateDB(ctx context.Context, server string) (*ScratchDB, error) {
	if server == "sqlite" || strings.HasPrefix(server, "sqlite:") {
		dir, err := os.MkdirTemp("", "payhook-bench-")
		if err != nil {
			return nil, fmt.Errorf("scratch database: %w", err)
		}
		return &ScratchDB{DSN: "sqlite:" + filepath.Join(dir, "bench.db"), dir: dir}, nil
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	admin, err := store.Open(ctx, server)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", u.Redacted(), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "payhook_bench_" + hex.EncodeToString(b[:])
	if _, err := admin.SQL.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, errors.Join(fmt.Errorf("create scratch database: %w", err), admin.Close())
	}
	u.Path = "/" + name
	return &ScratchDB{DSN: u.String(), admin: admin, name: name}, nil
}

// Drop removes the scratch database (every connection to it is ended
// first) and releases what CreateDB opened.
func (s *ScratchDB) Drop() error {
	if s.admin == nil {
		if err := os.RemoveAll(s.dir); err != nil {
			return fmt.Errorf("drop scratch database: %w", err)
		}
		return nil
	}
	_, err := s.admin.SQL.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+s.name+" WITH (FORCE)")
	if err != nil {
		err = fmt.Errorf("drop scratch database %s: %w", s.name, err)
	}
	return errors.Join(err, s.admin.Close())
}
