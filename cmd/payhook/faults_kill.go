//go:build faults

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/payhook/payhook/server"
)

// The binary built with -tags faults dies by SIGKILL at a chosen point, for
// the process-level fault tests (faults_*_test.go):
//
//	PAYHOOK_FAULT=after-sign   after a transaction is signed, before its
//	                           bytes are recorded (outbound.Faults.AfterSign)
//	PAYHOOK_FAULT_ONCE=PATH    die only if PATH does not exist yet: it is
//	                           created first, so the next start of the same
//	                           command line runs through
//
// Neither variable is a flag: serve reads them only in this build.
func init() {
	serveFaults = func(cfg *server.Config) {
		switch fault := os.Getenv("PAYHOOK_FAULT"); fault {
		case "":
		case "after-sign":
			cfg.OutboundFaults.AfterSign = killOnce(fault, os.Getenv("PAYHOOK_FAULT_ONCE"))
		default:
			fmt.Fprintf(os.Stderr, "payhook: PAYHOOK_FAULT=%q: want after-sign\n", fault)
			os.Exit(2)
		}
	}
}

// killOnce returns a fault hook that kills this process with SIGKILL, as
// kill -9 would, the first time it runs, unless the marker file once
// exists (none: every time); it creates the marker before it kills. An
// error creating the marker stops the engine there instead.
func killOnce(fault, once string) func() error {
	return func() error {
		if once != "" {
			f, err := os.OpenFile(once, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, os.ErrExist) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("fault %s: marker %s: %w", fault, once, err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("fault %s: marker %s: %w", fault, once, err)
			}
		}
		fmt.Fprintf(os.Stderr, "payhook: fault %s: SIGKILL\n", fault)
		if err := syscall.Kill(os.Getpid(), syscall.SIGKILL); err != nil {
			return fmt.Errorf("fault %s: kill: %w", fault, err)
		}
		select {} // the signal is on its way
	}
}
