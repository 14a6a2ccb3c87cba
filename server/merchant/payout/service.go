package payout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/outbound"
)

// PageSize is how many requests or payouts a list answers per page.
const PageSize = 50

// MaxOutputs is the most outputs one payout's transaction pays: far below
// what a standard UTXO transaction carries (100,000 virtual bytes, about
// 3,000 outputs).
const MaxOutputs = 1000

// MaxAccountOutputs is the most outputs one payout pays on an account
// chain (EVM, TRON, Solana), where each output is a transaction of its
// own from the payout wallet with the next nonce: geth's default pool
// keeps 16 executable and 64 queued transactions per account.
const MaxAccountOutputs = 64

// maxOutputs is the most outputs one payout of t pays.
func maxOutputs(t chains.Ticker) int {
	if t.Rules().SpendsSeveralAddresses(t) {
		return MaxOutputs
	}
	return MaxAccountOutputs
}

// Spendable are the hold reasons of the held payments a payout may spend.
var Spendable = []string{schema.HoldNoWallet, schema.HoldBelowMinimum, schema.HoldBelowDust}

// Config configures a Service.
type Config struct {
	// FeePercent is the operator's payout fee, a percentage of a payout's
	// total requested (0 to 100); zero charges none.
	FeePercent decimal.Decimal
	// Queue stores the payout webhooks; nil sends none.
	Queue Enqueuer
	// Interval batches payouts per ticker (--payout-interval, like BTCPay's
	// payout processors): a queued payout waits until the oldest queued
	// payout of its project and coin is that old, then every queued one
	// is sent together (one transaction on UTXO chains). Zero or absent
	// sends each payout as soon as it is queued.
	Interval map[string]time.Duration
	// MinBatch is, per ticker with an Interval, the least total a batch
	// must reach before it is sent (--payout-min-batch); a smaller batch
	// waits for more payouts.
	MinBatch map[string]decimal.Decimal
	// Mail stores the email asking the project's dashboard users to
	// approve a payout that waits for them; nil (email off) sends none.
	Mail *mail.Outbox
	// PSBTNodes are, per UTXO ticker, the node a payout from a merchant's
	// watch-only key is prepared with (its UTXOs, fee rate); a ticker
	// without one refuses such payouts.
	PSBTNodes map[string]PSBTNode
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
}

// Service runs payouts (see the package doc). It is safe for concurrent
// use.
type Service struct {
	db        *store.DB
	addresses *address.Service
	engine    *outbound.Engine
	webhooks  Enqueuer
	cfg       Config
	logger    *slog.Logger
	observers []Observer
}

// New returns a Service sending through engine, and registers its handler
// of payout transactions with engine.
func New(db *store.DB, addresses *address.Service, engine *outbound.Engine, cfg Config, logger *slog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	s := &Service{db: db, addresses: addresses, engine: engine, webhooks: cfg.Queue, cfg: cfg, logger: logger}
	engine.Handle(outbound.PurposePayout, handler{s})
	engine.Handle(outbound.PurposeSweep, sweeper{s})
	engine.Handle(outbound.PurposePayoutPSBT, psbtHandler{handler{s}})
	return s
}

// Caller is who asks: an API key and its project.
type Caller struct {
	APIKeyID, ProjectID int64
}

// Ticker resolves a ticker a payout may use.
func (s *Service) Ticker(name string) (chains.Ticker, error) { return s.ticker(name) }

// ticker resolves a ticker a payout may use.
func (s *Service) ticker(name string) (chains.Ticker, error) {
	return s.addresses.Lookup(name)
}

// Wallet returns the caller's project's payout wallet for ticker, handing it
// out on first use (`/{ticker}/payout/address/`).
func (s *Service) Wallet(ctx context.Context, c Caller, ticker string) (*entdb.Address, error) {
	t, err := s.ticker(ticker)
	if err != nil {
		return nil, err
	}
	return s.addresses.PayoutWallet(ctx, c.APIKeyID, c.ProjectID, t)
}

// heldPayment is a held payment a payout may spend.
type heldPayment struct {
	payment *entdb.Payment
	address *entdb.Address
	value   decimal.Decimal // what the journal holds of it, in coin units
}

