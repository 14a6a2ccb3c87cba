package price_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps this package a leaf: the standard library, decimal, the
// chains package and the house's Start/Stop base only (design.md, "Which
// way imports run").
func TestImports(t *testing.T) {
	t.Parallel()
	allowed := []string{"github.com/shopspring/decimal", "github.com/payhook/payhook/chains", "github.com/payhook/payhook/internal/startstop"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
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
			if strings.Contains(first, ".") && !slices.Contains(allowed, path) {
				t.Errorf("%s imports %q; only the standard library, decimal, chains and internal/startstop are allowed", name, path)
			}
		}
	}
}
