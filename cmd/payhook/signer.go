package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/signer"
)

// defaultSignerListen is the signer's listen address when --listen is not
// given: loopback, so that exposing it is a decision.
const defaultSignerListen = "127.0.0.1:7443"

// signerCmd: payhook signer --policy-file FILE --cert FILE --key FILE
// --client-ca FILE [--listen ADDR] [--seed-file PATH]
// [--seed-passphrase-file FILE] [--state-file PATH] [--registry-file FILE].
// It serves the signer (server/signer) over gRPC with mutual TLS until
// interrupted, printing "payhook signer: listening on ADDR" once it
// accepts connections.
func signerCmd(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := newFlagSet("payhook signer", stderr)
	listen := fs.String("listen", defaultSignerListen, "address to serve the signer on (gRPC, mutual TLS)")
	seedPath, passFile := seedFlags(fs, "the master seed to sign with, hex or encrypted")
	policyFile := fs.String("policy-file", "", "JSON policy: per project and ticker, the destinations allowed and a daily cap (see docs/operations.md, Remote signer)")
	stateFile := fs.String("state-file", "", "where the daily caps' state is kept across restarts (default signer-state.json beside the seed file)")
	cert := fs.String("cert", "", "PEM certificate the signer presents")
	key := fs.String("key", "", "PEM private key of --cert")
	clientCA := fs.String("client-ca", "", "PEM CA certificate a server's client certificate must chain to (mutual TLS)")
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (the server's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *policyFile == "" {
		return errors.New("--policy-file: required (the signer signs only what its policy allows)")
	}
	tc, err := signer.ServerTLS(*cert, *key, *clientCA)
	if err != nil {
		return err
	}
	if *seedPath == "" {
		*seedPath = defaultSeedFile(stderr)
	}
	seed, err := admin.OpenSeed(*seedPath, *passFile)
	// The seed is open (or will not be): its passphrase is needed no more.
	admin.ForgetSeedPassphrase()
	_ = os.Unsetenv(admin.SeedPassphraseEnv)
	if err != nil {
		return err
	}
	keys, err := chains.NewKeys(seed)
	clear(seed)
	if err != nil {
		return fmt.Errorf("--seed-file %s: %w", *seedPath, err)
	}
	registry, err := admin.LoadRegistry(*registryFile)
	if err != nil {
		return err
	}
	policy, err := admin.LoadFile("--policy-file", *policyFile, func(r io.Reader) (*signer.Policy, error) {
		return signer.LoadPolicy(r, registry)
	})
	if err != nil {
		return err
	}
	if *stateFile == "" {
		*stateFile = filepath.Join(filepath.Dir(*seedPath), "signer-state.json")
	}
	svc, err := signer.NewService(signer.Config{Keys: keys, Registry: registry, Policy: policy, StateFile: *stateFile}, logger)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	gs := signer.NewGRPCServer(svc, tc)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	fmt.Fprintf(stdout, "payhook signer: listening on %s\n", lis.Addr())
	logger.Info("signer serving", "addr", lis.Addr().String(), "state_file", *stateFile)
	select {
	case err := <-served:
		return fmt.Errorf("signer: %w", err)
	case <-ctx.Done():
		gs.GracefulStop()
		if err := <-served; err != nil {
			return fmt.Errorf("signer: %w", err)
		}
		return nil
	}
}
