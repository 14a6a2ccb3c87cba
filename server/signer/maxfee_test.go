package signer_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/server/signer"
)

// TestSignMaxFee: a policy's max_fee bounds what one transaction may pay
// the network, in the chain's native coin, read from the transaction: a
// UTXO transaction's inputs less its outputs, an EVM transaction's gas
// limit at its fee cap, a TRON call's fee limit. A transaction that may
// pay exactly max_fee is signed; one that may pay more is refused, saying
// both amounts.
func TestSignMaxFee(t *testing.T) {
	ctx := context.Background()
	policy := func(t *testing.T, json string, args ...any) *signer.Policy {
		t.Helper()
		p, err := signer.LoadPolicy(strings.NewReader(fmt.Sprintf(json, args...)), family.DefaultRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("utxo", func(t *testing.T) {
		// e.request pays a fee of 10,000 litoshis: 0.0001 ltc.
		for _, tt := range []struct {
			max  string
			want codes.Code
		}{{"0.0001", codes.OK}, {"0.00009999", codes.PermissionDenied}} {
			e := newEnv(t)
			e.pol = policy(t, `{"networks": {"ltc": "regtest"}, "projects": [{"project": 1, "ticker": "ltc", "destinations": [%q], "daily_cap": "1", "max_fee": %q}]}`, e.dest, tt.max)
			_, err := e.service(t).SignUtxo(ctx, e.request(t, "k1", e.dest, 1000))
			checkFee(t, "ltc max_fee "+tt.max, err, tt.want, "up to 0.0001 of the chain's native coin")
		}
	})

	t.Run("evm", func(t *testing.T) {
		// evmTx: 60,000 gas at a fee cap of 3 gwei: 0.00018 ETH at most.
		for _, tt := range []struct {
			max  string
			want codes.Code
		}{{"0.00018", codes.OK}, {"0.000179", codes.PermissionDenied}} {
			e := newEVMEnv(t)
			e.pol = policy(t, `{"networks": {"eth": "regtest"}, "chain_ids": {"eth": %d},
				"projects": [{"project": 1, "ticker": "eth", "destinations": [%q], "daily_cap": "1", "max_fee": %q}]}`, evmChainID, e.dest.Hex(), tt.max)
			_, err := e.service(t).SignEvm(ctx, evmRequest("eth", "k1", evmTx(&e.dest, 0, big.NewInt(1e15), nil)))
			checkFee(t, "eth max_fee "+tt.max, err, tt.want, "up to 0.00018 of the chain's native coin")
		}
	})

	t.Run("tron", func(t *testing.T) {
		// rawData gives a call a fee limit of 15,000,000 sun: 15 TRX.
		for _, tt := range []struct {
			max  string
			want codes.Code
		}{{"15", codes.OK}, {"14.999999", codes.PermissionDenied}} {
			e := newTronEnv(t)
			e.pol = policy(t, `{"networks": {"trc20/usdt": "regtest"}, "contracts": {"trc20/usdt": %q},
				"projects": [{"project": 1, "ticker": "trc20/usdt", "destinations": [%q], "daily_cap": "10", "max_fee": %q}]}`, e.usdt.Contract, e.dest, tt.max)
			k1 := chains.KeyRef{Index: 1}
			raw := rawData(trigger{owner: e.addr(t, k1), contract: e.usdt.Contract, data: transferData(t, e.dest, 1_000_000)}.encode(t))
			_, err := e.service(t).SignTron(ctx, tronRequest("trc20/usdt", "k1", raw, k1))
			checkFee(t, "trc20/usdt max_fee "+tt.max, err, tt.want, "up to 15 of the chain's native coin")
		}
	})

	t.Run("bad max_fee", func(t *testing.T) {
		_, err := signer.LoadPolicy(strings.NewReader(`{"projects": [{"project": 1, "ticker": "ltc", "daily_cap": "1", "max_fee": "-1"}]}`), family.DefaultRegistry())
		if err == nil || !strings.Contains(err.Error(), `max_fee "-1"`) {
			t.Errorf("a negative max_fee: %v", err)
		}
	})
}

// checkFee fails t unless err has code want, and a refusal says
// saying.
func checkFee(t *testing.T, what string, err error, want codes.Code, saying string) {
	t.Helper()
	if got := code(err); got != want {
		t.Errorf("%s: %v, want %s", what, err, want)
		return
	}
	if err != nil && (!strings.Contains(err.Error(), saying) || !strings.Contains(err.Error(), "allows at most")) {
		t.Errorf("%s: %v, want it to say %q and what the policy allows", what, err, saying)
	}
}
