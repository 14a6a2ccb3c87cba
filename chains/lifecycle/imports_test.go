package lifecycle_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImports enforces the layout rule for the lifecycle and family
// packages: the standard library, decimal, chains and the chain libraries
// the families' address formats need; never ent, notifier, server or gen,
// and no family package depending on another (except TRON on EVM for its
// accounts, which are EVM accounts).
func TestImports(t *testing.T) {
	t.Parallel()
	const chains = "github.com/payhook/payhook/chains"
	base := []string{"github.com/shopspring/decimal", chains, chains + "/internal/codec"}
	btcd := []string{"github.com/btcsuite/btcd/btcutil", "github.com/btcsuite/btcd/btcutil/bech32",
		"github.com/btcsuite/btcd/btcutil/base58", "github.com/btcsuite/btcd/chaincfg", "github.com/btcsuite/btcd/btcec/v2", "github.com/btcsuite/btcd/txscript", "github.com/btcsuite/btcd/wire"}
	families := []string{chains + "/utxo", chains + "/evm", chains + "/tron", chains + "/solana"}
	allowed := map[string][]string{
		".":         {chains, chains + "/tron"},
		"../utxo":   append(slices.Clone(base), btcd...),
		"../evm":    append(slices.Clone(base), btcd...),
		"../tron":   append(slices.Clone(base), append(btcd, chains+"/evm")...),
		"../solana": append(slices.Clone(base), btcd...),
		"../family": append([]string{chains}, families...),
	}
	fset := token.NewFileSet()
	for dir, ok := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no Go files", dir)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				first, _, _ := strings.Cut(path, "/")
				if !strings.Contains(first, ".") {
					continue // standard library
				}
				if !slices.Contains(ok, path) {
					t.Errorf("%s imports %q, which it must not depend on", name, path)
				}
			}
		}
	}
}
