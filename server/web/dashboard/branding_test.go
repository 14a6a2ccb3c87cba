package dashboard_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web/webtest"
)

// testPNG is a small opaque PNG logo.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 60, 30))
	for x := range 60 {
		for y := range 30 {
			img.Set(x, y, color.RGBA{R: 0x22, G: 0x88, B: 0x44, A: 0xff})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload posts a multipart form of the fields and one file part named
// "logo" holding logo (none when nil) to path, as the user u.
func (u *user) upload(path string, fields url.Values, logo []byte) webtest.Page {
	u.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	if logo != nil {
		part, err := mw.CreateFormFile("logo", "logo.png")
		if err != nil {
			u.t.Fatal(err)
		}
		_, _ = part.Write(logo)
	}
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, u.base+path, &body)
	if err != nil {
		u.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return webtest.Page{Code: resp.StatusCode, Header: resp.Header, Body: string(raw), URL: path}
}

// TestDashboardBranding: the settings page sets the hosted pages' colour
// and support contact (checked: a bad one is refused naming it, and
// nothing changes) and uploads the logo as the one multipart form of the
// dashboard: checked by content and size, previewed from the dashboard
// with the logo's own restrictive policy, removable; without the CSRF
// token it is refused; a body over MaxUploadBytes is a 413; no upload, of
// any size, leaves a temporary file behind.
func TestDashboardBranding(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where mime/multipart would spill
	d := newDash(t)
	ctx := context.Background()
	u := d.user(t)
	_, token := u.signIn(d.emailA, password)
	get := func() (string, string, string) {
		t.Helper()
		p, err := project.Get(ctx, d.in.Server.DB().Client, d.in.ProjectA)
		if err != nil {
			t.Fatal(err)
		}
		return p.BrandColor, p.SupportContact, p.LogoType
	}

	u.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, `id="branding-form"`, `enctype="multipart/form-data"`, `id="no-logo"`)
	p := u.do(http.MethodPost, "/dashboard/settings/branding", url.Values{"csrf": {token}, "brand_color": {"#AA3300"}, "support_contact": {"help@shop.example"}})
	if p.Code != http.StatusSeeOther || !strings.Contains(p.Header.Get("Location"), "done=branding") {
		t.Fatalf("save branding: %d %v", p.Code, p.Header)
	}
	if c, s, _ := get(); c != "#aa3300" || s != "help@shop.example" {
		t.Fatalf("stored %q %q", c, s)
	}
	p = u.do(http.MethodPost, "/dashboard/settings/branding", url.Values{"csrf": {token}, "brand_color": {"#000000"}, "support_contact": {"javascript:alert(1)"}})
	p.Want(t, 400, `id="branding-error"`, "support_contact")
	if c, s, _ := get(); c != "#aa3300" || s != "help@shop.example" {
		t.Fatalf("a refused form changed %q %q", c, s)
	}

	logo := testPNG(t)
	p = u.upload("/dashboard/settings/logo", url.Values{"csrf": {token}}, logo)
	if p.Code != http.StatusSeeOther || !strings.Contains(p.Header.Get("Location"), "done=logo-saved") {
		t.Fatalf("upload: %d %s", p.Code, p.Body)
	}
	if _, _, lt := get(); lt != "image/png" {
		t.Fatalf("logo type %q", lt)
	}
	page := u.do(http.MethodGet, "/dashboard/settings/", nil)
	page.Want(t, 200, `id="logo-preview"`, `src="/dashboard/settings/logo?v=`)
	prev := u.do(http.MethodGet, "/dashboard/settings/logo", nil)
	if prev.Code != 200 || prev.Body != string(logo) || prev.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(prev.Header.Get("Content-Security-Policy"), "sandbox") || prev.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("preview: %d %v", prev.Code, prev.Header)
	}

	for _, c := range []struct {
		name string
		logo []byte
		want string
	}{
		{"no file", nil, "choose a PNG, JPEG or SVG"},
		{"scripted SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "event handler"},
		{"gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "not a PNG, JPEG or SVG"},
		{"500 KiB", append(logo, bytes.Repeat([]byte{0}, 500<<10)...), "over the 100 KiB"},
	} {
		u.upload("/dashboard/settings/logo", url.Values{"csrf": {token}}, c.logo).Want(t, 400, `id="branding-error"`, c.want)
	}
	if _, _, lt := get(); lt != "image/png" {
		t.Fatalf("a refused upload changed the logo: %q", lt)
	}
	if p := u.upload("/dashboard/settings/logo", url.Values{"csrf": {"forged"}}, logo); p.Code != http.StatusForbidden {
		t.Errorf("upload without the CSRF token: %d", p.Code)
	}
	if p := u.upload("/dashboard/settings/logo", url.Values{"csrf": {token}}, bytes.Repeat([]byte("x"), 50<<20)); p.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 50 MB upload: %d %s", p.Code, p.Body)
	}
	if p := u.do(http.MethodPost, "/dashboard/settings/logo", url.Values{"csrf": {token}}); p.Code != http.StatusUnsupportedMediaType {
		t.Errorf("a URL-encoded post to the upload: %d", p.Code)
	}
	// Another project's user previews its own project's logo: none.
	b := d.user(t)
	b.signIn(d.emailB, password)
	if p := b.do(http.MethodGet, "/dashboard/settings/logo", nil); p.Code != 404 {
		t.Errorf("project B's preview: %d", p.Code)
	}

	p = u.do(http.MethodPost, "/dashboard/settings/logo/remove", url.Values{"csrf": {token}})
	if p.Code != http.StatusSeeOther {
		t.Fatalf("remove: %d %s", p.Code, p.Body)
	}
	if _, _, lt := get(); lt != "" {
		t.Fatalf("after removing: %q", lt)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
