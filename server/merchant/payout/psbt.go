package payout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo/psbt"
	"github.com/payhook/payhook/chains/watchonly"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// PSBTNode is what a payout from a merchant's watch-only key asks of its
// coin's node (chains/utxo/bitcoind.Backend).
type PSBTNode interface {
	// Unspent returns an output's value (base units) and script while the
	// node's UTXO set holds it; ok false once spent.
	Unspent(ctx context.Context, txid string, vout uint32) (value int64, script []byte, ok bool, err error)
	// RawTransaction returns a transaction as serialized.
	RawTransaction(ctx context.Context, txid string) ([]byte, error)
	// FeeRate is the fee rate in base units per virtual byte.
	FeeRate(ctx context.Context) (int64, error)
}

// Errors of PSBT payouts.
var (
	// ErrPSBTUnsupported is a PSBT payout of a coin that has none: an
	// account chain, or a coin without a node that prepares them.
	ErrPSBTUnsupported = kind.New(kind.Invalid, "payouts of this coin cannot be signed as a PSBT")
	// ErrNoPSBT is a payout that has no PSBT waiting for a signature.
	ErrNoPSBT = kind.New(kind.Conflict, "the payout has no PSBT waiting for a signature")
	// ErrBadPSBT is an uploaded PSBT that is not the payout's, signed.
	ErrBadPSBT = kind.New(kind.Invalid, "psbt")
)

// watchKeyOf returns the project's watch-only key of t, if it has one.
func watchKeyOf(ctx context.Context, tx *entdb.Tx, projectID int64, t chains.Ticker) (*entdb.WatchKey, error) {
	pr, err := tx.Project.Get(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("project %d: %w", projectID, err)
	}
	id, ok := pr.WatchKeys[t.Ticker]
	if !ok {
		return nil, nil
	}
	wk, err := tx.WatchKey.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("watch key of %s: %w", t.Ticker, err)
	}
	return wk, nil
}

