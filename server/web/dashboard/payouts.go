package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/merchant/refund"
	"github.com/payhook/payhook/server/web"
)

// payoutsPath is the payouts page: the project's payouts waiting for
// approval (above its limits), each with its outputs and the balance it
// would spend, and an approve button; those from the merchant's key
// waiting for their signature (psbt.go); refunds payers asked for; and
// payments of another asset.
const payoutsPath = Prefix + "payouts/"

// payoutsData is the payouts page.
type payoutsData struct {
	dashLayout
	// Rows are the payouts waiting for approval, oldest first.
	Rows []payoutRow
	// Refunds are the refunds payers asked for on the hosted pages,
	// waiting for approval, oldest first.
	Refunds []refundRow
	// WrongAssets are the payments of another asset than their address
	// takes, held until a user forwards or refunds them.
	WrongAssets []wrongAssetRow
	// Signature are the payouts from the merchant's watch-only key
	// waiting for their signature (psbt.go), oldest first; Signed those
	// whose signed PSBT was accepted, newest first.
	Signature []psbtRow
	Signed    []signedRow
	// Accepted is the payout whose signed PSBT was just accepted.
	Accepted *signedRow
	// Done says what the last action did; Error why it was refused.
	Done, Error string
}

// payoutRow is one payout waiting for approval.
type payoutRow struct {
	ID                                      int64
	Coin, Total, Fee, Reason, Balance, When string
	Outputs                                 []payoutOutput
}

// refundRow is one refund a payer asked for.
type refundRow struct {
	ID, PaymentID, TxidIn, Coin, Amount, Address, Reason, When string
}

// wrongAssetRow is one payment held as wrong_asset.
type wrongAssetRow struct {
	ID                                            int64
	Coin, Expected, Amount, Address, TxidIn, When string
	// Forwardable: its address has a destination.
	Forwardable bool
}

// payoutOutput is one destination of a payout.
type payoutOutput struct{ Address, Amount string }

// payoutRoutes serves /dashboard/payouts/ (GET),
// /dashboard/payouts/ID/approve (POST) and a payout's PSBT,
// /dashboard/payouts/ID/psbt (GET downloads it, POST takes it signed).
func (h *Handler) payoutRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	sub, ok := strings.CutPrefix(rest, "payouts/")
	if !ok {
		if rest == "payouts" && get {
			http.Redirect(w, r, payoutsPath, http.StatusMovedPermanently)
			return true
		}
		return false
	}
	switch {
	case sub == "" && get:
		h.payoutsPage(w, r, s, http.StatusOK, r.URL.Query().Get("done"), "")
	case isPSBTPath(rest) && get:
		h.downloadPSBT(w, r, s, psbtID(sub))
	case isPSBTPath(rest) && post:
		h.submitPSBT(w, r, s, psbtID(sub))
	case strings.HasPrefix(sub, "wrong-asset/") && post:
		h.wrongAssetAction(w, r, s, strings.TrimPrefix(sub, "wrong-asset/"))
	case strings.HasPrefix(sub, "refund/") && strings.HasSuffix(sub, "/approve") && post:
		h.approveRefund(w, r, s, strings.TrimSuffix(strings.TrimPrefix(sub, "refund/"), "/approve"))
	case strings.HasSuffix(sub, "/approve") && post:
		h.approvePayout(w, r, s, strings.TrimSuffix(sub, "/approve"))
	case strings.HasSuffix(sub, "/approve"):
		web.MethodNotAllowed(w, "POST")
	default:
		h.pages.NotFound(w)
	}
	return true
}

func (h *Handler) payoutsPage(w http.ResponseWriter, r *http.Request, s *session, status int, done, refusal string) {
	h.payoutsPageWith(w, r, s, status, func(d *payoutsData) *psbtRefusal {
		d.Done, d.Error = done, refusal
		return nil
	})
}

// payoutsPageWith renders the payouts page with status, set adjusting it
// (and naming the PSBT upload it refuses, if any).
func (h *Handler) payoutsPageWith(w http.ResponseWriter, r *http.Request, s *session, status int, set func(*payoutsData) *psbtRefusal) {
	d := payoutsData{dashLayout: h.layoutOf(r, s, "Payouts", "payouts")}
	refused := set(&d)
	if h.cfg.Payouts == nil {
		h.pages.Render(w, status, "payouts", d)
		return
	}
	if err := h.psbtPayouts(r, s.user.ProjectID, &d, refused); err != nil {
		h.pages.Fail(w, "list payouts to sign", err)
		return
	}
	if id, err := strconv.ParseInt(r.URL.Query().Get("signed"), 10, 64); err == nil && status == http.StatusOK {
		if got, err := h.cfg.Payouts.GetPSBT(r.Context(), payout.Caller{ProjectID: s.user.ProjectID}, id); err == nil && got.Signed {
			d.Accepted = &signedRow{ID: id, Coin: got.Payout.Ticker, Status: string(got.Payout.Status), TxID: got.TxID}
		}
	}
	waiting, err := h.cfg.Payouts.Waiting(r.Context(), s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "list payouts", err)
		return
	}
	for _, info := range waiting {
		p := info.Payout
		row := payoutRow{
			ID: p.ID, Coin: p.Ticker, Total: p.TotalRequested.String(), Reason: p.ApprovalReason,
			When: p.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
		}
		for _, rq := range info.Requests {
			row.Outputs = append(row.Outputs, payoutOutput{Address: rq.Address, Amount: rq.Value.String()})
		}
		if b, err := h.cfg.Payouts.Balance(r.Context(), payout.Caller{ProjectID: s.user.ProjectID}, p.Ticker); err == nil {
			row.Balance = b.String()
		}
		d.Rows = append(d.Rows, row)
	}
	if h.cfg.Refunds != nil {
		refunds, err := h.cfg.Refunds.Waiting(r.Context(), s.user.ProjectID)
		if err != nil {
			h.pages.Fail(w, "list refunds", err)
			return
		}
		for _, i := range refunds {
			rf := i.Refund
			d.Refunds = append(d.Refunds, refundRow{
				ID: rf.UUID, PaymentID: i.PaymentID, TxidIn: i.TxidIn, Coin: i.Coin, Amount: rf.Value.String(),
				Address: rf.Address, Reason: rf.Reason, When: rf.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
			})
		}
	}
	if h.cfg.Refunds != nil {
		ps, err := h.cfg.Refunds.WrongAssets(r.Context(), s.user.ProjectID)
		if err != nil {
			h.pages.Fail(w, "list wrong-asset payments", err)
			return
		}
		for _, p := range ps {
			a := p.Edges.Address
			d.WrongAssets = append(d.WrongAssets, wrongAssetRow{
				ID: p.ID, Coin: invoice.CoinName(p.Ticker), Expected: invoice.CoinName(a.Ticker), Amount: p.ValueCoin.String(),
				Address: a.AddressIn, TxidIn: p.TxidIn, When: p.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
				Forwardable: len(a.Destinations) > 0 && h.cfg.Payments != nil,
			})
		}
	}
	h.pages.Render(w, status, "payouts", d)
}

