package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/payhook/payhook/server/servertest"
)

// TestUnknownQueryParams: a query parameter no endpoint reads is a 400
// naming it and the closest known one, a callback pasted without
// URL-encoding is a 400 that says to encode it, and the parameters this
// API family's SDKs send are accepted.
func TestUnknownQueryParams(t *testing.T) {
	t.Parallel()
	const cb = "https%3A%2F%2Fshop.example%2Fhook%3Forder%3D42%26sig%3Dabc"
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		rows := []struct {
			name, target string
			code         int
			errPart      string
		}{
			{"typo", "/btc/create/?callback=" + cb + "&address=" + btcDest + "&confirmation=3", 400, "confirmation: unknown parameter; did you mean confirmations?"},
			{"unencoded callback", "/btc/create/?callback=https://shop.example/hook?order=42&sig=abc&address=" + btcDest, 400, "sig: unknown parameter right after callback, whose URL has a query of its own: URL-encode the callback value"},
			{"unencoded callback on logs", "/btc/logs/?callback=https://shop.example/hook?order=42&sig=abc", 400, "URL-encode the callback value"},
			{"typo on logs", "/btc/logs/?callbak=" + cb, 400, "callbak: unknown parameter; did you mean callback?"},
			{"typo on estimate", "/btc/estimate/?adresses=2", 400, "adresses: unknown parameter; did you mean addresses?"},
			{"typo on convert", "/btc/convert/?value=1&form=usd", 400, "form: unknown parameter; did you mean from?"},
			{"typo on qrcode", "/btc/qrcode/?address=" + btcDest + "&sise=128", 400, "sise: unknown parameter; did you mean size?"},
			{"typo on info", "/btc/info/?price=0", 400, "price: unknown parameter; did you mean prices?"},
			{"typo on checkout", "/checkout/request/?redirect_url=https%3A%2F%2Fshop.example%2F&value=10&notify_uri=x", 400, "notify_uri: unknown parameter; did you mean notify_url?"},
			{"the SDKs' create", "/btc/create/?json=1&convert=1&callback=" + cb + "&address=" + btcDest + "&pending=1&priority=default&email=m%40shop.example&apikey=" + in.KeyA, 200, ""},
			{"the SDKs' info", "/info/?prices=0", 200, ""},
			{"the SDKs' ticker info", "/btc/info/?prices=0", 200, ""},
		}
		for _, r := range rows {
			got := in.Do(t, http.MethodGet, in.BaseURL+r.target, in.KeyA)
			if got.Code != r.code {
				t.Fatalf("%s: HTTP %d, want %d; body %.300s", r.name, got.Code, r.code, got.Body)
			}
			if msg, _ := got.JSON["error"].(string); !strings.Contains(msg, r.errPart) {
				t.Errorf("%s: error %q, want %q", r.name, msg, r.errPart)
			}
		}
	})
}
