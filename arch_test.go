package payhook_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mod is the module's import path.
const mod = "github.com/payhook/payhook"

// pkg is what go list reports of one package.
type pkg struct {
	ImportPath string
	Name       string
	Dir        string
	// Imports are the direct imports of the package's non-test files.
	Imports []string
	// Deps are every package the non-test files depend on, transitively.
	Deps           []string
	GoFiles        []string
	TestGoFiles    []string
	XTestGoFiles   []string
	IgnoredGoFiles []string
}

// ours reports whether p is a package of this module.
func (p *pkg) ours() bool { return under(p.ImportPath, mod) }

// helper reports whether p is a test-only helper package (pgtest, chaintest,
// servertest...): design.md names them *test.
func (p *pkg) helper() bool { return strings.HasSuffix(p.Name, "test") }

// under reports whether path is root or inside it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

var (
	listOnce sync.Once
	listed   map[string]*pkg
	listErr  error
)

// packages lists every package of the module and its dependencies, once per
// test binary.
func packages(t *testing.T) map[string]*pkg {
	t.Helper()
	listOnce.Do(func() {
		out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Name,Dir,Imports,Deps,GoFiles,TestGoFiles,XTestGoFiles,IgnoredGoFiles", "./...").Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = errors.New(err.Error() + "\n" + string(ee.Stderr))
			}
			listErr = err
			return
		}
		listed = map[string]*pkg{}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for {
			p := &pkg{}
			if err := dec.Decode(p); err == io.EOF {
				break
			} else if err != nil {
				listErr = err
				return
			}
			listed[p.ImportPath] = p
		}
	})
	if listErr != nil {
		t.Fatalf("go list: %v", listErr)
	}
	return listed
}

