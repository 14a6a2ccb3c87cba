// Package eventtype is the catalogue of every event type payhook sends to a
// merchant: the merchant webhooks (checkout.payment.confirmed,
// subscription.payment.completed, checkout.refund.pending, payout.done,
// test.webhook, ...) and the low-level callbacks (custom.payment.*,
// wrong_asset), each with a description, the services that send it and the
// definition of every field its payload can carry. GET /events/types/
// answers the catalogue with one JSON Schema (draft 2020-12) per event
// type, generated from those definitions (Event.Schema).
//
// The definitions are the ones the payload builders use: a builder writes a
// field only through its definition (Invoice.PaymentID.Of(id), ...), whose
// typed method makes the notifier/payload field with the definition's name
// and JSON type, so a builder cannot send a field the catalogue does not
// define, nor write it with another JSON type than the schema says. Which
// fields an event type's payload carries, and in which stages, is written
// here once per family (Family); a test of each builder, and a check over
// every payload the test suite stores (server/servertest), validate what
// the builders send against the schemas.
//
// Guarantees:
//
//   - One entry per concrete event type (checkout.payment.pending,
//     checkout.payment.confirmed, ...), in a fixed order; names are unique.
//   - A field's JSON type in a JSON body is its definition's Type (null too
//     when Nullable); in GET and form payloads every value is a string and
//     null fields are left out, as notifier/payload writes them.
//   - A field present in every payload of an event type is required in its
//     schema; one present only sometimes says when in its description
//     (When). A field its event type never carries is not in the schema,
//     and additionalProperties is false, except for the low-level
//     callbacks, whose merchant's custom parameters follow as strings.
//
// The package knows no storage and no transport; it imports only
// notifier/payload (to make fields), decimal and internal/kind.
// eventtypetest checks payloads against the schemas in tests.
package eventtype
