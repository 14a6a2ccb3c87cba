// Package rpc implements payhook's gRPC services: each file translates one
// proto service to the domain packages and back. Input rules are enforced by
// the validation interceptor before a handler runs; errors are translated by
// the error interceptor.
package rpc

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/schema"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/merchant/project"
)

// AddressServer implements payhookv1.AddressServiceServer.
type AddressServer struct {
	payhookv1.UnimplementedAddressServiceServer

	addresses *address.Service
	prices    price.Source
	pubkeys   PublicKeys
	keys      interceptor.KeyResolver
}

// PublicKeys are the callback keys /pubkey/ publishes
// (project.CallbackKeys).
type PublicKeys interface {
	// ServerPublic is the server's key, answered without an API key.
	ServerPublic() (string, error)
	// Public is a project's keys, answered to its API keys.
	Public(ctx context.Context, projectID int64) (project.PublicKeys, error)
}

// NewAddressServer returns the address service; prices value coins for
// estimates and conversions, pubkeys are the callback keys /pubkey/
// publishes, and keys resolves the API key /pubkey/ may be sent.
func NewAddressServer(addresses *address.Service, prices price.Source, pubkeys PublicKeys, keys interceptor.KeyResolver) *AddressServer {
	return &AddressServer{addresses: addresses, prices: prices, pubkeys: pubkeys, keys: keys}
}

// caller returns the authenticated key: its id and its project, the owner
// of what it creates and reads.
func caller(ctx context.Context) (interceptor.Key, error) {
	k, ok := interceptor.KeyFrom(ctx)
	if !ok {
		return interceptor.Key{}, status.Error(codes.Unauthenticated, "missing api key")
	}
	return k, nil
}

// owner returns the authenticated key's project.
func owner(ctx context.Context) (int64, error) {
	k, err := caller(ctx)
	return k.ProjectID, err
}

// CreateAddress implements payhookv1.AddressServiceServer.
func (s *AddressServer) CreateAddress(ctx context.Context, req *payhookv1.CreateAddressRequest) (*payhookv1.CreateAddressResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	a, t, err := s.addresses.Create(ctx, address.CreateParams{
		APIKeyID:      key.ID,
		ProjectID:     key.ProjectID,
		Ticker:        req.GetTicker(),
		Callback:      req.GetCallback(),
		CBParams:      req.GetCbParams(),
		Address:       req.GetAddress(),
		Confirmations: req.Confirmations,
		MultiToken:    req.GetMultiToken(),
		Priority:      req.GetPriority(),
		MultiChain:    req.GetMultiChain(),
		Post:          req.GetPost(),
		JSON:          req.GetJson(),
		Convert:       req.GetConvert(),
	})
	if err != nil {
		return nil, err
	}
	out, err := addressOut(a.Destinations)
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreateAddressResponse{
		AddressIn:              a.AddressIn,
		AddressOut:             out,
		CallbackUrl:            a.CallbackURL,
		MinimumTransactionCoin: t.MinTransaction.String(),
		Priority:               a.Priority,
		RequiredConfirmations:  a.RequiredConfirmations,
	}, nil
}

// addressOut renders destinations as the address -> share map. Shares have
// at most 8 decimal places, so the float64 rendering is exact.
func addressOut(dests []schema.Destination) (map[string]float64, error) {
	out := make(map[string]float64, len(dests))
	for _, d := range dests {
		f, _ := d.Share.Float64()
		if !decimal.NewFromFloat(f).Equal(d.Share) {
			return nil, fmt.Errorf("share %s of %s is not representable", d.Share, d.Address)
		}
		out[d.Address] = f
	}
	return out, nil
}

// GetLogs implements payhookv1.AddressServiceServer.
func (s *AddressServer) GetLogs(ctx context.Context, req *payhookv1.GetLogsRequest) (*payhookv1.GetLogsResponse, error) {
	keyID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	logs, err := s.addresses.Logs(ctx, keyID, req.GetTicker(), req.GetCallback())
	if err != nil {
		return nil, err
	}
	a := logs.Address
	out, err := addressOut(a.Destinations)
	if err != nil {
		return nil, err
	}
	resp := &payhookv1.GetLogsResponse{
		CallbackUrl:         a.CallbackURL,
		AddressIn:           a.AddressIn,
		AddressOut:          out,
		NotifyConfirmations: a.RequiredConfirmations,
		Callbacks:           make([]*payhookv1.CallbackLog, 0, len(logs.Payments)),
	}
	for _, p := range logs.Payments {
		resp.Callbacks = append(resp.Callbacks, callbackLog(p, logs.Notifications[p.ID]))
	}
	return resp, nil
}

