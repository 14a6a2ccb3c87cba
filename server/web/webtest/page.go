package webtest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Page is a fetched page.
type Page struct {
	// Code is the status code.
	Code int
	// Header is the response's header.
	Header http.Header
	// Body is the response's body.
	Body string
	// URL names the page in failures.
	URL string
}

// NoRedirect is a client that shows redirects instead of following them.
var NoRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Do makes a request of method to u with c, posting form (urlencoded)
// when it is not nil, and returns the page. A request that gets no
// response fails t.
func Do(t testing.TB, c *http.Client, method, u string, form url.Values) Page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return Page{Code: resp.StatusCode, Header: resp.Header, Body: string(raw), URL: u}
}

// Fetch is Do with NoRedirect: no cookies, redirects shown.
func Fetch(t testing.TB, method, u string, form url.Values) Page {
	t.Helper()
	return Do(t, NoRedirect, method, u, form)
}

// Want fails t unless p has status code and contains every string of
// contains.
func (p Page) Want(t testing.TB, code int, contains ...string) {
	t.Helper()
	if p.Code != code {
		t.Fatalf("%s: status %d, want %d\n%s", p.URL, p.Code, code, p.Body)
	}
	for _, c := range contains {
		if !strings.Contains(p.Body, c) {
			t.Errorf("%s: body lacks %q\n%s", p.URL, c, p.Body)
		}
	}
}

// WantNot fails t when p contains any string of absent.
func (p Page) WantNot(t testing.TB, absent ...string) {
	t.Helper()
	for _, c := range absent {
		if strings.Contains(p.Body, c) {
			t.Errorf("%s: body has %q", p.URL, c)
		}
	}
}
