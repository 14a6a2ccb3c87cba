package mail

import (
	"html"
	"strings"
)

// body is a message's content, written once and rendered as plain text and
// as HTML, so the two always say the same: paragraphs, then facts (label
// and value rows), then a link to act on, then closing paragraphs.
type body struct {
	intro  []string
	facts  []fact
	action *action
	outro  []string
}

// fact is one row: "Label: value".
type fact struct{ label, value string }

// action is the link the reader follows to act.
type action struct{ text, url string }

// text renders b as plain text.
func (b body) text() string {
	var s strings.Builder
	for _, p := range b.intro {
		s.WriteString(p + "\n\n")
	}
	if len(b.facts) > 0 {
		for _, f := range b.facts {
			s.WriteString(f.label + ": " + f.value + "\n")
		}
		s.WriteString("\n")
	}
	if b.action != nil {
		s.WriteString(b.action.text + ": " + b.action.url + "\n\n")
	}
	for _, p := range b.outro {
		s.WriteString(p + "\n\n")
	}
	return strings.TrimRight(s.String(), "\n") + "\n"
}

// html renders b as a small HTML document; every text is escaped.
func (b body) html() string {
	var s strings.Builder
	s.WriteString(`<!DOCTYPE html><html><body style="font-family:sans-serif;line-height:1.4">` + "\n")
	for _, p := range b.intro {
		s.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
	}
	if len(b.facts) > 0 {
		s.WriteString("<table>\n")
		for _, f := range b.facts {
			s.WriteString(`<tr><th style="text-align:left;padding-right:1em">` + html.EscapeString(f.label) +
				`</th><td style="font-family:monospace">` + html.EscapeString(f.value) + "</td></tr>\n")
		}
		s.WriteString("</table>\n")
	}
	if b.action != nil {
		s.WriteString(`<p><a href="` + html.EscapeString(b.action.url) + `">` + html.EscapeString(b.action.text) + "</a></p>\n")
	}
	for _, p := range b.outro {
		s.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
	}
	s.WriteString("</body></html>\n")
	return s.String()
}
