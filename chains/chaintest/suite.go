package chaintest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/lifecycle"
	"github.com/payhook/payhook/chains/solana"
)

// Driver is a chains.Backend that a test can also drive: pay, mine and
// reorganise.
type Driver interface {
	chains.Backend
	// Pay submits a transaction paying v to `to` and returns its hash. It
	// waits (mempool, next slot) until the next Mine includes it. With fail
	// the transaction is included but its execution fails; families whose
	// transfers cannot fail (utxo, solana) return an error instead.
	Pay(to string, v decimal.Decimal, fail bool) (string, error)
	// Mine produces n blocks (slots) and returns the new height; the first
	// includes the waiting transactions.
	Mine(n int) (int64, error)
	// Reorg drops the newest depth blocks and returns the new height. Their
	// transactions must not be included again.
	Reorg(depth int) (int64, error)
}

// maxWait bounds how many blocks a scenario mines while waiting for a
// commitment or the TRON distribution gate.
const maxWait = 200

// Run runs the conformance suite against the backend newDriver makes, for
// every ticker of chains.DefaultRegistry, in subtests named
// family/ticker/scenario. Every scenario asks newDriver for a fresh chain
// (height 0, no history); newDriver may call t.Skip for a ticker it does not
// support. Scenarios pay, mine and reorganise through the Driver, fold what
// the backend shows with a Tracker (lifecycle.Evaluate), and assert the
// exact callbacks a merchant would receive, following the spec's "States and
// transitions": detection and progress, a threshold of one, confirmation
// jumps, failed executions, reorganisations before and after credit, several
// payments to one address, TRON's distribution gate, Solana's commitments,
// and forwards: Sign validates, Send is idempotent, and on a node the
// forward pays its outputs exactly.
func Run(t *testing.T, newDriver func(t *testing.T, tk chains.Ticker) Driver) {
	RunRegistry(t, family.DefaultRegistry(), newDriver)
}

// RunRegistry is Run over the tickers of reg: a node backend on a test
// network passes a registry whose tickers carry that network
// (Registry.WithNet), so the suite's addresses are of that network.
func RunRegistry(t *testing.T, reg *chains.Registry, newDriver func(t *testing.T, tk chains.Ticker) Driver) {
	for _, tk := range reg.All() {
		t.Run(string(tk.Family)+"/"+tk.Ticker, func(t *testing.T) {
			for _, sc := range scenarios {
				if sc.applies != nil && !sc.applies(tk) {
					continue
				}
				t.Run(sc.name, func(t *testing.T) {
					h := &harness{t: t, tk: tk, ctx: t.Context()}
					h.d = newDriver(t, tk)
					sc.run(h)
				})
			}
		})
	}
}

type scenario struct {
	name    string
	applies func(chains.Ticker) bool // nil: every ticker
	run     func(h *harness)
}

var scenarios = []scenario{
	{"detect", nil, detect},
	{"threshold-one", func(tk chains.Ticker) bool { return !isSolana(tk) && tk.MinConfirmations <= 1 }, thresholdOne},
	{"jump-past-threshold", nil, jumpPastThreshold},
	{"jump-below-threshold", func(tk chains.Ticker) bool { return !isSolana(tk) }, jumpBelowThreshold},
	{"execution-failure", canFail, executionFailure},
	{"execution-failure-unsupported", func(tk chains.Ticker) bool { return !canFail(tk) }, executionFailureUnsupported},
	{"reorg-before-credit", nil, reorgBeforeCredit},
	{"reorg-after-credit", nil, reorgAfterCredit},
	{"several-payments", nil, severalPayments},
	{"tron-gates", func(tk chains.Ticker) bool { return tk.Family == chains.FamilyTron }, tronGates},
	{"solana-commitments", isSolana, solanaCommitments},
	{"transfers-contract", nil, transfersContract},
	{"block-hashes", nil, blockHashes},
	{"forward", nil, forward},
	{"mempool", func(tk chains.Ticker) bool { return !isSolana(tk) }, mempool},
}

func isSolana(tk chains.Ticker) bool { return tk.Family == chains.FamilySolana }

func canFail(tk chains.Ticker) bool {
	return tk.Family == chains.FamilyEVM || tk.Family == chains.FamilyTron
}

// harness drives one scenario on one fresh chain.
type harness struct {
	t   *testing.T
	tk  chains.Ticker
	ctx context.Context
	d   Driver
}

// Seed is the seed of the suite's addresses (chains.NewDeriver and
// chains.NewKeys): a node backend under test signs with chains.NewKeys(Seed).
var Seed = func() []byte { s := sha256.Sum256([]byte("payhook chaintest")); return s[:] }()

