package server

import (
	"context"
	"fmt"

	"github.com/payhook/payhook/chains/family"
	remotesigner "github.com/payhook/payhook/server/signer"
)

// remoteKeys reaches the remote signer (--signer-url): the server holds
// no seed; payment addresses derive from the public keys the signer gives
// (Solana's, which need the seed, asked of the signer), and every transaction is
// signed there. The database's secrets are sealed with --secrets-key-file.
// A signer that cannot be reached at start is an error: the server would
// hand out no address.
func (s *Server) remoteKeys(ctx context.Context) (keys, error) {
	if err := s.sealSecrets(ctx, nil); err != nil {
		return keys{}, err
	}
	c, err := remotesigner.Dial(s.cfg.Keys.Signer)
	if err != nil {
		return keys{}, err
	}
	s.remote = c
	deriver, err := c.PublicDeriver(ctx, family.All())
	if err != nil {
		return keys{}, fmt.Errorf("--signer-url %s: %w", s.cfg.Keys.Signer.URL, err)
	}
	s.logger.Info("signing remotely: the server holds no seed", "signer", s.cfg.Keys.Signer.URL)
	return keys{deriver: deriver, signer: c}, nil
}