// wrongAssetAction forwards (ID/forward) or refunds (ID/refund, to the
// form's address) the user's project's payment ID held as wrong_asset.
func (h *Handler) wrongAssetAction(w http.ResponseWriter, r *http.Request, s *session, rest string) {
	raw, action, _ := strings.Cut(rest, "/")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || h.cfg.Refunds == nil || (action != "forward" && action != "refund") {
		h.pages.NotFound(w)
		return
	}
	ps, err := h.cfg.Refunds.WrongAssets(r.Context(), s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "wrong-asset payments", err)
		return
	}
	var p *entdb.Payment
	for _, q := range ps {
		if q.ID == id {
			p = q
		}
	}
	if p == nil {
		h.pages.NotFound(w)
		return
	}
	caller, err := h.cfg.Invoices.HostedCaller(r.Context(), s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "wrong-asset payment", err)
		return
	}
	c := payout.Caller{APIKeyID: caller.APIKeyID, ProjectID: s.user.ProjectID}
	if action == "forward" && h.cfg.Payments != nil {
		_, err = h.cfg.Refunds.ForwardWrongAsset(r.Context(), c, h.cfg.Payments, p.Ticker, p.TxidIn)
	} else {
		_, err = h.cfg.Refunds.RefundWrongAsset(r.Context(), c, p.Ticker, p.TxidIn, strings.TrimSpace(r.PostFormValue("address")), "")
	}
	switch k := kind.Of(err); {
	case err == nil:
		http.Redirect(w, r, payoutsPath+"?done=wrong-asset-"+action, http.StatusSeeOther)
	case k == kind.Invalid || k == kind.NotFound || k == kind.FailedPrecondition || k == kind.Aborted:
		h.payoutsPage(w, r, s, http.StatusBadRequest, "", kind.Message(err))
	default:
		h.pages.Fail(w, "wrong-asset payment", err)
	}
}

// approveRefund approves refund id of the user's project that a payer
// asked for: its payout is queued and sent now. A refusal (not enough
// balance, not waiting) is shown on the page with its reason.
func (h *Handler) approveRefund(w http.ResponseWriter, r *http.Request, s *session, id string) {
	if h.cfg.Refunds == nil || id == "" {
		h.pages.NotFound(w)
		return
	}
	_, _, err := h.cfg.Refunds.Approve(r.Context(), s.user.ProjectID, id, s.user.Email)
	switch k := kind.Of(err); {
	case err == nil:
		http.Redirect(w, r, payoutsPath+"?done=refund-approved", http.StatusSeeOther)
	case errors.Is(err, refund.ErrRefundNotFound):
		h.pages.NotFound(w)
	case k == kind.Invalid || k == kind.FailedPrecondition || k == kind.Aborted:
		h.payoutsPage(w, r, s, http.StatusBadRequest, "", kind.Message(err))
	default:
		h.pages.Fail(w, "approve refund", err)
	}
}

// approvePayout approves payout id of the user's project: it is queued
// and sent now. A refusal (not enough balance, not waiting) is shown on
// the page with its reason.
func (h *Handler) approvePayout(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 || h.cfg.Payouts == nil {
		h.pages.NotFound(w)
		return
	}
	_, err = h.cfg.Payouts.Approve(r.Context(), s.user.ProjectID, id, s.user.Email)
	switch k := kind.Of(err); {
	case err == nil:
		http.Redirect(w, r, payoutsPath+"?done=approved-"+strconv.FormatInt(id, 10), http.StatusSeeOther)
	case errors.Is(err, payout.ErrPayoutNotFound):
		h.pages.NotFound(w)
	case k == kind.Invalid || k == kind.FailedPrecondition || k == kind.Aborted:
		h.payoutsPage(w, r, s, http.StatusBadRequest, "", kind.Message(err))
	default:
		h.pages.Fail(w, "approve payout", err)
	}
}
