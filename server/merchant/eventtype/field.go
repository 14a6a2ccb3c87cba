package eventtype

import (
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/notifier/payload"
)

// Type is a field's JSON type in a JSON body.
type Type string

// The JSON types of payload fields.
const (
	// TypeString is a JSON string.
	TypeString Type = "string"
	// TypeNumber is a JSON number (an exact decimal literal).
	TypeNumber Type = "number"
	// TypeInteger is a JSON number without a fraction.
	TypeInteger Type = "integer"
	// TypeObject is a JSON object.
	TypeObject Type = "object"
)

// Fixed says whether an event type fixes a field's value.
type Fixed uint8

// How a field's value may be fixed by its event type.
const (
	// Free: the field's value varies (within Enum, when set).
	Free Fixed = iota
	// EventName: the field holds the event type's name (event_type).
	EventName
	// StageName: the field holds the event type's stage, the last part of
	// its name (payment_status of checkout.payment.confirmed is confirmed).
	StageName
)

// decimalPattern is what payload.FormatAmount writes: plain decimal text,
// no sign, no exponent.
const decimalPattern = `^[0-9]+(\.[0-9]+)?$`

// Field is the definition of one payload field: its wire name, JSON type
// and meaning, and in which payloads of its family it appears. The typed
// definitions (StringField, AmountField, ...) embed it and make the
// notifier/payload field a builder writes.
type Field struct {
	// Name is the wire name.
	Name string
	// Type is the JSON type in a JSON body.
	Type Type
	// Nullable is true when the field may be JSON null (left out of GET and
	// form payloads).
	Nullable bool
	// Values is the JSON type of each member of an object field.
	Values Type
	// Enum lists the values a string field takes, when they are fixed.
	Enum []string
	// Fixed says whether the event type fixes the value.
	Fixed Fixed
	// Pattern is a regular expression a string field's value matches.
	Pattern string
	// JSONText is true for a string field that holds JSON text (its
	// receiver parses it separately).
	JSONText bool
	// Stages lists the stages (the last part of an event type's name)
	// whose payloads may carry the field; nil: every stage of its family.
	Stages []string
	// When is "" for a field present in every payload of its stages; else
	// when it is present, completing "Present only ..." ("when the invoice
	// is partial").
	When string
	// Description says what the field holds.
	Description string
}

// Def is a typed field definition (StringField, AmountField, ...).
type Def interface {
	// Spec returns the definition.
	Spec() Field
}

// Spec returns f; the typed definitions embed it.
func (f Field) Spec() Field { return f }

// inStage reports whether payloads of stage may carry f.
func (f Field) inStage(stage string) bool {
	if f.Stages == nil {
		return true
	}
	for _, s := range f.Stages {
		if s == stage {
			return true
		}
	}
	return false
}

// StringField is a string field.
type StringField struct{ Field }

// Of returns the field holding v.
func (f StringField) Of(v string) payload.Field { return payload.String(f.Name, v) }

// IntegerField is an integer field (a JSON number).
type IntegerField struct{ Field }

// Of returns the field holding v.
func (f IntegerField) Of(v int64) payload.Field { return payload.Int(f.Name, v) }

// ObjectField is a JSON object field, written from its exact JSON text.
type ObjectField struct{ Field }

// Of returns the field holding the JSON object literal text.
func (f ObjectField) Of(text string) payload.Field { return payload.Object(f.Name, text) }

// AmountField is an amount written as a JSON string of decimal text
// (payload.FormatAmount).
type AmountField struct{ Field }

// Of returns the field holding d rounded to places.
func (f AmountField) Of(d decimal.Decimal, places int32) payload.Field {
	return payload.String(f.Name, payload.FormatAmount(d, places))
}

// NullableAmountField is an amount written as a JSON string of decimal
// text, or null when unknown.
type NullableAmountField struct{ Field }

// Of returns the field holding *d rounded to places, or null when d is nil.
func (f NullableAmountField) Of(d *decimal.Decimal, places int32) payload.Field {
	if d == nil {
		return payload.Field{Name: f.Name, Kind: payload.KindNull}
	}
	return payload.String(f.Name, payload.FormatAmount(*d, places))
}

// NumberField is an amount written as a JSON number in exact decimal form.
type NumberField struct{ Field }

// Of returns the field holding d rounded to places.
func (f NumberField) Of(d decimal.Decimal, places int32) payload.Field {
	return payload.Field{Name: f.Name, Kind: payload.KindNumber, Text: payload.FormatAmount(d, places)}
}

// Money returns the field of an optional amount (payload.Money); ok is
// false when a is absent. a must not be null (the field is not nullable).
func (f NumberField) Money(a payload.Amount, places int32) (payload.Field, bool) {
	return payload.Money(f.Name, a, places)
}

// NullableNumberField is an amount written as a JSON number in exact
// decimal form, or null when unknown.
type NullableNumberField struct{ Field }

// Of returns the field holding *d rounded to places, or null when d is nil.
func (f NullableNumberField) Of(d *decimal.Decimal, places int32) payload.Field {
	if d == nil {
		return payload.Field{Name: f.Name, Kind: payload.KindNull}
	}
	return payload.Field{Name: f.Name, Kind: payload.KindNumber, Text: payload.FormatAmount(*d, places)}
}

// Money returns the field of an optional amount (payload.Money): a number,
// null, or nothing (ok false) when a is absent.
func (f NullableNumberField) Money(a payload.Amount, places int32) (payload.Field, bool) {
	return payload.Money(f.Name, a, places)
}

// The constructors of the typed definitions set what their type implies.

func str(f Field) StringField { f.Type = TypeString; return StringField{f} }

func integer(f Field) IntegerField { f.Type = TypeInteger; return IntegerField{f} }

func object(f Field) ObjectField { f.Type = TypeObject; return ObjectField{f} }

func amount(f Field) AmountField {
	f.Type, f.Pattern = TypeString, decimalPattern
	return AmountField{f}
}

func nullableAmount(f Field) NullableAmountField {
	f.Type, f.Pattern, f.Nullable = TypeString, decimalPattern, true
	return NullableAmountField{f}
}

func number(f Field) NumberField { f.Type = TypeNumber; return NumberField{f} }

func nullableNumber(f Field) NullableNumberField {
	f.Type, f.Nullable = TypeNumber, true
	return NullableNumberField{f}
}
