package webtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/payhook/payhook/server/servertest"
)

// API calls the merchant API of in at path with project A's key and the
// query kv (name, value, name, value...), and returns the JSON. An answer
// other than 200 fails t.
func API(t testing.TB, in *servertest.Instance, path string, kv ...string) map[string]any {
	t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	r := in.Get(t, path, q, in.KeyA)
	if r.Code != 200 {
		t.Fatalf("%s: %d %s", path, r.Code, r.Body)
	}
	return r.JSON
}

// Devnet posts body as JSON to a devnet path of in (pay, mine) and
// returns the JSON answer. An answer other than 200 fails t.
func Devnet(t testing.TB, in *servertest.Instance, path string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(in.BaseURL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}