// Balance returns the caller's project's spendable payout balance in
// ticker, in coin units (`/{ticker}/payout/balance/`). For a project whose
// wallet of ticker is the merchant's watch-only key, it is what its PSBT
// payouts may spend: the payments payhook received on the key's addresses
// that no payout spent (one the merchant spent from their own wallet is
// counted until a payout finds it spent on the node).
func (s *Service) Balance(ctx context.Context, c Caller, ticker string) (decimal.Decimal, error) {
	t, err := s.ticker(ticker)
	if err != nil {
		return decimal.Zero, err
	}
	var sum decimal.Decimal
	var watched bool
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		wk, err := watchKeyOf(ctx, tx, c.ProjectID, t)
		if err != nil || wk == nil {
			return err
		}
		watched = true
		ps, err := s.psbtCandidates(ctx, tx, c.ProjectID, t, wk)
		for _, p := range ps {
			sum = sum.Add(p.ValueCoin)
		}
		return err
	})
	if err != nil || watched {
		return sum, err
	}
	held, err := spendable(ctx, s.db.Client, c.ProjectID, t)
	if err != nil {
		return decimal.Zero, err
	}
	for _, h := range held {
		sum = sum.Add(h.value)
	}
	return sum, nil
}

// spendable returns the project's held payments of t that a payout may
// spend, largest first: the journal's held lines summed per payment (the
// sums are exact: added as decimals here), of payments held for a
// Spendable reason.
func spendable(ctx context.Context, c *entdb.Client, projectID int64, t chains.Ticker) ([]heldPayment, error) {
	var lines []struct {
		PaymentID *int64          `json:"payment_id"`
		Amount    decimal.Decimal `json:"amount"`
	}
	err := c.LedgerEntry.Query().
		Where(entledger.AccountEQ(entledger.AccountHeld), entledger.ProjectID(projectID), entledger.Ticker(t.Ticker)).
		Select(entledger.FieldPaymentID, entledger.FieldAmount).
		Scan(ctx, &lines)
	if err != nil {
		return nil, fmt.Errorf("held %s of project %d: %w", t.Ticker, projectID, err)
	}
	units := map[int64]decimal.Decimal{}
	for _, l := range lines {
		if l.PaymentID != nil {
			units[*l.PaymentID] = units[*l.PaymentID].Add(l.Amount)
		}
	}
	var ids []int64
	for id, u := range units {
		if u.Sign() > 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	reasons := make([]entpayment.HoldReason, len(Spendable))
	for i, r := range Spendable {
		reasons[i] = entpayment.HoldReason(r)
	}
	ps, err := c.Payment.Query().
		Where(entpayment.IDIn(ids...), entpayment.HoldReasonIn(reasons...)).
		WithAddress().
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("held %s payments of project %d: %w", t.Ticker, projectID, err)
	}
	out := make([]heldPayment, 0, len(ps))
	for _, p := range ps {
		if p.Edges.Address == nil || p.Edges.Address.ProjectID != projectID {
			continue
		}
		out = append(out, heldPayment{payment: p, address: p.Edges.Address, value: ledger.Coins(t, units[p.ID])})
	}
	slices.SortFunc(out, func(a, b heldPayment) int {
		return cmp.Or(b.value.Cmp(a.value), cmp.Compare(a.payment.ID, b.payment.ID))
	})
	return out, nil
}

// Output is one destination and amount of a payout request, as given.
type Output struct {
	Address string
	Amount  string
}

// checkOutputs validates outputs of t: each a valid address of t's network,
// once (by what it pays to, not its spelling), a positive amount within
// t's decimals that the network carries to it; at least one, at most
// MaxOutputs. The error names the output.
func (s *Service) checkOutputs(t chains.Ticker, outputs []Output) ([]chains.Output, error) {
	if len(outputs) == 0 {
		return nil, invalid("outputs", "at least one output (an address and an amount) is required")
	}
	if n := maxOutputs(t); len(outputs) > n {
		return nil, invalid("outputs", "%d outputs are more than one %s payout carries (at most %d)", len(outputs), t.Ticker, n)
	}
	seen := map[string]string{}
	out := make([]chains.Output, 0, len(outputs))
	for _, o := range outputs {
		param := "outputs." + address.Truncate(o.Address)
		if err := chains.ValidateAddress(t, o.Address); err != nil {
			return nil, invalid(param, "%v", err)
		}
		key, err := t.Rules().DestinationKey(t, o.Address)
		if err != nil {
			return nil, invalid(param, "%v", err)
		}
		if first, ok := seen[key]; ok {
			return nil, invalid(param, "pays the same destination as %s: a payout pays each destination once", address.Truncate(first))
		}
		seen[key] = o.Address
		v, err := address.ParseAmount(param, o.Amount, t.Decimals)
		if err != nil {
			return nil, err
		}
		if v.Sign() <= 0 {
			return nil, invalid(param, "the amount must be positive")
		}
		if err := s.engine.Check(t, []chains.Output{{Address: o.Address, Amount: v}}); err != nil {
			var below *outbound.BelowMinimumError
			if errors.As(err, &below) {
				return nil, invalid(param, "%s %s is below the %s %s the network carries to that address", v, t.Ticker, below.Minimum, t.Ticker)
			}
			return nil, err
		}
		out = append(out, chains.Output{Address: o.Address, Amount: v})
	}
	return out, nil
}

