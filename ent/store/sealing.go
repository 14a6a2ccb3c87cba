package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"entgo.io/ent"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/hook"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/db/signingkey"
	"github.com/payhook/payhook/internal/sealed"
)

// The columns whose values are sealed at rest (sealed.Box authenticates the
// column name with each value).
const (
	colIPNSecret         = "projects.ipn_secret"
	colPreviousIPNSecret = "projects.previous_ipn_secret"
	colPrivatePEM        = "signing_keys.private_pem"
	colEndpointSecret    = "endpoints.secret"
	colPreviousEndpoint  = "endpoints.previous_secret"
	colTOTPSecret        = "dashboard_users.totp_secret"
)

// ErrNoSecretsKey refuses to write a secret when the process has no
// secrets key.
var ErrNoSecretsKey = errors.New("this database keeps its secrets sealed and no secrets key is configured")

// secrets is the key of a DB's sealed columns: set once, or loaded on first
// use by a loader, so that a command that never touches a secret needs no
// key at all.
type secrets struct {
	mu     sync.Mutex
	box    *sealed.Box
	load   func() (*sealed.Box, error)
	loaded bool
	err    error
}

// get returns the key, loading it the first time; nil without error when
// none is configured.
func (s *secrets) get() (*sealed.Box, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.box == nil && s.load != nil && !s.loaded {
		s.box, s.err = s.load()
		s.loaded = true
	}
	return s.box, s.err
}

// SetSecretsKey makes b the key that seals the secret columns of db (the
// IPN secrets, the callback signing keys). Without one, db reads sealed
// values as they are stored and refuses to write a secret.
func (db *DB) SetSecretsKey(b *sealed.Box) {
	db.secrets.mu.Lock()
	defer db.secrets.mu.Unlock()
	db.secrets.box, db.secrets.err, db.secrets.loaded = b, nil, true
}

// SetSecretsKeyLoader makes load the source of db's secrets key, called
// the first time a secret is written or opened: an admin command that
// touches no secret never reads the seed.
func (db *DB) SetSecretsKeyLoader(load func() (*sealed.Box, error)) {
	db.secrets.mu.Lock()
	defer db.secrets.mu.Unlock()
	db.secrets.box, db.secrets.err, db.secrets.loaded, db.secrets.load = nil, nil, false, load
}

// sealer seals plain for column with the DB's key; a value already sealed
// (or empty) is kept.
func (s *secrets) seal(plain, column string) (string, error) {
	if plain == "" || sealed.IsSealed(plain) {
		return plain, nil
	}
	box, err := s.get()
	if err != nil {
		return "", fmt.Errorf("secrets key: %w", err)
	}
	if box == nil {
		return "", fmt.Errorf("%w: start with the seed (--seed-file) or --secrets-key-file to write %s", ErrNoSecretsKey, column)
	}
	return box.Seal(plain, column)
}

// open opens a stored value for column; without a key, or when the key's
// loader fails, a sealed value is left as it is stored (only a command
// that writes a secret needs the key, and it fails there, never on an
// unrelated read). A key that does not open it is an error.
func (s *secrets) open(stored, column string) (string, error) {
	if !sealed.IsSealed(stored) {
		return stored, nil
	}
	box, err := s.get()
	if err != nil || box == nil {
		// No key (or none loads): reads go on with the sealed value, which
		// only a write of a secret needs, and that write reports why.
		return stored, nil //nolint:nilerr // see above
	}
	return box.Open(stored, column)
}

