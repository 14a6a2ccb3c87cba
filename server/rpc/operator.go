package rpc

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	entdb "github.com/payhook/payhook/ent/db"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/address"
)

// OperatorServer implements payhookv1.OperatorServiceServer. The
// interceptor admits operators' keys only.
type OperatorServer struct {
	payhookv1.UnimplementedOperatorServiceServer

	addresses *address.Service
}

// NewOperatorServer returns the operator service.
func NewOperatorServer(addresses *address.Service) *OperatorServer {
	return &OperatorServer{addresses: addresses}
}

// ListHeldFunds implements payhookv1.OperatorServiceServer.
func (s *OperatorServer) ListHeldFunds(ctx context.Context, _ *payhookv1.ListHeldFundsRequest) (*payhookv1.ListHeldFundsResponse, error) {
	held, err := s.addresses.HeldFunds(ctx)
	if err != nil {
		return nil, err
	}
	return HeldFunds(held), nil
}

// HeldFunds renders held funds as the operator API answers them.
func HeldFunds(held []address.HeldTicker) *payhookv1.ListHeldFundsResponse {
	resp := &payhookv1.ListHeldFundsResponse{Tickers: make([]*payhookv1.HeldTicker, 0, len(held))}
	for _, ht := range held {
		t := &payhookv1.HeldTicker{
			Ticker:    ht.Ticker.Ticker,
			Coin:      ht.Ticker.Coin,
			Total:     ht.Total.String(),
			Payments:  int32(min(ht.Payments, 1<<31-1)),
			Addresses: make([]*payhookv1.HeldAddress, 0, len(ht.Addresses)),
		}
		for _, a := range ht.Addresses {
			t.Addresses = append(t.Addresses, &payhookv1.HeldAddress{
				AddressIn:       a.AddressIn,
				Balance:         a.Balance.String(),
				Payments:        int32(min(a.Payments, 1<<31-1)),
				DerivationPath:  a.DerivationPath,
				DerivationIndex: a.DerivationIndex,
			})
		}
		resp.Tickers = append(resp.Tickers, t)
	}
	return resp
}

// ListPayoutRequests implements payhookv1.OperatorServiceServer.
func (s *OperatorServer) ListPayoutRequests(ctx context.Context, _ *payhookv1.ListPayoutRequestsRequest) (*payhookv1.ListPayoutRequestsResponse, error) {
	ps, err := s.addresses.PayoutRequests(ctx)
	if err != nil {
		return nil, err
	}
	return PayoutRequests(ps), nil
}

// PayoutRequests renders payout requests as the operator API answers them.
func PayoutRequests(ps []*entdb.PayoutRequest) *payhookv1.ListPayoutRequestsResponse {
	resp := &payhookv1.ListPayoutRequestsResponse{Requests: make([]*payhookv1.PayoutRequest, 0, len(ps))}
	for _, p := range ps {
		resp.Requests = append(resp.Requests, &payhookv1.PayoutRequest{
			Uuid:        p.UUID,
			ApiKeyId:    p.APIKeyID,
			Ticker:      p.Ticker,
			Address:     p.Address,
			Value:       p.Value.String(),
			Status:      p.Status.String(),
			RequestedAt: timestamppb.New(p.CreatedAt),
		})
	}
	return resp
}
