package rpc

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// SubscriptionServer implements payhookv1.SubscriptionServiceServer.
type SubscriptionServer struct {
	payhookv1.UnimplementedSubscriptionServiceServer
	subs *subscription.Service
}

// NewSubscriptionServer returns the subscription service.
func NewSubscriptionServer(subs *subscription.Service) *SubscriptionServer {
	return &SubscriptionServer{subs: subs}
}

// CreateSubscription implements payhookv1.SubscriptionServiceServer.
func (s *SubscriptionServer) CreateSubscription(ctx context.Context, req *payhookv1.CreateSubscriptionRequest) (*payhookv1.CreateSubscriptionResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := s.subs.Create(ctx, subscription.Request{
		ProjectID: key.ProjectID, NotifyURL: req.GetNotifyUrl(), Currency: req.GetCurrency(),
		Customer: req.GetCustomer(), Options: req.GetOption(), Post: req.GetPost(), JSON: req.GetJson(),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreateSubscriptionResponse{Token: sub.Token, SubscriptionUrl: s.subs.URL(sub)}, nil
}

// GetSubscriptionAddress implements payhookv1.SubscriptionServiceServer.
func (s *SubscriptionServer) GetSubscriptionAddress(ctx context.Context, req *payhookv1.GetSubscriptionAddressRequest) (*payhookv1.GetSubscriptionAddressResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.subs.Address(ctx, invoice.Caller{APIKeyID: key.ID, ProjectID: key.ProjectID}, req.GetToken(), req.GetOption(), req.GetCoin())
	if err != nil {
		return nil, err
	}
	a, t, inv := q.Address, q.Ticker, q.Invoice
	out := &payhookv1.GetSubscriptionAddressResponse{
		AddressIn:              a.AddressIn,
		Coin:                   invoice.TickerName(t),
		Currency:               inv.Currency,
		ExpiresAt:              unix(a.QuoteExpiresAt),
		MinimumTransactionCoin: t.MinTransaction.String(),
		PaymentId:              inv.PublicID,
		Option:                 inv.Option,
		Value:                  optDecimal(inv.Value),
	}
	if a.QuoteRate != nil {
		out.ExchangeRate = a.QuoteRate.Round(8).String()
	}
	if a.QuoteValueCoin != nil {
		out.ValueCoin = payload.FormatAmount(*a.QuoteValueCoin, t.Decimals)
	}
	if uri, err := address.PaymentURI(t, a.AddressIn, a.QuoteValueCoin); err == nil {
		out.PaymentUri = uri
	}
	return out, nil
}

// FetchSubscription implements payhookv1.SubscriptionServiceServer.
func (s *SubscriptionServer) FetchSubscription(ctx context.Context, req *payhookv1.FetchSubscriptionRequest) (*payhookv1.FetchSubscriptionResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.subs.Fetch(ctx, projectID, req.GetToken())
	if err != nil {
		return nil, err
	}
	return &payhookv1.FetchSubscriptionResponse{Subscription: s.subscriptionOf(v)}, nil
}

// ListSubscriptions implements payhookv1.SubscriptionServiceServer.
func (s *SubscriptionServer) ListSubscriptions(ctx context.Context, req *payhookv1.ListSubscriptionsRequest) (*payhookv1.ListSubscriptionsResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	vs, next, err := s.subs.List(ctx, projectID, int(req.GetLimit()), req.GetCursor())
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListSubscriptionsResponse{Subscriptions: make([]*payhookv1.Subscription, 0, len(vs)), NextCursor: next}
	for i := range vs {
		out.Subscriptions = append(out.Subscriptions, s.subscriptionOf(&vs[i]))
	}
	return out, nil
}

// subscriptionOf describes a subscription: payment_list[].value and
// received_fiat are JSON strings or null (google.protobuf.Value), amounts
// in the currency's minor unit without trailing zeros.
func (s *SubscriptionServer) subscriptionOf(v *subscription.View) *payhookv1.Subscription {
	sub := v.Subscription
	places := s.subs.FiatPlaces(sub.Currency)
	out := &payhookv1.Subscription{
		Token: sub.Token, Status: string(v.Status), ExpiresAt: unix(sub.ExpiresAt), Currency: sub.Currency,
		Customer: sub.Customer, NotifyUrl: sub.NotifyURL, CreatedAt: sub.CreatedAt.Unix(),
		Options:     make([]*payhookv1.SubscriptionOption, 0, len(sub.Options)),
		PaymentList: make([]*payhookv1.SubscriptionPayment, 0, len(v.Renewals)),
	}
	for _, o := range sub.Options {
		out.Options = append(out.Options, &payhookv1.SubscriptionOption{Period: o.Period, Value: o.Value})
	}
	for _, r := range v.Renewals {
		inv, first := r.Invoice, r.Payments[0]
		sp := &payhookv1.SubscriptionPayment{
			PaymentId: inv.PublicID, Option: inv.Option, Status: string(r.Status),
			Value: structpb.NewNullValue(), ReceivedFiat: structpb.NewNullValue(),
			Txid: first.TxidIn, Time: first.CreatedAt.Unix(),
		}
		if a := first.Edges.Address; a != nil {
			sp.Coin = invoice.CoinName(a.Ticker)
		}
		if inv.Value != nil {
			sp.Value = structpb.NewStringValue(payload.FormatAmount(*inv.Value, places))
		}
		if r.ReceivedFiat != nil {
			sp.ReceivedFiat = structpb.NewStringValue(payload.FormatAmount(*r.ReceivedFiat, places))
		}
		out.PaymentList = append(out.PaymentList, sp)
	}
	return out
}
