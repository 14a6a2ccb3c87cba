package ledger

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/store"
)

// Account is a balance of the journal (see the package doc).
type Account = entledger.Account

// Event is what a set of lines records (see the package doc).
type Event = entledger.Event

// The accounts.
const (
	Received   = entledger.AccountReceived
	Pending    = entledger.AccountPending
	Held       = entledger.AccountHeld
	Outgoing   = entledger.AccountOutgoing
	Forwarded  = entledger.AccountForwarded
	Fee        = entledger.AccountFee
	NetworkFee = entledger.AccountNetworkFee
	Loss       = entledger.AccountLoss
	Payout     = entledger.AccountPayout
	Swept      = entledger.AccountSwept
	// InWallet is the account direct: what landed in the merchant's
	// own wallet (a watch-only key).
	InWallet = entledger.AccountDirect
	Owed     = entledger.AccountOwed
	Settled  = entledger.AccountSettled
)

// Line is one account's part of an entry, in coin units.
type Line struct {
	// Account is the balance the line moves.
	Account Account
	// Amount is signed, in coin units, a whole number of base units.
	Amount decimal.Decimal
}

// Ref says what an entry is about.
type Ref struct {
	// ProjectID owns the funds.
	ProjectID int64
	// PaymentID is the payment the entry is about; 0 for none.
	PaymentID int64
	// AddressID is the payhook address that holds the funds; 0 for none.
	AddressID int64
	// OutboundID is the outgoing transaction; 0 for none.
	OutboundID int64
}

// Entry is one event to journal: its lines sum to zero.
type Entry struct {
	// Event is what happened.
	Event Event
	// Key identifies the event: an event is journaled once.
	Key string
	// Ticker is the coin; its decimals convert the lines to base units.
	Ticker chains.Ticker
	// Ref says what the entry is about.
	Ref Ref
	// HoldReason is set on hold entries: why the funds are held.
	HoldReason string
	// Lines are the amounts, in coin units.
	Lines []Line
}

func paymentKey(event Event, r Ref, suffix ...int64) string {
	k := string(event) + ":" + strconv.FormatInt(r.PaymentID, 10)
	for _, s := range suffix {
		k += ":" + strconv.FormatInt(s, 10)
	}
	return k
}

func entry(event Event, t chains.Ticker, r Ref, key string, lines ...Line) Entry {
	return Entry{Event: event, Key: key, Ticker: t, Ref: r, Lines: lines}
}

// Credit journals payment r.PaymentID, of value v, reaching its required
// confirmations: received -v, pending +v.
func Credit(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	return entry(entledger.EventCredit, t, r, paymentKey(entledger.EventCredit, r), Line{Received, v.Neg()}, Line{Pending, v})
}

// Direct journals a payment of value v to an address of the merchant's
// watch-only key, credited and in the merchant's own wallet: pending -v,
// direct +v; and the service fee it owes, which nothing deducted: fee +f,
// owed -f (the project's debt to the operator, until settled).
func Direct(t chains.Ticker, r Ref, v, fee decimal.Decimal) Entry {
	lines := []Line{{Pending, v.Neg()}, {InWallet, v}}
	if fee.Sign() != 0 {
		lines = append(lines, Line{Fee, fee}, Line{Owed, fee.Neg()})
	}
	return entry(entledger.EventDirect, t, r, paymentKey(entledger.EventDirect, r), lines...)
}

// Settle journals amount v of project's service fees owed in t's coin as
// settled by the operator's invoice reference (paid outside payhook):
// owed +v, settled -v. One reference settles once per project and coin.
func Settle(t chains.Ticker, project int64, v decimal.Decimal, reference string) Entry {
	key := "settle:" + strconv.FormatInt(project, 10) + ":" + reference
	return entry(entledger.EventSettle, t, Ref{ProjectID: project}, key, Line{Owed, v}, Line{Settled, v.Neg()})
}

// Hold journals the payment's value v held for reason: pending -v, held +v.
// A payment is held once, or once more when the outgoing transaction
// r.OutboundID that carried it after a release can never be sent.
func Hold(t chains.Ticker, r Ref, v decimal.Decimal, reason string) Entry {
	key := paymentKey(entledger.EventHold, r)
	if r.OutboundID != 0 {
		key = paymentKey(entledger.EventHold, r, r.OutboundID)
	}
	e := entry(entledger.EventHold, t, r, key, Line{Pending, v.Neg()}, Line{Held, v})
	e.HoldReason = reason
	return e
}