// installSealing registers the hooks that seal the secret columns when
// they are written and the interceptors that open them when they are read,
// so no caller ever sees or stores a sealed value by mistake.
func installSealing(c *entdb.Client, s *secrets) {
	c.Project.Use(func(next ent.Mutator) ent.Mutator {
		return hook.ProjectFunc(func(ctx context.Context, m *entdb.ProjectMutation) (ent.Value, error) {
			if v, ok := m.IpnSecret(); ok {
				sv, err := s.seal(v, colIPNSecret)
				if err != nil {
					return nil, err
				}
				m.SetIpnSecret(sv)
			}
			if v, ok := m.PreviousIpnSecret(); ok {
				sv, err := s.seal(v, colPreviousIPNSecret)
				if err != nil {
					return nil, err
				}
				m.SetPreviousIpnSecret(sv)
			}
			v, err := next.Mutate(ctx, m)
			if p, ok := v.(*entdb.Project); ok && err == nil {
				err = openProject(s, p)
			}
			return v, err
		})
	})
	c.Project.Intercept(entdb.InterceptFunc(func(next entdb.Querier) entdb.Querier {
		return entdb.QuerierFunc(func(ctx context.Context, q entdb.Query) (entdb.Value, error) {
			v, err := next.Query(ctx, q)
			if ps, ok := v.([]*entdb.Project); ok && err == nil {
				for _, p := range ps {
					if err := openProject(s, p); err != nil {
						return nil, err
					}
				}
			}
			return v, err
		})
	}))
	c.SigningKey.Use(func(next ent.Mutator) ent.Mutator {
		return hook.SigningKeyFunc(func(ctx context.Context, m *entdb.SigningKeyMutation) (ent.Value, error) {
			if v, ok := m.PrivatePem(); ok {
				sv, err := s.seal(v, colPrivatePEM)
				if err != nil {
					return nil, err
				}
				m.SetPrivatePem(sv)
			}
			v, err := next.Mutate(ctx, m)
			if k, ok := v.(*entdb.SigningKey); ok && err == nil {
				k.PrivatePem, err = s.open(k.PrivatePem, colPrivatePEM)
			}
			return v, err
		})
	})
	c.SigningKey.Intercept(entdb.InterceptFunc(func(next entdb.Querier) entdb.Querier {
		return entdb.QuerierFunc(func(ctx context.Context, q entdb.Query) (entdb.Value, error) {
			v, err := next.Query(ctx, q)
			if ks, ok := v.([]*entdb.SigningKey); ok && err == nil {
				for _, k := range ks {
					if k.PrivatePem, err = s.open(k.PrivatePem, colPrivatePEM); err != nil {
						return nil, fmt.Errorf("signing key %d: %w", k.ID, err)
					}
				}
			}
			return v, err
		})
	}))
}

// installEndpointSealing seals the endpoints' signing secrets as the
// projects' IPN secrets are.
func installEndpointSealing(c *entdb.Client, s *secrets) {
	c.Endpoint.Use(func(next ent.Mutator) ent.Mutator {
		return hook.EndpointFunc(func(ctx context.Context, m *entdb.EndpointMutation) (ent.Value, error) {
			if v, ok := m.Secret(); ok {
				sv, err := s.seal(v, colEndpointSecret)
				if err != nil {
					return nil, err
				}
				m.SetSecret(sv)
			}
			if v, ok := m.PreviousSecret(); ok {
				sv, err := s.seal(v, colPreviousEndpoint)
				if err != nil {
					return nil, err
				}
				m.SetPreviousSecret(sv)
			}
			v, err := next.Mutate(ctx, m)
			if e, ok := v.(*entdb.Endpoint); ok && err == nil {
				err = openEndpoint(s, e)
			}
			return v, err
		})
	})
	c.Endpoint.Intercept(entdb.InterceptFunc(func(next entdb.Querier) entdb.Querier {
		return entdb.QuerierFunc(func(ctx context.Context, q entdb.Query) (entdb.Value, error) {
			v, err := next.Query(ctx, q)
			if es, ok := v.([]*entdb.Endpoint); ok && err == nil {
				for _, e := range es {
					if err := openEndpoint(s, e); err != nil {
						return nil, err
					}
				}
			}
			return v, err
		})
	}))
}

