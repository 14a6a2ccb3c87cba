// Package eventtypetest checks a payload payhook built against the JSON
// Schema of its event type (server/merchant/eventtype): a JSON body as it
// is; a GET or form payload field by field, each string read as its
// field's JSON type, null fields being left out there. It is for tests: the
// builders' own tests and the check servertest runs over every
// notification a test server stored. Import it from _test.go files and
// test helpers only.
package eventtypetest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype"
)

// Checker holds the compiled schemas of every event type of the
// catalogue: as eventtype.Event.Schema gives them (JSON bodies), and their
// GET and form form (no field is null there, so none that may be null is
// required).
type Checker struct {
	events map[string]eventtype.Event
	json   map[string]*jsonschema.Schema
	form   map[string]*jsonschema.Schema
}

// New compiles the catalogue's schemas; an error means a schema is not a
// valid draft 2020-12 schema.
func New() (*Checker, error) {
	c := &Checker{events: map[string]eventtype.Event{}, json: map[string]*jsonschema.Schema{}, form: map[string]*jsonschema.Schema{}}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertContent() // JSON text fields hold valid JSON
	for _, e := range eventtype.All() {
		if _, dup := c.events[e.Name]; dup {
			return nil, fmt.Errorf("event type %s is listed twice", e.Name)
		}
		c.events[e.Name] = e
		for _, v := range []struct {
			suffix string
			doc    map[string]any
			into   map[string]*jsonschema.Schema
		}{{"json", e.Schema(), c.json}, {"form", formSchema(e.Schema()), c.form}} {
			loc := "https://payhook.invalid/events/types/" + e.Name + "/" + v.suffix
			if err := comp.AddResource(loc, v.doc); err != nil {
				return nil, fmt.Errorf("schema of %s: %w", e.Name, err)
			}
			s, err := comp.Compile(loc)
			if err != nil {
				return nil, fmt.Errorf("schema of %s: %w", e.Name, err)
			}
			v.into[e.Name] = s
		}
	}
	return c, nil
}

// formSchema is the schema of a GET or form payload of the JSON schema s:
// null is left out there, so a nullable field is optional and never null.
func formSchema(s map[string]any) map[string]any {
	props := s["properties"].(map[string]any)
	nullable := map[string]bool{}
	for name, p := range props {
		p := p.(map[string]any)
		if t, ok := p["type"].([]any); ok {
			nullable[name] = true
			p["type"] = t[0]
		}
	}
	var required []any
	for _, r := range s["required"].([]any) {
		if !nullable[r.(string)] {
			required = append(required, r)
		}
	}
	s["required"] = required
	return s
}

var shared = sync.OnceValues(New)

// Default returns a Checker shared by every test of the process.
func Default() (*Checker, error) { return shared() }

// Known reports whether event is an event type of the catalogue.
func (c *Checker) Known(event string) bool {
	_, ok := c.events[event]
	return ok
}

// Check validates r, built for event type event, against its schema. The
// error names what is wrong: an event type the catalogue does not list, a
// field it does not define for event, a value of the wrong type, a
// required field missing. The query a GET's URL had before payhook
// appended the fields (the merchant's own) is not checked, but for event
// types with custom parameters, whose query carries them.
func (c *Checker) Check(event string, r payload.Request) error {
	e, ok := c.events[event]
	if !ok {
		return fmt.Errorf("event type %q is not in the catalogue (server/merchant/eventtype)", event)
	}
	switch {
	case r.Method == http.MethodGet:
		u, err := url.Parse(r.URL)
		if err != nil {
			return fmt.Errorf("%s: the URL does not parse: %w", event, err)
		}
		pairs, err := parsePairs(u.RawQuery)
		if err != nil {
			return fmt.Errorf("%s: the query: %w", event, err)
		}
		if !e.CustomParams {
			// The fields come last, the first one (event_type or uuid,
			// always written) first: what precedes it is the URL's own.
			for i := len(pairs) - 1; i >= 0; i-- {
				if pairs[i][0] == e.Fields[0].Name {
					pairs = pairs[i:]
					break
				}
			}
		}
		return c.checkForm(e, pairs)
	case r.ContentType == payload.ContentTypeForm:
		pairs, err := parsePairs(string(r.Body))
		if err != nil {
			return fmt.Errorf("%s: the form body: %w", event, err)
		}
		return c.checkForm(e, pairs)
	case r.ContentType == payload.ContentTypeJSON:
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
		if err != nil {
			return fmt.Errorf("%s: the body is not JSON: %w", event, err)
		}
		if err := c.json[event].Validate(inst); err != nil {
			return fmt.Errorf("%s: the JSON body does not match the schema: %w", event, err)
		}
		return nil
	}
	return fmt.Errorf("%s: %s with content type %q is no transport payhook sends", event, r.Method, r.ContentType)
}

// checkForm validates the key=value pairs of a GET or form payload of e:
// each field's text read as its JSON type, against the form schema.
func (c *Checker) checkForm(e eventtype.Event, pairs [][2]string) error {
	inst := make(map[string]any, len(pairs))
	for _, p := range pairs {
		name, text := p[0], p[1]
		f, isField := e.Field(name)
		if _, dup := inst[name]; dup {
			if !isField && e.CustomParams {
				continue // a custom parameter may repeat
			}
			return fmt.Errorf("%s: %s is given twice", e.Name, name)
		}
		if !isField {
			inst[name] = text // the schema decides whether it may be there
			continue
		}
		switch f.Type {
		case eventtype.TypeString:
			inst[name] = text
		default:
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
			if err != nil {
				return fmt.Errorf("%s: %s is %q, not JSON text of a %s", e.Name, name, text, f.Type)
			}
			inst[name] = v
		}
	}
	if err := c.form[e.Name].Validate(inst); err != nil {
		return fmt.Errorf("%s: the GET or form payload does not match the schema: %w", e.Name, err)
	}
	return nil
}

// parsePairs splits a query or form body into its key, value pairs in
// order, unescaped.
func parsePairs(s string) ([][2]string, error) {
	if s == "" {
		return nil, nil
	}
	var out [][2]string
	for _, kv := range strings.Split(s, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("value of %s: %w", key, err)
		}
		out = append(out, [2]string{key, val})
	}
	if len(out) == 0 {
		return nil, errors.New("no fields")
	}
	return out, nil
}
