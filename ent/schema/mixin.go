package schema

import (
	"regexp"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
)

// now is the default clock of the schemas. Callers that inject a clock set
// created_at and updated_at explicitly; the default only fills what they omit.
// Truncating to microseconds matches PostgreSQL's precision, so a default value
// reads back equal on every dialect.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// sha256Hex matches a lowercase hex SHA-256 digest.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// moneyType is the column type of every decimal.Decimal column. SQLite must
// use TEXT: a NUMERIC (or DECIMAL) column has numeric affinity and SQLite
// would store "0.123456789012345678" as a REAL, silently losing digits.
var moneyType = map[string]string{
	dialect.Postgres: "numeric(38,18)",
	dialect.SQLite:   "text",
}

// unitsType is the column type of amounts in a coin's base units (whole
// numbers up to 10^60). SQLite stores them as TEXT for the reason moneyType
// gives.
var unitsType = map[string]string{
	dialect.Postgres: "numeric(60,0)",
	dialect.SQLite:   "text",
}

// CreateTimeMixin adds created_at, set once when the row is created.
type CreateTimeMixin struct{ mixin.Schema }

// Fields of the CreateTimeMixin.
func (CreateTimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(now).Immutable(),
	}
}

// TimeMixin adds created_at and updated_at. updated_at is refreshed by every
// update made through the generated client unless the caller sets it.
type TimeMixin struct{ mixin.Schema }

// Fields of the TimeMixin.
func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(now).Immutable(),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	}
}
