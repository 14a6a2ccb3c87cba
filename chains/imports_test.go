package chains

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports enforces the layout rule for chains: the standard library,
// decimal, chain libraries and internal/kind (the error kinds every layer
// declares) only; never ent, notifier, server or gen.
func TestImports(t *testing.T) {
	t.Parallel()
	allowed := []string{
		"github.com/shopspring/decimal",
		"github.com/btcsuite/btcd/",
		"golang.org/x/crypto/",
		"github.com/payhook/payhook/internal/kind",
	}
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
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			ok := false
			for _, prefix := range allowed {
				if path == prefix || strings.HasPrefix(path, prefix) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %q, which chains must not depend on", name, path)
			}
		}
	}
}
