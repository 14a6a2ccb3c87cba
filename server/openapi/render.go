package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"
)

// Spec is the part of an OpenAPI 3.1 document the reference page shows.
type Spec struct {
	Info struct {
		Title, Version, Description string
	}
	Paths      map[string]map[string]*operation
	Components struct {
		Schemas         map[string]*schema
		Responses       map[string]*response
		Parameters      map[string]*parameter
		SecuritySchemes map[string]struct{ Type, In, Name, Description string } `json:"securitySchemes"`
	}
}

type operation struct {
	OperationID string `json:"operationId"`
	Summary     string
	Description string
	Tags        []string
	Security    *[]map[string][]string
	Parameters  []*parameter
	RequestBody *struct {
		Content map[string]struct{ Schema *schema }
	} `json:"requestBody"`
	Responses map[string]*response
}

// parameter is an operation's parameter, or a reference to one of
// components.parameters (the Idempotency-Key header).
type parameter struct {
	Ref                   string `json:"$ref"`
	Name, In, Description string
	Required              bool
	Schema                *schema
}

type response struct {
	Ref         string `json:"$ref"`
	Description string
	Content     map[string]struct{ Schema *schema }
	Headers     map[string]json.RawMessage
}

type schema struct {
	Ref                  string `json:"$ref"`
	Type                 any
	Format, Pattern      string
	Description          string
	Const                any
	Enum                 []any
	Properties           map[string]*schema
	Required             []string
	Items                *schema
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
	OneOf                []*schema       `json:"oneOf"`
}

// refName is the component name a $ref points at.
func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

// typeHTML describes a schema's type in a line, linking component schemas.
func typeHTML(s *schema) template.HTML {
	if s == nil {
		return "any"
	}
	if s.Ref != "" {
		n := refName(s.Ref)
		return template.HTML(fmt.Sprintf(`<a href="#schema-%s">%s</a>`, template.HTMLEscapeString(n), template.HTMLEscapeString(n)))
	}
	if len(s.OneOf) > 0 {
		parts := make([]string, len(s.OneOf))
		for i, o := range s.OneOf {
			parts[i] = string(typeHTML(o))
		}
		return template.HTML(strings.Join(parts, " or "))
	}
	var names []string
	switch t := s.Type.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
	}
	out := template.HTMLEscapeString(strings.Join(names, " or "))
	switch {
	case s.Items != nil:
		out = "array of " + string(typeHTML(s.Items))
	case len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{':
		var v schema
		if json.Unmarshal(s.AdditionalProperties, &v) == nil {
			out = "map of " + string(typeHTML(&v))
		}
	}
	if s.Format != "" {
		out += " (" + template.HTMLEscapeString(s.Format) + ")"
	}
	if s.Pattern != "" {
		out += " matching <code>" + template.HTMLEscapeString(s.Pattern) + "</code>"
	}
	if s.Const != nil {
		out += fmt.Sprintf(" = <code>%s</code>", template.HTMLEscapeString(fmt.Sprint(s.Const)))
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = fmt.Sprintf("%q", e)
		}
		out += ", one of <code>" + template.HTMLEscapeString(strings.Join(vals, ", ")) + "</code>"
	}
	return template.HTML(out)
}

type pageOp struct {
	Method, Path string
	Op           *operation
	Public       bool
	Body         []pageContent
	Responses    []pageResp
}

type pageResp struct {
	Code, Description string
	Contents          []pageContent
	Headers           []string
}

// pageContent is one media type of a body; Label is set when the body is
// not only JSON, so that each type is named.
type pageContent struct {
	Media  string
	Label  bool
	Schema *schema
}

// contents lists a body's media types in order.
func contents(m map[string]struct{ Schema *schema }) []pageContent {
	out := make([]pageContent, 0, len(m))
	for _, media := range slices.Sorted(maps.Keys(m)) {
		out = append(out, pageContent{Media: media, Label: len(m) > 1 || media != "application/json", Schema: m[media].Schema})
	}
	return out
}

type pageTag struct {
	Name string
	Ops  []pageOp
}

var pageTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{
	"type":  typeHTML,
	"upper": strings.ToUpper,
	"has":   slices.Contains[[]string],
	"names": func(m map[string]*schema) []string { return slices.Sorted(maps.Keys(m)) },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Spec.Info.Title}}</title>
