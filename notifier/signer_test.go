package notifier

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
)

// rotatingSecret is a signer.SecretSource whose secrets the test changes, as a
// project rotating its IPN secret would.
type rotatingSecret struct {
	mu      sync.Mutex
	secrets map[string][]byte
}

func (r *rotatingSecret) Secret(_ context.Context, key string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.secrets[key]
	if !ok {
		return nil, ErrUnknownSigner // any error: the attempt fails
	}
	return s, nil
}

func (r *rotatingSecret) set(key, secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets[key] = []byte(secret)
}

// TestPerAttemptSigning: a message signed by a signer.AttemptSigner stores no
// signature; every attempt carries a fresh timestamp (the attempt's time
// on the notifier's clock) and a signature computed with the key current at
// that moment, over the same stored bytes; Idempotency-Key is the uuid at
// every attempt.
func TestPerAttemptSigning(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			return ok(n, nil)
		})
		secrets := &rotatingSecret{secrets: map[string][]byte{"project:1": []byte("first secret")}}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = append(c.Signers, signer.NewHMACSigner(secrets))
		})
		e := f.envelope("confirmed", payload.TransportJSON)
		e.Signing = Signing{Scheme: signer.SchemeHMACSHA256, Key: "project:1"}
		row := f.enqueue(t, e)
		if row.Signature != "" || row.SignatureScheme != signer.SchemeHMACSHA256 || row.SigningKey != "project:1" {
			t.Fatalf("stored signature %q, scheme %q, key %q: a per-attempt signature is not stored", row.Signature, row.SignatureScheme, row.SigningKey)
		}
		f.run(t) // attempt 1 at t0 fails
		secrets.set("project:1", "rotated secret")
		f.clock.Advance(time.Minute)
		f.run(t) // attempt 2 at t0+1m
		reqs := rs.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged {
			t.Fatalf("status %s, want acknowledged", got.Status)
		}
		for i, want := range []struct {
			at     time.Time
			secret string
		}{{t0, "first secret"}, {t0.Add(time.Minute), "rotated secret"}} {
			r := reqs[i]
			ts := r.header.Get(signer.ServiceTimestampHeader)
			if ts != strconv.FormatInt(want.at.Unix(), 10) {
				t.Errorf("attempt %d: timestamp %q, want %d", i+1, ts, want.at.Unix())
			}
			sig := "v1=" + signer.HMACSignature([]byte(want.secret), row.UUID, ts, r.body)
			if got := r.header.Get(signer.ServiceSignatureHeader); got != sig {
				t.Errorf("attempt %d: signature %q, want %q (the key current at the attempt)", i+1, got, sig)
			}
			if r.header.Get(signer.SignatureHeader) != "" {
				t.Errorf("attempt %d carries an RSA signature too", i+1)
			}
			if r.idempotencyKey != row.UUID || string(r.body) != string(row.Body) {
				t.Errorf("attempt %d: key %q, body %s; want the stored uuid and bytes", i+1, r.idempotencyKey, r.body)
			}
		}
		if reqs[0].header.Get(signer.ServiceSignatureHeader) == reqs[1].header.Get(signer.ServiceSignatureHeader) {
			t.Error("both attempts carry the same signature")
		}
	})
}

// TestAttemptSigningFailureIsRetried: when the signer cannot sign (its key
// is gone), the attempt fails without sending anything and is retried on
// the schedule.
func TestAttemptSigningFailureIsRetried(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		secrets := &rotatingSecret{secrets: map[string][]byte{}}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = append(c.Signers, signer.NewHMACSigner(secrets))
		})
		e := f.envelope("confirmed", payload.TransportGET)
		e.Signing = Signing{Scheme: signer.SchemeHMACSHA256, Key: "project:2"}
		row := f.enqueue(t, e)
		f.run(t)
		at := f.attempts(t, row)
		if len(rs.requests()) != 0 || len(at) != 1 || at[0].Outcome != "failed" || at[0].Error == "" {
			t.Fatalf("%d requests, attempts %+v; want one failed attempt and nothing sent", len(rs.requests()), at)
		}
		secrets.set("project:2", "s")
		f.clock.Advance(time.Minute)
		f.run(t)
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || len(rs.requests()) != 1 {
			t.Fatalf("status %s after %d requests; want acknowledged once the key exists", got.Status, len(rs.requests()))
		}
	})
}

// TestEnqueueRefusesBadMessages: a message naming an unknown signer, or
// whose request could not be sent as stored, is refused before anything is
// stored.
func TestEnqueueRefusesBadMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.SQLite, "http://127.0.0.1:9/hook")
	good := f.message(t, f.envelope("pending", payload.TransportJSON))
	for name, mutate := range map[string]func(*Message){
		"unknown signer":    func(m *Message) { m.Signing.Scheme = "ed25519" },
		"method":            func(m *Message) { m.Request.Method = "PUT" },
		"GET with a body":   func(m *Message) { m.Request.Method = "GET" },
		"credentials":       func(m *Message) { m.Request.URL = "http://u:p@127.0.0.1:9/hook" },
		"not as sent":       func(m *Message) { m.Request.URL = "http://127.0.0.1:9" },
		"invalid UTF-8 tag": func(m *Message) { m.Subject.Ref = "\xff" },
	} {
		m := good
		mutate(&m)
		if _, err := f.n.Queue.EnqueueNow(context.Background(), m); err == nil {
			t.Errorf("%s: stored", name)
		}
	}
	if n, err := f.db.Client.Notification.Query().Count(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d notifications stored (%v)", n, err)
	}
}
