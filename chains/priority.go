package chains

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"
)

// Priority is a forwarding fee level of this API family (its `priority`
// parameter of create and estimate), as CryptAPI documents it per coin: a
// confirmation target in blocks (UTXO) or a share of the node's gas price
// (EVM).
type Priority struct {
	// Name is the level's name: fast, default, economic, x-economic, ...
	Name string
	// Blocks is the confirmation target a UTXO fee is estimated for; 0
	// keeps the backend's own (the default level).
	Blocks int
	// GasPercent is the share of the node's gas price an EVM transaction
	// offers, in percent; 0 keeps the node's (100).
	GasPercent int
}

// DefaultPriority is the default level of a ticker without levels of its
// own: the backend's own fee target.
var DefaultPriority = Priority{Name: "default"}

// Levels of the family's documented tables (CryptAPI's "How the priority
// parameter works"), for the families to return.
var (
	// BitcoinPriorities: confirmation targets in blocks.
	BitcoinPriorities = []Priority{
		{Name: "fast", Blocks: 10}, {Name: "default", Blocks: 25}, {Name: "economic", Blocks: 75},
		{Name: "x-economic", Blocks: 125}, {Name: "xx-economic", Blocks: 200}, {Name: "xxx-economic", Blocks: 300},
		{Name: "xxxx-economic", Blocks: 500}, {Name: "xxxxx-economic", Blocks: 1000},
	}
	// LitecoinPriorities: confirmation targets in blocks.
	LitecoinPriorities = []Priority{{Name: "fast", Blocks: 10}, {Name: "default", Blocks: 25}, {Name: "economic", Blocks: 50}}
	// EtherPriorities: shares of the gas price.
	EtherPriorities = []Priority{
		{Name: "fast", GasPercent: 100}, {Name: "default", GasPercent: 100}, {Name: "economic", GasPercent: 95},
		{Name: "x-economic", GasPercent: 90}, {Name: "xx-economic", GasPercent: 85}, {Name: "xxx-economic", GasPercent: 80},
		{Name: "xxxx-economic", GasPercent: 75},
	}
	// ERC20Priorities: shares of the gas price; fast offers a fifth more.
	ERC20Priorities = []Priority{
		{Name: "fast", GasPercent: 120}, {Name: "default", GasPercent: 100}, {Name: "economic", GasPercent: 95},
		{Name: "x-economic", GasPercent: 90}, {Name: "xx-economic", GasPercent: 85}, {Name: "xxx-economic", GasPercent: 80},
		{Name: "xxxx-economic", GasPercent: 75},
	}
)

// PriorityOf returns t's level named name (any case; "" is default), or
// false when t has no such level (Family.Priorities).
func PriorityOf(t Ticker, name string) (Priority, bool) {
	if name == "" {
		name = "default"
	}
	for _, p := range t.Rules().Priorities(t) {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Priority{}, false
}

// PriorityNames lists t's levels' names, in the family's order.
func PriorityNames(t Ticker) []string {
	ps := t.Rules().Priorities(t)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// defaultBlocks is the confirmation target the static model takes the
// ticker's network fee estimate for.
const defaultBlocks = 25

// Scale returns estimate, a fee at the default level, at level p by the
// static model payhook uses where no node quotes the level (the estimate
// endpoint, the devnet): a UTXO fee in inverse proportion to the
// confirmation target, from the default's 25 blocks, within a quarter and
// two and a half times; an EVM fee in proportion to the gas price share.
// Rounded up to decimals.
func (p Priority) Scale(estimate decimal.Decimal, decimals int32) decimal.Decimal {
	switch {
	case p.Blocks > 0:
		f := decimal.NewFromInt(defaultBlocks).Div(decimal.NewFromInt(int64(p.Blocks)))
		f = decimal.Min(decimal.Max(f, decimal.RequireFromString("0.25")), decimal.RequireFromString("2.5"))
		return estimate.Mul(f).RoundCeil(decimals)
	case p.GasPercent > 0:
		return estimate.Mul(decimal.NewFromInt(int64(p.GasPercent))).Div(decimal.NewFromInt(100)).RoundCeil(decimals)
	}
	return estimate
}

// PriorityFees is a backend that quotes its network fee at a priority:
// NetworkFee at p's confirmation target or gas price share.
type PriorityFees interface {
	NetworkFeeAt(ctx context.Context, p Priority) (decimal.Decimal, error)
}
