package project

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

func TestParseBrandColor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, err string }{
		{in: "", want: ""},
		{in: "  ", want: ""},
		{in: "#2456D3", want: "#2456d3"},
		{in: " #00ff7f ", want: "#00ff7f"},
		{in: "2456d3", err: "#rrggbb"},
		{in: "#fff", err: "#rrggbb"},
		{in: "#2456d3ff", err: "#rrggbb"},
		{in: "#gggggg", err: "#rrggbb"},
		{in: "red", err: "#rrggbb"},
		{in: "#123456;}body{x:y", err: "#rrggbb"},
	} {
		got, err := ParseBrandColor(c.in)
		if c.err != "" {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestParseSupportContact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, link string }{
		{in: "", want: ""},
		{in: "help@shop.example", want: "help@shop.example", link: "mailto:help@shop.example"},
		{in: " help+pay@shop.example ", want: "help+pay@shop.example", link: "mailto:help+pay@shop.example"},
		{in: "https://shop.example/help?x=1", want: "https://shop.example/help?x=1", link: "https://shop.example/help?x=1"},
		{in: "http://shop.example/help"},
		{in: "javascript:alert(1)"},
		{in: "https://user:pw@shop.example/"},
		{in: "https:///nohost"},
		{in: "Shop Help <help@shop.example>"},
		{in: "help at shop"},
		{in: "mailto:help@shop.example"},
		{in: "help@shop.example\nBcc: x@y.example"},
		{in: "https://shop.example/" + strings.Repeat("a", MaxContactLength)},
	} {
		got, err := ParseSupportContact(c.in)
		if c.want == "" && strings.TrimSpace(c.in) != "" {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%q: accepted as %q", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want || SupportLink(got) != c.link {
			t.Errorf("%q: %q (link %q), %v; want %q (%q)", c.in, got, SupportLink(got), err, c.want, c.link)
		}
	}
}

func encodeImage(t *testing.T, w, h int, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 0x24, G: 0x56, B: 0xd3, A: 0xff})
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckLogo(t *testing.T) {
	t.Parallel()
	pngOf := func(w, h int) []byte {
		return encodeImage(t, w, h, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	}
	jpg := encodeImage(t, 40, 40, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) })
	gifImg := encodeImage(t, 4, 4, func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) })
	const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">`
	padded := []byte(svg + `<!--` + strings.Repeat("x", MaxLogoBytes) + `--></svg>`)
	for _, c := range []struct {
		name string
		in   []byte
		want string // media type, or the error's words
		ok   bool
	}{
		{"png", pngOf(120, 40), LogoPNG, true},
		{"jpeg", jpg, LogoJPEG, true},
		{"svg", []byte(svg + `<defs><linearGradient id="g"/></defs><circle cx="5" cy="5" r="4" fill="url(#g)"/><use href="#g"/><style>.a{fill:url(#g)}</style></svg>`), LogoSVG, true},
		{"svg with prolog", []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + svg + `<rect width="1" height="1"/></svg>`), LogoSVG, true},
		{"empty", nil, "empty", false},
		{"too big", padded, "over the 100 KiB", false},
		{"png too wide", pngOf(MaxLogoSide+1, 1), "at most 4096", false},
		{"truncated png", pngOf(40, 40)[:30], "does not decode", false},
		{"gif", gifImg, "image/gif file is not a PNG, JPEG or SVG", false},
		{"html", []byte(`<html><script>alert(1)</script></html>`), "does not start with an <svg>", false},
		{"plain text", []byte("just some text"), "no <svg> element", false},
		{"not svg root", []byte(`<html xmlns="http://www.w3.org/1999/xhtml"/>`), "<svg>", false},
		{"svg without namespace", []byte(`<svg viewBox="0 0 1 1"/>`), "<svg>", false},
		{"script", []byte(svg + `<script>alert(1)</script></svg>`), "<script>", false},
		{"script other case", []byte(svg + `<SCRIPT>alert(1)</SCRIPT></svg>`), "<SCRIPT>", false},
		{"onload", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "event handler", false},
		{"foreignObject", []byte(svg + `<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject></svg>`), "<foreignObject>", false},
		{"external image", []byte(svg + `<image href="https://evil.example/x.png"/></svg>`), "links outside", false},
		{"xlink javascript", []byte(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`), "javascript:", false},
		{"animate href", []byte(svg + `<a><set attributeName="href" to="https://evil.example/"/></a></svg>`), "animates a link", false},
		{"style import", []byte(svg + `<style>@import url(https://evil.example/x.css);</style></svg>`), "loads something", false},
		{"style attribute url", []byte(svg + `<rect style="fill:url(https://evil.example/x)"/></svg>`), "loads something", false},
		{"doctype", []byte(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]>` + svg + `</svg>`), "DOCTYPE", false},
		{"not utf-8", []byte(svg + "\xff\xfe</svg>"), "UTF-8", false},
	} {
		got, err := CheckLogo(c.in)
		if c.ok {
			if err != nil || got != c.want {
				t.Errorf("%s: %q, %v; want %s", c.name, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error with %q", c.name, got, err, c.want)
		}
	}
}

// TestSetBranding: colour, contact and logo are stored checked; a refused
// field changes nothing; an empty logo removes it.
func TestSetBranding(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		p, err := Create(ctx, db.Client, Params{Name: "Shop"}, now)
		if err != nil {
			t.Fatal(err)
		}
		logo := encodeImage(t, 10, 10, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
		color, contact := "#AA0000", "help@shop.example"
		if err := SetBranding(ctx, db.Client, p.ID, Branding{Color: &color, Contact: &contact, Logo: &logo}, now); err != nil {
			t.Fatal(err)
		}
		bad, other := "nope", "#00aa00"
		if err := SetBranding(ctx, db.Client, p.ID, Branding{Color: &other, Contact: &bad}, now); !errors.Is(err, ErrInvalid) {
			t.Fatalf("bad contact: %v", err)
		}
		got, err := Get(ctx, db.Client, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.BrandColor != "#aa0000" || got.SupportContact != contact || got.Logo == nil || !bytes.Equal(*got.Logo, logo) || got.LogoType != LogoPNG {
			t.Fatalf("stored %q %q %v %q", got.BrandColor, got.SupportContact, got.Logo != nil, got.LogoType)
		}
		none := []byte{}
		if err := SetBranding(ctx, db.Client, p.ID, Branding{Logo: &none}, now); err != nil {
			t.Fatal(err)
		}
		if got, _ = Get(ctx, db.Client, p.ID); len(Logo(got)) != 0 || got.LogoType != "" || got.BrandColor != "#aa0000" {
			t.Fatalf("after removing the logo: %d bytes %q, colour %q", len(Logo(got)), got.LogoType, got.BrandColor)
		}
		if err := SetBranding(ctx, db.Client, p.ID+100, Branding{Color: &other}, now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown project: %v", err)
		}
	})
}
