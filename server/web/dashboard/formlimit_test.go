package dashboard_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestFormBodiesBounded: a dashboard POST with a multipart body is refused
// (415) without reading it, so nothing is spilled to temporary files, and a
// URL-encoded body over the limit is a 413; the temporary directory is
// unchanged. (Before: PostFormValue parsed up to 32 MB and left the rest in
// /tmp/multipart-* files that no one removed.)
func TestFormBodiesBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where mime/multipart would spill
	d := newDash(t)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("upload", "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := part.Write(bytes.Repeat([]byte("x"), 50<<20)); err != nil {
		t.Fatal(err)
	}
	_ = mw.WriteField("csrf", "whatever")
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := body.Bytes()
	for _, path := range []string{"/dashboard/signin", "/dashboard/settings/wallet", "/dashboard/payouts/1/approve"} {
		resp, err := http.Post(d.in.BaseURL+path, mw.FormDataContentType(), bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(msg), "URL-encoded") {
			t.Errorf("a 50 MB multipart POST to %s: HTTP %d %s", path, resp.StatusCode, msg)
		}
	}
	big := url.Values{"email": {strings.Repeat("a", 100<<10)}, "password": {"x"}}.Encode()
	resp, err := http.Post(d.in.BaseURL+"/dashboard/signin", "application/x-www-form-urlencoded", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 100 KB form: HTTP %d, want 413", resp.StatusCode)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