<link rel="stylesheet" href="style.css">
</head>
<body>
<nav>
<p><strong>{{.Spec.Info.Title}}</strong> {{.Spec.Info.Version}}</p>
<p><a href="../openapi.json">openapi.json</a></p>
{{range .Tags}}<h2>{{.Name}}</h2><ul>{{range .Ops}}<li><a href="#op-{{.Op.OperationID}}"><span class="m">{{upper .Method}}</span> {{.Path}}</a></li>{{end}}</ul>{{end}}
<h2>Schemas</h2><ul>{{range $n := names .Spec.Components.Schemas}}<li><a href="#schema-{{$n}}">{{$n}}</a></li>{{end}}</ul>
</nav>
<main>
<h1>{{.Spec.Info.Title}}</h1>
<pre class="intro">{{.Spec.Info.Description}}</pre>
<h2>Authentication</h2>
<dl>{{range $n, $s := .Spec.Components.SecuritySchemes}}<dt><code>{{$n}}</code>: {{$s.Type}} in {{$s.In}} <code>{{$s.Name}}</code></dt><dd>{{$s.Description}}</dd>{{end}}</dl>
{{range .Tags}}<h2>{{.Name}}</h2>
{{range .Ops}}<section id="op-{{.Op.OperationID}}">
<h3><span class="m">{{upper .Method}}</span> <code>{{.Path}}</code></h3>
<p class="id">{{.Op.OperationID}} · {{if .Public}}public{{else}}needs an API key{{end}}</p>
<pre>{{.Op.Description}}</pre>
{{if .Op.Parameters}}<table><caption>Parameters</caption><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr>
{{range .Op.Parameters}}<tr><td><code>{{.Name}}</code>{{if .Required}} <em>required</em>{{end}}</td><td>{{.In}}</td><td>{{type .Schema}}</td><td><pre>{{.Description}}</pre></td></tr>
{{end}}</table>{{end}}
{{range .Body}}<p>{{if .Label}}Body as <code>{{.Media}}</code>{{else}}JSON body{{end}}: {{type .Schema}}</p>
{{end}}<table><caption>Responses</caption><tr><th>status</th><th>body</th><th>when</th></tr>
{{range .Responses}}<tr><td>{{.Code}}</td><td>{{range $i, $c := .Contents}}{{if $i}}<br>{{end}}{{if $c.Label}}<code>{{$c.Media}}</code>: {{end}}{{type $c.Schema}}{{end}}</td><td>{{.Description}}{{range .Headers}}<br>Header <code>{{.}}</code>{{end}}</td></tr>
{{end}}</table>
</section>
{{end}}{{end}}
<h2>Schemas</h2>
{{range $n := names .Spec.Components.Schemas}}{{with index $.Spec.Components.Schemas $n}}<section id="schema-{{$n}}">
<h3>{{$n}}</h3>
<pre>{{.Description}}</pre>
{{if .Properties}}<table><tr><th>member</th><th>type</th><th>description</th></tr>
{{$req := .Required}}{{range $p := names .Properties}}{{with index $.Spec.Components.Schemas $n}}{{with index .Properties $p}}<tr><td><code>{{$p}}</code>{{if has $req $p}} <em>always</em>{{end}}</td><td>{{type .}}</td><td><pre>{{.Description}}</pre></td></tr>
{{end}}{{end}}{{end}}</table>{{else}}<p>{{type .}}</p>{{end}}
</section>
{{end}}{{end}}
</main>
</body>
</html>
`))

// render builds the reference page of spec.
func render(spec *Spec) ([]byte, error) {
	byTag := map[string][]pageOp{}
	for _, path := range slices.Sorted(maps.Keys(spec.Paths)) {
		for _, method := range slices.Sorted(maps.Keys(spec.Paths[path])) {
			op := spec.Paths[path][method]
			po := pageOp{Method: method, Path: path, Op: op, Public: op.Security != nil && len(*op.Security) == 0}
			for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
				r := op.Responses[code]
				if r.Ref != "" {
					r = spec.Components.Responses[refName(r.Ref)]
					if r == nil {
						return nil, fmt.Errorf("%s %s: response %s: no such component", method, path, code)
					}
				}
				po.Responses = append(po.Responses, pageResp{Code: code, Description: r.Description,
					Contents: contents(r.Content), Headers: slices.Sorted(maps.Keys(r.Headers))})
			}
			if op.RequestBody != nil {
				po.Body = contents(op.RequestBody.Content)
			}
			for i, p := range op.Parameters {
				if p.Ref != "" {
					if op.Parameters[i] = spec.Components.Parameters[refName(p.Ref)]; op.Parameters[i] == nil {
						return nil, fmt.Errorf("%s %s: parameter %s: no such component", method, path, p.Ref)
					}
				}
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			byTag[tag] = append(byTag[tag], po)
		}
	}
	data := struct {
		Spec *Spec
		Tags []pageTag
	}{Spec: spec}
	for _, name := range slices.Sorted(maps.Keys(byTag)) {
		data.Tags = append(data.Tags, pageTag{Name: name, Ops: byTag[name]})
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
