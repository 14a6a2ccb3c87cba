// Command payhook-bench measures payhook's delivery engine: it runs the
// notifier in-process against a loopback receiver that acknowledges every
// callback and reports throughput, latency and cost next to the machine's
// own limits (RSA-2048 signatures and loopback HTTP requests per second),
// measured in the same run. docs/benchmarks.md has the runs, their flags
// and results.
//
//	payhook-bench [--db postgres://...|sqlite] [--n 5000] [--rate 500] [--dead 10000] [--out bench.json]
//	payhook-bench e2e [--e2e-n 2000] ...
//	payhook-bench payouts [--ltc http://USER:PASS@HOST:PORT/wallet/NAME] [--payouts-n 1000] ...
//
// It is not part of the production binary (cmd/payhook). It reaches the
// database only through server/bench, and imports no ent package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "payhook-bench:", err)
		}
		os.Exit(2)
	}
}
