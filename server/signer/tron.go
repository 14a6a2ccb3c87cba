package signer

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
)

// SignTron implements SignerService.
func (s *Service) SignTron(_ context.Context, r *signerv1.SignTronRequest) (*signerv1.SignTronResponse, error) {
	if _, _, err := s.context(r.GetContext(), familyTron); err != nil {
		return nil, err
	}
	return nil, status.Error(codes.Unimplemented, "tron: not signed remotely yet")
}