// Request records one pending payout request per output
// (`/{ticker}/payout/request/bulk/`) and returns their ids, in the order
// of outputs. Nothing is recorded when an output is invalid.
func (s *Service) Request(ctx context.Context, c Caller, ticker string, outputs []Output) ([]int64, error) {
	t, err := s.ticker(ticker)
	if err != nil {
		return nil, err
	}
	outs, err := s.checkOutputs(t, outputs)
	if err != nil {
		return nil, err
	}
	var ids []int64
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		ids, err = s.request(ctx, tx, c, t, outs)
		return err
	})
	return ids, err
}

func (s *Service) request(ctx context.Context, tx *entdb.Tx, c Caller, t chains.Ticker, outs []chains.Output) ([]int64, error) {
	now := s.cfg.Now()
	ids := make([]int64, len(outs))
	for i, o := range outs {
		r, err := tx.PayoutRequest.Create().
			SetAPIKeyID(c.APIKeyID).SetProjectID(c.ProjectID).SetUUID(uuid.NewString()).
			SetTicker(t.Ticker).SetAddress(o.Address).SetValue(o.Amount).
			SetCreatedAt(now).SetUpdatedAt(now).
			Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("record payout request: %w", err)
		}
		ids[i] = r.ID
	}
	return ids, nil
}

// RequestAndProcess records one request per output, a payout of them, and
// queues it (`/{ticker}/payout/request/bulk/process/`). When the payout
// cannot be queued (not enough balance), nothing is recorded.
func (s *Service) RequestAndProcess(ctx context.Context, c Caller, ticker string, outputs []Output) (*Info, error) {
	return s.requestAndQueue(ctx, c, ticker, outputs, 0, nil)
}

// Pay records one payout request of out, a payout of it, and queues it
// (as RequestAndProcess), calling record within the same database
// transaction before the payout is queued, so that what the caller
// records of it (a refund) commits with it and is there when it ends
// (Observer). prefer, when not 0, is a held payment a UTXO payout planned
// at once spends first. When the payout cannot be queued, nothing is
// recorded.
func (s *Service) Pay(ctx context.Context, c Caller, ticker string, out Output, prefer int64, record func(context.Context, *entdb.Tx, *entdb.Payout) error) (*Info, error) {
	return s.requestAndQueue(ctx, c, ticker, []Output{out}, prefer, record)
}

// requestAndQueue is RequestAndProcess and Pay: record (nil for none) runs
// in the transaction before the payout is queued.
func (s *Service) requestAndQueue(ctx context.Context, c Caller, ticker string, outputs []Output, prefer int64, record func(context.Context, *entdb.Tx, *entdb.Payout) error) (*Info, error) {
	t, err := s.ticker(ticker)
	if err != nil {
		return nil, err
	}
	outs, err := s.checkOutputs(t, outputs)
	if err != nil {
		return nil, err
	}
	wallet, err := s.addresses.PayoutWallet(ctx, c.APIKeyID, c.ProjectID, t)
	if err != nil {
		return nil, err
	}
	var planned []*entdb.Outbound
	var id int64
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		if err := s.lock(ctx, tx, c.ProjectID, t); err != nil {
			return err
		}
		ids, err := s.request(ctx, tx, c, t, outs)
		if err != nil {
			return err
		}
		p, err := s.create(ctx, tx, c, ids)
		if err != nil {
			return err
		}
		id = p.ID
		if record != nil {
			if err := record(ctx, tx, p); err != nil {
				return err
			}
		}
		planned, err = s.queue(ctx, tx, p, t, wallet, "", prefer)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.send(ctx, t, planned)
	return s.Status(ctx, c, id)
}

