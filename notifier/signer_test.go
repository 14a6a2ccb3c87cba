package notifier

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/receiver"
)

// testSecret is a TEST-ONLY webhook secret made of name.
func testSecret(name string) string {
	return signer.SecretPrefix + base64.StdEncoding.EncodeToString([]byte(name+" (a test webhook secret)"))
}

// rotatingRing is a signer.SecretRing whose secrets the test changes, as a
// project rotating its IPN secret would (the new one first, the old one
// during its grace period). It records the times it was asked at.
type rotatingRing struct {
	mu      sync.Mutex
	secrets map[string][]string
	asked   []time.Time
}

func (r *rotatingRing) Secrets(_ context.Context, key string, at time.Time) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, at)
	return r.secrets[key], nil // none: the attempt fails
}

func (r *rotatingRing) set(key string, secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets[key] = secrets
}

func (r *rotatingRing) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

// webhookSignature is the x-service-signature the secrets make for one
// attempt, current first.
func webhookSignature(t *testing.T, id string, at time.Time, data []byte, secrets ...string) string {
	t.Helper()
	var sigs []string
	for _, s := range secrets {
		sig, err := signer.Sign(s, id, at.Unix(), data)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " ")
}

// TestPerAttemptSigning: a message signed by a signer.AttemptSigner stores no
// signature; every attempt carries a fresh timestamp (the attempt's time
// on the notifier's clock) and signatures made with the secrets valid at
// that moment, over the same stored bytes: after a rotation the next
// attempt is signed with the new secret and, during the grace period, the
// old one. Idempotency-Key and x-service-id are the uuid at every attempt;
// x-service-event is the message's event.
func TestPerAttemptSigning(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			return ok(n, nil)
		})
		first, rotated := testSecret("first"), testSecret("rotated")
		ring := &rotatingRing{secrets: map[string][]string{"project:1": {first}}}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = append(c.Signers, signer.NewWebhookSigner(ring))
		})
		e := f.envelope("confirmed", payload.TransportJSON)
		e.Signing = Signing{Scheme: signer.SchemeWebhook, Key: "project:1"}
		row := f.enqueue(t, e)
		if row.Signature != "" || row.SignatureScheme != signer.SchemeWebhook || row.SigningKey != "project:1" {
			t.Fatalf("stored signature %q, scheme %q, key %q: a per-attempt signature is not stored", row.Signature, row.SignatureScheme, row.SigningKey)
		}
		f.run(t) // attempt 1 at t0 fails
		ring.set("project:1", rotated, first)
		f.clock.Advance(time.Minute)
		f.run(t) // attempt 2 at t0+1m
		reqs := rs.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged {
			t.Fatalf("status %s, want acknowledged", got.Status)
		}
		if asked := ring.times(); !slices.EqualFunc(asked, []time.Time{t0, t0.Add(time.Minute)}, time.Time.Equal) {
			t.Errorf("ring asked at %v, want each attempt's time", asked)
		}
		for i, want := range []struct {
			at      time.Time
			secrets []string
		}{{t0, []string{first}}, {t0.Add(time.Minute), []string{rotated, first}}} {
			r := reqs[i]
			ts := r.header.Get(signer.WebhookTimestampHeader)
			if ts != strconv.FormatInt(want.at.Unix(), 10) {
				t.Errorf("attempt %d: timestamp %q, want %d", i+1, ts, want.at.Unix())
			}
			sig := webhookSignature(t, row.UUID, want.at, r.body, want.secrets...)
			if got := r.header.Get(signer.WebhookSignatureHeader); got != sig {
				t.Errorf("attempt %d: signature %q, want %q (the secrets valid at the attempt, current first)", i+1, got, sig)
			}
			if got := r.header.Get(signer.WebhookIDHeader); got != row.UUID {
				t.Errorf("attempt %d: %s %q, want the uuid", i+1, signer.WebhookIDHeader, got)
			}
			if got := r.header.Get(signer.WebhookEventHeader); got != "confirmed" {
				t.Errorf("attempt %d: %s %q, want the message's event", i+1, signer.WebhookEventHeader, got)
			}
			if r.header.Get(signer.SignatureHeader) != "" {
				t.Errorf("attempt %d carries an RSA signature too", i+1)
			}
			if r.idempotencyKey != row.UUID || string(r.body) != string(row.Body) {
				t.Errorf("attempt %d: key %q, body %s; want the stored uuid and bytes", i+1, r.idempotencyKey, r.body)
			}
		}
		if reqs[0].header.Get(signer.WebhookSignatureHeader) == reqs[1].header.Get(signer.WebhookSignatureHeader) {
			t.Error("both attempts carry the same signature")
		}
		// What merchants see: before they update, the old secret verifies the
		// second attempt (grace period); the new one never verified the first.
		h := reqs[1].header
		for _, secrets := range [][]string{{first}, {rotated}} {
			v := receiver.NewWebhookVerifier(secrets, receiver.WithClock(f.clock.Now))
			if err := v.VerifySigned(h.Get(receiver.WebhookIDHeader), h.Get(receiver.WebhookTimestampHeader), reqs[1].body, h.Get(receiver.WebhookSignatureHeader)); err != nil {
				t.Errorf("attempt 2 with receiver secret %d: %v", slices.Index([]string{first, rotated}, secrets[0])+1, err)
			}
		}
		h = reqs[0].header
		if err := receiver.VerifyWebhookSignature(rotated, h.Get(receiver.WebhookIDHeader), h.Get(receiver.WebhookTimestampHeader), reqs[0].body, h.Get(receiver.WebhookSignatureHeader)); err == nil {
			t.Error("attempt 1, made before the rotation, verifies with the new secret")
		}
	})
}

