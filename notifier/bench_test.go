package notifier

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
)

func BenchmarkSign(b *testing.B) {
	data := make([]byte, 600)
	_, _ = rand.Read(data)
	r := payload.Request{Method: "POST", URL: "https://shop.example/cb", Body: data}
	b.Run(signer.SchemeRSASHA256, func(b *testing.B) {
		s := signer.NewRSASigner(testKey)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Sign("", r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(signer.SchemeWebhook, func(b *testing.B) {
		s := signer.NewWebhookSigner(signer.StaticSecrets(testSecret("bench")))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.SignAttempt(context.Background(), "k", signer.Attempt{UUID: "u", Time: clock.Now(), Request: r}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEnqueueClaim measures the database side of a delivery: storing a
// notification (100 per transaction, webhook-signed at each attempt so
// storing signs nothing) and claiming it (batches of 64), per notification.
func BenchmarkEnqueueClaim(b *testing.B) {
	for _, d := range storetest.Dialects() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b, d, "http://127.0.0.1:9/hook", func(c *Config) {
				c.Signers = append(c.Signers, signer.NewWebhookSigner(signer.StaticSecrets(testSecret("bench"))))
			})
			b.ResetTimer()
			for i := 0; i < b.N; i += 100 {
				tx, err := f.db.Client.Tx(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for j := range min(100, b.N-i) {
					e := f.envelope("confirmed", payload.TransportJSON)
					e.TxidIn = fmt.Sprint(i + j)
					e.Signing = Signing{Scheme: signer.SchemeWebhook, Key: "k"}
					if _, err := f.n.Enqueue(ctx, tx, f.message(b, e)); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			for claimed := 0; claimed < b.N; {
				f.d.mu.Lock()
				capa := f.d.capacity()
				f.d.mu.Unlock()
				capa.free = 64
				res, err := f.d.claim(ctx, capa, nil, nil, nil)
				c := res.claims
				if err != nil {
					b.Fatal(err)
				}
				if len(c) == 0 {
					b.Fatalf("claimed %d of %d", claimed, b.N)
				}
				claimed += len(c)
			}
		})
	}
}
