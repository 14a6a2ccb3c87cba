// Package i18n holds the hosted pages' messages in every language they
// offer, as one JSON file per language beside this file (en.json, de.json,
// es.json, pt.json), embedded in the binary. A translator edits those
// files only; no template changes with a language.
//
// # File format
//
// A file is one JSON object of message key to text. "language.name" is the
// language's name in itself, for the language switch. A text may hold
// printf verbs with explicit argument indexes (%[1]s, %[2]d), which the
// pages fill in; a literal percent is %%. A text that depends on a count
// is an object of CLDR plural categories ("one", "other", and "few" or
// "many" where a language needs them) with "arg", the 1-based argument
// that carries the count:
//
//	"status.confirming": {"arg": 2, "one": "... %[1]d of %[2]d confirmation.", "other": "... %[1]d of %[2]d confirmations."}
//
// # Guarantees
//
//   - English (en.json) is the reference: every other file has exactly its
//     keys, each with the same argument verbs (tested), so no page shows a
//     key or a missing argument in any language.
//   - Matching a request's Accept-Language to an offered language is
//     golang.org/x/text/language's (its matcher knows that pt-BR is
//     Portuguese and de-CH German); plural forms are CLDR's through
//     golang.org/x/text/feature/plural; nothing here parses a language tag
//     or picks a plural form by hand.
//   - A language asked for explicitly (the page's ?lang= link, or the
//     cookie it sets) wins over Accept-Language when it is offered; what is
//     not offered falls back to English.
package i18n
