package kind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/payhook/payhook/internal/kind"
)

var (
	errMissing = kind.New(kind.NotFound, "thing not found")
	errSecret  = kind.New(kind.NotFound, "thing not found", kind.Public("id: no such thing"))
	errAddress = kind.New(kind.Invalid, "invalid address", kind.Prefix("address: "))
	errOuter   = kind.New(kind.Invalid, "invalid payment")
)

// standalone is an error type whose answer is its own text, whatever wraps
// it.
type standalone struct{}

func (standalone) Error() string          { return "callback: too long" }
func (standalone) Kind() kind.Kind        { return kind.Invalid }
func (s standalone) Message(error) string { return s.Error() }

func TestOfAndMessage(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name string
		err  error
		kind kind.Kind
		msg  string // "" when the kind is Unknown
	}{
		{"nil", nil, kind.Unknown, ""},
		{"plain error", errors.New("disk on fire"), kind.Unknown, ""},
		{"sentinel", errMissing, kind.NotFound, "thing not found"},
		{"wrapped sentinel: the whole text", fmt.Errorf("%w: 42", errMissing), kind.NotFound, "thing not found: 42"},
		{"public message", fmt.Errorf("%w: owner 7", errSecret), kind.NotFound, "id: no such thing"},
		{"prefixed message", fmt.Errorf("pay: %w", errAddress), kind.Invalid, "address: pay: invalid address"},
		{"deepest decides", fmt.Errorf("%w: pay btc: %w", errOuter, fmt.Errorf("x: %w", errAddress)), kind.Invalid,
			"address: invalid payment: pay btc: x: invalid address"},
		{"deepest of another kind", fmt.Errorf("%w: %w", errOuter, fmt.Errorf("y: %w", errMissing)), kind.NotFound, "invalid payment: y: thing not found"},
		{"equally deep: the first", fmt.Errorf("%w: %w", errOuter, errMissing), kind.Invalid, "invalid payment: thing not found"},
		{"standalone type", fmt.Errorf("create: %w", standalone{}), kind.Invalid, "callback: too long"},
		{"wrap", kind.Wrap(kind.Unavailable, errors.New("conn refused")), kind.Unavailable, "conn refused"},
		{"wrap keeps a deeper kind", kind.Wrap(kind.Unavailable, errMissing), kind.NotFound, "thing not found"},
		{"wrap nil", kind.Wrap(kind.Invalid, nil), kind.Unknown, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			if got := kind.Of(r.err); got != r.kind {
				t.Fatalf("Of = %v, want %v", got, r.kind)
			}
			if r.kind != kind.Unknown {
				if got := kind.Message(r.err); got != r.msg {
					t.Fatalf("Message = %q, want %q", got, r.msg)
				}
			}
		})
	}
}

// TestSentinelIdentity: a kinded sentinel is found by errors.Is through
// wrapping, and two with the same text are different errors.
func TestSentinelIdentity(t *testing.T) {
	t.Parallel()
	if !errors.Is(fmt.Errorf("a: %w", errMissing), errMissing) {
		t.Fatal("errors.Is does not find the sentinel")
	}
	if errors.Is(errMissing, errSecret) || errMissing.Error() != errSecret.Error() {
		t.Fatal("sentinels with one text are one error")
	}
	if errors.Is(kind.Wrap(kind.Invalid, errMissing), errSecret) || !errors.Is(kind.Wrap(kind.Invalid, errMissing), errMissing) {
		t.Fatal("Wrap changes the chain")
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[kind.Kind]string{kind.Unknown: "unknown", kind.Conflict: "conflict", kind.Unavailable: "unavailable", kind.Kind(99): "kind(99)"} {
		if got := k.String(); got != want {
			t.Errorf("%d: %q, want %q", int(k), got, want)
		}
	}
}