func callbackLog(p *entdb.Payment, notifications []*entdb.Notification) *payhookv1.CallbackLog {
	cl := &payhookv1.CallbackLog{
		TxidIn:        p.TxidIn,
		ValueCoin:     p.ValueCoin.String(),
		Confirmations: int32(min(p.Confirmations, 1<<31-1)),
		PaymentStatus: p.Status.String(),
		Note:          p.Note,
		LastUpdate:    timestamppb.New(p.UpdatedAt),
		Logs:          []*payhookv1.DeliveryAttempt{},
		Deliveries:    []*payhookv1.Delivery{},
	}
	if p.TxidOut != "" {
		cl.TxidOut = &p.TxidOut
	}
	if p.ValueForwardedCoin != nil {
		v := p.ValueForwardedCoin.String()
		cl.ValueForwardedCoin = &v
	}
	for _, n := range notifications {
		d := &payhookv1.Delivery{
			Uuid:          n.UUID,
			PaymentStatus: address.StatusOf(n.Event),
			Status:        n.Status.String(),
			Attempts:      int32(n.Attempts),
			ExpiresAt:     timestamppb.New(n.ExpiresAt),
			CreatedAt:     timestamppb.New(n.CreatedAt),
		}
		if n.NextAttemptAt != nil {
			d.NextAttemptAt = timestamppb.New(*n.NextAttemptAt)
		}
		cl.Deliveries = append(cl.Deliveries, d)
		for _, at := range n.Edges.DeliveryAttempts {
			cl.Logs = append(cl.Logs, attemptLog(n, at, address.StatusOf(n.Event)))
		}
	}
	return cl
}

// attemptLog is one attempt of notification n as the logs list it; status
// is what n reports.
func attemptLog(n *entdb.Notification, at *entdb.DeliveryAttempt, status string) *payhookv1.DeliveryAttempt {
	l := &payhookv1.DeliveryAttempt{
		Uuid:          n.UUID,
		Attempt:       int32(at.Number),
		PaymentStatus: status,
		RequestMethod: at.RequestMethod,
		RequestUrl:    at.RequestURL,
		StartedAt:     timestamppb.New(at.StartedAt),
		ResponseBody:  at.ResponseBody,
		Error:         at.Error,
		Outcome:       at.Outcome.String(),
		DurationMs:    int32(min(at.DurationMs, 1<<31-1)),
	}
	if at.FinishedAt != nil {
		l.FinishedAt = timestamppb.New(*at.FinishedAt)
	}
	if at.ResponseStatus != nil {
		rs := int32(*at.ResponseStatus)
		l.ResponseStatus = &rs
	}
	if at.NextAttemptAt != nil {
		l.NextAttemptAt = timestamppb.New(*at.NextAttemptAt)
	}
	return l
}

// GetPublicKey implements payhookv1.AddressServiceServer: the server's key
// without an API key, the key's project's keys with one. The method is
// public, so the key is resolved here; a key that is sent must be valid
// (an unknown one is refused rather than answered with a key that would
// not verify the caller's callbacks).
func (s *AddressServer) GetPublicKey(ctx context.Context, _ *payhookv1.GetPublicKeyRequest) (*payhookv1.GetPublicKeyResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(interceptor.APIKeyMetadata)
	if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
		pub, err := s.pubkeys.ServerPublic()
		if err != nil {
			return nil, err
		}
		return &payhookv1.GetPublicKeyResponse{Pubkey: pub}, nil
	}
	k, err := s.keys.ResolveAPIKey(ctx, strings.TrimSpace(vals[0]))
	if errors.Is(err, interceptor.ErrUnknownKey) {
		return nil, status.Error(codes.Unauthenticated, "unknown api key: send a valid key for your project's callback key, or none for the server's")
	}
	if err != nil {
		return nil, fmt.Errorf("resolve api key: %w", err)
	}
	pk, err := s.pubkeys.Public(ctx, k.ProjectID)
	if err != nil {
		return nil, err
	}
	resp := &payhookv1.GetPublicKeyResponse{Pubkey: pk.PEM, PreviousPubkey: pk.PreviousPEM}
	if pk.PreviousPEM != "" {
		resp.PreviousUntil = timestamppb.New(pk.PreviousUntil)
	}
	return resp, nil
}