// addr returns the suite's i-th valid address of the ticker.
func (h *harness) addr(i uint32) string {
	h.t.Helper()
	d, err := chains.NewDeriver(Seed, family.All())
	if err != nil {
		h.t.Fatal(err)
	}
	a, err := d.Address(h.tk, i)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// amount returns a valid payment amount, distinct for each n.
func (h *harness) amount(n int64) decimal.Decimal {
	unit := decimal.New(1, -h.tk.Decimals)
	base := h.tk.MinTransaction
	if base.Sign() == 0 {
		base = unit
	}
	return base.Mul(decimal.NewFromInt(2)).Add(unit.Mul(decimal.NewFromInt(n)))
}

// required returns want clamped to what the ticker lets a merchant ask for.
func (h *harness) required(want int64) int64 {
	if isSolana(h.tk) {
		return 1
	}
	return min(max(want, int64(h.tk.MinConfirmations)), chains.MaxConfirmations)
}

func (h *harness) pay(to string, v decimal.Decimal, fail bool) string {
	h.t.Helper()
	txid, err := h.d.Pay(to, v, fail)
	if err != nil {
		h.t.Fatalf("pay %s to %s: %v", v, to, err)
	}
	return txid
}

func (h *harness) mine(n int) int64 {
	h.t.Helper()
	height, err := h.d.Mine(n)
	if err != nil {
		h.t.Fatalf("mine %d: %v", n, err)
	}
	return height
}

func (h *harness) reorg(depth int) int64 {
	h.t.Helper()
	height, err := h.d.Reorg(depth)
	if err != nil {
		h.t.Fatalf("reorg %d: %v", depth, err)
	}
	return height
}

// tracker returns a Tracker whose payments' invariants are checked when the
// scenario ends.
func (h *harness) tracker(required int64, addresses ...string) *Tracker {
	tr := NewTracker(h.d, h.tk, required, addresses...)
	h.t.Cleanup(func() {
		for _, p := range tr.Payments() {
			if err := p.CheckInvariants(); err != nil {
				h.t.Error(err)
			}
		}
	})
	return tr
}

func (h *harness) poll(tr *Tracker) {
	h.t.Helper()
	if err := tr.Poll(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// mineAndPoll mines n blocks one at a time, polling after each.
func (h *harness) mineAndPoll(tr *Tracker, n int) {
	h.t.Helper()
	for range n {
		h.mine(1)
		h.poll(tr)
	}
}

// mineUntil mines one block at a time, polling after each, until done
// holds, and fails the test after maxWait blocks.
func (h *harness) mineUntil(tr *Tracker, what string, done func() bool) {
	h.t.Helper()
	for range maxWait {
		h.mine(1)
		h.poll(tr)
		if done() {
			return
		}
	}
	h.t.Fatalf("%s: not reached after %d blocks", what, maxWait)
}

// find returns the payment of txid, failing the test if it is not tracked.
func (h *harness) find(tr *Tracker, txid string) *Payment {
	h.t.Helper()
	p, ok := tr.Find(txid)
	if !ok {
		h.t.Fatalf("transaction %s: no payment tracked", txid)
	}
	return p
}

func (h *harness) wantNotices(p *Payment, want ...Notice) {
	h.t.Helper()
	if !slices.Equal(p.Notices, want) {
		h.t.Errorf("payment %s:%d: callbacks %v, want %v", p.Transfer.TxID, p.Transfer.Index, p.Notices, want)
	}
}

func (h *harness) wantStatus(p *Payment, want chains.Status, credits int) {
	h.t.Helper()
	if p.State.Status != want || p.Credits != credits {
		h.t.Errorf("payment %s:%d: status %q with %d credits, want %q with %d",
			p.Transfer.TxID, p.Transfer.Index, p.State.Status, p.Credits, want, credits)
	}
}

func pending(n int64) Notice   { return Notice{chains.StatusPending, n} }
func confirmed(n int64) Notice { return Notice{chains.StatusConfirmed, n} }

// progression is the callbacks of a payment watched one block at a time:
// pending(1) .. pending(required-1), confirmed(required); on Solana just
// confirmed(1).
func (h *harness) progression(required int64) []Notice {
	if isSolana(h.tk) {
		return []Notice{confirmed(1)}
	}
	var out []Notice
	for n := int64(1); n < required; n++ {
		out = append(out, pending(n))
	}
	return append(out, confirmed(required))
}

// untilCredited mines one block at a time until p is credited.
func (h *harness) untilCredited(tr *Tracker, txid string) *Payment {
	h.t.Helper()
	h.mineUntil(tr, "credit of "+txid, func() bool {
		p, ok := tr.Find(txid)
		return ok && p.Credits > 0
	})
	return h.find(tr, txid)
}

// detect: nothing while in the mempool; then pending at each depth below the
// threshold and confirmed at it (Solana: nothing until the acceptance
// commitment, then confirmed(1)); then silence.
func detect(h *harness) {
	r := h.required(3)
	a := h.addr(0)
	tr := h.tracker(r, a)
	h.poll(tr)
	txid := h.pay(a, h.amount(0), false)
	h.poll(tr)
	if n := len(tr.Payments()); n != 0 {
		h.t.Fatalf("a transaction waiting for a block was reported: %d payments", n)
	}
	s, err := h.d.State(h.ctx, chains.Transfer{TxID: txid})
	if err != nil {
		h.t.Fatal(err)
	}
	if s.Confirmations != 0 {
		h.t.Errorf("waiting transaction: %d confirmations, want 0", s.Confirmations)
	}

	if isSolana(h.tk) {
		h.untilCredited(tr, txid)
	} else {
		h.mineAndPoll(tr, int(r))
	}
	h.mineAndPoll(tr, 3)
	p := h.find(tr, txid)
	h.wantNotices(p, h.progression(r)...)
	h.wantStatus(p, chains.StatusConfirmed, 1)
	if !isSolana(h.tk) {
		for _, o := range p.History {
			if o.Step.Credit && o.TxState.Confirmations != r {
				h.t.Errorf("credited at %d confirmations, want %d", o.TxState.Confirmations, r)
			}
		}
	}
	if p.Transfer.To != a || !p.Transfer.Value.Equal(h.amount(0)) {
		h.t.Errorf("transfer %+v, want %s to %s", p.Transfer, h.amount(0), a)
	}
}

// thresholdOne: with one required confirmation the first event is
// confirmed; pending is skipped.
func thresholdOne(h *harness) {
	a := h.addr(0)
	tr := h.tracker(1, a)
	txid := h.pay(a, h.amount(0), false)
	h.mineAndPoll(tr, 4)
	p := h.find(tr, txid)
	h.wantNotices(p, confirmed(1))
	h.wantStatus(p, chains.StatusConfirmed, 1)
}

// jumpPastThreshold: ten blocks at once (more if the ticker's minimum
// depth is higher) take a payment straight to confirmed, with the jumped
// count, in one callback.
func jumpPastThreshold(h *harness) {
	r := h.required(3)
	jump := max(10, r)
	a := h.addr(0)
	tr := h.tracker(r, a)
	txid := h.pay(a, h.amount(0), false)
	h.mine(int(jump))
	h.poll(tr)
	if isSolana(h.tk) {
		// Acceptance waits for a commitment, however many slots that takes.
		if p, ok := tr.Find(txid); !ok || p.Credits == 0 {
			h.untilCredited(tr, txid)
		}
	}
	h.mineAndPoll(tr, 2)
	p := h.find(tr, txid)
	if isSolana(h.tk) {
		h.wantNotices(p, confirmed(1))
	} else {
		h.wantNotices(p, confirmed(jump))
	}
	h.wantStatus(p, chains.StatusConfirmed, 1)
}

// jumpBelowThreshold: counts jump while pending (1, 11), then past the
// threshold (21); one callback per observation.
func jumpBelowThreshold(h *harness) {
	r := h.required(12)
	if r > 21 {
		h.t.Skipf("minimum confirmations %d exceed the jumps", r)
	}
	a := h.addr(0)
	tr := h.tracker(r, a)
	txid := h.pay(a, h.amount(0), false)
	h.mine(1)
	h.poll(tr)
	h.mine(10)
	h.poll(tr)
	h.mine(10)
	h.poll(tr)
	h.mine(10)
	h.poll(tr)
	p := h.find(tr, txid)
	h.wantNotices(p, pending(1), pending(11), confirmed(21))
	h.wantStatus(p, chains.StatusConfirmed, 1)
}

// executionFailure: a failed execution is never credited and sends no
// callback; if the backend reports it, it is recorded as reverted. A
// successful payment in the same block is unaffected.
func executionFailure(h *harness) {
	r := h.required(3)
	a, b := h.addr(0), h.addr(1)
	tr := h.tracker(r, a, b)
	bad := h.pay(a, h.amount(0), true)
	good := h.pay(b, h.amount(1), false)
	h.mineAndPoll(tr, int(r)+3)
	if p, ok := tr.Find(bad); ok {
		h.wantNotices(p)
		h.wantStatus(p, chains.StatusReverted, 0)
		if p.Forwardable {
			h.t.Error("a failed execution is forwardable")
		}
		s, err := h.d.State(h.ctx, p.Transfer)
		if err != nil {
			h.t.Fatal(err)
		}
		if !s.Present || s.Executed || s.Confirmations != r+3 {
			h.t.Errorf("failed execution: state %+v, want present, not executed, %d confirmations", s, r+3)
		}
	}
	p := h.find(tr, good)
	h.wantNotices(p, h.progression(r)...)
	h.wantStatus(p, chains.StatusConfirmed, 1)
}

// executionFailureUnsupported: families whose transfers cannot fail refuse
// to simulate a failure.
func executionFailureUnsupported(h *harness) {
	if _, err := h.d.Pay(h.addr(0), h.amount(0), true); err == nil {
		h.t.Errorf("Pay with a failed execution on %s: no error", h.tk.Family)
	}
}

// reorgBeforeCredit: a payment reorganised out before credit is dropped
// (recorded, no callback) and sends nothing more.
func reorgBeforeCredit(h *harness) {
	r := h.required(3)
	a := h.addr(0)
	tr := h.tracker(r, a)
	txid := h.pay(a, h.amount(0), false)
	depth := 2
	if isSolana(h.tk) {
		depth = 1
	}
	h.mineAndPoll(tr, depth)
	p := h.find(tr, txid)
	if p.Credits > 0 {
		h.t.Skipf("credited within %d blocks: nothing to reorganise before credit", depth)
	}
	var want []Notice
	if !isSolana(h.tk) {
		want = []Notice{pending(1), pending(2)}
	}
	h.wantNotices(p, want...)

	h.reorg(depth)
	h.poll(tr)
	h.wantStatus(p, chains.StatusDropped, 0)
	s, err := h.d.State(h.ctx, p.Transfer)
	if err != nil {
		h.t.Fatal(err)
	}
	if s.Present || s.Confirmations != 0 {
		h.t.Errorf("reorganised-out transaction: state %+v, want not present, 0 confirmations", s)
	}
	h.mineAndPoll(tr, int(r)+3)
	h.wantNotices(p, want...)
	h.wantStatus(p, chains.StatusDropped, 0)
	if n := len(tr.Payments()); n != 1 {
		h.t.Errorf("%d payments after the reorganisation, want 1 (not included again)", n)
	}
}

// reorgAfterCredit: a reorganisation after credit does not reverse it: the
// status stays confirmed, no callback, no second credit, and forwarding is
// withheld while the transaction is out of the chain.
func reorgAfterCredit(h *harness) {
	r := h.required(3)
	a := h.addr(0)
	tr := h.tracker(r, a)
	txid := h.pay(a, h.amount(0), false)
	p := h.untilCredited(tr, txid)
	h.wantNotices(p, h.progression(r)...)

	s, err := h.d.State(h.ctx, p.Transfer)
	if err != nil {
		h.t.Fatal(err)
	}
	h.reorg(int(s.Confirmations))
	h.poll(tr)
	h.wantStatus(p, chains.StatusConfirmed, 1)
	if p.Forwardable {
		h.t.Error("forwardable while the transaction is out of the chain")
	}
	h.mineAndPoll(tr, int(r)+3)
	h.wantNotices(p, h.progression(r)...)
	h.wantStatus(p, chains.StatusConfirmed, 1)
}

// severalPayments: transactions to one address, two in one block and one
// later, are separate payments, each with its own callbacks.
func severalPayments(h *harness) {
	r := h.required(3)
	a, other := h.addr(0), h.addr(1)
	tr := h.tracker(r, a)
	first := h.pay(a, h.amount(1), false)
	second := h.pay(a, h.amount(2), false)
	h.pay(other, h.amount(3), false) // not watched
	h.mine(1)
	h.poll(tr)
	third := h.pay(a, h.amount(4), false)
	if isSolana(h.tk) {
		h.untilCredited(tr, third)
	} else {
		h.mineAndPoll(tr, int(r))
	}

	ps := tr.Payments()
	if len(ps) != 3 {
		h.t.Fatalf("%d payments, want 3", len(ps))
	}
	keys := map[Key]bool{}
	for i, w := range []struct {
		txid  string
		value decimal.Decimal
	}{{first, h.amount(1)}, {second, h.amount(2)}, {third, h.amount(4)}} {
		p := h.find(tr, w.txid)
		keys[p.Key()] = true
		h.wantNotices(p, h.progression(r)...)
		h.wantStatus(p, chains.StatusConfirmed, 1)
		if !p.Transfer.Value.Equal(w.value) || p.Transfer.To != a {
			h.t.Errorf("payment %d: %s to %s, want %s to %s", i+1, p.Transfer.Value, p.Transfer.To, w.value, a)
		}
	}
	if len(keys) != 3 {
		h.t.Errorf("payments share a (txid, index): %v", keys)
	}
}

// tronGates: credit at the configured depth; distribution only at
// max(configured, 23 for TRX / 20 for TRC20) with a solidified receipt.
func tronGates(h *harness) {
	for _, r := range []int64{5, 30} {
		gate := lifecycle.DistributionDepth(h.tk, r)
		a := h.addr(uint32(r))
		tr := h.tracker(r, a)
		txid := h.pay(a, h.amount(0), false)
		h.mineUntil(tr, fmt.Sprintf("required %d: forwardable", r), func() bool {
			p, ok := tr.Find(txid)
			return ok && p.Forwardable
		})
		p := h.find(tr, txid)
		h.wantNotices(p, h.progression(r)...)
		h.wantStatus(p, chains.StatusConfirmed, 1)
		solidified, credited := false, false
		for _, o := range p.History {
			s := o.TxState
			// Only the Driver moves the chain, so the head read before the
			// state is still the head: the receipt is solidified exactly when
			// its block is at or below the solidified height.
			if want := o.Head.Height-s.Confirmations+1 <= o.Head.Solidified; s.Solidified != want {
				h.t.Errorf("required %d: at depth %d under head %+v: solidified %v, want %v", r, s.Confirmations, o.Head, s.Solidified, want)
			}
			if solidified && !s.Solidified {
				h.t.Errorf("required %d: solidified receipt became unsolidified at depth %d", r, s.Confirmations)
			}
			solidified = solidified || s.Solidified
			if o.Step.Credit && s.Confirmations != r {
				h.t.Errorf("required %d: credited at %d confirmations", r, s.Confirmations)
			}
			credited = credited || o.Step.Credit
			want := s.Confirmations >= gate && s.Solidified && credited
			if o.Step.Forwardable != want {
				h.t.Errorf("required %d: at %d confirmations (solidified %v, gate %d) forwardable %v, want %v",
					r, s.Confirmations, s.Solidified, gate, o.Step.Forwardable, want)
			}
		}
		last := p.History[len(p.History)-1].TxState.Confirmations
		if floor := map[bool]int64{false: 23, true: 20}[h.tk.Token]; last < max(r, floor) {
			h.t.Errorf("required %d: forwardable at %d confirmations, below %d", r, last, max(r, floor))
		}
	}
}

// solanaCommitments: nothing is reported below the acceptance commitment
// (finalized for native SOL, confirmed for SPL tokens); at it, one
// confirmed(1) callback. Commitments only strengthen as slots pass.
func solanaCommitments(h *harness) {
	want := solana.Commitment(h.tk)
	a := h.addr(0)
	tr := h.tracker(1, a)
	txid := h.pay(a, h.amount(0), false)
	p := h.untilCredited(tr, txid)
	h.mineAndPoll(tr, 3)
	h.wantNotices(p, confirmed(1))
	h.wantStatus(p, chains.StatusConfirmed, 1)
	prev := chains.CommitmentNone
	for i, o := range p.History {
		c := o.TxState.Commitment
		if c < prev {
			h.t.Errorf("commitment went from %s to %s", prev, c)
		}
		if i == 0 && c >= want {
			h.t.Logf("accepted (%s) at the first observation: the processed stage was not seen", c)
		}
		if c == chains.CommitmentNone {
			h.t.Errorf("a transaction in a slot at depth %d has no commitment", o.TxState.Confirmations)
		}
		if got := o.Step.Credit; got != (c >= want && prev < want) {
			h.t.Errorf("at commitment %s (previously %s): credit %v", c, prev, got)
		}
		if o.Step.Confirmations > 1 {
			h.t.Errorf("reported %d confirmations; Solana reports 1", o.Step.Confirmations)
		}
		prev = c
	}
}

var (
	hex64   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	evmHash = regexp.MustCompile(`^0x[0-9a-f]{64}$`)
	solSig  = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{64,88}$`)
)

// checkTxID reports a hash that does not look like the family's.
func (h *harness) checkTxID(what, txid string) {
	h.t.Helper()
	re := hex64
	switch h.tk.Family {
	case chains.FamilyEVM:
		re = evmHash
	case chains.FamilySolana:
		re = solSig
	}
	if !re.MatchString(txid) {
		h.t.Errorf("%s hash %q does not look like a %s hash (%s)", what, txid, h.tk.Family, re)
	}
}

// mempool: a backend of a family with a mempool (or pending pool) reports
// a transaction waiting for a block to a watched address, with its value
// and Height 0, and leaves out the others (chains.MempoolReader); once the
// transaction is in a block, Mempool no longer reports it.
func mempool(h *harness) {
	m, ok := h.d.(chains.MempoolReader)
	if !ok {
		h.t.Fatalf("a %s backend must implement chains.MempoolReader (payers see their payment detected before its first block)", h.tk.Family)
	}
	a, other := h.addr(0), h.addr(1)
	read := func(watched func(string) bool) []chains.Transfer {
		h.t.Helper()
		ts, err := m.Mempool(h.ctx, watched)
		if err != nil {
			h.t.Fatalf("mempool: %v", err)
		}
		return ts
	}
	txid := h.pay(a, h.amount(0), false)
	otherTx := h.pay(other, h.amount(1), false)
	ts := read(func(x string) bool { return x == a })
	if len(ts) != 1 {
		h.t.Fatalf("mempool of one watched address: %+v, want the one payment %s", ts, txid)
	}
	if got := ts[0]; got.TxID != txid || got.To != a || !got.Value.Equal(h.amount(0)) || got.Height != 0 || got.BlockHash != "" {
		h.t.Errorf("mempool transfer %+v, want %s of %s to %s at height 0", got, txid, h.amount(0), a)
	}
	found := map[string]bool{}
	for _, t := range read(nil) {
		found[t.TxID] = true
	}
	if !found[txid] || !found[otherTx] {
		h.t.Errorf("mempool of every address: %v, want %s and %s among them", found, txid, otherTx)
	}
	h.mine(1)
	for _, t := range read(nil) {
		if t.TxID == txid || t.TxID == otherTx {
			h.t.Errorf("mempool still reports %s after it was mined", t.TxID)
		}
	}
}

// transfersContract checks Head and Transfers: ranges, the watched filter,
// the reported fields and hash formats.
func transfersContract(h *harness) {
	head, err := h.d.Head(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if head.Height != 0 || head.Solidified != 0 {
		h.t.Errorf("fresh chain: head %+v, want height 0", head)
	}
	a, b := h.addr(0), h.addr(1)
	ta := h.pay(a, h.amount(0), false)
	tb := h.pay(b, h.amount(1), false)
	if ta == tb {
		h.t.Fatalf("two payments share hash %s", ta)
	}
	h.checkTxID("payment", ta)
	h1 := h.mine(1)
	tc := h.pay(a, h.amount(2), false)
	h2 := h.mine(30)

	head, err = h.d.Head(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	switch {
	case head.Height != h2:
		h.t.Errorf("head %+v after mining to %d", head, h2)
	case head.Solidified > head.Height || head.Solidified < 0:
		h.t.Errorf("head %+v: solidified beyond the tip", head)
	case h.tk.Family != chains.FamilyTron && head.Solidified != head.Height:
		h.t.Errorf("head %+v: solidified must equal height off TRON", head)
	}

	all, err := h.d.Transfers(h.ctx, 0, h2, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	got := map[string]chains.Transfer{}
	for _, t := range all {
		got[t.TxID] = t
	}
	for _, w := range []chains.Transfer{
		{TxID: ta, To: a, Value: h.amount(0), Height: h1},
		{TxID: tb, To: b, Value: h.amount(1), Height: h1},
		{TxID: tc, To: a, Value: h.amount(2), Height: h1 + 1},
	} {
		g, ok := got[w.TxID]
		if !ok || g.To != w.To || !g.Value.Equal(w.Value) || g.Height != w.Height {
			h.t.Errorf("Transfers(0, %d): %s reported as %+v, want to %s, value %s, height %d", h2, w.TxID, g, w.To, w.Value, w.Height)
		}
	}

	onlyA, err := h.d.Transfers(h.ctx, 0, h2, func(s string) bool { return s == a })
	if err != nil {
		h.t.Fatal(err)
	}
	if len(onlyA) != 2 || onlyA[0].TxID != ta || onlyA[1].TxID != tc {
		h.t.Errorf("Transfers watching %s: %+v, want %s then %s", a, onlyA, ta, tc)
	}
	if ts, err := h.d.Transfers(h.ctx, h1, h1, nil); err != nil || len(ts) != 0 {
		h.t.Errorf("Transfers(%d, %d): %v, %v; want none", h1, h1, ts, err)
	}
	if ts, err := h.d.Transfers(h.ctx, h1, h2, nil); err != nil || len(ts) != 1 || ts[0].TxID != tc {
		h.t.Errorf("Transfers(%d, %d): %+v, %v; want only %s", h1, h2, ts, err, tc)
	}
	if fee, err := h.d.NetworkFee(h.ctx); err != nil || fee.Sign() < 0 {
		h.t.Errorf("NetworkFee: %s, %v", fee, err)
	}
}

// blocks returns Blocks(after, upTo), failing the test on an error.
func (h *harness) blocks(after, upTo int64) []chains.Block {
	h.t.Helper()
	bs, err := h.d.Blocks(h.ctx, after, upTo)
	if err != nil {
		h.t.Fatalf("Blocks(%d, %d): %v", after, upTo, err)
	}
	return bs
}

// checkLinked reports blocks that do not form a chain from height after+1
// on top of parent: heights in order, distinct non-empty hashes, each
// block's Parent the hash of the one below.
func (h *harness) checkLinked(bs []chains.Block, after int64, parent string) {
	h.t.Helper()
	seen := map[string]bool{}
	for i, b := range bs {
		if b.Height != after+int64(i)+1 {
			h.t.Errorf("block %d of Blocks(%d, ..) has height %d", i, after, b.Height)
		}
		if b.Hash == "" || seen[b.Hash] {
			h.t.Errorf("block %d: hash %q empty or repeated", b.Height, b.Hash)
		}
		seen[b.Hash] = true
		if b.Parent != parent {
			h.t.Errorf("block %d: parent %q, want %q", b.Height, b.Parent, parent)
		}
		parent = b.Hash
	}
}

// blockHashes checks Blocks, Head.Hash and Transfer.BlockHash, and that a
// reorganisation replaces the hashes of the blocks it dropped and only
// those: what a watcher compares to find the common ancestor.
func blockHashes(h *harness) {
	if head, err := h.d.Head(h.ctx); err != nil || head.Hash != "" {
		h.t.Errorf("fresh chain: head %+v, %v; want no hash", head, err)
	}
	if bs, err := h.d.Blocks(h.ctx, 0, 0); err != nil || len(bs) != 0 {
		h.t.Errorf("Blocks(0, 0) on a fresh chain: %v, %v", bs, err)
	}
	a := h.addr(0)
	h.mine(3)
	txid := h.pay(a, h.amount(0), false)
	top := h.mine(2) // the payment is in block 4
	old := h.blocks(0, top)
	if len(old) != int(top) {
		h.t.Fatalf("Blocks(0, %d): %d blocks", top, len(old))
	}
	h.checkLinked(old, 0, "")
	if head, err := h.d.Head(h.ctx); err != nil || head.Hash != old[top-1].Hash {
		h.t.Errorf("head %+v, %v; want the hash of block %d, %s", head, err, top, old[top-1].Hash)
	}
	if part := h.blocks(2, 4); len(part) != 2 || part[0] != old[2] || part[1] != old[3] {
		h.t.Errorf("Blocks(2, 4) = %+v, want blocks 3 and 4 as Blocks(0, %d) gave them", part, top)
	}
	trs, err := h.d.Transfers(h.ctx, 0, top, nil)
	if err != nil || len(trs) != 1 || trs[0].TxID != txid || trs[0].Height != 4 || trs[0].BlockHash != old[3].Hash {
		h.t.Fatalf("Transfers(0, %d) = %+v, %v; want %s in block 4 with hash %s", top, trs, err, txid, old[3].Hash)
	}
	for _, r := range [][2]int64{{-1, 1}, {2, 1}, {0, top + 1}} {
		if _, err := h.d.Blocks(h.ctx, r[0], r[1]); err == nil {
			h.t.Errorf("Blocks(%d, %d) at height %d: no error", r[0], r[1], top)
		}
	}

	// Drop blocks 4 and 5, mine three: 1..3 keep their hashes, 4..6 are new.
	if got := h.reorg(2); got != 3 {
		h.t.Fatalf("reorg 2 at %d: height %d", top, got)
	}
	if head, err := h.d.Head(h.ctx); err != nil || head.Hash != old[2].Hash {
		h.t.Errorf("after the reorg: head %+v, %v; want block 3's hash %s", head, err, old[2].Hash)
	}
	top = h.mine(3)
	now := h.blocks(0, top)
	h.checkLinked(now, 0, "")
	for i, b := range now {
		switch {
		case i < 3 && b != old[i]:
			h.t.Errorf("block %d below the reorganisation changed: %+v, was %+v", b.Height, b, old[i])
		case i >= 3 && i < len(old) && b.Hash == old[i].Hash:
			h.t.Errorf("block %d replaced by the reorganisation kept its hash %s", b.Height, b.Hash)
		}
	}
	if trs, err := h.d.Transfers(h.ctx, 0, top, nil); err != nil || len(trs) != 0 {
		h.t.Errorf("after the reorg, Transfers(0, %d) = %+v, %v; want none", top, trs, err)
	}
}

// OnChain is implemented by Drivers whose forwards are real transactions
// that the next block includes (node backends). The devnet records
// forwards without putting them in blocks.
type OnChain interface {
	// FundOperator gives the operator's address of the ticker's family
	// (chains.Keys.OperatorAddress from Seed) what a token forward needs to
	// pay its gas. Backends of native coins may do nothing.
	FundOperator() error
}

// forward: Sign validates (errors wrap chains.ErrInvalidForward); Send is
// idempotent; on a node, the next block includes the forward, which pays
// each output exactly.
func forward(h *harness) {
	from, to1, to2 := h.addr(0), h.addr(1), h.addr(2)
	tr := h.tracker(h.required(1), from)
	value := h.amount(10)
	txid := h.pay(from, value, false)
	p := h.untilCredited(tr, txid)
	if oc, ok := h.d.(OnChain); ok {
		if err := oc.FundOperator(); err != nil {
			h.t.Fatalf("fund the operator: %v", err)
		}
	}
	fee, err := h.d.NetworkFee(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	quarter := value.Div(decimal.NewFromInt(4)).RoundDown(h.tk.Decimals)
	f := chains.Forward{ID: "chaintest-forward-1", From: from, FromIndex: 0, Inputs: []chains.Transfer{p.Transfer},
		Outputs: []chains.Output{{Address: to1, Amount: quarter}, {Address: to2, Amount: quarter}}, NetworkFee: fee}

	unit := decimal.New(1, -h.tk.Decimals)
	bad := map[string]chains.Forward{
		"no ID":       {From: from, Inputs: f.Inputs, Outputs: f.Outputs, NetworkFee: fee},
		"bad from":    {ID: "chaintest-bad-1", From: "not-an-address", Inputs: f.Inputs, Outputs: f.Outputs, NetworkFee: fee},
		"no outputs":  {ID: "chaintest-bad-2", From: from, Inputs: f.Inputs, NetworkFee: fee},
		"bad output":  {ID: "chaintest-bad-3", From: from, Inputs: f.Inputs, Outputs: []chains.Output{{Address: "not-an-address", Amount: quarter}}, NetworkFee: fee},
		"zero amount": {ID: "chaintest-bad-4", From: from, Inputs: f.Inputs, Outputs: []chains.Output{{Address: to1, Amount: decimal.Zero}}, NetworkFee: fee},
		"negative":    {ID: "chaintest-bad-5", From: from, Inputs: f.Inputs, Outputs: []chains.Output{{Address: to1, Amount: unit.Neg()}}, NetworkFee: fee},
		"too fine":    {ID: "chaintest-bad-6", From: from, Inputs: f.Inputs, Outputs: []chains.Output{{Address: to1, Amount: decimal.New(1, -h.tk.Decimals-1)}}, NetworkFee: fee},
	}
	for name, b := range bad {
		if s, err := h.d.Sign(h.ctx, b); err == nil {
			h.t.Errorf("Sign with %s: %q, no error", name, s.TxID)
		} else if !errors.Is(err, chains.ErrInvalidForward) {
			h.t.Errorf("Sign with %s: %v, want an error wrapping chains.ErrInvalidForward", name, err)
		}
	}

	s, err := h.d.Sign(h.ctx, f)
	if err != nil {
		h.t.Fatalf("Sign: %v", err)
	}
	if s.TxID != "" {
		h.checkTxID("forward", s.TxID)
	}
	if len(s.Raw) == 0 {
		h.t.Error("Sign: no bytes to record")
	}
	err = h.d.Send(h.ctx, s)
	if _, ok := h.d.(OnChain); ok {
		// A token forward may start with a transaction that tops up From's
		// gas from the operator (EVM); a node takes the token transfers
		// only once the top-up is in a block, and Send fails with the
		// transient chains.ErrNode until then. payhook sends again later.
		for i := 0; i < 2 && errors.Is(err, chains.ErrNode); i++ {
			h.mine(1)
			err = h.d.Send(h.ctx, s)
		}
	}
	if err != nil {
		h.t.Fatalf("Send: %v", err)
	}
	if err := h.d.Send(h.ctx, s); err != nil {
		h.t.Errorf("Send of the same bytes again (a restart between send and record): %v", err)
	}
	if _, ok := h.d.(OnChain); !ok {
		return
	}
	top := h.mine(1)
	if err := h.d.Send(h.ctx, s); err != nil {
		h.t.Errorf("Send of bytes already in a block: %v", err)
	}
	trs, err := h.d.Transfers(h.ctx, top-1, top, func(a string) bool { return a == to1 || a == to2 })
	if err != nil {
		h.t.Fatal(err)
	}
	paid := map[string]decimal.Decimal{}
	ours := false
	for _, t := range trs {
		paid[t.To] = paid[t.To].Add(t.Value)
		ours = ours || t.TxID == s.TxID
	}
	if !paid[to1].Equal(quarter) || !paid[to2].Equal(quarter) || !ours {
		h.t.Errorf("block %d pays %v (forward %s among them: %v); want %s to each of %s and %s", top, paid, s.TxID, ours, quarter, to1, to2)
	}
	st, err := h.d.State(h.ctx, chains.Transfer{TxID: s.TxID, To: to1})
	if err != nil || !st.Present || !st.Executed || st.Confirmations != 1 {
		h.t.Errorf("forward %s in block %d: state %+v, %v; want present, executed, 1 confirmation", s.TxID, top, st, err)
	}
}
