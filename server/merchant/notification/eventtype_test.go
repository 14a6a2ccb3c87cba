package notification

import (
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
)

// TestTestWebhookMatchesTheCatalogue builds test.webhook's fields through
// the builder, encodes them as Test does (JSON POST) and validates the
// body against the event type's schema.
func TestTestWebhookMatchesTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	req, err := payload.Encode("https://shop.example/hook", payload.TransportJSON, testFields("u-1", 42, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := check.Check(TestEvent, req); err != nil {
		t.Error(err)
	}
}
