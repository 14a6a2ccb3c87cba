package psbt

import (
	"errors"
	"testing"

	"github.com/payhook/payhook/chains/watchonly"
)

var (
	p2wpkhScript = append([]byte{0x00, 0x14}, make([]byte, 20)...)
	p2pkhScript  = append(append([]byte{0x76, 0xa9, 0x14}, make([]byte, 20)...), 0x88, 0xac)
	p2shScript   = append(append([]byte{0xa9, 0x14}, make([]byte, 20)...), 0x87)
)

// TestVSize: the estimates are the well-known sizes with 72-byte
// signatures: 1-in 2-out P2WPKH 10.5 + 68 + 2*31 = 140.5 -> 141 vB; P2PKH
// 10 + 148 + 2*34 = 226 B; P2SH-P2WPKH 10.5 + 91 + 2*32 = 165.5 -> 166 vB.
func TestVSize(t *testing.T) {
	for _, c := range []struct {
		s    watchonly.Script
		nIn  int
		outs [][]byte
		want int64
	}{
		{watchonly.P2WPKH, 1, [][]byte{p2wpkhScript, p2wpkhScript}, 141},
		{watchonly.P2WPKH, 2, [][]byte{p2wpkhScript, p2pkhScript, p2wpkhScript}, 11 + 2*68 + 31 + 34 + 31},
		{watchonly.P2PKH, 1, [][]byte{p2pkhScript, p2pkhScript}, 226},
		{watchonly.P2PKH, 3, [][]byte{p2pkhScript}, 10 + 3*148 + 34},
		{watchonly.P2SHP2WPKH, 1, [][]byte{p2shScript, p2shScript}, 166},
	} {
		got, err := vsize(c.s, c.nIn, c.outs)
		if err != nil || got != c.want {
			t.Errorf("vsize(%s, %d in, %d out) = %d, %v; want %d", c.s, c.nIn, len(c.outs), got, err, c.want)
		}
	}
	if _, err := vsize(watchonly.P2TR, 1, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("vsize(P2TR) = %v, want ErrInvalid", err)
	}
}

// TestPlan: the change is what is left after the outputs and the fee with
// a change output; below dust it is dropped and the fee takes it; short
// funds are ErrInsufficient naming the shortfall; an overflowing rate is
// refused.
func TestPlan(t *testing.T) {
	outs := [][]byte{p2wpkhScript}
	// 1 in, 1 out: 110 vB; with change 141 vB (see TestVSize).
	const dust = 2940
	cases := []struct {
		name    string
		in, out int64
		rate    int64
		want    plan
		wantErr error
	}{
		{"change", 1_000_000, 500_000, 10, plan{Fee: 1410, Change: 1_000_000 - 500_000 - 1410, VSize: 141}, nil},
		{"change at dust", 500_000 + 1410 + dust, 500_000, 10, plan{Fee: 1410, Change: dust, VSize: 141}, nil},
		{"change below dust dropped", 500_000 + 1410 + dust - 1, 500_000, 10, plan{Fee: 1410 + dust - 1, VSize: 110}, nil},
		{"exact, no change", 500_000 + 1100, 500_000, 10, plan{Fee: 1100, VSize: 110}, nil},
		{"one short", 500_000 + 1099, 500_000, 10, plan{}, ErrInsufficient},
		{"rate overflow", 1_000_000, 500_000, 1 << 60, plan{}, ErrInvalid},
	}
	for _, c := range cases {
		got, err := makePlan(watchonly.P2WPKH, 1, c.in, c.out, outs, p2wpkhScript, dust, c.rate)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: err %v, want %v", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
		if got.Fee < got.VSize*c.rate || c.in != c.out+got.Fee+got.Change {
			t.Errorf("%s: %+v does not balance or pays under the rate", c.name, got)
		}
	}
	_, err := makePlan(watchonly.P2WPKH, 1, 500_000, 500_000, outs, p2wpkhScript, dust, 10)
	if err == nil || err.Error() != "insufficient funds: the inputs hold 500000, the outputs need 500000 and the fee 1100 (110 vbytes at 10 per vbyte): 1100 short" {
		t.Errorf("short funds: %v", err)
	}
}
