// Package kind declares the generic kinds of errors payhook answers with
// (not found, invalid, conflict, unavailable, ...) so that every layer can
// say what an error means to a caller without knowing the wire. A domain
// package declares its sentinels with New (or gives its error types a Kind
// method) in its errors.go; the server's interceptor reads Of and Message
// and maps kinds to gRPC codes, importing no domain package.
//
// Guarantees: an error carries a kind only where its package declared one;
// Of and Message never inspect error text; a sentinel made by New is
// compared with errors.Is like one made by errors.New. When an error's tree
// holds several errors with a kind, the deepest decides (the innermost cause
// is the most specific: "invalid payment: ... invalid address" is about the
// address). The package imports the standard library only, so chains,
// notifier and ent/store may use it.
package kind

import "fmt"

// Kind is what an error means to the caller of an API.
type Kind int

// The kinds. Unknown, the zero value, is no kind at all: a fault of the
// server, whose cause a caller is not told.
const (
	// Unknown is no kind: a server fault.
	Unknown Kind = iota
	// Invalid is a request that breaks a rule; retrying it unchanged fails
	// again.
	Invalid
	// NotFound is something the request names that does not exist for the
	// caller (another owner's is not found too).
	NotFound
	// Conflict is a create that collides with what exists.
	Conflict
	// Forbidden is a caller who may not do what it asked.
	Forbidden
	// Unauthenticated is a caller who is not identified.
	Unauthenticated
	// FailedPrecondition is a request the current state does not allow.
	FailedPrecondition
	// Aborted is a change that raced another one; retrying may succeed.
	Aborted
	// Unavailable is a dependency that cannot serve now (the database, a
	// chain node); retrying later may succeed.
	Unavailable
)

var names = [...]string{"unknown", "invalid", "not found", "conflict", "forbidden", "unauthenticated", "failed precondition", "aborted", "unavailable"}

// String returns the kind's name.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(names) {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return names[k]
}

// Error is implemented by the errors that carry a kind.
type Error interface {
	error
	// Kind is what the error means to a caller.
	Kind() Kind
}

// Messenger is implemented by an error of a kind whose answer to a caller
// reads otherwise than the whole error's text: its own text alone, a fixed
// text, or the whole text with a prefix. whole is the error the kinded one
// was found in.
type Messenger interface {
	Message(whole error) string
}

// find returns the deepest error of err's tree that carries a kind (the
// first in tree order among equally deep ones), or nil.
func find(err error) Error {
	var best Error
	depth := -1
	var walk func(e error, d int)
	walk = func(e error, d int) {
		if e == nil {
			return
		}
		if k, ok := e.(Error); ok && k.Kind() != Unknown && d > depth {
			best, depth = k, d
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap(), d+1)
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c, d+1)
			}
		}
	}
	walk(err, 0)
	return best
}

// Of returns the kind of err: that of the deepest error in its tree that
// carries one, or Unknown.
func Of(err error) Kind {
	if k := find(err); k != nil {
		return k.Kind()
	}
	return Unknown
}

// Message returns what a caller is told of err: the whole error's text,
// unless the error that gives err its kind says otherwise (Messenger). It
// is meant for errors whose kind is not Unknown.
func Message(err error) string {
	if m, ok := find(err).(Messenger); ok {
		return m.Message(err)
	}
	return err.Error()
}

// Option adjusts a sentinel made by New.
type Option func(*sentinel)

// Public makes the answer to any error wrapping the sentinel read message,
// whatever the wrapping adds (ids, names an owner must not learn).
func Public(message string) Option {
	return func(s *sentinel) { s.message = func(error) string { return message } }
}

// Prefix makes the answer to an error wrapping the sentinel read prefix
// followed by the whole error's text (naming the parameter at fault).
func Prefix(prefix string) Option {
	return func(s *sentinel) { s.message = func(whole error) string { return prefix + whole.Error() } }
}

// New returns a sentinel error with text and kind k, to be declared once
// (`var ErrNotFound = kind.New(kind.NotFound, "invoice not found")`) and
// wrapped with fmt.Errorf's %w; errors.Is finds it as it finds an
// errors.New sentinel. The answer's message is the whole wrapping error's
// text unless an option says otherwise.
func New(k Kind, text string, opts ...Option) error {
	s := &sentinel{kind: k, text: text}
	for _, o := range opts {
		o(s)
	}
	return s
}

type sentinel struct {
	kind    Kind
	text    string
	message func(whole error) string
}

func (s *sentinel) Error() string { return s.text }
func (s *sentinel) Kind() Kind    { return s.kind }

// Message implements Messenger.
func (s *sentinel) Message(whole error) string {
	if s.message == nil {
		return whole.Error()
	}
	return s.message(whole)
}

// Wrap returns err with kind k: its text and chain (errors.Is, errors.As)
// unchanged; a kind found deeper in err still decides (see Of). Wrap(k,
// nil) is nil.
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &wrapped{kind: k, err: err}
}

type wrapped struct {
	kind Kind
	err  error
}

func (w *wrapped) Error() string { return w.err.Error() }
func (w *wrapped) Kind() Kind    { return w.kind }
func (w *wrapped) Unwrap() error { return w.err }
