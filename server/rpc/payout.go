package rpc

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/payout"

	entdb "github.com/payhook/payhook/ent/db"
	entpayout "github.com/payhook/payhook/ent/db/payout"
)

// PayoutServer implements payhookv1.PayoutServiceServer.
type PayoutServer struct {
	payhookv1.UnimplementedPayoutServiceServer

	payouts *payout.Service
}

// NewPayoutServer returns the payout service.
func NewPayoutServer(payouts *payout.Service) *PayoutServer {
	return &PayoutServer{payouts: payouts}
}

func payoutCaller(ctx context.Context) (payout.Caller, error) {
	k, err := caller(ctx)
	if err != nil {
		return payout.Caller{}, err
	}
	return payout.Caller{APIKeyID: k.ID, ProjectID: k.ProjectID}, nil
}

// GetPayoutWallet implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) GetPayoutWallet(ctx context.Context, req *payhookv1.GetPayoutWalletRequest) (*payhookv1.GetPayoutWalletResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.payouts.Wallet(ctx, c, req.GetTicker())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetPayoutWalletResponse{Address: a.AddressIn}, nil
}

// GetPayoutBalance implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) GetPayoutBalance(ctx context.Context, req *payhookv1.GetPayoutBalanceRequest) (*payhookv1.GetPayoutBalanceResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.payouts.Balance(ctx, c, req.GetTicker())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetPayoutBalanceResponse{Balance: b.String()}, nil
}

// outputs returns the outputs of a request body, sorted by address (a
// JSON object has no order): the request ids follow that order.
func outputs(m map[string]string) []payout.Output {
	out := make([]payout.Output, 0, len(m))
	for a, v := range m {
		out = append(out, payout.Output{Address: a, Amount: v})
	}
	slices.SortFunc(out, func(a, b payout.Output) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// CreatePayoutRequests implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) CreatePayoutRequests(ctx context.Context, req *payhookv1.CreatePayoutRequestsRequest) (*payhookv1.CreatePayoutRequestsResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := s.payouts.Request(ctx, c, req.GetTicker(), outputs(req.GetOutputs()))
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreatePayoutRequestsResponse{RequestIds: ids}, nil
}

// ProcessPayoutRequests implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) ProcessPayoutRequests(ctx context.Context, req *payhookv1.ProcessPayoutRequestsRequest) (*payhookv1.ProcessPayoutRequestsResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	info, err := s.payouts.RequestAndProcess(ctx, c, req.GetTicker(), outputs(req.GetOutputs()))
	if err != nil {
		return nil, err
	}
	return &payhookv1.ProcessPayoutRequestsResponse{PayoutInfo: payoutInfo(info), Queued: queued(info)}, nil
}

// ListPayoutRequestPage implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) ListPayoutRequestPage(ctx context.Context, req *payhookv1.ListPayoutRequestPageRequest) (*payhookv1.ListPayoutRequestPageResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	rs, pages, err := s.payouts.ListRequests(ctx, c, req.GetTicker(), req.GetStatus(), int(req.GetP()))
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListPayoutRequestPageResponse{NumPages: int32(pages)}
	for _, r := range rs {
		out.PayoutRequests = append(out.PayoutRequests, payoutRequestInfo(r))
	}
	return out, nil
}

// ListPayouts implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) ListPayouts(ctx context.Context, req *payhookv1.ListPayoutsRequest) (*payhookv1.ListPayoutsResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	ps, pages, err := s.payouts.ListPayouts(ctx, c, req.GetTicker(), req.GetStatus(), int(req.GetP()))
	if err != nil {
		return nil, err
	}
	infos, err := s.payouts.WithRequests(ctx, ps)
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListPayoutsResponse{NumPages: int32(pages)}
	for _, info := range infos {
		out.Payouts = append(out.Payouts, payoutInfo(info))
	}
	return out, nil
}

