package payload

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
)

func TestEncodeFields(t *testing.T) {
	t.Parallel()
	fields := []Field{
		String("id", "x y"),
		Int("n", -3),
		Object("map", `{"a":1}`),
		{Name: "gone", Kind: KindNull},
		String("s", "é\"\n"),
	}
	amount, ok := Money("amt", AmountOf(decimal.RequireFromString("1.2300")), 2)
	if !ok {
		t.Fatal("Money dropped a set amount")
	}
	fields = append(fields, amount)
	if _, ok := Money("absent", Amount{}, 2); ok {
		t.Error("Money kept an absent amount")
	}
	params := []Param{{"id", "spoof"}, {"tag", "a"}, {"tag", "b"}}
	tests := []struct {
		name                 string
		url                  string
		t                    Transport
		method               string
		wantURL, body, ctype string
	}{
		{"get", "https://s.example/cb?o=1", TransportGET, "GET",
			"https://s.example/cb?o=1&id=x+y&n=-3&map=%7B%22a%22%3A1%7D&s=%C3%A9%22%0A&amt=1.23", "", ""},
		{"form", "https://s.example", TransportForm, "POST",
			"https://s.example/", "id=x+y&n=-3&map=%7B%22a%22%3A1%7D&s=%C3%A9%22%0A&amt=1.23&tag=a&tag=b", ContentTypeForm},
		{"json", "https://s.example/cb", TransportJSON, "POST",
			"https://s.example/cb", `{"id":"x y","n":-3,"map":{"a":1},"gone":null,"s":"é\"\n","amt":1.23,"tag":"a"}`, ContentTypeJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Encode(tc.url, tc.t, fields, params)
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != tc.method || req.URL != tc.wantURL || string(req.Body) != tc.body || req.ContentType != tc.ctype {
				t.Errorf("got %s %s %q %q\nwant %s %s %q %q", req.Method, req.URL, req.ContentType, req.Body, tc.method, tc.wantURL, tc.ctype, tc.body)
			}
		})
	}
}

func TestEncodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		url    string
		t      Transport
		fields []Field
		params []Param
		field  string
	}{
		{"bad url", "https://u:p@s.example/", TransportGET, nil, nil, "notify_url"},
		{"non-ASCII url", "https://s.example/é", TransportJSON, nil, nil, "notify_url"},
		{"transport", "https://s.example/", Transport(7), nil, nil, "transport"},
		{"empty name", "https://s.example/", TransportJSON, []Field{String("", "x")}, nil, "fields[0]"},
		{"invalid string", "https://s.example/", TransportJSON, []Field{String("a", "\xff")}, nil, "a"},
		{"empty param", "https://s.example/", TransportForm, nil, []Param{{"", "x"}}, "params[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(tc.url, tc.t, tc.fields, tc.params)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

func TestSignedData(t *testing.T) {
	t.Parallel()
	get := Request{Method: "GET", URL: "https://x.example/?a=1", Body: []byte("ignored")}
	if got := string(SignedData(get)); got != get.URL {
		t.Errorf("GET signed data = %q, want the URL", got)
	}
	post := Request{Method: "POST", URL: "https://x.example/", Body: []byte(`{"a":1}`)}
	if got := string(SignedData(post)); got != `{"a":1}` {
		t.Errorf("POST signed data = %q, want the body", got)
	}
}

// TestJSON: JSON is the body Encode makes for a JSON POST without params,
// and refuses what Encode refuses.
func TestJSON(t *testing.T) {
	fields := []Field{String("a", "x\"y"), Int("n", 7), {Name: "z", Kind: KindNull}, Object("o", `{"k":1}`)}
	got, err := JSON(fields)
	if err != nil {
		t.Fatal(err)
	}
	req, err := Encode("https://shop.example/hook", TransportJSON, fields, nil)
	if err != nil || string(got) != string(req.Body) || string(got) != `{"a":"x\"y","n":7,"z":null,"o":{"k":1}}` {
		t.Fatalf("JSON %s, Encode %s (%v)", got, req.Body, err)
	}
	if _, err := JSON([]Field{String("", "x")}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an empty name: %v", err)
	}
}
