package payload

import "testing"

func BenchmarkEncode(b *testing.B) {
	tc := goldenCases[2] // completed, all fields, convert maps, a custom param
	for _, tr := range []Transport{TransportGET, TransportForm, TransportJSON} {
		b.Run(tr.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(tc.url, tr, tc.cb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
