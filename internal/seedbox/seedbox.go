// Package seedbox encrypts the address seed at rest: a seed file sealed
// under a passphrase, so that a copy of the file (a backup, a stolen disk)
// does not hand out every payment address's private key.
//
// A sealed seed file is text, four lines:
//
//	payhook-seed-v1
//	kdf argon2id t=3 m=65536 p=4 salt=BASE64
//	aead xchacha20poly1305 nonce=BASE64 check=BASE64
//	BASE64
//
// The key is derived from the passphrase with Argon2id (RFC 9106) under the
// parameters and the random 16-byte salt of the second line (t passes, m
// KiB of memory, p lanes); the seed is sealed with XChaCha20-Poly1305 under
// the random 24-byte nonce of the third line, and the three header lines,
// exactly as written, are authenticated with it, so a changed parameter
// does not open. check is 16 more bytes of the Argon2id output, which tells
// a wrong passphrase (ErrWrongPassphrase) from a file altered after it was
// written (ErrTampered); it lets nobody test a passphrase faster than the
// sealed seed itself does. Base64 is the standard alphabet without padding.
//
// Open refuses parameters outside MinParams..MaxParams before deriving
// anything: a crafted file cannot make payhook allocate gigabytes or spin
// for minutes.
package seedbox

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
)

// Magic is the first line of a sealed seed file (the format and its
// version).
const Magic = "payhook-seed-v1"

// prefix starts every sealed seed file of any version.
const prefix = "payhook-seed-"

const (
	saltSize  = 16
	checkSize = 16
	keySize   = chacha20poly1305.KeySize
	// Seeds are 16 to 64 bytes (BIP32).
	minSeed = 16
	maxSeed = 64
)

var (
	// ErrWrongPassphrase: the passphrase does not open this file.
	ErrWrongPassphrase = errors.New("wrong passphrase")
	// ErrTampered: the passphrase is right but the file was altered after
	// it was written.
	ErrTampered = errors.New("the sealed seed was altered (the passphrase is right, the file is not as written)")
	// ErrMalformed: not a sealed seed file this version reads (truncated,
	// a field missing or out of bounds).
	ErrMalformed = errors.New("not a valid sealed seed file")
	// ErrEmptyPassphrase: a seed is never sealed under an empty passphrase.
	ErrEmptyPassphrase = errors.New("empty passphrase")
)

// Params are the Argon2id parameters of a sealed seed file.
type Params struct {
	Time    uint32 // passes over the memory
	Memory  uint32 // KiB
	Threads uint8  // lanes
}

// DefaultParams are what Seal uses when given none: 3 passes over 64 MiB
// in up to 4 lanes (RFC 9106's second recommendation), a fraction of a
// second at each start of payhook.
func DefaultParams() Params {
	return Params{Time: 3, Memory: 64 * 1024, Threads: uint8(min(4, runtime.NumCPU()))}
}

// MinParams and MaxParams bound the parameters Seal and Open accept: below
// the minimum a passphrase is cheap to guess; above the maximum a file
// could exhaust the machine (256 MiB, as a small server has 512 MiB to 1
// GiB of memory; 10 passes).
var (
	MinParams = Params{Time: 1, Memory: 8 * 1024, Threads: 1}
	MaxParams = Params{Time: 10, Memory: 256 * 1024, Threads: 16}
)

func (p Params) check() error {
	switch {
	case p.Time < MinParams.Time || p.Time > MaxParams.Time:
		return fmt.Errorf("%w: argon2id t=%d, want %d to %d", ErrMalformed, p.Time, MinParams.Time, MaxParams.Time)
	case p.Memory < MinParams.Memory || p.Memory > MaxParams.Memory:
		return fmt.Errorf("%w: argon2id m=%d KiB, want %d to %d", ErrMalformed, p.Memory, MinParams.Memory, MaxParams.Memory)
	case p.Threads < MinParams.Threads || p.Threads > MaxParams.Threads:
		return fmt.Errorf("%w: argon2id p=%d, want %d to %d", ErrMalformed, p.Threads, MinParams.Threads, MaxParams.Threads)
	}
	return nil
}

// IsSealed reports whether data is a sealed seed file (of any version),
// not a hex seed.
func IsSealed(data []byte) bool { return bytes.HasPrefix(data, []byte(prefix)) }

// b64 decodes strictly: a changed padding bit of the last character is an
// altered file, not the same bytes.
var b64 = base64.RawStdEncoding.Strict()

// derive returns the AEAD key and the passphrase check.
func derive(passphrase, salt []byte, p Params) (key, check []byte) {
	out := argon2.IDKey(passphrase, salt, p.Time, p.Memory, p.Threads, keySize+checkSize)
	return out[:keySize], out[keySize:]
}

