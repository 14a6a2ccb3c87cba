package server

import "testing"

func TestDevKeyCommand(t *testing.T) {
	rows := []struct{ name, dsn, want string }{
		{"default database", DefaultDB, "payhook apikey create --name dev"},
		{"sqlite path", "sqlite:/tmp/it's.db", `payhook apikey create --name dev --db 'sqlite:/tmp/it'\''s.db'`},
		{"postgres password masked", "postgres://u:secret@db:5432/p?sslmode=disable", "payhook apikey create --name dev --db 'postgres://u:xxxxx@db:5432/p?sslmode=disable'"},
		{"postgres without password", "postgres://u@db/p", "payhook apikey create --name dev --db 'postgres://u@db/p'"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := devKeyCommand(r.dsn); got != r.want {
				t.Fatalf("got %s, want %s", got, r.want)
			}
		})
	}
}