// TestAttemptSigningFailureIsRetried: when the signer cannot sign (no
// secret, or a malformed one), the attempt fails without sending anything,
// its error names the problem but not the secret, and it is retried on the
// schedule.
func TestAttemptSigningFailureIsRetried(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		ring := &rotatingRing{secrets: map[string][]string{}}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = append(c.Signers, signer.NewWebhookSigner(ring))
		})
		e := f.envelope("confirmed", payload.TransportGET)
		e.Signing = Signing{Scheme: signer.SchemeWebhook, Key: "project:2"}
		row := f.enqueue(t, e)
		f.run(t)
		at := f.attempts(t, row)
		if len(rs.requests()) != 0 || len(at) != 1 || at[0].Outcome != "failed" || !strings.Contains(at[0].Error, "no webhook secret") {
			t.Fatalf("%d requests, attempts %+v; want one failed attempt (no secret) and nothing sent", len(rs.requests()), at)
		}
		const malformed = "whsec_s3cr3t!p4ssw0rd"
		ring.set("project:2", malformed)
		f.clock.Advance(time.Minute)
		f.run(t)
		at = f.attempts(t, row)
		if len(rs.requests()) != 0 || len(at) != 2 || at[1].Outcome != "failed" || !strings.Contains(at[1].Error, "not standard Base64") || strings.Contains(at[1].Error, "s3cr3t") {
			t.Fatalf("%d requests, attempts %+v; want a second failed attempt naming the problem, not the secret", len(rs.requests()), at)
		}
		ring.set("project:2", testSecret("s"))
		f.clock.Advance(5 * time.Minute)
		f.run(t)
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || len(rs.requests()) != 1 {
			t.Fatalf("status %s after %d requests; want acknowledged once the secret exists", got.Status, len(rs.requests()))
		}
		// GET: the signature covers the full URL as sent.
		r := rs.requests()[0]
		if err := receiver.VerifyWebhookSignature(testSecret("s"), row.UUID, strconv.FormatInt(f.clock.Now().Unix(), 10), []byte(r.url), r.header.Get(signer.WebhookSignatureHeader)); err != nil {
			t.Fatalf("GET %s: %v", r.url, err)
		}
	})
}

