package rpc

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
)

// CheckoutServer implements payhookv1.CheckoutServiceServer.
type CheckoutServer struct {
	payhookv1.UnimplementedCheckoutServiceServer
	invoices *invoice.Service
}

// NewCheckoutServer returns the checkout service.
func NewCheckoutServer(invoices *invoice.Service) *CheckoutServer {
	return &CheckoutServer{invoices: invoices}
}

// RequestCheckout implements payhookv1.CheckoutServiceServer.
func (s *CheckoutServer) RequestCheckout(ctx context.Context, req *payhookv1.RequestCheckoutRequest) (*payhookv1.RequestCheckoutResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := s.invoices.Create(ctx, invoice.Checkout, invoice.Request{
		ProjectID: key.ProjectID, NotifyURL: req.GetNotifyUrl(), RedirectURL: req.GetRedirectUrl(),
		Value: req.GetValue(), Currency: req.GetCurrency(), ItemDescription: req.GetItemDescription(),
		ExpireAt: req.GetExpireAt(), Post: req.GetPost(), JSON: req.GetJson(), Convert: req.GetConvert(),
		UnderpaidTolerance: req.GetUnderpaidTolerance(), LatePayments: req.GetLatePayments(), Email: req.GetEmail(),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.RequestCheckoutResponse{
		PaymentId:          inv.PublicID,
		PaymentUrl:         s.invoices.PaymentURL(inv),
		SuccessToken:       inv.SuccessToken,
		ExpiresAt:          unix(inv.ExpiresAt),
		UnderpaidTolerance: inv.UnderpaidTolerance.String(),
		LatePayments:       inv.LatePayments.String(),
	}, nil
}

// GetCheckoutAddress implements payhookv1.CheckoutServiceServer.
func (s *CheckoutServer) GetCheckoutAddress(ctx context.Context, req *payhookv1.GetCheckoutAddressRequest) (*payhookv1.GetCheckoutAddressResponse, error) {
	q, err := invoiceAddress(ctx, s.invoices, invoice.Checkout, req.GetPaymentId(), req.GetCoin())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetCheckoutAddressResponse{
		AddressIn: q.AddressIn, Coin: q.Coin, ValueCoin: q.ValueCoin, ExchangeRate: q.ExchangeRate,
		Currency: q.Currency, ExpiresAt: q.ExpiresAt, PaymentUri: q.PaymentUri, MinimumTransactionCoin: q.MinimumTransactionCoin,
	}, nil
}

// GetCheckoutLogs implements payhookv1.CheckoutServiceServer.
func (s *CheckoutServer) GetCheckoutLogs(ctx context.Context, req *payhookv1.GetCheckoutLogsRequest) (*payhookv1.GetCheckoutLogsResponse, error) {
	return invoiceLogs(ctx, s.invoices, invoice.Checkout, req.GetPaymentId())
}

// DepositServer implements payhookv1.DepositServiceServer.
type DepositServer struct {
	payhookv1.UnimplementedDepositServiceServer
	invoices *invoice.Service
}

// NewDepositServer returns the deposit service.
func NewDepositServer(invoices *invoice.Service) *DepositServer {
	return &DepositServer{invoices: invoices}
}

// RequestDeposit implements payhookv1.DepositServiceServer.
func (s *DepositServer) RequestDeposit(ctx context.Context, req *payhookv1.RequestDepositRequest) (*payhookv1.RequestDepositResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := s.invoices.Create(ctx, invoice.Deposit, invoice.Request{
		ProjectID: key.ProjectID, NotifyURL: req.GetNotifyUrl(), Currency: req.GetCurrency(),
		ItemDescription: req.GetItemDescription(), Post: req.GetPost(), JSON: req.GetJson(), Convert: req.GetConvert(),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.RequestDepositResponse{PaymentId: inv.PublicID, PaymentUrl: s.invoices.PaymentURL(inv)}, nil
}

// GetDepositAddress implements payhookv1.DepositServiceServer.
func (s *DepositServer) GetDepositAddress(ctx context.Context, req *payhookv1.GetDepositAddressRequest) (*payhookv1.GetDepositAddressResponse, error) {
	q, err := invoiceAddress(ctx, s.invoices, invoice.Deposit, req.GetPaymentId(), req.GetCoin())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetDepositAddressResponse{
		AddressIn: q.AddressIn, Coin: q.Coin, ValueCoin: q.ValueCoin, ExchangeRate: q.ExchangeRate,
		Currency: q.Currency, ExpiresAt: q.ExpiresAt, PaymentUri: q.PaymentUri, MinimumTransactionCoin: q.MinimumTransactionCoin,
	}, nil
}

// GetDepositLogs implements payhookv1.DepositServiceServer.
func (s *DepositServer) GetDepositLogs(ctx context.Context, req *payhookv1.GetDepositLogsRequest) (*payhookv1.GetDepositLogsResponse, error) {
	l, err := invoiceLogs(ctx, s.invoices, invoice.Deposit, req.GetPaymentId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetDepositLogsResponse{
		PaymentId: l.PaymentId, InvoiceStatus: l.InvoiceStatus, Value: l.Value, Currency: l.Currency,
		NotifyUrl: l.NotifyUrl, ExpiresAt: l.ExpiresAt, PaidAmountFiat: l.PaidAmountFiat,
		Addresses: l.Addresses, Payments: l.Payments, Notifications: l.Notifications,
	}, nil
}

// invoiceAddress hands out an invoice's address, in the checkout
// response's shape (the deposit one has the same fields).
func invoiceAddress(ctx context.Context, invoices *invoice.Service, kind invoice.Kind, paymentID, coin string) (*payhookv1.GetCheckoutAddressResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	q, err := invoices.Address(ctx, kind, invoice.Caller{APIKeyID: key.ID, ProjectID: key.ProjectID}, paymentID, coin)
	if err != nil {
		return nil, err
	}
	a, t := q.Address, q.Ticker
	out := &payhookv1.GetCheckoutAddressResponse{
		AddressIn:              a.AddressIn,
		Coin:                   invoice.TickerName(t),
		Currency:               q.Invoice.Currency,
		ExpiresAt:              unix(a.QuoteExpiresAt),
		MinimumTransactionCoin: t.MinTransaction.String(),
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

// invoiceLogs returns an invoice's history in the checkout response's
// shape.
func invoiceLogs(ctx context.Context, invoices *invoice.Service, kind invoice.Kind, paymentID string) (*payhookv1.GetCheckoutLogsResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	l, err := invoices.Logs(ctx, kind, projectID, paymentID)
	if err != nil {
		return nil, err
	}
	inv := l.Invoice
	out := &payhookv1.GetCheckoutLogsResponse{
		PaymentId:      inv.PublicID,
		InvoiceStatus:  string(l.Status),
		Value:          optDecimal(inv.Value),
		Currency:       inv.Currency,
		NotifyUrl:      inv.NotifyURL,
		ExpiresAt:      unix(inv.ExpiresAt),
		PaidAmountFiat: l.PaidFiat.Round(l.FiatPlaces).String(),
		Addresses:      []*payhookv1.InvoiceAddress{},
		Payments:       []*payhookv1.InvoicePayment{},
		Notifications:  []*payhookv1.Notification{},

		UnderpaidTolerance: inv.UnderpaidTolerance.String(),
		LatePayments:       inv.LatePayments.String(),
		AmountDueFiat:      optDecimal(l.Exceptions.DueFiat),
		AmountDue:          optDecimal(l.Exceptions.Due),
		OverpaidAmountFiat: optDecimal(l.Exceptions.OverpaidFiat),
		OverpaidAmount:     optDecimal(l.Exceptions.Overpaid),
	}
	if l.Exceptions.Due != nil || l.Exceptions.Overpaid != nil {
		out.DueCoin = l.Coin
	}
	tickers := map[int64]string{}
	for _, a := range l.Addresses {
		tickers[a.ID] = a.Ticker
		ia := &payhookv1.InvoiceAddress{Coin: invoice.CoinName(a.Ticker), AddressIn: a.AddressIn, ExpiresAt: unix(a.QuoteExpiresAt)}
		if a.QuoteRate != nil {
			ia.ExchangeRate = a.QuoteRate.Round(8).String()
		}
		ia.ValueCoin = optDecimal(a.QuoteValueCoin)
		out.Addresses = append(out.Addresses, ia)
	}
	for _, p := range l.Payments {
		ip := &payhookv1.InvoicePayment{
			Coin: invoice.CoinName(tickers[p.AddressID]), TxidIn: p.TxidIn, TxidOut: p.TxidOut,
			PaidAmount: p.ValueCoin.String(), PaidAmountFiat: optDecimal(roundPtr(p.ValueFiat, l.FiatPlaces)),
			ReceivedAmount: optDecimal(p.ValueForwardedCoin), PaymentStatus: p.Status.String(),
			Confirmations: p.Confirmations, CreatedAt: timestamppb.New(p.CreatedAt),
		}
		if p.HoldReason == entpayment.HoldReasonLatePayment {
			ip.HoldReason = string(p.HoldReason)
		}
		out.Payments = append(out.Payments, ip)
	}
	for _, n := range l.Notifications {
		out.Notifications = append(out.Notifications, notificationOf(n))
	}
	return out, nil
}

// notificationOf describes a notification with its loaded attempts.
func notificationOf(n *entdb.Notification) *payhookv1.Notification {
	pn := &payhookv1.Notification{
		Uuid: n.UUID, EventType: n.Event, Status: n.Status.String(), Attempts: int32(n.Attempts),
		Deadline: timestamppb.New(n.ExpiresAt), CreatedAt: timestamppb.New(n.CreatedAt), Url: n.URL,
		Logs: []*payhookv1.DeliveryAttempt{},
	}
	if n.NextAttemptAt != nil {
		pn.NextAttemptAt = timestamppb.New(*n.NextAttemptAt)
	}
	for _, at := range n.Edges.DeliveryAttempts {
		pn.Logs = append(pn.Logs, attemptLog(n, at, address.StatusOf(n.Event)))
	}
	return pn
}

func optDecimal(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}

func roundPtr(d *decimal.Decimal, places int32) *decimal.Decimal {
	if d == nil {
		return nil
	}
	r := d.Round(places)
	return &r
}

func unix(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}