// Observer is told when a payout ends, within the database transaction
// that records it (a refund follows its payout). An error rolls the change
// back.
type Observer interface {
	// PayoutEnded: p is done (its txid set) or error (its error set).
	PayoutEnded(ctx context.Context, tx *entdb.Tx, t chains.Ticker, p *entdb.Payout) error
}

// Observe adds o to the observers of payouts that end. Add observers
// before the first payout.
func (s *Service) Observe(o Observer) { s.observers = append(s.observers, o) }

// ended tells the observers that p ended.
func (s *Service) ended(ctx context.Context, tx *entdb.Tx, t chains.Ticker, p *entdb.Payout) error {
	for _, o := range s.observers {
		if err := o.PayoutEnded(ctx, tx, t, p); err != nil {
			return err
		}
	}
	return nil
}

// CreatePayout makes a payout of the caller's pending requests ids, all of
// one coin (`/payout/create/`): they become processing, and the payout
// created.
func (s *Service) CreatePayout(ctx context.Context, c Caller, ids []int64) (*Info, error) {
	if len(ids) == 0 {
		return nil, invalid("request_ids", "at least one payout request id is required")
	}
	var id int64
	err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		p, err := s.create(ctx, tx, c, ids)
		if err == nil {
			id = p.ID
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Status(ctx, c, id)
}

func (s *Service) create(ctx context.Context, tx *entdb.Tx, c Caller, ids []int64) (*entdb.Payout, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	rs, err := tx.PayoutRequest.Query().
		Where(payoutrequest.IDIn(ids...), payoutrequest.ProjectID(c.ProjectID)).
		Order(entdb.Asc(payoutrequest.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payout requests: %w", err)
	}
	if len(rs) != len(ids) {
		for _, id := range ids {
			if !slices.ContainsFunc(rs, func(r *entdb.PayoutRequest) bool { return r.ID == id }) {
				return nil, fmt.Errorf("payout request %d: %w", id, ErrRequestNotFound)
			}
		}
	}
	total := decimal.Zero
	for _, r := range rs {
		if r.Status != payoutrequest.StatusPending {
			return nil, invalid("request_ids", "payout request %d is %s, not pending", r.ID, r.Status)
		}
		if r.Ticker != rs[0].Ticker {
			return nil, invalid("request_ids", "payout requests %d (%s) and %d (%s) are of different coins: a payout pays one coin", rs[0].ID, rs[0].Ticker, r.ID, r.Ticker)
		}
		total = total.Add(r.Value)
	}
	if t, err := s.ticker(rs[0].Ticker); err != nil {
		return nil, err
	} else if n := maxOutputs(t); len(rs) > n {
		return nil, invalid("request_ids", "%d requests are more than one %s payout carries (at most %d)", len(rs), t.Ticker, n)
	}
	now := s.cfg.Now()
	p, err := tx.Payout.Create().
		SetProjectID(c.ProjectID).SetAPIKeyID(c.APIKeyID).SetTicker(rs[0].Ticker).
		SetTotalRequested(total).SetCreatedAt(now).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("record payout: %w", err)
	}
	n, err := tx.PayoutRequest.Update().
		Where(payoutrequest.IDIn(ids...), payoutrequest.StatusEQ(payoutrequest.StatusPending)).
		SetStatus(payoutrequest.StatusProcessing).SetPayoutID(p.ID).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("payout requests: %w", err)
	}
	if n != len(ids) {
		return nil, kindAborted("payout requests %v were taken by another payout meanwhile", ids)
	}
	return p, nil
}

// Process queues the caller's created payout id (`/payout/process/`): its
// transaction is planned, its inputs taken from the balance, and it is
// sent. Not enough balance is refused (the payout stays created, nothing
// is taken), naming the balance and the total needed.
func (s *Service) Process(ctx context.Context, c Caller, id int64) (*Info, error) {
	return s.queueOne(ctx, c, id, "")
}

// Approve queues the project's payout id that waits for approval
// (pending_approval), whatever the project's limits, recording approver
// (a dashboard user). Not enough balance is refused as Process refuses it;
// the payout keeps waiting.
func (s *Service) Approve(ctx context.Context, projectID, id int64, approver string) (*Info, error) {
	return s.queueOne(ctx, Caller{ProjectID: projectID}, id, approver)
}

