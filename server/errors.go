package server

import "errors"

// ErrMigrationsBehind is returned by New with Store.Migrate off when the
// database lacks migrations this binary needs.
var ErrMigrationsBehind = errors.New("database migrations are behind")

// ErrNoChains is Config.Validate's answer to a server without --dev and
// without any node: it would create payment addresses that nothing
// watches, and no payment to them would ever be seen.
var ErrNoChains = errors.New("--node: no chain node is configured and --dev is off, so nothing would watch the payment addresses payhook creates; " +
	"give each ticker's node (--node TICKER=URL, --node-file FILE or PAYHOOK_NODE_<TICKER>=URL; docs/nodes.md), " +
	"or run with --dev for the simulated chains")
