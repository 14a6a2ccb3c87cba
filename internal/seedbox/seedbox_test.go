package seedbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/payhook/payhook/internal/seedbox"
)

// fast are the least parameters Open accepts, to keep the tests quick.
var fast = seedbox.MinParams

func seed64() []byte {
	s := make([]byte, 64)
	for i := range s {
		s[i] = byte(i * 7)
	}
	return s
}

// TestRoundTrip: a sealed seed opens under its passphrase to the same
// bytes; the file is the documented text, with the parameters it was
// sealed under; two seals of one seed differ (random salt and nonce).
func TestRoundTrip(t *testing.T) {
	seed := seed64()
	data, err := seedbox.Seal(seed, []byte("correct horse"), fast)
	if err != nil {
		t.Fatal(err)
	}
	if !seedbox.IsSealed(data) || seedbox.IsSealed([]byte(strings.Repeat("ab", 32))) {
		t.Fatal("IsSealed")
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "payhook-seed-v1" || !strings.HasPrefix(lines[1], "kdf argon2id t=1 m=8192 p=1 salt=") || !strings.HasPrefix(lines[2], "aead xchacha20poly1305 nonce=") {
		t.Fatalf("file:\n%s", data)
	}
	if bytes.Contains(data, seed) {
		t.Fatal("the seed is in the file")
	}
	got, err := seedbox.Open(data, []byte("correct horse"))
	if err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("Open: %x, %v", got, err)
	}
	if p, err := seedbox.ParamsOf(data); err != nil || p != fast {
		t.Fatalf("ParamsOf: %+v, %v", p, err)
	}
	again, err := seedbox.Seal(seed, []byte("correct horse"), fast)
	if err != nil || bytes.Equal(again, data) {
		t.Fatalf("two seals are equal (%v)", err)
	}
	// A 16-byte seed, the least BIP32 takes.
	short := seed[:16]
	data, err = seedbox.Seal(short, []byte("p"), fast)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := seedbox.Open(data, []byte("p")); err != nil || !bytes.Equal(got, short) {
		t.Fatalf("16-byte seed: %x, %v", got, err)
	}
}

// TestDefaultParams: Seal without parameters uses the documented defaults
// (3 passes, 64 MiB, up to 4 lanes), within the bounds Open accepts.
func TestDefaultParams(t *testing.T) {
	p := seedbox.DefaultParams()
	if p.Time != 3 || p.Memory != 64*1024 || p.Threads < 1 || p.Threads > 4 {
		t.Fatalf("defaults %+v", p)
	}
	data, err := seedbox.Seal(seed64(), []byte("pw"), seedbox.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := seedbox.ParamsOf(data); err != nil || got != p {
		t.Fatalf("sealed with %+v (%v), want %+v", got, err, p)
	}
	if _, err := seedbox.Open(data, []byte("pw")); err != nil {
		t.Fatal(err)
	}
}

// TestWrongPassphrase: another passphrase is ErrWrongPassphrase, an error
// that does not contain either passphrase; an empty one is refused.
func TestWrongPassphrase(t *testing.T) {
	data, err := seedbox.Seal(seed64(), []byte("right one"), fast)
	if err != nil {
		t.Fatal(err)
	}
	_, err = seedbox.Open(data, []byte("wrong one"))
	if !errors.Is(err, seedbox.ErrWrongPassphrase) || strings.Contains(err.Error(), "one") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, err := seedbox.Open(data, nil); !errors.Is(err, seedbox.ErrEmptyPassphrase) {
		t.Fatalf("empty passphrase: %v", err)
	}
	if _, err := seedbox.Seal(seed64(), nil, fast); !errors.Is(err, seedbox.ErrEmptyPassphrase) {
		t.Fatalf("Seal with an empty passphrase: %v", err)
	}
	if _, err := seedbox.Seal(seed64()[:15], []byte("p"), fast); err == nil {
		t.Fatal("Seal of a 15-byte seed")
	}
}

// TestTampered: a changed byte anywhere in the file (header or sealed
// seed) is detected: the file never opens to another seed.
func TestTampered(t *testing.T) {
	seed := seed64()
	pass := []byte("pw")
	data, err := seedbox.Seal(seed, pass, fast)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	edit := func(line int, from, to string) []byte {
		l := append([]string(nil), lines...)
		l[line] = strings.Replace(l[line], from, to, 1)
		return []byte(strings.Join(l, "\n"))
	}
	flip := func(s string) string {
		if s[0] == 'A' {
			return "B" + s[1:]
		}
		return "A" + s[1:]
	}
	salt := strings.SplitAfter(lines[1], "salt=")[1]
	nonce := strings.TrimPrefix(strings.Fields(lines[2])[2], "nonce=")
	cases := map[string]struct {
		data []byte
		want error
	}{
		// The sealed seed and the nonce: the passphrase checks, the AEAD
		// does not.
		"sealed seed": {edit(3, lines[3][:4], flip(lines[3][:4])), seedbox.ErrTampered},
		"nonce":       {edit(2, nonce[:4], flip(nonce[:4])), seedbox.ErrTampered},
		// More passes: the header is associated data. (The derived key
		// changes too, so it reads as a wrong passphrase.)
		"time": {edit(1, "t=1", "t=2"), seedbox.ErrWrongPassphrase},
		"salt": {edit(1, salt[:4], flip(salt[:4])), seedbox.ErrWrongPassphrase},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := seedbox.Open(c.data, pass)
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("Open of a file with its %s changed: %x, %v; want %v", name, got, err, c.want)
			}
		})
	}
	// Every single-bit change of every byte: never the seed, never another.
	for i := range data {
		d := bytes.Clone(data)
		d[i] ^= 0x01
		if got, err := seedbox.Open(d, pass); err == nil {
			t.Fatalf("byte %d flipped: opened to %x", i, got)
		}
	}
}