// queueOne queues the caller's payout id (queue, with approver), under the
// lock of its project and coin, and sends what it planned.
func (s *Service) queueOne(ctx context.Context, c Caller, id int64, approver string) (*Info, error) {
	p, err := s.get(ctx, s.db.Client, c, id)
	if err != nil {
		return nil, err
	}
	t, err := s.ticker(p.Ticker)
	if err != nil {
		return nil, err
	}
	wallet, err := s.addresses.PayoutWallet(ctx, p.APIKeyID, c.ProjectID, t)
	if err != nil {
		return nil, err
	}
	var planned []*entdb.Outbound
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		if err := s.lock(ctx, tx, c.ProjectID, t); err != nil {
			return err
		}
		p, err := s.get(ctx, tx.Client(), c, id)
		if err != nil {
			return err
		}
		planned, err = s.queue(ctx, tx, p, t, wallet, approver, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.send(ctx, t, planned)
	return s.Status(ctx, c, id)
}

// needsApproval says which of the project's limits p would pass ("" for
// none): its total above the maximum per payout, or the day's payouts
// (queued since 00:00 UTC, not failed) and p above the maximum per day.
func (s *Service) needsApproval(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker) (string, error) {
	pr, err := tx.Project.Get(ctx, p.ProjectID)
	if err != nil {
		return "", fmt.Errorf("project of payout %d: %w", p.ID, err)
	}
	lim := pr.PayoutLimits[t.Ticker]
	if lim.PerPayout.Sign() > 0 && p.TotalRequested.GreaterThan(lim.PerPayout) {
		return fmt.Sprintf("%s %s is above the maximum per payout of %s %s", p.TotalRequested, t.Ticker, lim.PerPayout, t.Ticker), nil
	}
	if lim.PerDay.Sign() <= 0 {
		return "", nil
	}
	day := s.cfg.Now().UTC().Truncate(24 * time.Hour)
	today, err := tx.Payout.Query().
		Where(entpayout.ProjectID(p.ProjectID), entpayout.Ticker(t.Ticker),
			entpayout.StatusIn(entpayout.StatusProcessing, entpayout.StatusDone), entpayout.QueuedAtGTE(day)).
		All(ctx)
	if err != nil {
		return "", fmt.Errorf("today's %s payouts: %w", t.Ticker, err)
	}
	sum := p.TotalRequested
	for _, q := range today {
		sum = sum.Add(q.TotalRequested)
	}
	if sum.GreaterThan(lim.PerDay) {
		return fmt.Sprintf("today's payouts would total %s %s, above the maximum per day of %s %s", sum, t.Ticker, lim.PerDay, t.Ticker), nil
	}
	return "", nil
}

// payoutLock is the namespace of the PostgreSQL advisory locks that queue
// one project's payouts of a coin one at a time.
const payoutLock = 0x706f7574

// lock serialises the queueing of the project's payouts of t until tx
// ends: on PostgreSQL an advisory lock of (project, ticker); SQLite's
// write lock, which a first write takes for the whole transaction.
func (s *Service) lock(ctx context.Context, tx *entdb.Tx, projectID int64, t chains.Ticker) error {
	if s.db.Dialect == store.Postgres {
		h := fnv.New32a()
		h.Write([]byte(strconv.FormatInt(projectID, 10) + ":" + t.Ticker))
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1, $2)", payoutLock, int32(h.Sum32())); err != nil {
			return fmt.Errorf("lock %s payouts: %w", t.Ticker, err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, "UPDATE payouts SET updated_at = updated_at WHERE id = 0"); err != nil {
		return fmt.Errorf("lock %s payouts: %w", t.Ticker, err)
	}
	return nil
}

// send hands planned payout and sweep transactions to the engine once
// their planning transaction committed. A failure is left to the engine's
// Resume (the payout stays processing): the bytes are recorded, or will
// be signed and recorded once.
func (s *Service) send(ctx context.Context, t chains.Ticker, os []*entdb.Outbound) {
	if len(os) == 0 {
		return
	}
	if _, err := s.engine.SendPlanned(ctx, t, os); err != nil {
		s.logger.Warn("a payout transaction was not sent yet; it is sent again", "ticker", t.Ticker, "transactions", len(os), "error", err.Error())
	}
}

func (s *Service) get(ctx context.Context, c *entdb.Client, caller Caller, id int64) (*entdb.Payout, error) {
	p, err := c.Payout.Query().Where(entpayout.ID(id), entpayout.ProjectID(caller.ProjectID)).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("payout %d: %w", id, ErrPayoutNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("payout %d: %w", id, err)
	}
	return p, nil
}

// Info is a payout as the API answers it (payout_info).
type Info struct {
	Payout   *entdb.Payout
	Requests []*entdb.PayoutRequest
}

// Status returns the caller's payout id with its requests
// (`/payout/status/`).
func (s *Service) Status(ctx context.Context, c Caller, id int64) (*Info, error) {
	p, err := s.get(ctx, s.db.Client, c, id)
	if err != nil {
		return nil, err
	}
	rs, err := s.db.Client.PayoutRequest.Query().Where(payoutrequest.PayoutID(p.ID)).Order(entdb.Asc(payoutrequest.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payout %d requests: %w", id, err)
	}
	return &Info{Payout: p, Requests: rs}, nil
}

// ListRequests returns page (from 1) of the caller's payout requests of
// ticker with status (all for every status), newest first, and the number
// of pages (`/{ticker}/payout/request/list/`).
func (s *Service) ListRequests(ctx context.Context, c Caller, ticker, status string, page int) ([]*entdb.PayoutRequest, int, error) {
	t, err := s.ticker(ticker)
	if err != nil {
		return nil, 0, err
	}
	q := s.db.Client.PayoutRequest.Query().Where(payoutrequest.ProjectID(c.ProjectID), payoutrequest.Ticker(t.Ticker))
	if status != "" && status != "all" {
		st := payoutrequest.Status(status)
		if payoutrequest.StatusValidator(st) != nil {
			return nil, 0, invalid("status", "%q is not all, pending, rejected, processing or done", address.Truncate(status))
		}
		q.Where(payoutrequest.StatusEQ(st))
	}
	n, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count payout requests: %w", err)
	}
	page = max(page, 1)
	rs, err := q.Order(entdb.Desc(payoutrequest.FieldID)).Offset((page - 1) * PageSize).Limit(PageSize).All(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("payout requests: %w", err)
	}
	return rs, pages(n), nil
}

// ListPayouts returns page (from 1) of the caller's payouts of ticker with
// status (every status when empty), newest first, and the number of pages
// (`/{ticker}/payout/list/`).
func (s *Service) ListPayouts(ctx context.Context, c Caller, ticker, status string, page int) ([]*entdb.Payout, int, error) {
	t, err := s.ticker(ticker)
	if err != nil {
		return nil, 0, err
	}
	q := s.db.Client.Payout.Query().Where(entpayout.ProjectID(c.ProjectID), entpayout.Ticker(t.Ticker))
	if status != "" && status != "all" {
		st := entpayout.Status(status)
		if entpayout.StatusValidator(st) != nil {
			return nil, 0, invalid("status", "%q is not created, pending_approval, processing, done or error", address.Truncate(status))
		}
		q.Where(entpayout.StatusEQ(st))
	}
	n, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count payouts: %w", err)
	}
	page = max(page, 1)
	ps, err := q.Order(entdb.Desc(entpayout.FieldID)).Offset((page - 1) * PageSize).Limit(PageSize).All(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("payouts: %w", err)
	}
	return ps, pages(n), nil
}

