package payout

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/address"
)

// ErrPayoutNotFound reports a payout id that does not exist or belongs to
// another project; the two are indistinguishable on purpose.
var ErrPayoutNotFound = kind.New(kind.NotFound, "payout not found",
	kind.Public("payout_id: no payout of this project has this id"))

// ErrRequestNotFound reports a payout request id that does not exist or
// belongs to another project.
var ErrRequestNotFound = kind.New(kind.NotFound, "payout request not found",
	kind.Prefix("request_ids"))

// InsufficientError reports a payout the project's balance does not cover,
// fees included. Nothing was recorded.
type InsufficientError struct {
	// Ticker is the coin; Balance the spendable balance; Needed what the
	// payout needs: Requested, the operator's Fee and the NetworkFee.
	Ticker                                      string
	Balance, Needed, Requested, Fee, NetworkFee decimal.Decimal
}

func (e *InsufficientError) Error() string {
	return fmt.Sprintf("balance: the payout needs %s %s (%s requested, a payout fee of %s and a network fee of %s) and the balance is %s %s",
		e.Needed, e.Ticker, e.Requested, e.Fee, e.NetworkFee, e.Balance, e.Ticker)
}

// Kind is kind.Invalid: a 400, as the merchant must fund the wallet or ask
// for less.
func (e *InsufficientError) Kind() kind.Kind { return kind.Invalid }

// Message is the error's own text: it names both amounts.
func (e *InsufficientError) Message(error) string { return e.Error() }

// invalid reports a request parameter that breaks a rule, naming it.
func invalid(param, format string, args ...any) error {
	return address.Invalid(param, format, args...)
}

// stateError is a request the payout's state does not allow, or that
// raced another.
type stateError struct {
	k   kind.Kind
	msg string
}

func (e *stateError) Error() string        { return e.msg }
func (e *stateError) Kind() kind.Kind      { return e.k }
func (e *stateError) Message(error) string { return e.msg }
func kindPrecondition(format string, args ...any) error {
	return &stateError{k: kind.FailedPrecondition, msg: fmt.Sprintf(format, args...)}
}
func kindAborted(format string, args ...any) error {
	return &stateError{k: kind.Aborted, msg: fmt.Sprintf(format, args...)}
}
