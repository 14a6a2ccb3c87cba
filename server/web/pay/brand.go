package pay

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web"
)

// brandView is the merchant's identity on a hosted page.
type brandView struct {
	// Name is the project's name ("" for the default project, whose name
	// says nothing to a payer).
	Name string
	// LogoURL is the logo's URL below the page ("" when there is none),
	// versioned by the project's last change so it may be cached.
	LogoURL string
	// Contact is the support contact as shown; ContactURL its link
	// (mailto: or the https URL); both "" when there is none.
	Contact, ContactURL string
}

// brandOf returns p's identity for the page at path, and the page's
// stylesheet of the brand colour ("" when it has none).
func brandOf(p *entdb.Project, path string) (brandView, string) {
	if p == nil {
		return brandView{}, ""
	}
	b := brandView{Contact: p.SupportContact, ContactURL: project.SupportLink(p.SupportContact)}
	if p.Name != project.DefaultName {
		b.Name = p.Name
	}
	if len(project.Logo(p)) > 0 {
		b.LogoURL = path + "logo?v=" + strconv.FormatInt(p.UpdatedAt.Unix(), 36)
	}
	css := ""
	if p.BrandColor != "" {
		css = path + "brand.css?v=" + strings.TrimPrefix(p.BrandColor, "#")
	}
	return b, css
}

// brandCSS is the stylesheet of a brand colour (#rrggbb, checked when it
// was set): the colour of buttons and accents, the text on them (white or
// near-black, whichever contrasts more), and the colour of links (the
// brand's when it is readable on white, WCAG's 4.5:1, else payhook's).
func brandCSS(color string) string {
	l := luminance(color)
	ink := "#ffffff"
	if (l+0.05)/0.05 > 1.05/(l+0.05) {
		ink = "#1d2330"
	}
	link := color
	if 1.05/(l+0.05) < 4.5 {
		link = "#2456d3"
	}
	return fmt.Sprintf(":root{--brand:%s;--brand-ink:%s;--brand-link:%s}\n", color, ink, link)
}

// luminance is WCAG 2's relative luminance of #rrggbb.
func luminance(color string) float64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(color, "#"), 16, 32)
	channel := func(c uint64) float64 {
		s := float64(c) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*channel(v>>16&0xff) + 0.7152*channel(v>>8&0xff) + 0.0722*channel(v&0xff)
}

// serveBrandCSS answers the stylesheet of p's brand colour (brandCSS); a
// project without one gets payhook's (an empty stylesheet).
func serveBrandCSS(w http.ResponseWriter, p *entdb.Project) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "private, max-age=86400")
	if p.BrandColor == "" {
		return
	}
	_, _ = fmt.Fprint(w, brandCSS(p.BrandColor))
}

// serveLogo answers p's logo (web.ServeLogo), a 404 when it has none.
func (h *Handler) serveLogo(w http.ResponseWriter, r *http.Request, p *entdb.Project) {
	logo := project.Logo(p)
	if len(logo) == 0 {
		h.notFound(w, r)
		return
	}
	web.ServeLogo(w, r, logo, p.LogoType, 86400)
}
