// Package ent holds payhook's storage layer: hand-written schemas (ent/schema),
// the client generated from them (ent/db, imported as entdb), versioned
// migrations per dialect (ent/migrations) and the one package that opens and
// migrates databases (ent/store).
//
// Regenerate ent/db after changing a schema with:
//
//	go generate ./ent/...
//
// then add a migration with `go run ./ent/migrations/gen -name NAME`.
package ent

//go:generate go run entc.go
