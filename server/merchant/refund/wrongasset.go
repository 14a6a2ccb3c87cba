package refund

import (
	"context"
	"fmt"
	"strings"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/merchant/payout"
)

// ErrNotWrongAsset reports a txid_in that is no payment of the project held
// as wrong_asset.
var ErrNotWrongAsset = kind.New(kind.NotFound, "wrong-asset payment not found",
	kind.Public("txid_in: no payment of this project in this coin is held as wrong_asset"))

// Forwarder forwards a credited payment (payment.Service.Forward).
type Forwarder interface {
	Forward(ctx context.Context, t chains.Ticker, paymentID int64) error
}

// wrongAsset returns the caller's payment of coin with txid_in held as
// wrong_asset, with its address, and its ticker.
func (s *Service) wrongAsset(ctx context.Context, c payout.Caller, coin, txidIn string) (*entdb.Payment, chains.Ticker, error) {
	if txidIn == "" {
		return nil, chains.Ticker{}, address.Invalid("txid_in", "is required")
	}
	t, err := s.payouts.Ticker(strings.Replace(coin, "_", "/", 1)) // erc20_usdt as the family's libraries name it
	if err != nil {
		return nil, t, err
	}
	p, err := s.db.Client.Payment.Query().
		Where(entpayment.TxidIn(txidIn), entpayment.Ticker(t.Ticker), entpayment.HoldReasonEQ(entpayment.HoldReasonWrongAsset),
			entpayment.HasAddressWith(entaddress.ProjectID(c.ProjectID))).
		WithAddress().First(ctx)
	if entdb.IsNotFound(err) {
		return nil, t, fmt.Errorf("%w: %s", ErrNotWrongAsset, address.Truncate(txidIn))
	}
	if err != nil {
		return nil, t, fmt.Errorf("payment %s: %w", address.Truncate(txidIn), err)
	}
	if p.Status != entpayment.StatusConfirmed || p.Reorged {
		return nil, t, address.Invalid("txid_in", "the payment is %s: only a credited payment is forwarded or refunded", p.Status)
	}
	return p, t, nil
}

// ForwardWrongAsset forwards the caller's payment held as wrong_asset to
// its address's destinations, as a payment of its own coin (the address's
// wallets receive the asset on the same chain). It answers once the
// forward is planned: one not sent yet (a token's gas top-up first) is
// finished by the engine, and the payment is completed then. An address without a
// destination cannot forward it: refund it, or it joins the payout balance
// (RefundWrongAsset, the payout API).
func (s *Service) ForwardWrongAsset(ctx context.Context, c payout.Caller, fwd Forwarder, coin, txidIn string) (*entdb.Payment, error) {
	p, t, err := s.wrongAsset(ctx, c, coin, txidIn)
	if err != nil {
		return nil, err
	}
	a := p.Edges.Address
	if len(a.Destinations) == 0 {
		return nil, address.Invalid("txid_in", "its address %s has no forwarding destination: refund it (/wrong_asset/refund/)", a.AddressIn)
	}
	now := s.now()
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		n, err := tx.Payment.Update().Where(entpayment.ID(p.ID), entpayment.HoldReasonEQ(entpayment.HoldReasonWrongAsset)).
			SetHoldReason(entpayment.HoldReasonNone).SetNote("released by the merchant from wrong_asset: forwarded as " + t.Ticker).
			SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("release payment %d: %w", p.ID, err)
		}
		if n != 1 {
			return kind.New(kind.Aborted, "the payment was released meanwhile")
		}
		return ledger.Write(ctx, tx, s.db.Dialect, now, ledger.Release(t, ledger.Ref{ProjectID: a.ProjectID, PaymentID: p.ID, AddressID: a.ID}, p.ValueCoin))
	})
	if err != nil {
		return nil, err
	}
	ferr := fwd.Forward(ctx, t, p.ID)
	got, err := s.db.Client.Payment.Query().Where(entpayment.ID(p.ID)).WithForward().Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("payment %d: %w", p.ID, err)
	}
	if ferr != nil && got.Edges.Forward == nil {
		return nil, fmt.Errorf("forward payment %d: %w", p.ID, ferr)
	}
	// A forward planned and not sent yet (a token's gas top-up must be in a
	// block first) is finished by the engine: the payment answers as it is.
	return got, nil
}

// RefundWrongAsset sends the caller's payment held as wrong_asset to addr,
// value of it (default: all of it less the fees of sending it, Spend): a payout of one request that spends the payment
// first (released into the project's balance by the transaction that
// queues it). An invoice's payment may also be refunded as any invoice
// payment (/checkout/refund/).
func (s *Service) RefundWrongAsset(ctx context.Context, c payout.Caller, coin, txidIn, addr, value string) (*payout.Info, error) {
	p, t, err := s.wrongAsset(ctx, c, coin, txidIn)
	if err != nil {
		return nil, err
	}
	v, err := s.payouts.Spend(ctx, t, p.ValueCoin)
	if err != nil {
		return nil, err
	}
	if value != "" {
		if v, err = address.ParseAmount("value", value, t.Decimals); err != nil {
			return nil, err
		}
		if v.Sign() <= 0 || v.GreaterThan(p.ValueCoin) {
			return nil, address.Invalid("value", "must be positive and at most the payment's %s %s", p.ValueCoin, t.Ticker)
		}
	}
	if addr == "" {
		return nil, address.Invalid("address", "is required: where the refund goes")
	}
	if v.Sign() <= 0 {
		return nil, address.Invalid("txid_in", "the payment's %s %s would not cover the network's fees to send it back", p.ValueCoin, t.Ticker)
	}
	return s.payouts.Pay(ctx, c, t.Ticker, payout.Output{Address: addr, Amount: v.String()}, p.ID,
		func(ctx context.Context, tx *entdb.Tx, po *entdb.Payout) error {
			n, err := tx.Payment.Update().Where(entpayment.ID(p.ID), entpayment.HoldReasonEQ(entpayment.HoldReasonWrongAsset)).
				SetHoldReason(entpayment.HoldReasonNoWallet).SetNote("released by the merchant from wrong_asset for its refund").
				SetUpdatedAt(po.CreatedAt).Save(ctx)
			if err != nil {
				return fmt.Errorf("release payment %d: %w", p.ID, err)
			}
			if n != 1 {
				return kind.New(kind.Aborted, "the payment was released meanwhile")
			}
			return nil
		})
}

// WrongAssets returns the project's credited payments held as wrong_asset,
// oldest first, with their addresses (the dashboard's list to forward or
// refund).
func (s *Service) WrongAssets(ctx context.Context, projectID int64) ([]*entdb.Payment, error) {
	ps, err := s.db.Client.Payment.Query().
		Where(entpayment.HoldReasonEQ(entpayment.HoldReasonWrongAsset), entpayment.StatusEQ(entpayment.StatusConfirmed),
			entpayment.HasAddressWith(entaddress.ProjectID(projectID))).
		WithAddress().Order(entdb.Asc(entpayment.FieldID)).Limit(payout.PageSize).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("wrong-asset payments: %w", err)
	}
	return ps, nil
}