// planPSBT prepares payout p of a project whose wallet of t is the
// merchant's watch-only key wk, within tx: a PSBT spending the merchant's
// payments payhook received on the key's addresses that the node still
// holds unspent (largest first, as few as cover the outputs and the
// network's fee at the node's rate), its change to the key's next change
// address KEY/1/c. The transaction is recorded awaiting the merchant's
// signature (outbound payout_psbt) and the payout is processing; nothing
// is journaled until it is sent (nothing moved). The operator's payout
// fee is owed, not deducted.
func (s *Service) planPSBT(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker, wk *entdb.WatchKey) error {
	if !t.Rules().SpendsSeveralAddresses(t) {
		return fmt.Errorf("%w: %s is an account chain; pay out from your own wallet", ErrPSBTUnsupported, t.Ticker)
	}
	node, ok := s.cfg.PSBTNodes[t.Ticker]
	if !ok {
		return fmt.Errorf("%w: %s has no node here that prepares PSBTs", ErrPSBTUnsupported, t.Ticker)
	}
	key, err := watchonly.Parse(t, wk.Descriptor)
	if err != nil {
		return fmt.Errorf("stored watch key of %s: %w", t.Ticker, err)
	}
	if !key.HasOrigin() {
		// Hardware wallets find their key in a PSBT by the master key's
		// fingerprint and the full path, which a bare xpub does not carry.
		return fmt.Errorf("%w: the project's %s key has no key origin: set it again as a descriptor with its origin, e.g. wpkh([fingerprint/84h/0h/0h]xpub.../0/*), as your wallet exports it (the same key continues where it stopped), so your wallet can find its key in the PSBT", ErrPSBTUnsupported, t.Ticker)
	}
	rs, err := requestsOf(ctx, tx, []*entdb.Payout{p})
	if err != nil {
		return err
	}
	var outs []psbt.Output
	var chainOuts []chains.Output
	for _, r := range rs[p.ID] {
		u, ok := ledger.Units(t, r.Value)
		if !ok {
			return fmt.Errorf("payout request %d: %s is not a whole number of base units", r.ID, r.Value)
		}
		outs = append(outs, psbt.Output{Address: r.Address, Amount: u.IntPart()})
		chainOuts = append(chainOuts, chains.Output{Address: r.Address, Amount: r.Value})
	}
	candidates, err := s.psbtCandidates(ctx, tx, p.ProjectID, t, wk)
	if err != nil {
		return err
	}
	rate, err := node.FeeRate(ctx)
	if err != nil {
		return fmt.Errorf("%s fee rate: %w", t.Ticker, err)
	}
	wk, err = tx.WatchKey.UpdateOneID(wk.ID).AddNextChange(1).SetUpdatedAt(s.cfg.Now()).Save(ctx)
	if err != nil {
		return fmt.Errorf("change index of watch key %d: %w", wk.ID, err)
	}
	change := uint32(wk.NextChange - 1)
	var inputs []psbt.UTXO
	var spent []*entdb.Payment
	have := decimal.Zero
	for _, pm := range candidates {
		value, script, ok, err := node.Unspent(ctx, pm.TxidIn, uint32(pm.OutputIndex))
		if err != nil {
			return fmt.Errorf("is %s:%d unspent: %w", pm.TxidIn, pm.OutputIndex, err)
		}
		if !ok {
			continue // spent from the merchant's wallet
		}
		u := psbt.UTXO{TxID: pm.TxidIn, Vout: uint32(pm.OutputIndex), Value: value, Script: script, Index: uint32(*pm.Edges.Address.WatchIndex)}
		if key.Script() == watchonly.P2PKH {
			if u.PrevTx, err = node.RawTransaction(ctx, pm.TxidIn); err != nil {
				return fmt.Errorf("funding transaction %s: %w", pm.TxidIn, err)
			}
		}
		inputs, spent = append(inputs, u), append(spent, pm)
		have = have.Add(ledger.Coins(t, decimal.NewFromInt(value)))
		prep, err := psbt.Prepare(psbt.Request{Key: key, Inputs: inputs, Outputs: outs, ChangeIndex: change, FeeRate: rate})
		if errors.Is(err, psbt.ErrInsufficient) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadPSBT, err)
		}
		return s.recordPSBT(ctx, tx, p, t, wk, spent, chainOuts, prep)
	}
	fee := ledger.Coins(t, decimal.NewFromInt(rate*int64(110+len(outs)*43)))
	return &InsufficientError{Ticker: t.Ticker, Balance: have, Needed: p.TotalRequested.Add(fee), Requested: p.TotalRequested, NetworkFee: fee}
}

// psbtCandidates are the payments a PSBT payout of wk may spend, largest
// first: completed payments to the key's addresses that no processing or
// done payout of the project spends.
func (s *Service) psbtCandidates(ctx context.Context, tx *entdb.Tx, projectID int64, t chains.Ticker, wk *entdb.WatchKey) ([]*entdb.Payment, error) {
	ps, err := tx.Payment.Query().
		Where(entpayment.Ticker(t.Ticker), entpayment.StatusEQ(entpayment.StatusCompleted), entpayment.HoldReasonEQ(entpayment.HoldReasonNone),
			entpayment.HasAddressWith(entaddress.WatchKeyID(wk.ID))).
		WithAddress().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payments of watch key %d: %w", wk.ID, err)
	}
	busy, err := tx.Payout.Query().
		Where(entpayout.ProjectID(projectID), entpayout.Ticker(t.Ticker), entpayout.StatusIn(entpayout.StatusProcessing, entpayout.StatusDone)).
		Select(entpayout.FieldInputs).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payouts of %s: %w", t.Ticker, err)
	}
	used := map[int64]bool{}
	for _, b := range busy {
		for _, in := range b.Inputs {
			used[in.PaymentID] = true
		}
	}
	ps = slices.DeleteFunc(ps, func(p *entdb.Payment) bool { return used[p.ID] || p.Edges.Address.WatchIndex == nil })
	slices.SortFunc(ps, func(a, b *entdb.Payment) int { return cmp.Or(b.ValueCoin.Cmp(a.ValueCoin), cmp.Compare(a.ID, b.ID)) })
	return ps, nil
}

