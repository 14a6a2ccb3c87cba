package project

import (
	"context"
	"crypto/rsa"
	"fmt"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/db/signingkey"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/signer"
)

// DefaultCallbackKeyGrace is how long the public half of a rotated-out
// callback key is still published beside the new one: longer than the
// delivery window (48 hours), so every callback signed before the rotation
// is delivered, or given up, while its key is still published.
const DefaultCallbackKeyGrace = 72 * time.Hour

// PublicKeys is what /pubkey/ publishes for an owner: the key that signs
// its callbacks now and, during a rotation's grace, the one it replaced.
type PublicKeys struct {
	// PEM is the public key that verifies new callbacks.
	PEM string
	// PreviousPEM is the replaced key, empty when there is none or its
	// grace is over.
	PreviousPEM string
	// PreviousUntil is when PreviousPEM stops being published.
	PreviousUntil time.Time
}

// CallbackKeys are the RSA keys that sign low-level callbacks (the
// x-ca-signature): one per project, kept in signing_keys (sealed at rest)
// and made the first time a project needs one. The default project signs
// with the server's key (Server) until its operator rotates its key, for
// the integrations that fetch /pubkey/ without an API key. It implements
// signer.RSAKeys; what it read is kept for TTL.
type CallbackKeys struct {
	// DB is the database.
	DB *entdb.Client
	// Server is the server's key (--signing-key-file, or the database's
	// project_id 0 key), which /pubkey/ without a key publishes.
	Server *rsa.PrivateKey
	// Bits is the size of the keys it makes.
	Bits int
	// TTL is how long a project's keys are kept before they are read again.
	TTL time.Duration
	// Now is the clock.
	Now func() time.Time

	mu        sync.Mutex
	cache     map[int64]callbackEntry
	defaultID int64
}

var _ signer.RSAKeys = (*CallbackKeys)(nil)

type callbackEntry struct {
	key   *rsa.PrivateKey
	pub   PublicKeys
	until time.Time
}

// RSAKey implements signer.RSAKeys: "" is the server's key, a KeyRef the
// project's.
func (c *CallbackKeys) RSAKey(ctx context.Context, ref string) (*rsa.PrivateKey, error) {
	if ref == "" {
		return c.Server, nil
	}
	id, err := ParseKeyRef(ref)
	if err != nil {
		return nil, err
	}
	e, err := c.entry(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.key, nil
}

// Public returns the public keys of project id, as /pubkey/ answers them to
// its API keys.
func (c *CallbackKeys) Public(ctx context.Context, id int64) (PublicKeys, error) {
	e, err := c.entry(ctx, id)
	if err != nil {
		return PublicKeys{}, err
	}
	return e.pub, nil
}

// ServerPublic returns the server's public key, as /pubkey/ answers it
// without an API key.
func (c *CallbackKeys) ServerPublic() (string, error) {
	return signer.PublicKeyPEM(&c.Server.PublicKey)
}

// entry returns project id's keys, from the cache while they serve.
func (c *CallbackKeys) entry(ctx context.Context, id int64) (callbackEntry, error) {
	now := c.Now()
	c.mu.Lock()
	e, ok := c.cache[id]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e, nil
	}
	e, err := c.load(ctx, id, now)
	if err != nil {
		return callbackEntry{}, err
	}
	e.until = now.Add(c.TTL)
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[int64]callbackEntry{}
	}
	c.cache[id] = e
	c.mu.Unlock()
	return e, nil
}