// GetInfo implements payhookv1.AddressServiceServer.
func (s *AddressServer) GetInfo(_ context.Context, req *payhookv1.GetInfoRequest) (*payhookv1.GetInfoResponse, error) {
	if req.GetTicker() != "" {
		t, err := s.addresses.Lookup(req.GetTicker())
		if err != nil {
			return nil, err
		}
		return &payhookv1.GetInfoResponse{Coins: []*payhookv1.CoinInfo{coinInfo(t)}}, nil
	}
	all := s.addresses.Registry().All()
	resp := &payhookv1.GetInfoResponse{Coins: make([]*payhookv1.CoinInfo, 0, len(all))}
	for _, t := range all {
		resp.Coins = append(resp.Coins, coinInfo(t))
	}
	return resp, nil
}

func coinInfo(t chains.Ticker) *payhookv1.CoinInfo {
	return &payhookv1.CoinInfo{
		Ticker:                 t.Coin,
		Network:                t.Network,
		TickerPath:             t.Ticker,
		Family:                 string(t.Family),
		Token:                  t.Token,
		Contract:               t.Contract,
		Decimals:               t.Decimals,
		DefaultConfirmations:   t.DefaultConfirmations,
		MinimumConfirmations:   t.MinConfirmations,
		MinimumTransactionCoin: t.MinTransaction.String(),
		FeeRate:                t.FeeRate.String(),
		NetworkFeeEstimation:   t.NetworkFeeEstimate.String(),
	}
}

// GetQrCode implements payhookv1.AddressServiceServer.
func (s *AddressServer) GetQrCode(_ context.Context, req *payhookv1.GetQrCodeRequest) (*payhookv1.GetQrCodeResponse, error) {
	t, err := s.addresses.Lookup(req.GetTicker())
	if err != nil {
		return nil, err
	}
	q, err := address.ParseQRCode(t, req.GetAddress(), req.GetValue(), req.Size)
	if err != nil {
		return nil, err
	}
	png, err := address.DrawQRCode(q)
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetQrCodeResponse{
		QrCode:     base64.StdEncoding.EncodeToString(png),
		PaymentUri: q.URI,
	}, nil
}

// EstimateFee implements payhookv1.AddressServiceServer.
func (s *AddressServer) EstimateFee(_ context.Context, req *payhookv1.EstimateFeeRequest) (*payhookv1.EstimateFeeResponse, error) {
	t, err := s.addresses.Lookup(req.GetTicker())
	if err != nil {
		return nil, err
	}
	est, err := address.EstimateFee(t, s.prices, req.Addresses, req.GetPriority())
	if err != nil {
		return nil, err
	}
	return &payhookv1.EstimateFeeResponse{
		EstimatedCost:         est.Cost.String(),
		EstimatedCostCurrency: est.Fiat,
	}, nil
}

// Convert implements payhookv1.AddressServiceServer.
func (s *AddressServer) Convert(_ context.Context, req *payhookv1.ConvertRequest) (*payhookv1.ConvertResponse, error) {
	t, err := s.addresses.Lookup(req.GetTicker())
	if err != nil {
		return nil, err
	}
	c, err := address.Convert(t, s.addresses.Lookup, s.prices, req.GetValue(), req.GetFrom())
	if err != nil {
		return nil, err
	}
	return &payhookv1.ConvertResponse{
		ValueCoin:    c.ValueCoin.String(),
		ExchangeRate: c.ExchangeRate.String(),
	}, nil
}

// CreatePayout implements payhookv1.AddressServiceServer.
func (s *AddressServer) CreatePayout(ctx context.Context, req *payhookv1.CreatePayoutRequest) (*payhookv1.CreatePayoutResponse, error) {
	key, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.addresses.RequestPayout(ctx, key.ID, key.ProjectID, req.GetTicker(), req.GetAddress(), req.GetValue())
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreatePayoutResponse{
		PayoutId:     p.UUID,
		PayoutStatus: p.Status.String(),
		Address:      p.Address,
		Value:        p.Value.String(),
		CreatedAt:    timestamppb.New(p.CreatedAt),
	}, nil
}
