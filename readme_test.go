package payhook_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeBlocks returns the fenced code blocks of a Markdown section, in
// order, without their fences.
func codeBlocks(section string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(section, "```")
		if !ok {
			return out
		}
		_, rest, _ = strings.Cut(rest, "\n") // the info string
		block, after, ok := strings.Cut(rest, "```")
		if !ok {
			return out
		}
		out = append(out, strings.TrimSpace(block))
		section = after
	}
}

// sections splits a Markdown document at its "## " headings: the text
// before the first, then each heading with its text.
func sections(doc string) []string {
	return regexp.MustCompile(`(?m)^## `).Split(doc, -1)
}

// TestREADME keeps the README's promises: it starts with what payhook is
// and the two commands (the server on the embedded database, and the test
// command .ci/run runs), then the five-minute path to a verified callback,
// then a table of contents that links every document in docs/.
func TestREADME(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	secs := sections(string(b))
	if len(secs) < 5 {
		t.Fatalf("README has %d sections", len(secs))
	}
	if intro := secs[0]; !strings.HasPrefix(intro, "# payhook\n\npayhook is ") {
		t.Errorf("README does not start by saying what payhook is:\n%.200s", intro)
	}
	want := []string{"Two commands", "Five minutes to a verified callback", "Keep your keys off the server", "Documentation"}
	for i, w := range want {
		if !strings.HasPrefix(secs[i+1], w+"\n") && !strings.HasPrefix(secs[i+1], w+" (") {
			t.Fatalf("README section %d is %q, want %q", i+1, strings.SplitN(secs[i+1], "\n", 2)[0], w)
		}
	}
	cmds := codeBlocks(secs[1])
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/payhook serve --dev" || cmds[1] != "go test ./..." {
		t.Fatalf("the two commands are %q", cmds)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmds[1]) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q on a line of its own", cmds[1])
	}
	path := strings.Join(codeBlocks(secs[2]), "\n")
	for _, step := range []string{"serve --dev", "examples/receiver", "/btc/create/", "devnet pay", "devnet mine"} {
		if !strings.Contains(path, step) {
			t.Errorf("the five-minute path lacks %q", step)
		}
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs: %v %v", docs, err)
	}
	for _, d := range docs {
		if !strings.Contains(secs[4], "]("+d+")") {
			t.Errorf("the table of contents does not link %s", d)
		}
	}
	if keys := strings.Join(codeBlocks(secs[3]), "\n"); !strings.Contains(keys, "project wallet set") || !strings.Contains(keys, "wpkh(") {
		t.Errorf("the watch-only section does not show setting a key: %q", keys)
	}
}

// mdLink matches a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksStayInTheRepository: every link of the README and of docs/
// is a path inside the repository that exists (or an anchor); no link
// leaves the repository, to a sibling directory or to the web.
func TestDocLinksStayInTheRepository(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "examples/receiver/README.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.HasPrefix(target, "#") {
				continue
			}
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s links outside the repository: %s", f, target)
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			abs := filepath.Join(root, filepath.Dir(f), target)
			if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Errorf("%s links outside the repository: %s", f, m[1])
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}