// Release journals a held payment of value v going to be forwarded after
// all: held -v, pending +v.
func Release(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	return entry(entledger.EventRelease, t, r, paymentKey(entledger.EventRelease, r), Line{Held, v.Neg()}, Line{Pending, v})
}

// Plan journals the payment's value v planned into the outgoing transaction
// r.OutboundID: pending -v, outgoing +v.
func Plan(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	return entry(entledger.EventPlan, t, r, paymentKey(entledger.EventPlan, r, r.OutboundID), Line{Pending, v.Neg()}, Line{Outgoing, v})
}

// Unplan journals the payment's value v back out of an outgoing
// transaction that can never be sent as planned: outgoing -v, pending +v.
func Unplan(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	return entry(entledger.EventUnplan, t, r, paymentKey(entledger.EventUnplan, r, r.OutboundID), Line{Outgoing, v.Neg()}, Line{Pending, v})
}

// Send journals the payment's part of a sent outgoing transaction:
// forwarded to the merchant, the service fee and the network-fee deduction,
// out of outgoing.
func Send(t chains.Ticker, r Ref, forwarded, fee, networkFee decimal.Decimal) Entry {
	v := forwarded.Add(fee).Add(networkFee)
	return entry(entledger.EventSend, t, r, paymentKey(entledger.EventSend, r, r.OutboundID),
		Line{Outgoing, v.Neg()}, Line{Forwarded, forwarded}, Line{Fee, fee}, Line{NetworkFee, networkFee})
}

// Bounce journals the payment's part of a sent outgoing transaction
// r.OutboundID that a block included and failed (EVM, TRON): the forwarded
// value f never left the payment address and is held for reason:
// forwarded -f, held +f. The service fee and the network fee journaled by
// Send stay: the fee is on the address as after any forward of an account
// chain, and the network was paid for the failed execution.
func Bounce(t chains.Ticker, r Ref, forwarded decimal.Decimal, reason string) Entry {
	e := entry(entledger.EventBounce, t, r, paymentKey(entledger.EventBounce, r, r.OutboundID), Line{Forwarded, forwarded.Neg()}, Line{Held, forwarded})
	e.HoldReason = reason
	return e
}

// Reversal journals the n-th time a credited payment of value v left the
// chain: received +v, loss -v.
func Reversal(t chains.Ticker, r Ref, v decimal.Decimal, n int64) Entry {
	return entry(entledger.EventReversal, t, r, paymentKey(entledger.EventReversal, r, n), Line{Received, v}, Line{Loss, v.Neg()})
}

// Restore journals the payment coming back after its n-th reversal:
// received -v, loss +v.
func Restore(t chains.Ticker, r Ref, v decimal.Decimal, n int64) Entry {
	return entry(entledger.EventRestore, t, r, paymentKey(entledger.EventRestore, r, n), Line{Received, v.Neg()}, Line{Loss, v})
}

// PayoutPlan journals a held payment's value v (on address r.AddressID)
// taken into payout transaction r.OutboundID: held -v, outgoing +v. A
// payment is taken once per transaction.
func PayoutPlan(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	key := "payout-plan:" + strconv.FormatInt(r.PaymentID, 10) + ":" + strconv.FormatInt(r.OutboundID, 10)
	return entry(entledger.EventPayout, t, r, key, Line{Held, v.Neg()}, Line{Outgoing, v})
}

// PayoutUnplan journals a held payment's value v back out of payout
// transaction r.OutboundID, which can never be sent: outgoing -v, held +v,
// held again for reason.
func PayoutUnplan(t chains.Ticker, r Ref, v decimal.Decimal, reason string) Entry {
	key := "payout-unplan:" + strconv.FormatInt(r.PaymentID, 10) + ":" + strconv.FormatInt(r.OutboundID, 10)
	e := entry(entledger.EventPayout, t, r, key, Line{Outgoing, v.Neg()}, Line{Held, v})
	e.HoldReason = reason
	return e
}

