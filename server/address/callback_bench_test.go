package address

import (
	"testing"

	"github.com/payhook/payhook/notifier/payload"
)

func BenchmarkEncode(b *testing.B) {
	tc := goldenCases[2] // completed, all fields, convert maps, a custom param
	for _, tr := range []payload.Transport{payload.TransportGET, payload.TransportForm, payload.TransportJSON} {
		b.Run(tr.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeCallback(tc.url, tr, tc.cb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