// TestBothSigning: the custom payment flow's signer (signer.Both) sends the
// RSA x-ca-signature made once, by the first attempt and stored with its
// record, and, at every attempt, the merchant webhook headers with that
// attempt's timestamp. The
// receiver verifies both at each attempt, with its clock at the attempt's
// time.
func TestBothSigning(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		for _, tr := range []payload.Transport{payload.TransportGET, payload.TransportJSON} {
			t.Run(tr.String(), func(t *testing.T) {
				secret := testSecret("project 3")
				ring := &rotatingRing{secrets: map[string][]string{"project:3": {secret}}}
				var f *fixture
				var mu sync.Mutex
				var verified []error
				rs := newReceiver(t, func(n int, r *http.Request) (int, string) {
					_, rsaErr := verifier(t).Verify(r)
					_, whErr := receiver.NewWebhookVerifier([]string{secret}, receiver.WithClock(f.clock.Now)).Verify(r)
					mu.Lock()
					verified = append(verified, rsaErr, whErr)
					mu.Unlock()
					if n == 1 {
						return 500, ""
					}
					return ok(n, r)
				})
				f = newFixture(t, d, rs.URL+"/hook", func(c *Config) {
					c.Signers = append(c.Signers, signer.NewBoth(signer.SchemeRSAWebhook, signer.NewRSASigner(testKey), signer.NewWebhookSigner(ring)))
				})
				e := f.envelope("confirmed", tr)
				e.Signing = Signing{Scheme: signer.SchemeRSAWebhook, Key: "project:3"}
				row := f.enqueue(t, e)
				if row.Signature != "" || row.SignatureScheme != signer.SchemeRSAWebhook || row.SigningKey != "project:3" {
					t.Fatalf("stored signature %q, scheme %q, key %q: want the scheme and key stored, the signature left to the first attempt", row.Signature, row.SignatureScheme, row.SigningKey)
				}
				f.run(t) // attempt 1 at t0 fails
				if row = f.reload(t, row); row.Signature == "" {
					t.Fatal("the first attempt did not store the RSA signature it made")
				}
				f.clock.Advance(time.Minute)
				f.run(t) // attempt 2 at t0+1m
				reqs := rs.requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2", len(reqs))
				}
				if got := f.reload(t, row); got.Status != notification.StatusAcknowledged {
					t.Fatalf("status %s, want acknowledged", got.Status)
				}
				mu.Lock()
				for i, err := range verified {
					if err != nil {
						t.Errorf("attempt %d, %s: %v", i/2+1, []string{"x-ca-signature", "x-service-signature"}[i%2], err)
					}
				}
				mu.Unlock()
				for i, at := range []time.Time{t0, t0.Add(time.Minute)} {
					h := reqs[i].header
					if h.Get(signer.SignatureHeader) != row.Signature {
						t.Errorf("attempt %d: x-ca-signature %q, want the stored one", i+1, h.Get(signer.SignatureHeader))
					}
					if h.Get(signer.WebhookTimestampHeader) != strconv.FormatInt(at.Unix(), 10) || h.Get(signer.WebhookIDHeader) != row.UUID || h.Get(signer.WebhookEventHeader) != "confirmed" {
						t.Errorf("attempt %d: webhook headers %v", i+1, h)
					}
				}
				if reqs[0].header.Get(signer.WebhookSignatureHeader) == reqs[1].header.Get(signer.WebhookSignatureHeader) {
					t.Error("both attempts carry the same webhook signature")
				}
				// A receiver that kept the first attempt's headers cannot
				// replay them once the tolerance has passed.
				f.clock.Advance(10 * time.Minute)
				h := reqs[0].header
				err := receiver.NewWebhookVerifier([]string{secret}, receiver.WithClock(f.clock.Now)).VerifySigned(h.Get(receiver.WebhookIDHeader), h.Get(receiver.WebhookTimestampHeader), signedData(reqs[0]), h.Get(receiver.WebhookSignatureHeader))
				if err == nil {
					t.Error("attempt 1 replayed 11 minutes later verifies")
				}
			})
		}
	})
}

// signedData is what the signatures of a request received cover.
func signedData(r got) []byte {
	if r.method == http.MethodGet {
		return []byte(r.url)
	}
	return r.body
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