// recordPSBT records prepared payout p within tx: its transaction awaiting
// the merchant's signature, and p processing with its fees and inputs.
func (s *Service) recordPSBT(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker, wk *entdb.WatchKey, spent []*entdb.Payment, outs []chains.Output, prep *psbt.Prepared) error {
	transfers := make([]chains.Transfer, len(spent))
	inputs := make([]schema.PayoutInput, len(spent))
	for i, pm := range spent {
		transfers[i] = chains.Transfer{TxID: pm.TxidIn, Index: pm.OutputIndex, To: pm.Edges.Address.AddressIn, Value: pm.ValueCoin}
		inputs[i] = schema.PayoutInput{PaymentID: pm.ID, AddressID: pm.AddressID, Value: pm.ValueCoin}
	}
	networkFee := ledger.Coins(t, decimal.NewFromInt(prep.Fee))
	from := "psbt:" + strconv.FormatInt(wk.ID, 10)
	o, err := s.engine.PlanExternal(ctx, tx, outbound.Intent{
		Key: "payout:" + strconv.FormatInt(p.ID, 10), Ticker: t, Purpose: outbound.PurposePayoutPSBT, ProjectID: p.ProjectID,
		From: from, Inputs: transfers, Outputs: outs, NetworkFee: networkFee,
	}, prep.PSBT)
	if err != nil {
		return fmt.Errorf("plan payout %d: %w", p.ID, err)
	}
	now := s.cfg.Now()
	return tx.Payout.UpdateOne(p).SetStatus(entpayout.StatusProcessing).
		SetFee(s.feeOf(t, p.TotalRequested)).SetBlockchainFee(networkFee).SetFromAddress(from).
		SetInputs(inputs).SetOutboundID(o.ID).SetQueuedAt(now).SetUpdatedAt(now).Exec(ctx)
}

// PSBT is a payout's transaction as the merchant signs it.
type PSBT struct {
	// Payout is the payout.
	Payout *entdb.Payout
	// PSBT is the unsigned PSBT (BIP 174, binary).
	PSBT []byte
	// Outputs are what it pays (the payout's destinations).
	Outputs []schema.Output
	// NetworkFee is the network's fee it pays, in coin units.
	NetworkFee decimal.Decimal
	// Signed reports that the merchant's signed one was accepted.
	Signed bool
	// TxID is the transaction's id once signed.
	TxID string
}

// GetPSBT returns the caller's payout id's PSBT to sign (or, once signed,
// the one it was prepared from).
func (s *Service) GetPSBT(ctx context.Context, c Caller, id int64) (*PSBT, error) {
	p, err := s.get(ctx, s.db.Client, c, id)
	if err != nil {
		return nil, err
	}
	o, err := s.psbtOutbound(ctx, s.db.Client, p)
	if err != nil {
		return nil, err
	}
	return &PSBT{Payout: p, PSBT: *o.Psbt, Outputs: o.Outputs, NetworkFee: o.NetworkFee, Signed: o.State != entoutbound.StateAwaitingSignature, TxID: o.Txid}, nil
}

// psbtOutbound returns payout p's transaction signed as a PSBT.
func (s *Service) psbtOutbound(ctx context.Context, c *entdb.Client, p *entdb.Payout) (*entdb.Outbound, error) {
	if p.OutboundID == nil {
		return nil, fmt.Errorf("%w: payout %d is %s", ErrNoPSBT, p.ID, p.Status)
	}
	o, err := c.Outbound.Get(ctx, *p.OutboundID)
	if err != nil {
		return nil, fmt.Errorf("transaction of payout %d: %w", p.ID, err)
	}
	if o.Purpose != outbound.PurposePayoutPSBT || o.Psbt == nil {
		return nil, fmt.Errorf("%w: payout %d is sent from payhook's own wallet", ErrNoPSBT, p.ID)
	}
	return o, nil
}

