package rpc

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

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
func (s *OperatorServer) ListHeldFunds(ctx context.Context, req *payhookv1.ListHeldFundsRequest) (*payhookv1.ListHeldFundsResponse, error) {
	after, err := heldPageAfter(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	held, err := s.addresses.HeldFunds(ctx, int(req.GetPageSize()), after)
	if err != nil {
		return nil, err
	}
	return HeldFunds(held), nil
}

// heldPagePrefix starts the text of a held-funds page token.
const heldPagePrefix = "held-after:"

// heldPageAfter decodes a page token of ListHeldFunds into the address id
// the page starts after (0 for an empty token).
func heldPageAfter(token string) (int64, error) {
	if token == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	rest, ok := strings.CutPrefix(string(raw), heldPagePrefix)
	id, perr := strconv.ParseInt(rest, 10, 64)
	if err != nil || !ok || perr != nil || id <= 0 {
		return 0, &address.InvalidError{Param: "page_token", Reason: "is not a next_page_token of this listing"}
	}
	return id, nil
}

// HeldFunds renders a page of held funds as the operator API answers it.
func HeldFunds(held address.HeldFunds) *payhookv1.ListHeldFundsResponse {
	resp := &payhookv1.ListHeldFundsResponse{Tickers: make([]*payhookv1.HeldTicker, 0, len(held.Tickers)), Addresses: make([]*payhookv1.HeldAddress, 0, len(held.Addresses))}
	count := func(n int) int32 { return int32(min(n, 1<<31-1)) }
	for _, ht := range held.Tickers {
		t := &payhookv1.HeldTicker{
			Ticker:       ht.Ticker.Ticker,
			Coin:         ht.Ticker.Coin,
			Total:        ht.Total.String(),
			Payments:     count(ht.Payments),
			AddressCount: count(ht.Addresses),
		}
		for _, r := range ht.ByReason {
			t.ByReason = append(t.ByReason, &payhookv1.HeldReason{Reason: r.Reason, Total: r.Total.String(), Payments: count(r.Payments)})
		}
		resp.Tickers = append(resp.Tickers, t)
	}
	for _, a := range held.Addresses {
		resp.Addresses = append(resp.Addresses, &payhookv1.HeldAddress{
			AddressIn:       a.AddressIn,
			Balance:         a.Balance.String(),
			Payments:        count(a.Payments),
			DerivationPath:  a.DerivationPath,
			DerivationIndex: a.DerivationIndex,
			Ticker:          a.Ticker.Ticker,
			ProjectId:       a.ProjectID,
			Reasons:         a.Reasons,
		})
	}
	if held.Next > 0 {
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(heldPagePrefix + strconv.FormatInt(held.Next, 10)))
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