// Seal returns the sealed seed file of seed under passphrase, with the
// Argon2id parameters p (DefaultParams when zero).
func Seal(seed, passphrase []byte, p Params) ([]byte, error) {
	if len(passphrase) == 0 {
		return nil, ErrEmptyPassphrase
	}
	if len(seed) < minSeed || len(seed) > maxSeed {
		return nil, fmt.Errorf("seal: the seed is %d bytes, want %d to %d", len(seed), minSeed, maxSeed)
	}
	if p == (Params{}) {
		p = DefaultParams()
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	salt := make([]byte, saltSize)
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	key, check := derive(passphrase, salt, p)
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	header := fmt.Sprintf("%s\nkdf argon2id t=%d m=%d p=%d salt=%s\naead xchacha20poly1305 nonce=%s check=%s\n",
		Magic, p.Time, p.Memory, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(nonce), b64.EncodeToString(check))
	sealed := aead.Seal(nil, nonce, seed, []byte(header))
	return []byte(header + b64.EncodeToString(sealed) + "\n"), nil
}

// file is a parsed sealed seed file.
type file struct {
	header       []byte // the three header lines, as written: the associated data
	params       Params
	salt, nonce  []byte
	check, boxed []byte
}

// fields parses the line "NAME ALGO k=v k=v..." into its values,
// requiring exactly keys, in order.
func fields(line, name, algo string, keys ...string) (map[string]string, error) {
	parts := strings.Split(line, " ")
	if len(parts) < 2 || parts[0] != name {
		return nil, fmt.Errorf("%w: want a line %q", ErrMalformed, name+" "+algo)
	}
	if parts[1] != algo {
		return nil, fmt.Errorf("%w: %s %q, want %s", ErrMalformed, name, parts[1], algo)
	}
	if len(parts) != len(keys)+2 {
		return nil, fmt.Errorf("%w: %s: want the fields %s", ErrMalformed, name, strings.Join(keys, ", "))
	}
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		v, ok := strings.CutPrefix(parts[i+2], k+"=")
		if !ok {
			return nil, fmt.Errorf("%w: %s: want %s= as field %d", ErrMalformed, name, k, i+1)
		}
		out[k] = v
	}
	return out, nil
}

func parseUint(name, v string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%w: argon2id %s=%q is not a number in range", ErrMalformed, name, v)
	}
	return n, nil
}

func decode(name, v string, size int) ([]byte, error) {
	b, err := b64.DecodeString(v)
	if err != nil || len(b) != size {
		return nil, fmt.Errorf("%w: %s: want %d bytes of base64", ErrMalformed, name, size)
	}
	return b, nil
}

// parse parses a sealed seed file, checking every field and bound before
// anything is derived.
func parse(data []byte) (*file, error) {
	text := string(data)
	first, _, _ := strings.Cut(text, "\n")
	if first != Magic {
		if strings.HasPrefix(first, prefix) {
			return nil, fmt.Errorf("%w: version %q, this payhook reads %q (written by a newer payhook?)", ErrMalformed, first, Magic)
		}
		return nil, fmt.Errorf("%w: the first line is not %q", ErrMalformed, Magic)
	}
	lines := strings.Split(strings.TrimRight(text, "\r\n"), "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("%w: %d lines, want 4 (truncated?)", ErrMalformed, len(lines))
	}
	kdf, err := fields(lines[1], "kdf", "argon2id", "t", "m", "p", "salt")
	if err != nil {
		return nil, err
	}
	aead, err := fields(lines[2], "aead", "xchacha20poly1305", "nonce", "check")
	if err != nil {
		return nil, err
	}
	f := &file{header: []byte(strings.Join(lines[:3], "\n") + "\n")}
	t, err := parseUint("t", kdf["t"], 32)
	if err != nil {
		return nil, err
	}
	m, err := parseUint("m", kdf["m"], 32)
	if err != nil {
		return nil, err
	}
	th, err := parseUint("p", kdf["p"], 8)
	if err != nil {
		return nil, err
	}
	f.params = Params{Time: uint32(t), Memory: uint32(m), Threads: uint8(th)}
	if err := f.params.check(); err != nil {
		return nil, err
	}
	if f.salt, err = decode("salt", kdf["salt"], saltSize); err != nil {
		return nil, err
	}
	if f.nonce, err = decode("nonce", aead["nonce"], chacha20poly1305.NonceSizeX); err != nil {
		return nil, err
	}
	if f.check, err = decode("check", aead["check"], checkSize); err != nil {
		return nil, err
	}
	f.boxed, err = b64.DecodeString(strings.TrimRight(lines[3], "\r"))
	if err != nil || len(f.boxed) < minSeed+chacha20poly1305.Overhead || len(f.boxed) > maxSeed+chacha20poly1305.Overhead {
		return nil, fmt.Errorf("%w: the sealed seed (line 4) is not base64 of %d to %d bytes (truncated?)", ErrMalformed, minSeed+chacha20poly1305.Overhead, maxSeed+chacha20poly1305.Overhead)
	}
	return f, nil
}

// ParamsOf returns the Argon2id parameters of a sealed seed file.
func ParamsOf(data []byte) (Params, error) {
	f, err := parse(data)
	if err != nil {
		return Params{}, err
	}
	return f.params, nil
}

// Open returns the seed sealed in data under passphrase: ErrWrongPassphrase
// when the passphrase is not the one it was sealed under, ErrTampered when
// the file was altered, ErrMalformed when it is no sealed seed file.
func Open(data, passphrase []byte) ([]byte, error) {
	f, err := parse(data)
	if err != nil {
		return nil, err
	}
	if len(passphrase) == 0 {
		return nil, ErrEmptyPassphrase
	}
	key, check := derive(passphrase, f.salt, f.params)
	if subtle.ConstantTimeCompare(check, f.check) != 1 {
		return nil, ErrWrongPassphrase
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	seed, err := aead.Open(nil, f.nonce, f.boxed, f.header)
	if err != nil {
		return nil, ErrTampered
	}
	return seed, nil
}
