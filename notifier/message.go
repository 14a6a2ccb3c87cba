package notifier

import (
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/payload"
)

// Message is one notification to deliver. The notifier knows messages, not
// payments: who owns one, what it is about (labels for logs, filters and
// ordering), the request built once and how it is signed.
type Message struct {
	// UUID identifies the message for its receiver: stable across retries,
	// sent as the Idempotency-Key header of every attempt (payloads usually
	// carry it too). Generated when empty; then the payload cannot carry
	// it, so producers whose payload has a uuid set it themselves.
	UUID string
	// Owner is who the message belongs to: only watchers of this owner see
	// its delivery events.
	Owner int64
	// Subject says what the message is about.
	Subject Subject
	// Request is the exact request: method, URL, content type and body. It
	// is stored and sent unchanged on every attempt. The URL must pass
	// egress.CheckURL as it is (payload.Encode produces such URLs).
	Request payload.Request
	// Signing names the signer and key that sign the message; the zero
	// value sends it unsigned.
	Signing Signing
	// EndpointID is the endpoint (endpoints) the message is delivered to,
	// 0 for none (a notify_url, a callback); EventID the merchant event
	// (events) it delivers, 0 for none. Stored with it, for its endpoint's
	// pauses, logs and replays.
	EndpointID, EventID int64
	// Paused stores the message paused (its endpoint is): it waits,
	// unattempted and with its window stopped, until the endpoint resumes.
	Paused bool
	// Payload is the payload's fields before their transport encoding (a
	// merchant event's, which the project's endpoints receive as JSON);
	// not stored.
	Payload []payload.Field
}

// Subject labels a message. The notifier gives these labels no meaning
// beyond filters, logs and Sequence's ordering.
type Subject struct {
	// Service names the API that produced the message, e.g. "address" for
	// low-level callbacks.
	Service string
	// Event is what the message reports, e.g. a payment status ("pending")
	// or "checkout.payment.confirmed".
	Event string
	// Ref is the object the message is about, as its owner knows it (the
	// payment address of a low-level callback).
	Ref string
	// Topic groups messages for filters (the ticker of a low-level
	// callback).
	Topic string
	// Sequence, when not empty, orders delivery: messages with the same
	// Sequence make their first attempts in the order they were stored, one
	// at a time (a payment's pending, confirmed and completed callbacks).
	Sequence string
	// FirstOfSequence says the producer knows no earlier message of
	// Sequence was ever stored (a payment's first notification, stored by
	// the transaction that records the payment): the check for an earlier
	// one still due is skipped when it is stored.
	FirstOfSequence bool
}

// Signing says how a message is signed.
type Signing struct {
	// Scheme names the signer (Signer.Scheme); empty means unsigned.
	Scheme string
	// Key names the signer's key (its meaning is the signer's): for a
	// per-attempt signer, the key whose current value signs each attempt.
	Key string
}

// check reports why m cannot be stored, wrapping ErrInvalidMessage.
func (m *Message) check() (host string, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, args...))
	}
	r := m.Request
	switch r.Method {
	case http.MethodGet:
		if len(r.Body) > 0 {
			return "", bad("a GET request has no body")
		}
	case http.MethodPost:
	default:
		return "", bad("method %q is not GET or POST", r.Method)
	}
	norm, err := egress.CheckURL(r.URL)
	if err != nil {
		return "", bad("url: %v", err)
	}
	if norm != r.URL {
		return "", bad("url %s is not written as it is sent (%s)", r.URL, norm)
	}
	for _, s := range []string{m.UUID, m.Subject.Service, m.Subject.Event, m.Subject.Ref, m.Subject.Topic, m.Subject.Sequence, m.Signing.Scheme, m.Signing.Key} {
		if !utf8.ValidString(s) {
			return "", bad("labels must be valid UTF-8")
		}
	}
	u, _ := url.Parse(r.URL) // checked above
	return hostKey(u), nil
}

// hostKey is the destination a per-host concurrency bound applies to.
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Hostname() + ":" + port
}
