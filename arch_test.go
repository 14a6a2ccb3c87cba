package payhook_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirections enforces design.md's import table: arrows point
// inward, and chains, notifier and gen know nothing of the layers above them.
func TestImportDirections(t *testing.T) {
	const mod = "github.com/payhook/payhook/"
	rules := []struct {
		pkgs      string
		forbidden []string
	}{
		{"./gen/...", []string{mod + "server", mod + "notifier", mod + "chains", mod + "ent"}},
		{"./ent/schema/...", []string{mod + "ent/db", mod + "notifier", mod + "chains", mod + "server", mod + "gen"}},
		{"./chains/...", []string{mod + "ent", mod + "notifier", mod + "server", mod + "gen"}},
		{"./notifier/...", []string{mod + "server", mod + "gen", mod + "chains"}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}}:{{join .Deps " "}}`, r.pkgs).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", r.pkgs, err, out)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			pkg, deps, _ := strings.Cut(line, ":")
			for dep := range strings.FieldsSeq(deps) {
				for _, f := range r.forbidden {
					if (dep == f || strings.HasPrefix(dep, f+"/")) && !strings.HasSuffix(pkg, "test") {
						t.Errorf("%s imports %s (design.md: %s must not import %s)", pkg, dep, r.pkgs, f)
					}
				}
			}
		}
	}
}