// TestTruncated: a file cut anywhere is ErrMalformed (or, cut inside the
// sealed seed's base64, not opened), never a panic.
func TestTruncated(t *testing.T) {
	data, err := seedbox.Seal(seed64(), []byte("pw"), fast)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data)-1; n++ {
		got, err := seedbox.Open(data[:n], []byte("pw"))
		if err == nil {
			t.Fatalf("cut at %d of %d: opened to %x", n, len(data), got)
		}
		if n < len(data)-90 && !errors.Is(err, seedbox.ErrMalformed) {
			t.Fatalf("cut at %d: %v, want ErrMalformed", n, err)
		}
	}
	// Without its final newline it is whole.
	if _, err := seedbox.Open(data[:len(data)-1], []byte("pw")); err != nil {
		t.Fatalf("without the last newline: %v", err)
	}
}

// TestAbsurdParams: parameters beyond the bounds (memory, passes, lanes,
// zeros, overflows) are refused before anything is derived, so a crafted
// file cannot exhaust the machine; so are other versions and algorithms.
func TestAbsurdParams(t *testing.T) {
	data, err := seedbox.Seal(seed64(), []byte("pw"), fast)
	if err != nil {
		t.Fatal(err)
	}
	swap := func(from, to string) []byte { return []byte(strings.Replace(string(data), from, to, 1)) }
	for name, d := range map[string][]byte{
		"memory 4 TiB":      swap("m=8192", "m=4294967295"),
		"memory 2 GiB":      swap("m=8192", fmt.Sprint("m=", 2*1024*1024)),
		"memory 512 MiB":    swap("m=8192", fmt.Sprint("m=", 512*1024)),
		"memory overflow":   swap("m=8192", "m=99999999999"),
		"memory 0":          swap("m=8192", "m=0"),
		"memory too little": swap("m=8192", "m=64"),
		"passes 1000":       swap("t=1 ", "t=1000 "),
		"passes 0":          swap("t=1 ", "t=0 "),
		"lanes 255":         swap("p=1 ", "p=255 "),
		"lanes 0":           swap("p=1 ", "p=0 "),
		"lanes negative":    swap("p=1 ", "p=-1 "),
		"version 2":         swap("payhook-seed-v1", "payhook-seed-v2"),
		"scrypt":            swap("argon2id", "scrypt"),
		"aes":               swap("xchacha20poly1305", "aes256gcm"),
		"extra field":       swap(" salt=", " x=1 salt="),
		"long salt":         swap(" salt=", " salt=AAAA"),
		"short salt":        shortSalt(data),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := seedbox.Open(d, []byte("pw")); !errors.Is(err, seedbox.ErrMalformed) {
				t.Fatalf("%v, want ErrMalformed", err)
			}
		})
	}
	if _, err := seedbox.Seal(seed64(), []byte("pw"), seedbox.Params{Time: 1, Memory: 4 << 20, Threads: 1}); !errors.Is(err, seedbox.ErrMalformed) {
		t.Fatalf("Seal with 4 GiB: %v", err)
	}
}

// shortSalt is data with its salt cut to 8 bytes (11 base64 characters).
func shortSalt(data []byte) []byte {
	s := string(data)
	i := strings.Index(s, " salt=") + len(" salt=")
	j := i + strings.IndexAny(s[i:], " \n")
	return []byte(s[:i] + s[i:i+11] + s[j:])
}
