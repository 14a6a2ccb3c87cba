// Package family lists the chain families payhook implements: the one place
// they are registered. A caller hands All to chains.DefaultRegistry,
// chains.LoadRegistry and chains.NewDeriver; the Registry then binds every
// ticker to its family, and code asks t.Rules() instead of comparing family
// names.
//
// There is no init() registration and no package state: All builds a fresh
// slice of the four zero-size implementations on every call.
package family

import (
	"io"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
	"github.com/payhook/payhook/chains/solana"
	"github.com/payhook/payhook/chains/tron"
	"github.com/payhook/payhook/chains/utxo"
)

// All returns the implementation of every family payhook supports: utxo,
// evm, tron and solana, in that order.
func All() []chains.Family {
	return []chains.Family{utxo.Family{}, evm.Family{}, tron.Family{}, solana.Family{}}
}

// DefaultRegistry returns chains.DefaultRegistry(All()): the embedded
// registry with every family payhook supports.
func DefaultRegistry() *chains.Registry { return chains.DefaultRegistry(All()) }

// LoadRegistry returns chains.LoadRegistry(r, All()): an operator's
// registry file with every family payhook supports.
func LoadRegistry(r io.Reader) (*chains.Registry, error) { return chains.LoadRegistry(r, All()) }
