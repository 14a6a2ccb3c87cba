//go:build ignore

// entc.go generates ent/db from ent/schema. Run it through `go generate ./ent/...`.
package main

import (
	"log"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	err := entc.Generate("./schema", &gen.Config{
		Target:  "./db",
		Package: "github.com/payhook/payhook/ent/db",
		Features: []gen.Feature{
			gen.FeatureLock,
			gen.FeatureUpsert,
			gen.FeatureExecQuery,
			gen.FeatureModifier,
			gen.FeatureVersionedMigration,
		},
	})
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}
