// Package backend builds the node backend of a ticker: each family's node
// client (utxo/bitcoind, evm/jsonrpc, tron/httpapi, solana/rpc) is listed
// here once, so that the server builds backends without naming families.
// It does no I/O: a backend talks to its node when it is used (and when
// the server probes it).
package backend

import (
	"fmt"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm/jsonrpc"
	solrpc "github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/tron/httpapi"
	"github.com/payhook/payhook/chains/utxo/bitcoind"
)

// Config is what every node backend takes.
type Config struct {
	// URL is the node's endpoint, with its credentials, as the family's
	// backend documents it.
	URL string
	// Signer signs forwards, payouts, sweeps and refunds (the process's own
	// keys, keysign.Local, or a remote signer); nil makes the backend
	// watch-only.
	Signer chains.Signer
	// Client is the HTTP client; nil lets the backend build one.
	Client *http.Client
	// Timeout bounds one request (the backend's default when zero).
	Timeout time.Duration
	// FallbackFee is the UTXO fee rate (coin per 1000 vbytes) used when the
	// node has no estimate; zero means the backend's default. Other
	// families estimate their fees otherwise and ignore it.
	FallbackFee decimal.Decimal
}

// New returns the node backend of t (its Net selects the node's network).
// The error wraps chains.ErrUnsupportedNetwork for a family without a node
// backend, or is the backend's configuration error.
func New(t chains.Ticker, cfg Config) (chains.Backend, error) {
	switch t.Family {
	case chains.FamilyUTXO:
		return asBackend(bitcoind.New(bitcoind.Config{Ticker: t, URL: cfg.URL, Signer: cfg.Signer, Timeout: cfg.Timeout,
			FallbackFee: cfg.FallbackFee, Client: cfg.Client}))
	case chains.FamilyTron:
		return asBackend(httpapi.New(httpapi.Config{Ticker: t, URL: cfg.URL, Signer: cfg.Signer, Timeout: cfg.Timeout, Client: cfg.Client}))
	case chains.FamilyEVM:
		return asBackend(jsonrpc.New(jsonrpc.Config{Ticker: t, URL: cfg.URL, Signer: cfg.Signer, Timeout: cfg.Timeout, Client: cfg.Client}))
	case chains.FamilySolana:
		return asBackend(solrpc.New(solrpc.Config{Ticker: t, URL: cfg.URL, Signer: cfg.Signer, Timeout: cfg.Timeout, Client: cfg.Client}))
	}
	return nil, fmt.Errorf("%w: no node backend for the %s family yet", chains.ErrUnsupportedNetwork, t.Family)
}

// asBackend returns b as a chains.Backend, or a nil interface (never a typed
// nil) with err.
func asBackend[B chains.Backend](b B, err error) (chains.Backend, error) {
	if err != nil {
		return nil, err
	}
	return b, nil
}
