package schema

import "github.com/shopspring/decimal"

// Destination is one forwarding target of an address: the coin received is
// split between destinations by Share. decimal.Decimal marshals to a JSON
// string, so shares keep their exact precision in the JSON column.
type Destination struct {
	// Address is the chain address that receives this share.
	Address string `json:"address"`
	// Share is the fraction (or amount, as the caller's rules define) sent to Address.
	Share decimal.Decimal `json:"share"`
}

// Param is one merchant-supplied key/value pair echoed back in callbacks.
// Params are stored as an ordered list because the order in which a merchant
// gave them is the order in which they are sent back.
type Param struct {
	// Key is the parameter name.
	Key string `json:"key"`
	// Value is the parameter value.
	Value string `json:"value"`
}

// Output is one forwarding transfer: an amount sent to an address.
type Output struct {
	// Address receives Amount.
	Address string `json:"address"`
	// Amount is in coin units.
	Amount decimal.Decimal `json:"amount"`
}
