package notifier

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/notifier/payload"
)

func BenchmarkSign(b *testing.B) {
	data := make([]byte, 600)
	_, _ = rand.Read(data)
	for _, s := range []Signer{NewRSASigner(testKey), NewHMACSigner([]byte("secret"))} {
		b.Run(s.Scheme(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Sign(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnqueueClaim measures the database side of a delivery: storing a
// notification (100 per transaction, HMAC-signed so signing does not
// dominate) and claiming it (batches of 64), per notification.
func BenchmarkEnqueueClaim(b *testing.B) {
	for _, d := range storetest.Dialects() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b, d, "http://127.0.0.1:9/hook")
			f.n.signer = NewHMACSigner([]byte("secret"))
			b.ResetTimer()
			for i := 0; i < b.N; i += 100 {
				tx, err := f.db.Client.Tx(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for j := range min(100, b.N-i) {
					e := f.envelope("confirmed", payload.TransportJSON)
					e.Callback.TxidIn = fmt.Sprint(i + j)
					if _, err := f.n.Enqueue(ctx, tx, e); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			for claimed := 0; claimed < b.N; {
				c, _, err := f.n.claim(ctx, 64, nil, nil, nil)
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
	_ = store.SQLite
}
