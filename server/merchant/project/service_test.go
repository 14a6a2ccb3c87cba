package project

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains/family"
)

// TestServiceCreateRefusesBadSpecs: a bad wallet, ticker or confirmations
// spec is ErrInvalid naming what was wrong, before anything is stored (the
// service has no database here).
func TestServiceCreateRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	s := NewService(ServiceConfig{Registry: family.DefaultRegistry()})
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"wallet of an unknown ticker", Request{Wallets: []string{"nocoin=abc"}}, "unknown ticker nocoin"},
		{"wallet with a bad address", Request{Wallets: []string{"btc=not-an-address"}}, `wallet "btc=not-an-address"`},
		{"unknown accepted ticker", Request{Tickers: []string{"btc", "nocoin"}}, `tickers: unknown ticker "nocoin"`},
		{"confirmations of an unknown ticker", Request{Confirmations: []string{"nocoin=3"}}, `confirmations: unknown ticker "nocoin"`},
		{"confirmations without a count", Request{Confirmations: []string{"btc"}}, `confirmations "btc": want btc=N`},
		{"confirmations above 100", Request{Confirmations: []string{"btc=101"}}, "from 1 to 100"},
		{"confirmations below zero", Request{Confirmations: []string{"btc=-1"}}, "from 1 to 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := s.Create(t.Context(), tt.req)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Create: %v, want ErrInvalid naming %q", err, tt.want)
			}
		})
	}
}