// load reads project id's keys, making its first key when it has none (the
// default project excepted: it signs with the server's key until rotated).
func (c *CallbackKeys) load(ctx context.Context, id int64, now time.Time) (callbackEntry, error) {
	for range 2 {
		ks, err := c.DB.SigningKey.Query().
			Where(signingkey.ProjectID(id), signingkey.Algorithm(signer.SchemeRSASHA256)).
			Order(entdb.Asc(signingkey.FieldID)).All(ctx)
		if err != nil {
			return callbackEntry{}, fmt.Errorf("read the callback keys of project %d: %w", id, err)
		}
		var e callbackEntry
		for _, k := range ks {
			switch {
			case k.Active && e.key == nil:
				// Two instances that made a project's first key at once
				// both sign with the oldest.
				key, err := signer.ParseRSAKey(k.PrivatePem, fmt.Sprintf("signing key %d", k.ID))
				if err != nil {
					return callbackEntry{}, err
				}
				e.key, e.pub.PEM = key, k.PublicPem
			case !k.Active && k.PreviousUntil != nil && now.Before(*k.PreviousUntil) && k.PreviousUntil.After(e.pub.PreviousUntil):
				e.pub.PreviousPEM, e.pub.PreviousUntil = k.PublicPem, *k.PreviousUntil
			}
		}
		if e.key != nil {
			return e, nil
		}
		def, err := c.isDefault(ctx, id)
		if err != nil {
			return callbackEntry{}, err
		}
		if def {
			pub, err := c.ServerPublic()
			if err != nil {
				return callbackEntry{}, err
			}
			e.key, e.pub.PEM = c.Server, pub
			return e, nil
		}
		if err := createCallbackKey(ctx, c.DB, id, c.Bits, now); err != nil {
			return callbackEntry{}, err
		}
	}
	return callbackEntry{}, fmt.Errorf("project %d: its callback key was not found after it was made", id)
}

// isDefault tells whether id is the default project (which keeps the
// server's key until rotated).
func (c *CallbackKeys) isDefault(ctx context.Context, id int64) (bool, error) {
	c.mu.Lock()
	def := c.defaultID
	c.mu.Unlock()
	if def == 0 {
		p, err := c.DB.Project.Query().Where(entproject.Name(DefaultName)).Order(entdb.Asc(entproject.FieldID)).
			Select(entproject.FieldID).First(ctx)
		if entdb.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("find the default project: %w", err)
		}
		def = p.ID
		c.mu.Lock()
		c.defaultID = def
		c.mu.Unlock()
	}
	return id == def, nil
}

// Forget drops what the cache holds of project id, so this instance signs
// with a rotation's new key at once.
func (c *CallbackKeys) Forget(id int64) {
	c.mu.Lock()
	delete(c.cache, id)
	c.mu.Unlock()
}

// Rotate gives project id a new callback signing key (RotateCallbackKey
// with the keys' size and clock) and forgets what this instance cached of
// it, so its next callback is signed with the new key.
func (c *CallbackKeys) Rotate(ctx context.Context, id int64, grace time.Duration) (string, error) {
	pub, err := RotateCallbackKey(ctx, c.DB, id, grace, c.Bits, c.Now())
	c.Forget(id)
	return pub, err
}

// createCallbackKey stores a new active key for project id.
func createCallbackKey(ctx context.Context, db *entdb.Client, id int64, bits int, now time.Time) error {
	_, priv, pub, err := signer.GenerateRSAKey(bits)
	if err != nil {
		return err
	}
	if _, err := db.SigningKey.Create().SetAlgorithm(signer.SchemeRSASHA256).SetProjectID(id).
		SetPrivatePem(priv).SetPublicPem(pub).SetActive(true).SetCreatedAt(now).Save(ctx); err != nil {
		return fmt.Errorf("store the callback key of project %d: %w", id, err)
	}
	return nil
}

// RotateCallbackKey gives project id a new callback signing key and returns
// its public half. The keys it replaces stop signing at once (on every
// instance within the key cache's TTL) and are still published at /pubkey/
// for grace; callbacks signed before keep their signatures. Rotating the
// default project's key moves it off the server's key, which /pubkey/
// without an API key still publishes.
func RotateCallbackKey(ctx context.Context, db *entdb.Client, id int64, grace time.Duration, bits int, now time.Time) (string, error) {
	if grace < 0 {
		return "", invalid("grace must not be negative")
	}
	if _, err := Get(ctx, db, id); err != nil {
		return "", err
	}
	_, priv, pub, err := signer.GenerateRSAKey(bits)
	if err != nil {
		return "", err
	}
	err = store.WithTx(ctx, db, func(tx *entdb.Tx) error {
		if _, err := tx.SigningKey.Update().
			Where(signingkey.ProjectID(id), signingkey.Active(true)).
			SetActive(false).SetPreviousUntil(now.Add(grace)).Save(ctx); err != nil {
			return fmt.Errorf("retire the callback keys of project %d: %w", id, err)
		}
		_, err := tx.SigningKey.Create().SetAlgorithm(signer.SchemeRSASHA256).SetProjectID(id).
			SetPrivatePem(priv).SetPublicPem(pub).SetActive(true).SetCreatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("rotate the callback key of project %d: %w", id, err)
	}
	return pub, nil
}
