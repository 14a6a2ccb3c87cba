package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/apikey"
)

// APIKeyInfo is an API key as the operator's CLI lists it: never the key
// nor its hash, only the prefix stored for display.
type APIKeyInfo struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	ProjectID int64      `json:"project_id"`
	Operator  bool       `json:"operator"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	// LastUsedAt is when the key last authenticated a request, to the
	// minute (nil: never, or before payhook recorded it).
	LastUsedAt *time.Time `json:"last_used_at"`
	// Scopes are what the key may do (read, create, payouts, management).
	Scopes []string `json:"scopes"`
}

func apiKeyInfo(k *entdb.APIKey) APIKeyInfo {
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return APIKeyInfo{ID: k.ID, Name: k.Name, Prefix: k.Prefix, ProjectID: k.ProjectID, Operator: k.Operator,
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt, LastUsedAt: k.LastUsedAt, Scopes: scopes}
}

// ParseScopes reads API key scopes as the CLI takes them (names or comma
// lists, repeatable) and returns them in their documented order; every
// scope when none is given. An unknown name is an error naming it and the
// scopes there are.
func ParseScopes(values []string) ([]string, error) { return apikey.ParseScopes(values) }

// CreateAPIKey opens the database named by dsn, migrates it when needed and
// issues an API key called name with every scope, created at now (an
// operator's key when operator is set: it alone may call the operator
// API). The key is returned in clear this once; the database keeps only
// its hash.
func CreateAPIKey(ctx context.Context, dsn, name string, operator bool, now time.Time) (key string, err error) {
	key, _, err = CreateScopedAPIKey(ctx, dsn, 0, name, operator, nil, now)
	return key, err
}

// CreateScopedAPIKey is CreateAPIKey for project projectID (the default
// project when 0) with scopes (every scope when empty; see ParseScopes); it
// returns the key's scopes too. Scopes bind operator keys as well; an
// operator's key belongs to the default project, so operator with another
// project is an error. The key's project's audit log records api_key.create
// on the key's name in the key's transaction.
func CreateScopedAPIKey(ctx context.Context, dsn string, projectID int64, name string, operator bool, scopes []string, now time.Time) (key string, granted []string, err error) {
	if operator && projectID != 0 {
		return "", nil, errors.New("--project: an operator's key belongs to the default project; leave out --project or --operator")
	}
	if _, err := apikey.ParseScopes(scopes); err != nil {
		return "", nil, err // before the database is opened, or created
	}
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		return store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
			k, row, err := apikey.Issue(ctx, tx.Client(), apikey.Spec{Name: name, ProjectID: projectID, Operator: operator, Scopes: scopes}, now)
			if err != nil {
				return fmt.Errorf("create api key %q: %w", name, err)
			}
			if err := recordInTx(ctx, tx.Client(), row.ProjectID, "api_key.create", row.Name, now); err != nil {
				return err
			}
			key, granted = k, row.Scopes
			return nil
		})
	})
	return key, granted, err
}

// ListAPIKeys opens the database named by dsn, migrates it when needed and
// lists the API keys of project projectID (every project's when 0),
// operator and revoked keys included, oldest first.
func ListAPIKeys(ctx context.Context, dsn string, projectID int64) (keys []APIKeyInfo, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		rows, err := apikey.List(ctx, db.Client, projectID)
		if err != nil {
			return err
		}
		keys = make([]APIKeyInfo, len(rows))
		for i, r := range rows {
			keys[i] = apiKeyInfo(r)
		}
		return nil
	})
	return keys, err
}

// RevokeAPIKey opens the database named by dsn, migrates it when needed
// and revokes, at now, the key ref names in project projectID (any project
// when 0): ref is the key's id when it is a number, its name otherwise.
// Of several keys with that name, the ones still active count; more than
// one is ErrAmbiguousAPIKey, naming each. Every instance refuses the key
// from its next request on, as keys are resolved from the database on each
// request. Revoking a revoked key keeps its first revocation time. The
// key's project's audit log records api_key.revoke on the key's id in the
// revocation's transaction.
func RevokeAPIKey(ctx context.Context, dsn string, projectID int64, ref string, now time.Time) (key APIKeyInfo, err error) {
	ref = strings.TrimSpace(ref)
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		return store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
			id, perr := strconv.ParseInt(ref, 10, 64)
			if perr != nil {
				if id, err = keyByName(ctx, tx.Client(), projectID, ref); err != nil {
					return err
				}
			}
			row, err := apikey.Revoke(ctx, tx.Client(), projectID, id, now)
			if err != nil {
				return err
			}
			if err := recordInTx(ctx, tx.Client(), row.ProjectID, "api_key.revoke", strconv.FormatInt(row.ID, 10), now); err != nil {
				return err
			}
			key = apiKeyInfo(row)
			return nil
		})
	})
	return key, err
}

// keyByName finds the one key named name: among active keys first, then
// among revoked ones (revoking again is harmless).
func keyByName(ctx context.Context, db *entdb.Client, projectID int64, name string) (int64, error) {
	rows, err := apikey.List(ctx, db, projectID)
	if err != nil {
		return 0, err
	}
	var active, revoked []*entdb.APIKey
	for _, r := range rows {
		switch {
		case r.Name != name:
		case r.RevokedAt == nil:
			active = append(active, r)
		default:
			revoked = append(revoked, r)
		}
	}
	match := active
	if len(match) == 0 {
		match = revoked
	}
	switch len(match) {
	case 0:
		return 0, fmt.Errorf("%w: no key named %q", apikey.ErrNotFound, name)
	case 1:
		return match[0].ID, nil
	}
	var b strings.Builder
	for _, r := range match {
		fmt.Fprintf(&b, "\n  id %d  project %d  created %s", r.ID, r.ProjectID, r.CreatedAt.UTC().Format(time.RFC3339))
	}
	return 0, fmt.Errorf("%w: %d keys are named %q; revoke one by id (or narrow with --project):%s", ErrAmbiguousAPIKey, len(match), name, b.String())
}
