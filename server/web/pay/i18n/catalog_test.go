package i18n_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payhook/payhook/server/web/pay/i18n"
)

// verbs matches the printf verbs a text fills in (%[1]s), not %%.
var verbs = regexp.MustCompile(`%(?:\[\d+\])?[a-z]`)

// argsOf returns the sorted set of verbs in m's texts.
func argsOf(m i18n.Message) []string {
	set := map[string]bool{}
	for _, s := range m.Texts() {
		for _, v := range verbs.FindAllString(strings.ReplaceAll(s, "%%", ""), -1) {
			set[v] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// TestCatalogueComplete: every language offers exactly the English keys,
// each with the same argument verbs (explicit indexes only), a plural
// message where English has one, and a name of its own; English, German,
// Spanish and Portuguese are offered.
func TestCatalogueComplete(t *testing.T) {
	t.Parallel()
	c, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, l := range c.Languages() {
		codes = append(codes, l.Code)
		if l.Name == "" {
			t.Errorf("%s has no %s", l.Code, i18n.NameKey)
		}
	}
	for _, want := range []string{"en", "de", "es", "pt"} {
		if !slices.Contains(codes, want) {
			t.Errorf("languages %v lack %s", codes, want)
		}
	}
	if codes[0] != "en" {
		t.Errorf("English is not first: %v", codes)
	}
	ref := c.Messages("en")
	for key, m := range ref {
		for _, a := range argsOf(m) {
			if !strings.HasPrefix(a, "%[") {
				t.Errorf("en %s: verb %s without an explicit argument index (translators reorder words)", key, a)
			}
		}
	}
	for _, code := range codes[1:] {
		msgs := c.Messages(code)
		for key, m := range ref {
			got, ok := msgs[key]
			switch {
			case !ok:
				t.Errorf("%s lacks %q", code, key)
			case (m.Forms == nil) != (got.Forms == nil):
				t.Errorf("%s %s: plural forms differ from English's", code, key)
			case key != i18n.NameKey && !slices.Equal(argsOf(m), argsOf(got)):
				t.Errorf("%s %s: arguments %v, English has %v", code, key, argsOf(got), argsOf(m))
			case got.Forms != nil && got.Arg != m.Arg:
				t.Errorf("%s %s: plural on argument %d, English on %d", code, key, got.Arg, m.Arg)
			}
		}
		for key := range msgs {
			if _, ok := ref[key]; !ok {
				t.Errorf("%s has %q, which English has not", code, key)
			}
		}
	}
}

// TestMatch: an explicit choice that is offered wins; Accept-Language is
// matched by x/text (regions and quality values); anything else is
// English.
func TestMatch(t *testing.T) {
	t.Parallel()
	c, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		accept   string
		explicit []string
		want     string
	}{
		{"", nil, "en"},
		{"de-DE,de;q=0.9,en;q=0.8", nil, "de"},
		{"de-CH", nil, "de"},
		{"pt-BR,pt;q=0.9", nil, "pt"},
		{"es-MX", nil, "es"},
		{"fr-FR,fr;q=0.9,es;q=0.5", nil, "es"},
		{"fr-FR", nil, "en"},
		{"ja", nil, "en"},
		{"en-GB,de;q=0.5", nil, "en"},
		{"*", nil, "en"},
		{"garbage;;q=x", nil, "en"},
		{"de", []string{"pt"}, "pt"},
		{"de", []string{"", "es"}, "es"},
		{"de", []string{"xx", "zz"}, "de"},
		{"de", []string{"fr"}, "de"},
	} {
		if got := c.Match(tc.accept, tc.explicit...).Code; got != tc.want {
			t.Errorf("Accept-Language %q, explicit %v: %s, want %s", tc.accept, tc.explicit, got, tc.want)
		}
	}
}

// TestPrinter: messages are filled in per language, plural forms follow
// the count (CLDR's rules through x/text), and numbers are the
// language's.
func TestPrinter(t *testing.T) {
	t.Parallel()
	c, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	en := c.Printer(c.Match("en"))
	de := c.Printer(c.Match("de"))
	for _, tc := range []struct {
		p    *i18n.Printer
		key  string
		args []any
		want string
	}{
		{en, "status.confirming", []any{1, 3}, "Payment detected: 1 of 3 confirmations."},
		{en, "status.confirming", []any{1, 1}, "Payment detected: 1 of 1 confirmation."},
		{de, "status.confirming", []any{2, 6}, "Zahlung erkannt: 2 von 6 Bestätigungen."},
		{en, "period.m", []any{12}, "12 months"},
		{en, "period.m", []any{1}, "1 month"},
		{de, "period.y", []any{1}, "1 Jahr"},
		{de, "status.partial_due", []any{"12.50 EUR"}, "Teilweise bezahlt: noch 12.50 EUR offen."},
		{de, "title.payment", nil, "Zahlung"},
	} {
		if got := tc.p.T(tc.key, tc.args...); got != tc.want {
			t.Errorf("%s %s %v: %q, want %q", tc.p.Language.Code, tc.key, tc.args, got, tc.want)
		}
	}
}

// TestParseRefuses: a catalogue that is not the documented format is an
// error naming the file and key.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for name, files := range map[string]fstest.MapFS{
		"no english":         {"de.json": {Data: []byte(`{"a": "b"}`)}},
		"bad tag":            {"en.json": {Data: []byte(`{}`)}, "german.json": {Data: []byte(`{}`)}},
		"plural without arg": {"en.json": {Data: []byte(`{"a": {"one": "x", "other": "y"}}`)}},
		"bad category":       {"en.json": {Data: []byte(`{"a": {"arg": 1, "several": "x", "other": "y"}}`)}},
		"not text":           {"en.json": {Data: []byte(`{"a": 3}`)}},
	} {
		if _, err := i18n.Parse(files); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
