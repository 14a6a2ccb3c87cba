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

// TestImports enforces the layout rule for the lifecycle packages: the
// standard library, decimal and chains only (and, for lifecycle, the family
// packages it dispatches to); never ent, notifier, server or gen, and no
// family package depending on another.
func TestImports(t *testing.T) {
	t.Parallel()
	const chains = "github.com/payhook/payhook/chains"
	base := []string{"github.com/shopspring/decimal", chains}
	families := []string{chains + "/utxo", chains + "/evm", chains + "/tron", chains + "/solana"}
	allowed := map[string][]string{
		".":         append(slices.Clone(base), families...),
		"../utxo":   base,
		"../evm":    base,
		"../tron":   base,
		"../solana": base,
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
