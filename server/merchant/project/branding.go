package project

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	entdb "github.com/payhook/payhook/ent/db"
	entproject "github.com/payhook/payhook/ent/db/project"
)

// Branding limits.
const (
	// MaxLogoBytes is the largest logo accepted: a logo is shown at 40
	// pixels high on a phone; 100 KiB is plenty, and every page view
	// fetches it.
	MaxLogoBytes = 100 << 10
	// MaxLogoSide is the widest or tallest raster logo accepted, in
	// pixels: a bound on what a browser must decode, read from the header
	// without decoding the image here.
	MaxLogoSide = 4096
	// MaxContactLength bounds the support contact.
	MaxContactLength = 254
)

// Logo media types, by content (never by the file name or a client's
// Content-Type).
const (
	LogoPNG  = "image/png"
	LogoJPEG = "image/jpeg"
	LogoSVG  = "image/svg+xml"
)

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ParseBrandColor checks a brand colour: #rrggbb (returned in lower case),
// or "" for payhook's own.
func ParseBrandColor(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", nil
	}
	if !colorRE.MatchString(s) {
		return "", invalid("brand_color: %q is not a colour written #rrggbb (such as #2456d3)", truncate(raw))
	}
	return strings.ToLower(s), nil
}

// ParseSupportContact checks a support contact: an email address (a bare
// address, name@example.com) or an https URL without credentials, or ""
// for none.
func ParseSupportContact(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", nil
	}
	if len(s) > MaxContactLength || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", invalid("support_contact: want an email address or an https URL of at most %d characters", MaxContactLength)
	}
	if !strings.Contains(s, "://") {
		a, err := mail.ParseAddress(s)
		if err != nil || a.Name != "" || a.Address != s || strings.ContainsAny(s, " <>\"") {
			return "", invalid("support_contact: %q is neither an email address (help@shop.example) nor an https URL", truncate(raw))
		}
		return s, nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return "", invalid("support_contact: %q is neither an email address nor an https URL (https://shop.example/help)", truncate(raw))
	case u.User != nil:
		return "", invalid("support_contact: the URL must not carry a user name or password")
	}
	return s, nil
}

// SupportLink returns the link a page shows for contact (ParseSupportContact
// checked it): mailto: for an email address, the URL itself otherwise.
func SupportLink(contact string) string {
	if contact == "" || strings.Contains(contact, "://") {
		return contact
	}
	return "mailto:" + contact
}

// CheckLogo checks an uploaded logo by its content and returns its media
// type: a PNG or JPEG of at most MaxLogoSide pixels a side (read from its
// header), or an SVG without scripts, event handlers, external references
// or entity declarations (CheckSVG); at most MaxLogoBytes in every case.
// A PNG or JPEG is never decoded whole here.
func CheckLogo(b []byte) (string, error) {
	switch {
	case len(b) == 0:
		return "", invalid("logo: the file is empty")
	case len(b) > MaxLogoBytes:
		return "", invalid("logo: %d bytes is over the %d KiB a logo may have", len(b), MaxLogoBytes>>10)
	}
	var side func() (int, int, error)
	mt := http.DetectContentType(b)
	switch mt {
	case LogoPNG:
		side = func() (int, int, error) {
			c, err := png.DecodeConfig(bytes.NewReader(b))
			return c.Width, c.Height, err
		}
	case LogoJPEG:
		side = func() (int, int, error) {
			c, err := jpeg.DecodeConfig(bytes.NewReader(b))
			return c.Width, c.Height, err
		}
	default:
		if !strings.HasPrefix(mt, "text/") {
			return "", invalid("logo: a %s file is not a PNG, JPEG or SVG image", strings.TrimSuffix(mt, "; charset=utf-8"))
		}
		if err := CheckSVG(b); err != nil {
			return "", err
		}
		return LogoSVG, nil
	}
	w, h, err := side()
	if err != nil {
		return "", invalid("logo: the %s image does not decode: %v", strings.TrimPrefix(mt, "image/"), err)
	}
	if w < 1 || h < 1 || w > MaxLogoSide || h > MaxLogoSide {
		return "", invalid("logo: %dx%d pixels; at most %d on each side", w, h, MaxLogoSide)
	}
	return mt, nil
}

// svgNS is the namespace of SVG elements.
const svgNS = "http://www.w3.org/2000/svg"

// svgRefused are elements a logo has no use for, which run scripts or
// load other documents.
var svgRefused = map[string]bool{
	"script": true, "foreignobject": true, "iframe": true, "embed": true, "object": true,
	"audio": true, "video": true, "handler": true, "listener": true,
}