// SubmitPSBT takes the merchant's signed PSBT of the caller's payout id:
// it must pay exactly what the prepared one does, every input signed with
// SIGHASH_ALL (psbt.Check); then its bytes are recorded and it is sent and
// followed as any payout (done once the network accepts it). A PSBT that
// differs, is not fully signed or is not one is refused with why, and
// nothing changes; a second upload after one was accepted is ErrNoPSBT.
func (s *Service) SubmitPSBT(ctx context.Context, c Caller, id int64, signed []byte) (*Info, error) {
	p, err := s.get(ctx, s.db.Client, c, id)
	if err != nil {
		return nil, err
	}
	t, err := s.ticker(p.Ticker)
	if err != nil {
		return nil, err
	}
	o, err := s.psbtOutbound(ctx, s.db.Client, p)
	if err != nil {
		return nil, err
	}
	if o.State != entoutbound.StateAwaitingSignature {
		return nil, fmt.Errorf("%w: payout %d was signed already (transaction %s)", ErrNoPSBT, p.ID, o.Txid)
	}
	raw, err := psbt.Check(*o.Psbt, signed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPSBT, err)
	}
	txid, err := psbt.TxID(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPSBT, err)
	}
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		o, err = s.engine.RecordSigned(ctx, tx, o.ID, raw, txid)
		if errors.Is(err, outbound.ErrNotAwaiting) {
			return fmt.Errorf("%w: payout %d was signed already", ErrNoPSBT, p.ID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	s.send(ctx, t, []*entdb.Outbound{o})
	return s.Status(ctx, c, id)
}

// psbtHandler completes payouts signed as PSBTs when the engine's
// payout_psbt transactions change state.
type psbtHandler struct{ h handler }

var _ outbound.Handler = psbtHandler{}

// Sent: the payouts are done; the journal moves what left the merchant's
// wallet to the destinations and the network, and the payout fee owed.
func (ph psbtHandler) Sent(ctx context.Context, tx *entdb.Tx, t chains.Ticker, sent []*entdb.Outbound) error {
	s := ph.h.s
	now := s.cfg.Now()
	for _, o := range sent {
		ps, err := payoutsOf(ctx, tx, o)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Status != entpayout.StatusProcessing {
				continue
			}
			e := ledger.PayoutPSBTSend(t, ledger.Ref{ProjectID: p.ProjectID, OutboundID: o.ID}, p.TotalRequested, p.Fee, p.BlockchainFee)
			if err := ledger.Write(ctx, tx, s.db.Dialect, now, e); err != nil {
				return err
			}
			if err := ph.h.done(ctx, tx, t, p, o.Txid); err != nil {
				return err
			}
		}
	}
	return nil
}

// Replaced: a signed PSBT is never replaced (payhook cannot sign another);
// the payouts follow the transaction that takes its place all the same.
func (ph psbtHandler) Replaced(ctx context.Context, tx *entdb.Tx, old, next *entdb.Outbound) error {
	return ph.h.Replaced(ctx, tx, old, next)
}

// Failed: the merchant's transaction can never be sent (an input was
// spent from their wallet meanwhile, say): nothing moved, so nothing is
// journaled; the payouts are error and their requests rejected.
func (ph psbtHandler) Failed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, cause error) error {
	ps, err := payoutsOf(ctx, tx, o)
	if err != nil {
		return err
	}
	return ph.h.fail(ctx, tx, t, ps, "the signed transaction could not be sent: "+cause.Error())
}

// Bounced cannot happen: UTXO transactions do not fail in a block.
func (ph psbtHandler) Bounced(context.Context, *entdb.Tx, chains.Ticker, *entdb.Outbound) error {
	return errors.New("a PSBT payout cannot bounce: UTXO transactions do not fail in a block")
}
