package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// files are the catalogues, one per language.
//
//go:embed *.json
var files embed.FS

// Reference is the language every catalogue is checked against and the
// fallback of every match.
var Reference = language.English

// NameKey is the key of a language's own name.
const NameKey = "language.name"

// Language is one language the pages offer.
type Language struct {
	// Tag is its BCP 47 tag; Code its string (en, de), as ?lang= takes it.
	Tag  language.Tag
	Code string
	// Name is its name in itself (Deutsch), for the language switch.
	Name string
}

// Message is one catalogue entry: a text, or plural forms.
type Message struct {
	// Text is a message that does not depend on a count.
	Text string
	// Arg is the 1-based argument that selects a plural form; Forms are
	// the forms by CLDR category (one, other, ...).
	Arg   int
	Forms map[string]string
}

// UnmarshalJSON reads a text or a plural object.
func (m *Message) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &m.Text); err == nil {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("want a text or an object of plural forms")
	}
	m.Forms = map[string]string{}
	for k, v := range raw {
		if k == "arg" {
			if err := json.Unmarshal(v, &m.Arg); err != nil {
				return fmt.Errorf("arg: want a number")
			}
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("plural form %q: want a text", k)
		}
		m.Forms[k] = s
	}
	if m.Arg < 1 || m.Forms["other"] == "" {
		return fmt.Errorf(`a plural object needs "arg" (the count's argument, from 1) and an "other" form`)
	}
	return nil
}

// Texts returns every text of m (its forms, in category order).
func (m Message) Texts() []string {
	if m.Forms == nil {
		return []string{m.Text}
	}
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m.Forms {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, m.Forms[k])
	}
	return out
}

// Catalog is the pages' messages in every offered language. It is
// immutable and safe for concurrent use.
type Catalog struct {
	langs    []Language // Reference first, then by code
	matcher  language.Matcher
	builder  *catalog.Builder
	messages map[string]map[string]Message // code -> key -> message
}

// Load returns the embedded catalogues.
func Load() (*Catalog, error) { return Parse(files) }

// Parse reads the catalogues of fsys: every *.json file at its root, named
// for its language's tag (de.json); one must be the Reference's.
func Parse(fsys fs.FS) (*Catalog, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	c := &Catalog{builder: catalog.NewBuilder(catalog.Fallback(Reference)), messages: map[string]map[string]Message{}}
	for _, name := range names {
		code := strings.TrimSuffix(path.Base(name), ".json")
		tag, err := language.Parse(code)
		if err != nil || tag.String() != code {
			return nil, fmt.Errorf("i18n: %s: the file name is not a language tag in its canonical form", name)
		}
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var msgs map[string]Message
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, fmt.Errorf("i18n: %s: %w", name, err)
		}
		for key, m := range msgs {
			if err := c.set(tag, key, m); err != nil {
				return nil, fmt.Errorf("i18n: %s: %s: %w", name, key, err)
			}
		}
		c.messages[code] = msgs
		c.langs = append(c.langs, Language{Tag: tag, Code: code, Name: msgs[NameKey].Text})
	}
	slices.SortFunc(c.langs, func(a, b Language) int {
		switch {
		case a.Tag == Reference:
			return -1
		case b.Tag == Reference:
			return 1
		}
		return strings.Compare(a.Code, b.Code)
	})
	if len(c.langs) == 0 || c.langs[0].Tag != Reference {
		return nil, fmt.Errorf("i18n: no catalogue of %s, the reference language", Reference)
	}
	tags := make([]language.Tag, len(c.langs))
	for i, l := range c.langs {
		tags[i] = l.Tag
	}
	c.matcher = language.NewMatcher(tags)
	return c, nil
}

// set adds m as key of tag to the builder.
func (c *Catalog) set(tag language.Tag, key string, m Message) error {
	if m.Forms == nil {
		return c.builder.SetString(tag, key, m.Text)
	}
	cases := make([]any, 0, 2*len(m.Forms))
	for _, k := range []string{"zero", "one", "two", "few", "many"} {
		if f, ok := m.Forms[k]; ok {
			cases = append(cases, k, f)
		}
	}
	for k, f := range m.Forms {
		if strings.HasPrefix(k, "=") || strings.HasPrefix(k, "<") {
			cases = append(cases, k, f)
		} else if !slices.Contains([]string{"zero", "one", "two", "few", "many", "other"}, k) {
			return fmt.Errorf("%q is not a plural category", k)
		}
	}
	cases = append(cases, "other", m.Forms["other"])
	return c.builder.Set(tag, key, plural.Selectf(m.Arg, "%d", cases...))
}

// Languages returns the offered languages, the Reference first.
func (c *Catalog) Languages() []Language { return slices.Clone(c.langs) }

// Messages returns the catalogue of the language code (for tests).
func (c *Catalog) Messages(code string) map[string]Message { return c.messages[code] }

// Offered returns the offered language whose code is code (en, de, pt-BR
// matches pt), and whether there is one.
func (c *Catalog) Offered(code string) (Language, bool) {
	if code == "" {
		return Language{}, false
	}
	tag, err := language.Parse(code)
	if err != nil {
		return Language{}, false
	}
	_, i, conf := c.matcher.Match(tag)
	if conf < language.High {
		return Language{}, false
	}
	return c.langs[i], true
}

// Match returns the language of a request: the first of explicit (the
// ?lang= parameter, then the cookie) that is offered, else the best match
// of the Accept-Language header, else the Reference.
func (c *Catalog) Match(acceptLanguage string, explicit ...string) Language {
	for _, code := range explicit {
		if l, ok := c.Offered(code); ok {
			return l
		}
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return c.langs[0]
	}
	_, i, conf := c.matcher.Match(tags...)
	if conf == language.No {
		return c.langs[0]
	}
	return c.langs[i]
}

// Printer returns the messages of l.
func (c *Catalog) Printer(l Language) *Printer {
	return &Printer{Language: l, p: message.NewPrinter(l.Tag, message.Catalog(c.builder))}
}

// Printer fills in one language's messages.
type Printer struct {
	// Language is the printer's language.
	Language Language
	p        *message.Printer
}

// T returns the message key with args filled in.
func (p *Printer) T(key string, args ...any) string {
	return p.p.Sprintf(key, args...)
}
