package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
)

// devnetCmd drives a --dev server's simulated chains over gRPC.
func devnetCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: payhook devnet pay|mine|reorg --ticker T [flags]")
	}
	fs := newFlagSet("payhook devnet "+args[0], stderr)
	addr := fs.String("server", "localhost:9090", "payhook gRPC address")
	ticker := fs.String("ticker", "", "ticker of the chain, e.g. btc or trc20/usdt (required)")
	var call func(payhookv1.DevnetServiceClient) (string, error)
	switch args[0] {
	case "pay":
		to := fs.String("address", "", "payment address (address_in) to pay (required)")
		amount := fs.String("amount", "", "amount in coin units, e.g. 0.01 (required)")
		fail := fs.Bool("fail-execution", false, "EVM and TRON: the transaction fails on execution")
		call = func(c payhookv1.DevnetServiceClient) (string, error) {
			r, err := c.Pay(ctx, &payhookv1.PayRequest{Ticker: *ticker, AddressIn: *to, ValueCoin: *amount, FailExecution: *fail})
			return "txid_in " + r.GetTxidIn(), err
		}
	case "mine":
		blocks := fs.Int("blocks", 1, "blocks to mine")
		call = func(c payhookv1.DevnetServiceClient) (string, error) {
			n := int32(*blocks)
			r, err := c.Mine(ctx, &payhookv1.MineRequest{Ticker: *ticker, Blocks: &n})
			return fmt.Sprintf("height %d", r.GetHeight()), err
		}
	case "reorg":
		depth := fs.Int("depth", 1, "newest blocks to drop")
		call = func(c payhookv1.DevnetServiceClient) (string, error) {
			r, err := c.Reorg(ctx, &payhookv1.ReorgRequest{Ticker: *ticker, Depth: int32(*depth)})
			return fmt.Sprintf("height %d", r.GetHeight()), err
		}
	default:
		return fmt.Errorf("unknown devnet command %q: use pay, mine or reorg", args[0])
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("--server: %w", err)
	}
	defer conn.Close()
	out, err := call(payhookv1.NewDevnetServiceClient(conn))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, out)
	return nil
}