// CreatePayoutFromRequests implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) CreatePayoutFromRequests(ctx context.Context, req *payhookv1.CreatePayoutFromRequestsRequest) (*payhookv1.CreatePayoutFromRequestsResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for part := range strings.SplitSeq(req.GetRequestIds(), ",") {
		part = strings.TrimSpace(part)
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil || id <= 0 {
			return nil, address.Invalid("request_ids", "%q is not a payout request id: give the ids comma-separated, such as 12,13", address.Truncate(part))
		}
		ids = append(ids, id)
	}
	info, err := s.payouts.CreatePayout(ctx, c, ids)
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreatePayoutFromRequestsResponse{PayoutInfo: payoutInfo(info)}, nil
}

// ProcessPayout implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) ProcessPayout(ctx context.Context, req *payhookv1.ProcessPayoutRequest) (*payhookv1.ProcessPayoutResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	info, err := s.payouts.Process(ctx, c, req.GetPayoutId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.ProcessPayoutResponse{PayoutInfo: payoutInfo(info), Queued: queued(info)}, nil
}

// GetPayoutStatus implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) GetPayoutStatus(ctx context.Context, req *payhookv1.GetPayoutStatusRequest) (*payhookv1.GetPayoutStatusResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	info, err := s.payouts.Status(ctx, c, req.GetPayoutId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetPayoutStatusResponse{PayoutInfo: payoutInfo(info)}, nil
}

// queued reports a payout that was queued rather than set aside for
// approval.
func queued(info *payout.Info) bool { return info.Payout.Status != entpayout.StatusPendingApproval }

func payoutInfo(info *payout.Info) *payhookv1.PayoutInfo {
	p := info.Payout
	out := &payhookv1.PayoutInfo{
		Id: p.ID, Status: string(p.Status), From: p.FromAddress, Requests: map[string]string{},
		TotalRequested: p.TotalRequested.String(),
		TotalWithFee:   p.TotalRequested.Add(p.Fee).Add(p.BlockchainFee).String(),
		Fee:            p.Fee.String(), BlockchainFee: p.BlockchainFee.String(), Coin: p.Ticker,
		Txid: p.Txid, Error: p.Error, Timestamp: p.CreatedAt.UTC().Format(time.RFC3339),
		ApprovalReason: p.ApprovalReason,
	}
	for _, r := range info.Requests {
		out.Requests[r.Address] = r.Value.String()
	}
	return out
}

func payoutRequestInfo(r *entdb.PayoutRequest) *payhookv1.PayoutRequestInfo {
	out := &payhookv1.PayoutRequestInfo{
		Id: r.ID, Address: r.Address, Value: r.Value.String(), Coin: r.Ticker, Status: string(r.Status),
		Timestamp: r.CreatedAt.UTC().Format(time.RFC3339),
	}
	if r.PayoutID != nil {
		out.PayoutId = *r.PayoutID
	}
	return out
}

// GetPayoutPSBT implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) GetPayoutPSBT(ctx context.Context, req *payhookv1.GetPayoutPSBTRequest) (*payhookv1.GetPayoutPSBTResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.payouts.GetPSBT(ctx, c, req.GetPayoutId())
	if err != nil {
		return nil, err
	}
	info, err := s.payouts.Status(ctx, c, req.GetPayoutId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetPayoutPSBTResponse{PayoutInfo: payoutInfo(info), Psbt: base64.StdEncoding.EncodeToString(p.PSBT),
		NetworkFee: p.NetworkFee.String(), Signed: p.Signed, Txid: p.TxID}, nil
}

// SubmitPayoutPSBT implements payhookv1.PayoutServiceServer.
func (s *PayoutServer) SubmitPayoutPSBT(ctx context.Context, req *payhookv1.SubmitPayoutPSBTRequest) (*payhookv1.SubmitPayoutPSBTResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(req.GetPsbt()))
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "psbt: not base64 (export the signed PSBT as base64, or as a .psbt file's contents encoded)")
	}
	info, err := s.payouts.SubmitPSBT(ctx, c, req.GetPayoutId(), raw)
	if err != nil {
		return nil, err
	}
	return &payhookv1.SubmitPayoutPSBTResponse{PayoutInfo: payoutInfo(info)}, nil
}
