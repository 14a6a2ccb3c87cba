package payment

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/ent/schema"
)

// groupedNote is the logs' note of a payment forwarded in one transaction
// with others of its address (n payments in all).
func groupedNote(n int) string {
	return fmt.Sprintf("forwarded in one transaction with %d other payment(s) of this address, its amounts its share of that transaction in proportion to its value", n-1)
}

// withNote returns note with add appended, as the logs' "; " list. A
// note is the payment's history for people, appended to at each typed
// transition; nothing reads it back.
func withNote(note, add string) string {
	return strings.TrimPrefix(note+"; "+add, "; ")
}

// groupSep separates a broadcast key from the payment id in the intent id
// of a forward that shares its transaction with others. It occurs in no
// transaction hash (hex, 0x hex, base58), so a key never contains it.
const groupSep = "/"

// part is one payment's share of a forwarding plan.
type part struct {
	fee, networkFee, forwarded decimal.Decimal
	outputs                    []schema.Output
}

// splitPlan divides plan, the forwarding of the sum of values, among the
// payments of those values, in proportion to each value, in whole base
// units of t: each part's fee + network fee + forwarded is its value
// exactly, the parts' fees, network fees and forwarded amounts add up to
// the plan's exactly, and each part's outputs add up to its forwarded
// amount while each destination's amounts add up to its output in the plan.
// Rounding is down, and the base units that leaves go to the largest
// payments first (see apportion).
func splitPlan(t chains.Ticker, plan distribute.Plan, values []decimal.Decimal) []part {
	units := func(d decimal.Decimal) *big.Int { return d.Shift(t.Decimals).BigInt() }
	coin := func(u *big.Int) decimal.Decimal { return decimal.NewFromBigInt(u, -t.Decimals) }
	rows := make([]*big.Int, len(values))
	for i, v := range values {
		rows[i] = units(v)
	}
	amounts := apportion(rows, []*big.Int{units(plan.Fee), units(plan.NetworkFee), units(plan.Forwarded)})
	fwd := make([]*big.Int, len(values))
	for i := range values {
		fwd[i] = amounts[i][2]
	}
	cols := make([]*big.Int, len(plan.Outputs))
	for j, o := range plan.Outputs {
		cols[j] = units(o.Amount)
	}
	outs := apportion(fwd, cols)
	parts := make([]part, len(values))
	for i := range values {
		p := part{fee: coin(amounts[i][0]), networkFee: coin(amounts[i][1]), forwarded: coin(amounts[i][2]), outputs: []schema.Output{}}
		for j, o := range plan.Outputs {
			if outs[i][j].Sign() > 0 {
				p.outputs = append(p.outputs, schema.Output{Address: o.Address, Amount: coin(outs[i][j])})
			}
		}
		parts[i] = p
	}
	return parts
}

// apportion divides the column totals cols among rows in proportion to
// each row, where rows and cols have the same sum: cell i,j is
// cols[j]*rows[i]/sum rounded down, then the units each row still lacks
// (fewer than len(cols)) are taken from the columns still short, first
// column first, the largest rows first (the earliest among equals). Each
// row then sums to rows[i] and each column to cols[j] exactly, and no cell
// is negative.
func apportion(rows, cols []*big.Int) [][]*big.Int {
	total := new(big.Int)
	for _, c := range cols {
		total.Add(total, c)
	}
	short := make([]*big.Int, len(cols))
	for j, c := range cols {
		short[j] = new(big.Int).Set(c)
	}
	cells := make([][]*big.Int, len(rows))
	lack := make([]*big.Int, len(rows))
	for i, r := range rows {
		cells[i] = make([]*big.Int, len(cols))
		lack[i] = new(big.Int).Set(r)
		for j, c := range cols {
			v := new(big.Int)
			if total.Sign() > 0 {
				v.Mul(c, r).Quo(v, total)
			}
			cells[i][j] = v
			lack[i].Sub(lack[i], v)
			short[j].Sub(short[j], v)
		}
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rows[b].Cmp(rows[a]) })
	for _, i := range order {
		for j := range cols {
			if lack[i].Sign() <= 0 {
				break
			}
			give := lack[i]
			if short[j].Cmp(give) < 0 {
				give = short[j]
			}
			if give.Sign() <= 0 {
				continue
			}
			give = new(big.Int).Set(give)
			cells[i][j].Add(cells[i][j], give)
			lack[i].Sub(lack[i], give)
			short[j].Sub(short[j], give)
		}
	}
	return cells
}
