package signer

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// SignSolana implements SignerService.
func (s *Service) SignSolana(_ context.Context, r *signerv1.SignSolanaRequest) (*signerv1.SignSolanaResponse, error) {
	if _, _, err := s.context(r.GetContext(), familySolana); err != nil {
		return nil, err
	}
	return nil, status.Error(codes.Unimplemented, "solana: not signed remotely yet")
}
