package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"connectrpc.com/connect"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
)

// devnetCmd drives a --dev server's simulated chains over the Connect
// protocol on its HTTP listener (--server).
func devnetCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: payhook devnet pay|mine|reorg --ticker T [flags]")
	}
	fs := newFlagSet("payhook devnet "+args[0], stderr)
	addr := serverFlag(fs)
	ticker := fs.String("ticker", "", "ticker of the chain, e.g. btc or trc20/usdt (required)")
	var call func(base string) (string, error)
	switch args[0] {
	case "pay":
		to := fs.String("address", "", "payment address (address_in) to pay (required)")
		amount := fs.String("amount", "", "amount in coin units, e.g. 0.01 (required)")
		fail := fs.Bool("fail-execution", false, "EVM and TRON: the transaction fails on execution")
		call = func(base string) (string, error) {
			r, err := unary[payhookv1.PayRequest, payhookv1.PayResponse](ctx, base, payhookv1.DevnetService_Pay_FullMethodName,
				&payhookv1.PayRequest{Ticker: *ticker, AddressIn: *to, ValueCoin: *amount, FailExecution: *fail})
			return "txid_in " + r.GetTxidIn(), err
		}
	case "mine":
		blocks := fs.Int("blocks", 1, "blocks to mine")
		call = func(base string) (string, error) {
			n := int32(*blocks)
			r, err := unary[payhookv1.MineRequest, payhookv1.MineResponse](ctx, base, payhookv1.DevnetService_Mine_FullMethodName,
				&payhookv1.MineRequest{Ticker: *ticker, Blocks: &n})
			return fmt.Sprintf("height %d", r.GetHeight()), err
		}
	case "reorg":
		depth := fs.Int("depth", 1, "newest blocks to drop")
		call = func(base string) (string, error) {
			r, err := unary[payhookv1.ReorgRequest, payhookv1.ReorgResponse](ctx, base, payhookv1.DevnetService_Reorg_FullMethodName,
				&payhookv1.ReorgRequest{Ticker: *ticker, Depth: int32(*depth)})
			return fmt.Sprintf("height %d", r.GetHeight()), err
		}
	default:
		return fmt.Errorf("unknown devnet command %q: use pay, mine or reorg", args[0])
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	base, err := serverURL(*addr)
	if err != nil {
		return err
	}
	out, err := call(base)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, out)
	return nil
}

// unary calls the gRPC method fullMethod on the server at base over the
// Connect protocol; an error names base when the server was not reached.
func unary[Req, Res any](ctx context.Context, base, fullMethod string, req *Req) (*Res, error) {
	c := connect.NewClient[Req, Res](newHTTPClient(), procedure(base, fullMethod))
	resp, err := c.CallUnary(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, reachError(base, err)
	}
	return resp.Msg, nil
}