// PayoutSend journals payout transaction r.OutboundID sent: what it
// spent (spent, out of outgoing) went to the payout's destinations (paid),
// the operator's payout fee (fee), the network (networkFee), and back to
// the project's payout wallet as change, which leaves the journal here
// (received +change) and comes back as a payment credited to the wallet
// once the chain confirms it (received -change). spent = paid + fee +
// networkFee + change.
func PayoutSend(t chains.Ticker, r Ref, spent, paid, fee, networkFee decimal.Decimal) Entry {
	change := spent.Sub(paid).Sub(fee).Sub(networkFee)
	key := "payout-send:" + strconv.FormatInt(r.OutboundID, 10)
	return entry(entledger.EventPayout, t, r, key,
		Line{Outgoing, spent.Neg()}, Line{Payout, paid}, Line{Fee, fee}, Line{NetworkFee, networkFee}, Line{Received, change})
}

// PayoutPSBTSend journals a sent payout r.OutboundID from the merchant's
// own wallet (a watch-only key; they signed it): paid to the payout's
// destinations and networkFee to the network left the merchant's wallet
// (the change went back to it): direct -(paid+networkFee), payout +paid,
// network_fee +networkFee; the operator's payout fee, which nothing
// deducted, is owed: fee +fee, owed -fee.
func PayoutPSBTSend(t chains.Ticker, r Ref, paid, fee, networkFee decimal.Decimal) Entry {
	key := "payout-psbt:" + strconv.FormatInt(r.OutboundID, 10)
	lines := []Line{{InWallet, paid.Add(networkFee).Neg()}, {Payout, paid}, {NetworkFee, networkFee}}
	if fee.Sign() != 0 {
		lines = append(lines, Line{Fee, fee}, Line{Owed, fee.Neg()})
	}
	return entry(entledger.EventPayout, t, r, key, lines...)
}

// PayoutBounce journals part of a sent payout transaction r.OutboundID
// that a block included and failed (EVM, TRON): paid of what it paid out
// and fee of the operator's payout fee never left the payout wallet, and
// are held again for reason as payment r.PaymentID's: payout -paid, fee
// -fee, held +(paid+fee). The network fee stays journaled: the network was
// paid for the failed execution.
func PayoutBounce(t chains.Ticker, r Ref, paid, fee decimal.Decimal, reason string) Entry {
	key := "payout-bounce:" + strconv.FormatInt(r.PaymentID, 10) + ":" + strconv.FormatInt(r.OutboundID, 10)
	e := entry(entledger.EventPayout, t, r, key, Line{Payout, paid.Neg()}, Line{Fee, fee.Neg()}, Line{Held, paid.Add(fee)})
	e.HoldReason = reason
	return e
}

// SweepPlan journals a held payment's value v (on address r.AddressID)
// taken into sweep transaction r.OutboundID, which moves it to the
// project's payout wallet (account chains): held -v, outgoing +v.
func SweepPlan(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	key := "sweep-plan:" + strconv.FormatInt(r.PaymentID, 10) + ":" + strconv.FormatInt(r.OutboundID, 10)
	return entry(entledger.EventSweep, t, r, key, Line{Held, v.Neg()}, Line{Outgoing, v})
}

// SweepUnplan journals a held payment's value v back out of sweep
// transaction r.OutboundID, which can never be sent: outgoing -v, held +v,
// held again for reason.
func SweepUnplan(t chains.Ticker, r Ref, v decimal.Decimal, reason string) Entry {
	key := "sweep-unplan:" + strconv.FormatInt(r.PaymentID, 10) + ":" + strconv.FormatInt(r.OutboundID, 10)
	e := entry(entledger.EventSweep, t, r, key, Line{Outgoing, v.Neg()}, Line{Held, v})
	e.HoldReason = reason
	return e
}

// SweepSend journals sweep transaction r.OutboundID sent: of what it
// spent, networkFee went to the network and the rest is on its way to the
// payout wallet (swept), until the wallet's payment of it is credited
// (SweepArrive): outgoing -spent, swept +(spent-networkFee), network_fee
// +networkFee.
func SweepSend(t chains.Ticker, r Ref, spent, networkFee decimal.Decimal) Entry {
	key := "sweep-send:" + strconv.FormatInt(r.OutboundID, 10)
	return entry(entledger.EventSweep, t, r, key, Line{Outgoing, spent.Neg()}, Line{Swept, spent.Sub(networkFee)}, Line{NetworkFee, networkFee})
}

