package apikey

import (
	"context"
	"fmt"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entapikey "github.com/payhook/payhook/ent/db/apikey"
	"github.com/payhook/payhook/ent/db/predicate"
)

// listed are the columns List and Revoke load: everything but the hash,
// which no listing needs and none should carry around.
var listed = []string{
	entapikey.FieldID, entapikey.FieldName, entapikey.FieldPrefix, entapikey.FieldCreatedAt,
	entapikey.FieldRevokedAt, entapikey.FieldProjectID, entapikey.FieldOperator, entapikey.FieldLastUsedAt,
	entapikey.FieldScopes,
}

// List returns the keys of project projectID (of every project when it is
// 0), operator keys included and flagged, revoked ones too, oldest first.
// The rows carry no hash (Hash is empty).
func List(ctx context.Context, db *entdb.Client, projectID int64) ([]*entdb.APIKey, error) {
	q := db.APIKey.Query()
	if projectID != 0 {
		q = q.Where(entapikey.ProjectID(projectID))
	}
	rows, err := q.Order(entdb.Asc(entapikey.FieldID)).Select(listed...).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return rows, nil
}

// Revoke revokes key id of project projectID (of any project when it is
// 0) at now: from then on it authenticates nothing (Resolver reads the
// database on every request, so every instance refuses it at once). A key
// already revoked keeps its first revocation time. Another project's key
// is ErrNotFound, as an unknown one is. It returns the key as revoked.
func Revoke(ctx context.Context, db *entdb.Client, projectID, id int64, now time.Time) (*entdb.APIKey, error) {
	return revoke(ctx, db, projectID, id, false, now)
}

// RevokeMerchant is Revoke for a project's own users: an operator key is
// ErrNotFound, as another project's is, so only the operator revokes one.
func RevokeMerchant(ctx context.Context, db *entdb.Client, projectID, id int64, now time.Time) (*entdb.APIKey, error) {
	return revoke(ctx, db, projectID, id, true, now)
}

func revoke(ctx context.Context, db *entdb.Client, projectID, id int64, merchantOnly bool, now time.Time) (*entdb.APIKey, error) {
	where := []predicate.APIKey{entapikey.ID(id)}
	if projectID != 0 {
		where = append(where, entapikey.ProjectID(projectID))
	}
	if merchantOnly {
		where = append(where, entapikey.Operator(false))
	}
	// One conditional UPDATE: of two concurrent revocations both succeed,
	// and the first one's time stays.
	if _, err := db.APIKey.Update().Where(append(where, entapikey.RevokedAtIsNil())...).SetRevokedAt(now).Save(ctx); err != nil {
		return nil, fmt.Errorf("revoke api key %d: %w", id, err)
	}
	row, err := db.APIKey.Query().Where(where...).Select(listed...).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("revoke api key %d: %w", id, err)
	}
	return row, nil
}