// installTOTPSealing seals the dashboard users' TOTP secrets as the
// projects' IPN secrets are.
func installTOTPSealing(c *entdb.Client, s *secrets) {
	c.DashboardUser.Use(func(next ent.Mutator) ent.Mutator {
		return hook.DashboardUserFunc(func(ctx context.Context, m *entdb.DashboardUserMutation) (ent.Value, error) {
			if v, ok := m.TotpSecret(); ok {
				sv, err := s.seal(v, colTOTPSecret)
				if err != nil {
					return nil, err
				}
				m.SetTotpSecret(sv)
			}
			v, err := next.Mutate(ctx, m)
			if u, ok := v.(*entdb.DashboardUser); ok && err == nil {
				if u.TotpSecret, err = s.open(u.TotpSecret, colTOTPSecret); err != nil {
					return nil, fmt.Errorf("dashboard user %d: %w", u.ID, err)
				}
			}
			return v, err
		})
	})
	c.DashboardUser.Intercept(entdb.InterceptFunc(func(next entdb.Querier) entdb.Querier {
		return entdb.QuerierFunc(func(ctx context.Context, q entdb.Query) (entdb.Value, error) {
			v, err := next.Query(ctx, q)
			if us, ok := v.([]*entdb.DashboardUser); ok && err == nil {
				for _, u := range us {
					if u.TotpSecret, err = s.open(u.TotpSecret, colTOTPSecret); err != nil {
						return nil, fmt.Errorf("dashboard user %d: %w", u.ID, err)
					}
				}
			}
			return v, err
		})
	}))
}

func openEndpoint(s *secrets, e *entdb.Endpoint) error {
	var err error
	if e.Secret, err = s.open(e.Secret, colEndpointSecret); err != nil {
		return fmt.Errorf("endpoint %d: %w", e.ID, err)
	}
	if e.PreviousSecret, err = s.open(e.PreviousSecret, colPreviousEndpoint); err != nil {
		return fmt.Errorf("endpoint %d: %w", e.ID, err)
	}
	return nil
}

func openProject(s *secrets, p *entdb.Project) error {
	var err error
	if p.IpnSecret, err = s.open(p.IpnSecret, colIPNSecret); err != nil {
		return fmt.Errorf("project %d: %w", p.ID, err)
	}
	if p.PreviousIpnSecret, err = s.open(p.PreviousIpnSecret, colPreviousIPNSecret); err != nil {
		return fmt.Errorf("project %d: %w", p.ID, err)
	}
	return nil
}

// SealSecrets seals every secret stored before secrets were sealed (a
// database from an earlier version) and checks that every sealed one opens
// with the configured key, so a wrong key stops the server at start rather
// than at the first signature. It needs the key.
func (db *DB) SealSecrets(ctx context.Context) error {
	box, err := db.secrets.get()
	if err != nil {
		return fmt.Errorf("secrets key: %w", err)
	}
	if box == nil {
		return ErrNoSecretsKey
	}
	// Reading opens every sealed value: a wrong key fails here.
	if _, err := db.Client.Project.Query().All(ctx); err != nil {
		return fmt.Errorf("open project secrets: %w", err)
	}
	if _, err := db.Client.SigningKey.Query().All(ctx); err != nil {
		return fmt.Errorf("open signing keys: %w", err)
	}
	if _, err := db.Client.Endpoint.Query().All(ctx); err != nil {
		return fmt.Errorf("open endpoint secrets: %w", err)
	}
	if _, err := db.Client.DashboardUser.Query().All(ctx); err != nil {
		return fmt.Errorf("open TOTP secrets: %w", err)
	}
	// Writing a plain value back seals it.
	ps, err := db.Client.Project.Query().Where(entproject.Or(
		entproject.And(entproject.IpnSecretNEQ(""), entproject.Not(entproject.IpnSecretHasPrefix(sealed.Prefix))),
		entproject.And(entproject.PreviousIpnSecretNEQ(""), entproject.Not(entproject.PreviousIpnSecretHasPrefix(sealed.Prefix))),
	)).All(ctx)
	if err != nil {
		return fmt.Errorf("read project secrets: %w", err)
	}
	for _, p := range ps {
		if err := db.Client.Project.UpdateOneID(p.ID).SetIpnSecret(p.IpnSecret).SetPreviousIpnSecret(p.PreviousIpnSecret).Exec(ctx); err != nil {
			return fmt.Errorf("seal the secrets of project %d: %w", p.ID, err)
		}
	}
	ks, err := db.Client.SigningKey.Query().Where(signingkey.Not(signingkey.PrivatePemHasPrefix(sealed.Prefix))).All(ctx)
	if err != nil {
		return fmt.Errorf("read signing keys: %w", err)
	}
	for _, k := range ks {
		if err := db.Client.SigningKey.UpdateOneID(k.ID).SetPrivatePem(k.PrivatePem).Exec(ctx); err != nil {
			return fmt.Errorf("seal signing key %d: %w", k.ID, err)
		}
	}
	return nil
}
