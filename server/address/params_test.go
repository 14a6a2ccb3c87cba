package address

import (
	"errors"
	"reflect"
	"testing"

	"github.com/payhook/payhook/ent/schema"
)

func TestParseCallback(t *testing.T) {
	rows := []struct {
		name, callback, cbParams string
		wantURL                  string
		wantParams               []schema.Param
		wantErr                  string
	}{
		{"plain", "https://s.example/hook", "", "https://s.example/hook", nil, ""},
		{"own query kept byte for byte", "https://s.example/h?b=2&a=%20x", "", "https://s.example/h?b=2&a=%20x", []schema.Param{{Key: "b", Value: "2"}, {Key: "a", Value: " x"}}, ""},
		{"cb_params start a query", "https://s.example/h", "order=1", "https://s.example/h?order=1", []schema.Param{{Key: "order", Value: "1"}}, ""},
		{"cb_params extend a query", "https://s.example/h?a=1", "b=2", "https://s.example/h?a=1&b=2", []schema.Param{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}, ""},
		{"cb_params after a trailing ?", "https://s.example/h?", "b=2", "https://s.example/h?b=2", []schema.Param{{Key: "b", Value: "2"}}, ""},
		{"cb_params with a leading ?", "https://s.example/h", "?b=2", "https://s.example/h?b=2", []schema.Param{{Key: "b", Value: "2"}}, ""},
		{"port and ipv6", "http://[2001:db8::1]:8443/h", "", "http://[2001:db8::1]:8443/h", nil, ""},
		{"scheme", "javascript:alert(1)", "", "", nil, "callback: must be an absolute http or https URL"},
		{"userinfo", "https://a@s.example/", "", "", nil, "callback: must not contain credentials (user:password@)"},
		{"fragment", "https://s.example/#x", "", "", nil, "callback: must not contain a fragment (#...)"},
		{"port zero", "https://s.example:0/", "", "", nil, `callback: port "0" is not valid`},
		{"bad cb_params", "https://s.example/", "a=%g1", "", nil, `cb_params: value of "a" is not URL-encoded correctly`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, err := ParseCallback(r.callback, r.cbParams)
			if r.wantErr != "" {
				var inv *InvalidError
				if !errors.As(err, &inv) || err.Error() != r.wantErr {
					t.Fatalf("error %v, want %q", err, r.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.URL != r.wantURL || !reflect.DeepEqual(got.Params, r.wantParams) {
				t.Fatalf("got %q %+v, want %q %+v", got.URL, got.Params, r.wantURL, r.wantParams)
			}
		})
	}
}
