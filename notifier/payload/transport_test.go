package payload

import "testing"

func TestTransportFor(t *testing.T) {
	tests := []struct {
		name       string
		post, json bool
		want       Transport
		str        string
		method     string
		ctype      string
	}{
		{"default is GET", false, false, TransportGET, "get", "GET", ""},
		{"post=1 is form", true, false, TransportForm, "form", "POST", ContentTypeForm},
		{"json=1 is JSON", false, true, TransportJSON, "json", "POST", ContentTypeJSON},
		{"json wins over post", true, true, TransportJSON, "json", "POST", ContentTypeJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TransportFor(tc.post, tc.json)
			if got != tc.want || got.String() != tc.str {
				t.Fatalf("TransportFor(%v, %v) = %v (%s), want %v (%s)", tc.post, tc.json, int(got), got, int(tc.want), tc.str)
			}
			req, err := Encode("https://shop.example/cb", got, []Field{String("a", "b")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != tc.method || req.ContentType != tc.ctype {
				t.Errorf("%s: method %s, content type %q", got, req.Method, req.ContentType)
			}
		})
	}
	if s := Transport(9).String(); s != "Transport(9)" {
		t.Errorf("unknown transport prints %q", s)
	}
}
