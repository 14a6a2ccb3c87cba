package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web"
)

// logoPath is a dashboard route that takes a multipart body: the logo
// upload (below Prefix). The other is a payout's signed PSBT (psbt.go).
const logoPath = "settings/logo"

// MaxUploadBytes bounds the body of an upload (the logo, a signed PSBT). A
// logo larger than project.MaxLogoBytes but within this is read (never
// more than project.MaxLogoBytes+1 of it kept) and refused with the
// settings page saying why; a larger body is a 413, read no further.
// Nothing of it is ever written to a file.
const MaxUploadBytes = 1 << 20

// maxUploadField bounds the upload form's other field (the CSRF token).
const maxUploadField = 256

// uploadKey is the request context's key of the uploaded parts
// (readUpload).
type uploadKey struct{}

// upload is the multipart body of one upload route: what it uploads (named
// in its refusals) and the parts it keeps, each with the most bytes kept
// of it; the CSRF token is kept too, and any other part read and dropped.
type upload struct {
	what  string
	parts map[string]int64
}

// logoUpload is the logo upload's body: "csrf" and "logo".
var logoUpload = upload{what: "the logo", parts: map[string]int64{
	"logo": project.MaxLogoBytes + 1, // one byte more: CheckLogo refuses it by its size
}}

// uploadOf returns the upload that the POST route rest (below Prefix)
// takes, if it takes one.
func uploadOf(rest string) (upload, bool) {
	switch {
	case rest == logoPath:
		return logoUpload, true
	case isPSBTPath(rest):
		return psbtUpload, true
	}
	return upload{}, false
}

// readUpload reads an upload, a multipart/form-data body of the parts u
// names and "csrf", streaming it with mime/multipart's reader in memory:
// it never calls ParseMultipartForm, which would spill a large part to a
// temporary file. It sets r.PostForm (the CSRF token, which the dashboard
// checks as every form's) and returns r with the parts' bytes in its
// context (uploaded); or it answers (415, 413, 400) and reports false.
func readUpload(w http.ResponseWriter, r *http.Request, u upload) (*http.Request, bool) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		http.Error(w, u.what+" is uploaded as multipart/form-data", http.StatusUnsupportedMediaType)
		return r, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBytes)
	mr := multipart.NewReader(r.Body, params["boundary"])
	form := url.Values{}
	parts := map[string][]byte{}
	fail := func(err error) (*http.Request, bool) {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			http.Error(w, fmt.Sprintf("the upload is over %d bytes", MaxUploadBytes), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "the upload is not a well-formed multipart form", http.StatusBadRequest)
		}
		return r, false
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		name := part.FormName()
		limit, keep := u.parts[name]
		if !keep {
			limit = maxUploadField
		}
		b, err := io.ReadAll(io.LimitReader(part, limit))
		if err == nil {
			_, err = io.Copy(io.Discard, part) // the rest of an oversized part
		}
		if err != nil {
			return fail(err)
		}
		switch {
		case keep:
			parts[name] = b
		case name == "csrf":
			form.Set("csrf", string(b))
		}
	}
	r.PostForm, r.Form = form, form
	return r.WithContext(context.WithValue(r.Context(), uploadKey{}, parts)), true
}

// uploaded returns the part name readUpload read (nil when absent).
func uploaded(r *http.Request, name string) []byte {
	parts, _ := r.Context().Value(uploadKey{}).(map[string][]byte)
	return parts[name]
}

// brandingRefused renders the settings page with the branding section's
// error, what was typed kept.
func (h *Handler) brandingRefused(w http.ResponseWriter, r *http.Request, s *session, color, contact string, err error) {
	h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
		if color != "" || contact != "" {
			d.BrandColor, d.SupportContact = color, contact
		}
		d.BrandingError = "Not saved: " + strings.TrimPrefix(err.Error(), project.ErrInvalid.Error()+": ")
	})
}

// setBranding saves the brand colour and support contact (empty clears
// each).
func (h *Handler) setBranding(w http.ResponseWriter, r *http.Request, s *session) {
	color, contact := strings.TrimSpace(r.PostFormValue("brand_color")), strings.TrimSpace(r.PostFormValue("support_contact"))
	err := project.SetBranding(r.Context(), h.cfg.DB, s.user.ProjectID, project.Branding{Color: &color, Contact: &contact}, h.cfg.Now())
	if errors.Is(err, project.ErrInvalid) {
		h.brandingRefused(w, r, s, color, contact, err)
		return
	}
	if err != nil {
		h.pages.Fail(w, "set branding", err)
		return
	}
	settingsRedirect(w, r, "branding", "branding")
}

// setLogo saves the uploaded logo (project.CheckLogo decides).
func (h *Handler) setLogo(w http.ResponseWriter, r *http.Request, s *session) {
	logo := uploaded(r, "logo")
	if len(logo) == 0 {
		h.brandingRefused(w, r, s, "", "", fmt.Errorf("choose a PNG, JPEG or SVG file of at most %d KiB", project.MaxLogoBytes>>10))
		return
	}
	err := project.SetBranding(r.Context(), h.cfg.DB, s.user.ProjectID, project.Branding{Logo: &logo}, h.cfg.Now())
	if errors.Is(err, project.ErrInvalid) {
		h.brandingRefused(w, r, s, "", "", err)
		return
	}
	if err != nil {
		h.pages.Fail(w, "set logo", err)
		return
	}
	settingsRedirect(w, r, "logo-saved", "branding")
}

// removeLogo removes the project's logo.
func (h *Handler) removeLogo(w http.ResponseWriter, r *http.Request, s *session) {
	none := []byte{}
	if err := project.SetBranding(r.Context(), h.cfg.DB, s.user.ProjectID, project.Branding{Logo: &none}, h.cfg.Now()); err != nil {
		h.pages.Fail(w, "remove logo", err)
		return
	}
	settingsRedirect(w, r, "logo-removed", "branding")
}

// serveLogo answers the project's logo (a preview on the settings page),
// as the hosted pages serve it.
func (h *Handler) serveLogo(w http.ResponseWriter, r *http.Request, s *session) {
	p, err := project.Get(r.Context(), h.cfg.DB, s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "get project", err)
		return
	}
	logo := project.Logo(p)
	if len(logo) == 0 {
		h.pages.NotFound(w)
		return
	}
	web.ServeLogo(w, r, logo, p.LogoType, 60)
}

// logoURL is the settings page's preview of a logo changed at version.
func logoURL(version int64) string {
	return Prefix + logoPath + "?v=" + strconv.FormatInt(version, 36)
}