// SweepArrive journals the payout wallet's payment r.PaymentID of value v,
// credited (received -v, pending +v), as the arrival of a sweep rather
// than new money: received +v, swept -v.
func SweepArrive(t chains.Ticker, r Ref, v decimal.Decimal) Entry {
	key := "sweep-arrive:" + strconv.FormatInt(r.PaymentID, 10)
	return entry(entledger.EventSweep, t, r, key, Line{Received, v}, Line{Swept, v.Neg()})
}

// SweepBounce journals part of a sent sweep transaction r.OutboundID that
// a block included and failed (EVM, TRON): v never left payment
// r.PaymentID's address and is held again for reason: swept -v, held +v.
func SweepBounce(t chains.Ticker, r Ref, v decimal.Decimal, reason string) Entry {
	key := "sweep-bounce:" + strconv.FormatInt(r.PaymentID, 10) + ":" + strconv.FormatInt(r.OutboundID, 10)
	e := entry(entledger.EventSweep, t, r, key, Line{Swept, v.Neg()}, Line{Held, v})
	e.HoldReason = reason
	return e
}

// Units converts an amount of t's coin to base units; ok is false when it is
// not a whole number of them.
func Units(t chains.Ticker, coins decimal.Decimal) (decimal.Decimal, bool) {
	u := coins.Shift(t.Decimals)
	return u, u.Equal(u.Truncate(0))
}

// Coins converts base units of t's coin to coin units.
func Coins(t chains.Ticker, units decimal.Decimal) decimal.Decimal {
	return units.Shift(-t.Decimals)
}

// Write journals entries within tx, dated at, all their lines in one
// statement (store.InsertRows: nothing is read back). An entry whose lines
// do not sum to zero or are not whole base units is a bug: nothing is
// written and the error says which. An event journaled before fails the
// statement with a unique-constraint error (store.IsConstraintError).
func Write(ctx context.Context, tx *entdb.Tx, d store.Dialect, at time.Time, entries ...Entry) error {
	var rows [][]any
	for _, e := range entries {
		sum := decimal.Zero
		for _, l := range e.Lines {
			u, ok := Units(e.Ticker, l.Amount)
			if !ok {
				return fmt.Errorf("ledger %s: %s %s is not a whole number of %s base units", e.Key, l.Account, l.Amount, e.Ticker.Ticker)
			}
			sum = sum.Add(u)
			if u.IsZero() {
				continue // a zero line moves nothing (a fee of 0)
			}
			var reason any
			if e.HoldReason != "" && l.Account == Held {
				reason = e.HoldReason
			}
			rows = append(rows, []any{
				at, e.Ref.ProjectID, e.Ticker.Ticker, string(e.Event), string(l.Account), u.String(), e.Key,
				nonZero(e.Ref.PaymentID), nonZero(e.Ref.AddressID), nonZero(e.Ref.OutboundID), reason,
			})
		}
		if !sum.IsZero() {
			return fmt.Errorf("ledger %s: lines sum to %s base units, not zero", e.Key, sum)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if _, err := store.InsertRows(ctx, tx, d, entledger.Table, lineColumns, rows, "", false); err != nil {
		return fmt.Errorf("journal %d lines: %w", len(rows), err)
	}
	return nil
}

// lineColumns are the columns Write inserts, in the order of its rows.
var lineColumns = []store.Column{
	{Name: entledger.FieldCreatedAt, PGType: "timestamptz"}, {Name: entledger.FieldProjectID, PGType: "bigint"},
	{Name: entledger.FieldTicker, PGType: "text"}, {Name: entledger.FieldEvent, PGType: "text"},
	{Name: entledger.FieldAccount, PGType: "text"}, {Name: entledger.FieldAmount, PGType: "numeric"},
	{Name: entledger.FieldKey, PGType: "text"}, {Name: entledger.FieldPaymentID, PGType: "bigint"},
	{Name: entledger.FieldAddressID, PGType: "bigint"}, {Name: entledger.FieldOutboundID, PGType: "bigint"},
	{Name: entledger.FieldHoldReason, PGType: "text"},
}

// nonZero is id, or NULL for 0.
func nonZero(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
