// Package apikey issues and resolves API keys. A key is shown once, when it
// is created; only its SHA-256 hash is stored, so a database leak reveals no
// usable key.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entapikey "github.com/payhook/payhook/ent/db/apikey"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/merchant/project"
)

// keyPrefix marks payhook keys so that secret scanners and people can
// recognise one.
const keyPrefix = "ph_"

// Hash returns the stored form of a key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Create issues a new merchant key named name in the default project
// (created when there is none), with every scope, and returns it in clear,
// once.
func Create(ctx context.Context, db *entdb.Client, name string, now time.Time) (string, *entdb.APIKey, error) {
	return Issue(ctx, db, Spec{Name: name}, now)
}

// CreateInProject issues a new merchant key named name in project
// projectID, with every scope.
func CreateInProject(ctx context.Context, db *entdb.Client, name string, projectID int64, now time.Time) (string, *entdb.APIKey, error) {
	return Issue(ctx, db, Spec{Name: name, ProjectID: projectID}, now)
}

// CreateScoped issues a new merchant key named name in project projectID
// with scopes (see ParseScopes: every scope when empty). Its signature is
// project.KeyIssuer's.
func CreateScoped(ctx context.Context, db *entdb.Client, name string, projectID int64, scopes []string, now time.Time) (string, *entdb.APIKey, error) {
	return Issue(ctx, db, Spec{Name: name, ProjectID: projectID, Scopes: scopes}, now)
}

// CreateOperator issues a new operator's key, with every scope: it may
// call the operator API (methods declaring ACCESS_OPERATOR). It belongs to
// the default project.
func CreateOperator(ctx context.Context, db *entdb.Client, name string, now time.Time) (string, *entdb.APIKey, error) {
	return Issue(ctx, db, Spec{Name: name, Operator: true}, now)
}

// Spec is a key to issue.
type Spec struct {
	// Name labels the key (required).
	Name string
	// ProjectID is the key's project; the default project (created when
	// there is none) when 0.
	ProjectID int64
	// Operator makes an operator's key.
	Operator bool
	// Scopes are what the key may do, each ScopeRead, ScopeCreate,
	// ScopePayouts or ScopeManagement (comma lists allowed, see
	// ParseScopes); every scope when empty. Operator keys are bound by
	// theirs too.
	Scopes []string
}

// Issue issues the key spec describes and returns it in clear, once. An
// unknown scope is ErrUnknownScope.
func Issue(ctx context.Context, db *entdb.Client, spec Spec, now time.Time) (string, *entdb.APIKey, error) {
	name, projectID, operator := strings.TrimSpace(spec.Name), spec.ProjectID, spec.Operator
	if name == "" {
		return "", nil, fmt.Errorf("api key name must not be empty")
	}
	scopes, err := ParseScopes(spec.Scopes)
	if err != nil {
		return "", nil, err
	}
	if projectID == 0 {
		p, err := project.Default(ctx, db, now)
		if err != nil {
			return "", nil, err
		}
		projectID = p.ID
	} else if _, err := project.Get(ctx, db, projectID); err != nil {
		return "", nil, err
	}
	var raw [20]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("generate api key: %w", err)
	}
	key := keyPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	row, err := db.APIKey.Create().
		SetName(name).
		SetPrefix(key[:8]).
		SetHash(Hash(key)).
		SetOperator(operator).
		SetScopes(scopes).
		SetProjectID(projectID).
		SetCreatedAt(now).
		Save(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("store api key: %w", err)
	}
	return key, row, nil
}

// Count returns the number of keys that are not revoked.
func Count(ctx context.Context, db *entdb.Client) (int, error) {
	return db.APIKey.Query().Where(entapikey.RevokedAtIsNil()).Count(ctx)
}

// LastUsedResolution is how precisely a key's last use is kept: a key is
// written at most once per this period, so authentication stays a read.
const LastUsedResolution = time.Minute

// Resolver resolves keys against the database.
type Resolver struct {
	DB *entdb.Client
	// Now is the clock of last_used_at (clock.Now when nil).
	Now func() time.Time
	// Logger reports, at debug level, a last-use write that failed
	// (discarded when nil): on a read-only database every request would
	// fail it, and the database's state is reported elsewhere.
	Logger *slog.Logger
}

// ResolveAPIKey implements interceptor.KeyResolver. It records the key's
// last use when the stored one is older than LastUsedResolution; that
// write is conditional (two instances do not both write) and its failure
// never fails the request (a read-only database still authenticates).
func (r Resolver) ResolveAPIKey(ctx context.Context, key string) (interceptor.Key, error) {
	row, err := r.DB.APIKey.Query().
		Where(entapikey.Hash(Hash(key)), entapikey.RevokedAtIsNil()).
		Only(ctx)
	if entdb.IsNotFound(err) {
		return interceptor.Key{}, interceptor.ErrUnknownKey
	}
	if err != nil {
		return interceptor.Key{}, fmt.Errorf("look up api key: %w", err)
	}
	now := clock.Now
	if r.Now != nil {
		now = r.Now
	}
	at := now().UTC().Truncate(LastUsedResolution)
	if row.LastUsedAt == nil || row.LastUsedAt.Before(at) {
		if _, err := r.DB.APIKey.Update().
			Where(entapikey.ID(row.ID), entapikey.Or(entapikey.LastUsedAtIsNil(), entapikey.LastUsedAtLT(at))).
			SetLastUsedAt(at).Save(ctx); err != nil && r.Logger != nil {
			r.Logger.Debug("record api key use", "key_id", row.ID, "error", err)
		}
	}
	return interceptor.Key{ID: row.ID, ProjectID: row.ProjectID, Operator: row.Operator, Scopes: row.Scopes}, nil
}
