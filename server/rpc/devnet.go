package rpc

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
)

// DevnetServer implements payhookv1.DevnetServiceServer over the simulated
// chains of a --dev server.
type DevnetServer struct {
	payhookv1.UnimplementedDevnetServiceServer

	devnet *devnet.Devnet
	// changed runs after every change of a chain: it wakes the chain's
	// watcher, which applies the change in the background, so Mine answers
	// once the block exists (a server with ManualDelivery polls here instead,
	// and the payments and callbacks are stored when the call returns).
	changed func(ctx context.Context, ticker string) error
}

// NewDevnetServer returns the devnet control service.
func NewDevnetServer(d *devnet.Devnet, changed func(ctx context.Context, ticker string) error) *DevnetServer {
	return &DevnetServer{devnet: d, changed: changed}
}

func (s *DevnetServer) chain(ticker string) (*devnet.Chain, error) {
	c, ok := s.devnet.Chain(strings.ToLower(ticker))
	if !ok {
		return nil, status.Errorf(codes.NotFound, "%v: %s", chains.ErrUnknownTicker, ticker)
	}
	return c, nil
}

// Pay implements payhookv1.DevnetServiceServer.
func (s *DevnetServer) Pay(ctx context.Context, req *payhookv1.PayRequest) (*payhookv1.PayResponse, error) {
	c, err := s.chain(req.GetTicker())
	if err != nil {
		return nil, err
	}
	v, err := decimal.NewFromString(req.GetValueCoin())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "value_coin: %q is not a decimal number", req.GetValueCoin())
	}
	txid, err := c.Pay(req.GetAddressIn(), v, req.GetFailExecution())
	if err != nil {
		return nil, err
	}
	if err := s.changed(ctx, c.Ticker().Ticker); err != nil {
		return nil, err
	}
	return &payhookv1.PayResponse{TxidIn: txid}, nil
}

// Mine implements payhookv1.DevnetServiceServer.
func (s *DevnetServer) Mine(ctx context.Context, req *payhookv1.MineRequest) (*payhookv1.MineResponse, error) {
	c, err := s.chain(req.GetTicker())
	if err != nil {
		return nil, err
	}
	n := 1
	if req.Blocks != nil {
		n = int(req.GetBlocks())
	}
	h, err := c.Mine(n)
	if err != nil {
		return nil, err
	}
	if err := s.changed(ctx, c.Ticker().Ticker); err != nil {
		return nil, err
	}
	return &payhookv1.MineResponse{Height: int32(min(h, 1<<31-1))}, nil
}

// Reorg implements payhookv1.DevnetServiceServer.
func (s *DevnetServer) Reorg(ctx context.Context, req *payhookv1.ReorgRequest) (*payhookv1.ReorgResponse, error) {
	c, err := s.chain(req.GetTicker())
	if err != nil {
		return nil, err
	}
	h, err := c.Reorg(int(req.GetDepth()))
	if err != nil {
		return nil, err
	}
	if err := s.changed(ctx, c.Ticker().Ticker); err != nil {
		return nil, err
	}
	return &payhookv1.ReorgResponse{Height: int32(min(h, 1<<31-1))}, nil
}