// ourPackages returns the module's packages in import-path order.
func ourPackages(t *testing.T) []*pkg {
	var ps []*pkg
	for _, p := range packages(t) {
		if p.ours() {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *pkg) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return ps
}

// importRule says who may import a kind of package directly (non-test
// files only; _test.go files may import anything).
type importRule struct {
	// rule is design.md's wording, quoted in failures.
	rule string
	// target reports whether an import is what the rule is about.
	target func(imp *pkg) bool
	// may reports whether importer may import it.
	may func(importer *pkg) bool
}

// TestImportDirections enforces design.md's import table where it needs the
// package graph: the transitive rules (what a layer must not depend on at
// all), the test-helper rule (helpers are known by their package name) and
// the layering inside server/. The direct rules that a file's imports alone
// decide (who may import ent and gen, the leaf packages of chains, notifier,
// ent/schema, receiver and internal/kind) are depguard's, in .golangci.yml.
func TestImportDirections(t *testing.T) {
	direct := []importRule{
		{
			rule:   "test helpers (packages named *test) are imported only from _test.go files and other *test packages",
			target: func(p *pkg) bool { return p.ours() && p.helper() },
			may:    (*pkg).helper,
		},
		// Go itself refuses an import of another tree's internal/ package;
		// the rules below are the layering inside server/ that the compiler
		// cannot see. server is the composition root: only commands (and
		// the servertest helper) build one. server/rpc and server/gateway
		// translate the wire to the domain and are parts that only the
		// root wires; the domain packages (payment, address, apikey,
		// metrics, merchant/...) may use one another's exported API but
		// never reach up into the wire layer or the root. server/admin,
		// what cmd's admin commands call, sits beside the root, below it.
		{
			rule:   "server (the composition root) is imported only by cmd/ and test helpers",
			target: func(p *pkg) bool { return p.ImportPath == mod+"/server" },
			may:    func(p *pkg) bool { return under(p.ImportPath, mod+"/cmd") || p.helper() },
		},
		// The benchmark's database side serves cmd/payhook-bench alone.
		{
			rule:   "server/bench (the database side of payhook-bench) is imported only by cmd/payhook-bench",
			target: func(p *pkg) bool { return under(p.ImportPath, mod+"/server/bench") },
			may:    func(p *pkg) bool { return p.ImportPath == mod+"/cmd/payhook-bench" },
		},
		{
			rule: "server/gateway and server/browserrpc (the wire layer) are imported only by server, the root that wires them",
			target: func(p *pkg) bool {
				return under(p.ImportPath, mod+"/server/gateway") || under(p.ImportPath, mod+"/server/browserrpc")
			},
			may: func(p *pkg) bool { return p.ImportPath == mod+"/server" },
		},
		// The admin commands answer as the operator API does: server/admin
		// reuses the wire layer's translations.
		{
			rule:   "server/rpc (the wire layer) is imported only by server, the root that wires it, and server/admin, whose commands answer as the API does",
			target: func(p *pkg) bool { return under(p.ImportPath, mod+"/server/rpc") },
			may:    func(p *pkg) bool { return p.ImportPath == mod+"/server" || p.ImportPath == mod+"/server/admin" },
		},
		// The payer pages and the dashboard are two parts on what
		// server/web shares; neither reaches into the other.
		{
			rule:   "server/web/pay is imported only by server, the root that mounts it",
			target: func(p *pkg) bool { return under(p.ImportPath, mod+"/server/web/pay") },
			may:    func(p *pkg) bool { return p.ImportPath == mod+"/server" },
		},
		{
			rule:   "server/web/dashboard is imported only by server, the root that mounts it, and server/admin (`payhook user create` makes its users)",
			target: func(p *pkg) bool { return under(p.ImportPath, mod+"/server/web/dashboard") },
			may:    func(p *pkg) bool { return p.ImportPath == mod+"/server" || p.ImportPath == mod+"/server/admin" },
		},
		// What cmd's admin commands call: commands and the root, which
		// shares its database opening, registry loading and migration.
		{
			rule:   "server/admin (what cmd's admin commands call) is imported only by cmd/, server (the root) and test helpers",
			target: func(p *pkg) bool { return under(p.ImportPath, mod+"/server/admin") },
			may: func(p *pkg) bool {
				return under(p.ImportPath, mod+"/cmd") || p.ImportPath == mod+"/server" || p.helper()
			},
		},
	}
	all := packages(t)
	for _, p := range ourPackages(t) {
		for _, imp := range p.Imports {
			ip, ok := all[imp]
			if !ok {
				continue // "C" and the like
			}
			for _, r := range direct {
				if !r.target(ip) || r.may(p) || under(imp, p.ImportPath) {
					continue
				}
				t.Errorf("%s imports %s (design.md: %s)", p.ImportPath, imp, r.rule)
			}
		}
	}
	// Transitive rules: what a layer must not depend on at all.
	deps := []struct {
		pkgs      string
		forbidden []string
		// allowed are exceptions inside forbidden.
		allowed []string
	}{
		{mod + "/gen", []string{mod + "/server", mod + "/notifier", mod + "/chains", mod + "/ent"}, nil},
		{mod + "/ent/schema", []string{mod + "/ent/db", mod + "/notifier", mod + "/chains", mod + "/server", mod + "/gen"}, nil},
		{mod + "/chains", []string{mod + "/ent", mod + "/notifier", mod + "/server", mod + "/gen"}, nil},
		{mod + "/notifier", []string{mod + "/server", mod + "/gen", mod + "/chains"}, nil},
		// Reactors do the enqueueing and depend on payment, not the
		// reverse: payment knows no notifier, wire or other server part
		// but the journal and the engine that sends its forwards.
		{mod + "/server/payment", []string{mod + "/notifier", mod + "/gen", mod + "/server"}, []string{mod + "/server/ledger", mod + "/server/outbound"}},
		// The journal and the outbound engine serve every money flow and
		// know none of them.
		{mod + "/server/ledger", []string{mod + "/notifier", mod + "/gen", mod + "/server"}, nil},
		{mod + "/server/outbound", []string{mod + "/notifier", mod + "/gen", mod + "/server"}, nil},
		// The production binary carries no benchmark code.
		{mod + "/cmd/payhook", []string{mod + "/server/bench"}, nil},
	}
	// server/admin is below the root: nothing it depends on is the root
	// (the root imports it, to share opening and migrating the database).
	for _, p := range ourPackages(t) {
		if under(p.ImportPath, mod+"/server/admin") && slices.Contains(p.Deps, mod+"/server") {
			t.Errorf("%s depends on %s (design.md: server/admin must not import the root server)", p.ImportPath, mod+"/server")
		}
	}
	for _, p := range ourPackages(t) {
		for _, r := range deps {
			if !under(p.ImportPath, r.pkgs) || p.helper() {
				continue
			}
			for _, dep := range p.Deps {
				if under(dep, r.pkgs) || slices.ContainsFunc(r.allowed, func(a string) bool { return under(dep, a) }) {
					continue // its own subpackages, or an exception
				}
				for _, f := range r.forbidden {
					if under(dep, f) {
						t.Errorf("%s depends on %s (design.md: %s/... must not import %s/...)", p.ImportPath, dep, short(r.pkgs), short(f))
					}
				}
			}
		}
	}

	// The interceptor maps error kinds to codes and access options to
	// answers: of this module it depends on gen (the options) and internal
	// (the kinds) only, never on a domain package whose errors it would
	// otherwise be tempted to match.
	for _, p := range ourPackages(t) {
		if !under(p.ImportPath, mod+"/server/interceptor") {
			continue
		}
		for _, dep := range p.Deps {
			if under(dep, mod) && !under(dep, mod+"/gen") && !under(dep, mod+"/internal") && !under(dep, p.ImportPath) {
				t.Errorf("%s depends on %s (design.md: the interceptor maps error kinds to codes and imports no domain package)", p.ImportPath, dep)
			}
		}
	}
}

// short is path relative to the module, as design.md writes it.
func short(path string) string { return strings.TrimPrefix(path, mod+"/") }

// TestEveryTestMainChecksLeaks keeps design.md's "goroutine-leak check in
// TestMain" true: every package with tests has a TestMain, and every
// TestMain (in any build, the tagged fault tests' included) calls goleak.
func TestEveryTestMainChecksLeaks(t *testing.T) {
	for _, p := range ourPackages(t) {
		tests := slices.Concat(p.TestGoFiles, p.XTestGoFiles)
		if len(tests) == 0 {
			continue
		}
		found := false
		for _, f := range tests {
			has, leakChecked := testMain(t, filepath.Join(p.Dir, f))
			found = found || has
			if has && !leakChecked {
				t.Errorf("%s: %s: TestMain does not call goleak (design.md: goroutine-leak check in TestMain)", p.ImportPath, f)
			}
		}
		if !found {
			t.Errorf("%s has tests but no TestMain calling goleak.VerifyTestMain (design.md: goroutine-leak check in TestMain; add main_test.go)", p.ImportPath)
		}
		// Test files of other builds (build tags) that declare their own
		// TestMain are held to the same rule.
		for _, f := range p.IgnoredGoFiles {
			if !strings.HasSuffix(f, "_test.go") {
				continue
			}
			if has, leakChecked := testMain(t, filepath.Join(p.Dir, f)); has && !leakChecked {
				t.Errorf("%s: %s: TestMain does not call goleak (design.md: goroutine-leak check in TestMain)", p.ImportPath, f)
			}
		}
	}
}

// testMain reports whether the Go file at path declares TestMain, and
// whether that TestMain calls something of go.uber.org/goleak.
func testMain(t *testing.T, path string) (has, leakChecked bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	goleak := ""
	for _, s := range f.Imports {
		if s.Path.Value == `"go.uber.org/goleak"` {
			goleak = "goleak"
			if s.Name != nil {
				goleak = s.Name.Name
			}
		}
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "TestMain" || fn.Body == nil {
			continue
		}
		has = true
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && goleak != "" && id.Name == goleak {
						leakChecked = true
					}
				}
			}
			return !leakChecked
		})
	}
	return has, leakChecked
}

