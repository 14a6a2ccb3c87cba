package signer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shopspring/decimal"
)

// state is what the daily caps need to survive a restart: the UTC day,
// what left each project's ticker that day, and what each transaction
// counted, by the hash of its unsigned form (so that signing one
// transaction again, as the server does after a crash, counts it once,
// while another transaction under the same outbound key counts anew). It lives in
// one small JSON file beside the seed, replaced atomically (a temporary
// file, fsync, rename, fsync of the directory) before a signature is
// returned: a crash after the write forgets nothing, and a crash before it
// returned no signature.
type state struct {
	// Day is the UTC day (2006-01-02) Spent and Keys are of.
	Day string `json:"day"`
	// Spent is, per "project/ticker", the sum that left this day.
	Spent map[string]decimal.Decimal `json:"spent"`
	// Txs is, per unsigned transaction hash, what it counted this day.
	Txs map[string]decimal.Decimal `json:"txs"`
}

// loadState reads path; a missing file is an empty state.
func loadState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{Spent: map[string]decimal.Decimal{}, Txs: map[string]decimal.Decimal{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--state-file: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("--state-file %s: %w", path, err)
	}
	if s.Spent == nil {
		s.Spent = map[string]decimal.Decimal{}
	}
	if s.Txs == nil {
		s.Txs = map[string]decimal.Decimal{}
	}
	return &s, nil
}

// roll starts day afresh when it is not s's. (A transaction signed again
// on the next day counts again: the cap errs on the side of less.)
func (s *state) roll(day string) {
	if s.Day != day {
		s.Day, s.Spent, s.Txs = day, map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	}
}

// save writes s to path atomically and durably.
func (s *state) save(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".signer-state-*")
	if err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // gone after the rename; a leftover otherwise
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("--state-file: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("--state-file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	return nil
}
