package payload

import "strconv"

// Transport is how a notification travels: which method, and where its fields go.
type Transport int

const (
	// TransportGET sends the fields in the query string of a GET request.
	TransportGET Transport = iota
	// TransportForm POSTs the fields as application/x-www-form-urlencoded.
	TransportForm
	// TransportJSON POSTs the fields as one JSON object.
	TransportJSON
)

// Content types of the POST transports.
const (
	// ContentTypeForm is the Content-Type of a TransportForm request.
	ContentTypeForm = "application/x-www-form-urlencoded"
	// ContentTypeJSON is the Content-Type of a TransportJSON request.
	ContentTypeJSON = "application/json"
)

// TransportFor maps the post and json flags given at address creation to a
// Transport: json wins over post, and neither means GET.
func TransportFor(post, json bool) Transport {
	switch {
	case json:
		return TransportJSON
	case post:
		return TransportForm
	default:
		return TransportGET
	}
}

// String returns "get", "form" or "json" (the names stored with a
// notification and shown in logs), or "Transport(n)" for an unknown value.
func (t Transport) String() string {
	switch t {
	case TransportGET:
		return "get"
	case TransportForm:
		return "form"
	case TransportJSON:
		return "json"
	default:
		return "Transport(" + strconv.Itoa(int(t)) + ")"
	}
}

func (t Transport) valid() bool { return t >= TransportGET && t <= TransportJSON }
