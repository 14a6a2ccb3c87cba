package rpc

import (
	"context"
	"time"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/refund"
)

// RefundServer implements payhookv1.RefundServiceServer over refund.Service.
type RefundServer struct {
	payhookv1.UnimplementedRefundServiceServer
	refunds  *refund.Service
	payments refund.Forwarder
}

// NewRefundServer returns a RefundServer; payments forwards released
// wrong-asset payments.
func NewRefundServer(refunds *refund.Service, payments refund.Forwarder) *RefundServer {
	return &RefundServer{refunds: refunds, payments: payments}
}

// ForwardWrongAsset implements payhookv1.RefundServiceServer.
func (s *RefundServer) ForwardWrongAsset(ctx context.Context, req *payhookv1.ForwardWrongAssetRequest) (*payhookv1.ForwardWrongAssetResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.refunds.ForwardWrongAsset(ctx, c, s.payments, req.GetCoin(), req.GetTxidIn())
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ForwardWrongAssetResponse{PaymentStatus: string(p.Status)}
	if f := p.Edges.Forward; f != nil {
		out.TxidOut, out.ValueForwardedCoin = f.TxidOut, f.ValueForwardedCoin.String()
	}
	return out, nil
}

// RefundWrongAsset implements payhookv1.RefundServiceServer.
func (s *RefundServer) RefundWrongAsset(ctx context.Context, req *payhookv1.RefundWrongAssetRequest) (*payhookv1.RefundWrongAssetResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.refunds.RefundWrongAsset(ctx, c, req.GetCoin(), req.GetTxidIn(), req.GetAddress(), req.GetValue())
	if err != nil {
		return nil, err
	}
	return &payhookv1.RefundWrongAssetResponse{PayoutInfo: payoutInfo(p)}, nil
}

// RefundCheckout implements payhookv1.RefundServiceServer.
func (s *RefundServer) RefundCheckout(ctx context.Context, req *payhookv1.RefundCheckoutRequest) (*payhookv1.RefundCheckoutResponse, error) {
	r, p, err := s.refundPayment(ctx, refund.Request{
		Kind: invoice.Checkout, PaymentID: req.GetPaymentId(), TxidIn: req.GetTxidIn(), Address: req.GetAddress(), Value: req.GetValue(),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.RefundCheckoutResponse{Refund: r, PayoutInfo: p}, nil
}

// RefundDeposit implements payhookv1.RefundServiceServer.
func (s *RefundServer) RefundDeposit(ctx context.Context, req *payhookv1.RefundDepositRequest) (*payhookv1.RefundDepositResponse, error) {
	r, p, err := s.refundPayment(ctx, refund.Request{
		Kind: invoice.Deposit, PaymentID: req.GetPaymentId(), TxidIn: req.GetTxidIn(), Address: req.GetAddress(), Value: req.GetValue(),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.RefundDepositResponse{Refund: r, PayoutInfo: p}, nil
}

func (s *RefundServer) refundPayment(ctx context.Context, r refund.Request) (*payhookv1.RefundInfo, *payhookv1.PayoutInfo, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, nil, err
	}
	ref, p, err := s.refunds.Refund(ctx, c, r)
	if err != nil {
		return nil, nil, err
	}
	return refundInfo(ref), payoutInfo(p), nil
}

// ApproveRefund implements payhookv1.RefundServiceServer.
func (s *RefundServer) ApproveRefund(ctx context.Context, req *payhookv1.ApproveRefundRequest) (*payhookv1.ApproveRefundResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	r, p, err := s.refunds.Approve(ctx, c.ProjectID, req.GetRefundId(), "api")
	if err != nil {
		return nil, err
	}
	return &payhookv1.ApproveRefundResponse{Refund: refundInfo(r), PayoutInfo: payoutInfo(p)}, nil
}

// GetRefund implements payhookv1.RefundServiceServer.
func (s *RefundServer) GetRefund(ctx context.Context, req *payhookv1.GetRefundRequest) (*payhookv1.GetRefundResponse, error) {
	c, err := payoutCaller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.refunds.Get(ctx, c, req.GetRefundId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetRefundResponse{Refund: refundInfo(r)}, nil
}

func refundInfo(i *refund.Info) *payhookv1.RefundInfo {
	r := i.Refund
	out := &payhookv1.RefundInfo{
		RefundId: r.UUID, Status: string(r.Status), PaymentId: i.PaymentID, TxidIn: i.TxidIn, Address: r.Address,
		Value: r.Value.String(), Coin: i.Coin, Txid: r.Txid, Error: r.Error, Timestamp: r.CreatedAt.UTC().Format(time.RFC3339),
		Reason: r.Reason,
	}
	if r.PayoutID != nil {
		out.PayoutId = *r.PayoutID
	}
	return out
}