// TestNoDecisionOnNoteText keeps payment state typed: Payment.note is only
// displayed, never decided on. In every non-test file of the module (but
// the data migration that derived the typed columns from the notes once),
// a note may be copied, displayed or extended, and may not be compared,
// searched, switched on or filtered by: no ent note predicate
// (payment.NoteContains, NoteHasPrefix, Note(...), ...), no note in a
// condition, a comparison, a switch, a regexp or a strings or bytes test
// (Contains, HasPrefix, Index, Cut, EqualFold, ...).
func TestNoDecisionOnNoteText(t *testing.T) {
	const migration = mod + "/ent/migrations"
	for _, p := range ourPackages(t) {
		if under(p.ImportPath, mod+"/ent/db") || under(p.ImportPath, mod+"/gen") || p.ImportPath == migration {
			continue
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			for _, where := range noteDecisions(f) {
				t.Errorf("%s: %s decides on a note's text (payment state is typed: decide on hold_reason, reorged, ...; the note is only displayed)", path, where)
			}
		}
	}
}

// noteDecisions returns where f decides on a note's text.
func noteDecisions(f *ast.File) []string {
	payments := map[string]bool{} // local names of ent/db/payment
	for _, s := range f.Imports {
		if s.Path.Value == `"`+mod+`/ent/db/payment"` {
			name := "payment"
			if s.Name != nil {
				name = s.Name.Name
			}
			payments[name] = true
		}
	}
	isNote := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Note" || sel.Sel.Name == "note") {
				found = true
			}
			if id, ok := n.(*ast.Ident); ok && (id.Name == "note" || id.Name == "Note") {
				found = true
			}
			return !found
		})
		return found
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && payments[id.Name] && strings.HasPrefix(n.Sel.Name, "Note") {
				out = append(out, id.Name+"."+n.Sel.Name)
			}
		case *ast.IfStmt:
			if isNote(n.Cond) {
				out = append(out, "an if on a note")
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && isNote(n.Tag) {
				out = append(out, "a switch on a note")
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if isNote(e) {
					out = append(out, "a case on a note")
				}
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (isNote(n.X) || isNote(n.Y)) {
				out = append(out, "a comparison of a note")
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "regexp" || (id.Name == "strings" || id.Name == "bytes") && textTest(sel.Sel.Name)) {
					for _, a := range n.Args {
						if isNote(a) {
							out = append(out, id.Name+"."+sel.Sel.Name+" of a note")
						}
					}
				}
			}
		}
		return true
	})
	return out
}

