package rpc

import (
	"context"
	"fmt"

	"github.com/payhook/payhook/chains"
)

// Genesis hashes of Solana's public clusters (getGenesisHash).
const (
	genesisMainnetBeta = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
	genesisDevnet      = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
	genesisTestnet     = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
)

// Cluster returns the name of the public cluster whose genesis hash is
// genesis ("mainnet-beta", "devnet", "testnet"), or "" for any other (a
// local validator).
func Cluster(genesis string) string {
	switch genesis {
	case genesisMainnetBeta:
		return "mainnet-beta"
	case genesisDevnet:
		return "devnet"
	case genesisTestnet:
		return "testnet"
	}
	return ""
}

// NetOf returns the payhook network a node with this genesis hash is on:
// mainnet-beta is chains.Mainnet, devnet and testnet are chains.Testnet,
// and any other genesis (solana-test-validator, a fake) is chains.Regtest.
func NetOf(genesis string) chains.Net {
	switch Cluster(genesis) {
	case "mainnet-beta":
		return chains.Mainnet
	case "devnet", "testnet":
		return chains.Testnet
	}
	return chains.Regtest
}

// Probe implements chains.Prober. It identifies the node's cluster by its
// genesis hash (NetOf) and errors, wrapping chains.ErrWrongNetwork, when
// that is not the ticker's Net; for an SPL token it also checks that the
// mint exists on that cluster as an SPL Token mint with the ticker's
// decimals. NodeInfo.Network is the cluster's name ("genesis <hash>" for a
// local one), Version the node's solana-core version, Height its
// confirmed slot.
func (b *Backend) Probe(ctx context.Context) (chains.NodeInfo, error) {
	var genesis string
	if err := b.rpc.call(ctx, "getGenesisHash", nil, &genesis); err != nil {
		return chains.NodeInfo{}, fmt.Errorf("%s probe: %w", b.ticker.Ticker, err)
	}
	if err := checkHash(genesis); err != nil {
		return chains.NodeInfo{}, fmt.Errorf("%s probe: %w", b.ticker.Ticker, nodeError("getGenesisHash", "%v", err))
	}
	info := chains.NodeInfo{Network: Cluster(genesis)}
	if info.Network == "" {
		info.Network = "genesis " + genesis
	}
	var version *struct {
		Core string `json:"solana-core"`
	}
	if err := b.rpc.call(ctx, "getVersion", nil, &version); err != nil {
		return chains.NodeInfo{}, fmt.Errorf("%s probe: %w", b.ticker.Ticker, err)
	}
	if version == nil {
		return chains.NodeInfo{}, fmt.Errorf("%s probe: %w", b.ticker.Ticker, nodeError("getVersion", "null result"))
	}
	if version.Core != "" {
		info.Version = "solana-core " + cut(version.Core)
	}
	slot, err := b.getSlot(ctx, confirmed)
	if err != nil {
		return chains.NodeInfo{}, fmt.Errorf("%s probe: %w", b.ticker.Ticker, err)
	}
	info.Height = slot
	want := b.ticker.Net
	if want == "" {
		want = chains.Mainnet
	}
	if got := NetOf(genesis); got != want {
		return info, fmt.Errorf("%w: %s is configured for %s, the node is on %s (%s)", chains.ErrWrongNetwork, b.ticker.Ticker, want, info.Network, got)
	}
	if b.ticker.Token {
		if _, err := b.checkMint(ctx); err != nil {
			return info, fmt.Errorf("%s probe: %w", b.ticker.Ticker, err)
		}
	}
	return info, nil
}
