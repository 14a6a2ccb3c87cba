package apikey

import (
	"fmt"
	"slices"
	"strings"

	"github.com/payhook/payhook/ent/schema"
)

// The scopes a key may have (ent/schema's, which the interceptor's
// ScopeName matches: a test checks both).
const (
	// ScopeRead reads: lists, status, logs, QR codes, the delivery stream.
	ScopeRead = schema.ScopeRead
	// ScopeCreate creates payments: addresses, checkouts, deposits,
	// subscriptions and their payment addresses.
	ScopeCreate = schema.ScopeCreate
	// ScopePayouts moves money out: payouts, refunds, wrong-asset
	// releases.
	ScopePayouts = schema.ScopePayouts
	// ScopeManagement changes the project: projects, settings, wallets,
	// secrets, test and resent notifications.
	ScopeManagement = schema.ScopeManagement
)

// AllScopes lists every scope in its documented order, the order a key's
// scopes are stored and shown in.
func AllScopes() []string { return slices.Clone(schema.AllScopes) }

// ParseScopes reads scopes as people give them: names, or comma-separated
// lists of names (`--scope read,create --scope payouts`), case and spaces
// ignored, repeats allowed. It returns them in AllScopes' order without
// repeats; every scope when none is given. An unknown name is
// ErrUnknownScope, naming it and the scopes there are.
func ParseScopes(values []string) ([]string, error) {
	want := map[string]bool{}
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if !slices.Contains(schema.AllScopes, name) {
				return nil, fmt.Errorf("%w %q: the scopes are %s", ErrUnknownScope, name, strings.Join(schema.AllScopes, ", "))
			}
			want[name] = true
		}
	}
	if len(want) == 0 {
		return AllScopes(), nil
	}
	var out []string
	for _, s := range schema.AllScopes {
		if want[s] {
			out = append(out, s)
		}
	}
	return out, nil
}
