package store

import (
	"context"
	"io/fs"
)

// MigrateFS applies the migrations in fsys (tests: a prefix of the
// embedded ones, to write data as an older schema held it).
func MigrateFS(ctx context.Context, db *DB, fsys fs.FS) ([]string, error) {
	return migrate(ctx, db, fsys, migrateOptions{})
}