// Waiting returns the project's payouts waiting for approval, oldest
// first, with their requests (the dashboard's payouts page).
func (s *Service) Waiting(ctx context.Context, projectID int64) ([]*Info, error) {
	ps, err := s.db.Client.Payout.Query().
		Where(entpayout.ProjectID(projectID), entpayout.StatusEQ(entpayout.StatusPendingApproval)).
		Order(entdb.Asc(entpayout.FieldID)).Limit(PageSize).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payouts waiting for approval: %w", err)
	}
	return s.WithRequests(ctx, ps)
}

// WithRequests returns ps with their requests, read in one query.
func (s *Service) WithRequests(ctx context.Context, ps []*entdb.Payout) ([]*Info, error) {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	rs, err := s.db.Client.PayoutRequest.Query().Where(payoutrequest.PayoutIDIn(ids...)).Order(entdb.Asc(payoutrequest.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("requests of %d payouts: %w", len(ps), err)
	}
	byPayout := map[int64][]*entdb.PayoutRequest{}
	for _, r := range rs {
		byPayout[*r.PayoutID] = append(byPayout[*r.PayoutID], r)
	}
	out := make([]*Info, len(ps))
	for i, p := range ps {
		out[i] = &Info{Payout: p, Requests: byPayout[p.ID]}
	}
	return out, nil
}

// pages is how many pages n rows fill: at least one.
func pages(n int) int { return max(1, (n+PageSize-1)/PageSize) }