// CheckSVG checks that b is a well-formed SVG document (its root an svg
// element in the SVG namespace) with no script or foreignObject (or other
// embedding) element, no event handler attribute (on...), no link but to
// a fragment of itself (href="#..."), no javascript: anywhere, no style
// that imports or loads anything but its own fragments, and no DOCTYPE or
// entity declaration. payhook also serves logos with a Content-Security-
// Policy that forbids scripts: this check is the first of two walls.
func CheckSVG(b []byte) error {
	refuse := func(why string) error { return invalid("logo: the SVG image %s", why) }
	if !utf8.Valid(b) {
		return refuse("is not UTF-8 text")
	}
	if bytes.Contains(bytes.ToLower(b), []byte("javascript:")) {
		return refuse("contains javascript:")
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	var root, inStyle bool
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return refuse("is not well-formed XML")
		}
		switch t := tok.(type) {
		case xml.Directive:
			return refuse("has a DOCTYPE or entity declaration")
		case xml.ProcInst:
			if t.Target != "xml" {
				return refuse("has a processing instruction")
			}
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			if !root {
				if name != "svg" || t.Name.Space != svgNS {
					return refuse("does not start with an <svg> element in the SVG namespace")
				}
				root = true
			}
			if svgRefused[name] {
				return refuse(fmt.Sprintf("has a <%s> element", t.Name.Local))
			}
			for _, a := range t.Attr {
				an := strings.ToLower(a.Name.Local)
				v := strings.TrimSpace(a.Value)
				switch {
				case strings.HasPrefix(an, "on"):
					return refuse(fmt.Sprintf("has an event handler (%s)", a.Name.Local))
				case an == "href" && !strings.HasPrefix(v, "#"):
					return refuse("links outside itself (href)")
				case an == "attributename" && strings.Contains(strings.ToLower(v), "href"):
					return refuse("animates a link")
				case an == "style" && loadsCSS(v):
					return refuse("has a style that loads something")
				}
			}
			inStyle = name == "style"
		case xml.EndElement:
			inStyle = false
		case xml.CharData:
			if inStyle && loadsCSS(string(t)) {
				return refuse("has a style that loads something")
			}
		}
	}
	if !root {
		return refuse("has no <svg> element")
	}
	return nil
}

// loadsCSS reports CSS that imports or loads anything but a fragment of
// the document itself (url(#id)).
func loadsCSS(css string) bool {
	c := strings.ToLower(css)
	if strings.Contains(c, "@import") {
		return true
	}
	for {
		i := strings.Index(c, "url(")
		if i < 0 {
			return false
		}
		c = strings.TrimLeft(c[i+4:], " \t\n\r'\"")
		if !strings.HasPrefix(c, "#") {
			return true
		}
	}
}

// Logo returns p's logo, nil when it has none.
func Logo(p *entdb.Project) []byte {
	if p.Logo == nil || len(*p.Logo) == 0 || p.LogoType == "" {
		return nil
	}
	return *p.Logo
}

// Branding is a change of a project's hosted-page branding; a nil field is
// left as it is.
type Branding struct {
	// Color is the brand colour (#rrggbb; "" for payhook's).
	Color *string
	// Contact is the support contact (an email address or https URL; ""
	// for none).
	Contact *string
	// Logo is the logo's bytes (checked with CheckLogo); an empty slice
	// removes the logo.
	Logo *[]byte
}

// SetBranding checks b and applies it to project id: nothing changes when
// any field is refused.
func SetBranding(ctx context.Context, db *entdb.Client, id int64, b Branding, now time.Time) error {
	u := db.Project.Update().Where(entproject.ID(id)).SetUpdatedAt(now)
	if b.Color != nil {
		c, err := ParseBrandColor(*b.Color)
		if err != nil {
			return err
		}
		u.SetBrandColor(c)
	}
	if b.Contact != nil {
		c, err := ParseSupportContact(*b.Contact)
		if err != nil {
			return err
		}
		u.SetSupportContact(c)
	}
	if b.Logo != nil {
		if len(*b.Logo) == 0 {
			u.ClearLogo().SetLogoType("")
		} else {
			mt, err := CheckLogo(*b.Logo)
			if err != nil {
				return err
			}
			u.SetLogo(*b.Logo).SetLogoType(mt)
		}
	}
	n, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("set branding of project %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return nil
}
