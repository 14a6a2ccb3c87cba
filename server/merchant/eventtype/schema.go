package eventtype

// Dialect is the JSON Schema draft every schema of the catalogue follows.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// Schema returns the JSON Schema of e's JSON payload, built from its field
// definitions: an object whose properties are e's fields (type, null when
// nullable, the value an event type fixes as const, enum, pattern,
// description), whose required fields are those present in every payload
// of e, and that allows no other member, or, when e carries custom
// parameters, others as strings. In GET and form payloads the same fields
// are strings of the same text and null fields are left out.
//
// The value holds only maps, []any, strings and bools, so it converts to
// JSON and to a google.protobuf.Struct as it is; each call returns a new
// value.
func (e Event) Schema() map[string]any {
	props := make(map[string]any, len(e.Fields))
	required := []any{}
	for _, f := range e.Fields {
		props[f.Name] = f.schema(e)
		if f.When == "" {
			required = append(required, f.Name)
		}
	}
	var additional any = false
	if e.CustomParams {
		additional = map[string]any{
			"type":        string(TypeString),
			"description": "The merchant's custom parameters (cb_params), as given when the address was created.",
		}
	}
	return map[string]any{
		"$schema":              Dialect,
		"title":                e.Name,
		"description":          e.Description,
		"type":                 string(TypeObject),
		"properties":           props,
		"required":             required,
		"additionalProperties": additional,
	}
}

// schema is the JSON Schema of field f of event type e.
func (f Field) schema(e Event) map[string]any {
	s := map[string]any{}
	if f.Nullable {
		s["type"] = []any{string(f.Type), "null"}
	} else {
		s["type"] = string(f.Type)
	}
	switch f.Fixed {
	case EventName:
		s["const"] = e.Name
	case StageName:
		s["const"] = e.Stage
	case Free:
		if len(f.Enum) > 0 {
			enum := make([]any, len(f.Enum))
			for i, v := range f.Enum {
				enum[i] = v
			}
			s["enum"] = enum
		}
	}
	if f.Pattern != "" {
		s["pattern"] = f.Pattern
	}
	if f.JSONText {
		s["contentMediaType"] = "application/json"
	}
	if f.Values != "" {
		s["additionalProperties"] = map[string]any{"type": string(f.Values)}
	}
	desc := f.Description
	if f.When != "" {
		desc += " Present only " + f.When + "."
	}
	s["description"] = desc
	return s
}