// textTest reports whether the strings (or bytes) function name tests a
// text rather than builds one.
func textTest(name string) bool {
	for _, p := range []string{"Contains", "HasPrefix", "HasSuffix", "Index", "LastIndex", "EqualFold", "Compare", "Count", "Cut", "Equal", "Fields", "Split"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// TestNoteDecisionsFound: the check above finds each way of deciding on a
// note, and lets copying, displaying and extending one pass.
func TestNoteDecisionsFound(t *testing.T) {
	const header = "package x\nimport (\n\"strings\"\nentpayment \"" + mod + "/ent/db/payment\"\n)\nvar _ = strings.Contains\nvar _ = entpayment.Label\n"
	tests := []struct {
		name, body string
		decides    bool
	}{
		{"ent predicate", "func f() { q.Where(entpayment.NoteContains(\"held\")) }", true},
		{"ent equality predicate", "func f() { q.Where(entpayment.Note(\"held\")) }", true},
		{"strings test in an if", "func f() { if strings.HasPrefix(p.Note, \"not\") { g() } }", true},
		{"strings test in a return", "func f() bool { return strings.Contains(p.Note, \"held\") }", true},
		{"comparison", "func f() bool { return p.Note == held }", true},
		{"switch", "func f() { switch p.Note { case \"x\": } }", true},
		{"a note variable", "func f() { if note != p.Other { g() } }", true},
		{"displayed", "func f() { _ = Row{Note: p.Note} }", false},
		{"extended", "func f() { u.SetNote(withNote(p.Note, heldNote)) }", false},
		{"appended", "func f() string { return strings.TrimPrefix(p.Note+\"; \"+add, \"; \") }", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", header+tt.body, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := noteDecisions(f); (len(got) > 0) != tt.decides {
				t.Errorf("found %v, want a decision: %v", got, tt.decides)
			}
		})
	}
}

// TestServerNamesNoFamily keeps design.md's "server/ never compares family
// names": no non-test file under server/ or cmd/ may name a chain family
// (the chains.FamilyName constants, or a conversion to FamilyName), compare
// a Family field or switch on one. What differs between families is asked
// of the ticker's chains.Family (t.Rules()). Passing a family name through
// (string(t.Family) into storage or the wire) stays allowed.
func TestServerNamesNoFamily(t *testing.T) {
	names := familyNameConstants(t)
	for _, p := range ourPackages(t) {
		if !under(p.ImportPath, mod+"/server") && !under(p.ImportPath, mod+"/cmd") {
			continue
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			for _, problem := range familyReferences(t, path, names) {
				t.Errorf("%s: %s (design.md: server/ never compares family names; ask t.Rules())", short(p.ImportPath)+"/"+name, problem)
			}
		}
	}
}

// familyNameConstants returns the names of the constants chains declares
// with type FamilyName, read from its source so that a new family is
// covered without editing this test.
func familyNameConstants(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "chains/family.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "FamilyName" {
				for _, n := range vs.Names {
					names[n.Name] = true
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("chains/family.go declares no FamilyName constants: update this test")
	}
	return names
}

// familyReferences returns what in the Go file at path names or compares a
// chain family.
func familyReferences(t *testing.T, path string, names map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	chainsName := ""
	for _, s := range f.Imports {
		if s.Path.Value == `"`+mod+`/chains"` {
			chainsName = "chains"
			if s.Name != nil {
				chainsName = s.Name.Name
			}
		}
	}
	isFamilyField := func(e ast.Expr) bool {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Family"
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && chainsName != "" && id.Name == chainsName && (names[n.Sel.Name] || n.Sel.Name == "FamilyName") {
				out = append(out, fmt.Sprintf("line %d names %s.%s", fset.Position(n.Pos()).Line, chainsName, n.Sel.Name))
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (isFamilyField(n.X) || isFamilyField(n.Y)) {
				out = append(out, fmt.Sprintf("line %d compares a Family field", fset.Position(n.Pos()).Line))
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && isFamilyField(n.Tag) {
				out = append(out, fmt.Sprintf("line %d switches on a Family field", fset.Position(n.Pos()).Line))
			}
		}
		return true
	})
	return out
}
