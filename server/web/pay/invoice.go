package pay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	ikind "github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/refund"
	"github.com/payhook/payhook/server/web"
)

func kindOf(segment string) invoice.Kind {
	if segment == "deposit" {
		return invoice.Deposit
	}
	return invoice.Checkout
}

// invoicePageData is the checkout and deposit page.
type invoicePageData struct {
	web.Layout
	// Kind is checkout, deposit or subscription (a renewal).
	Kind string
	// Path is the page's own path (forms post to it).
	Path string
	// StatusPath is its status.json, with the query that selects it.
	StatusPath string
	// PaymentID is the invoice's payment_id.
	PaymentID string
	// Description is item_description.
	Description string
	// Value and Currency are the amount in fiat ("" for an open amount).
	Value, Currency string
	// ExpiresAt is the invoice's expiry (nil: none).
	ExpiresAt *time.Time
	// Now is the server's clock, for the countdown.
	Now time.Time
	// Coins are the coins to choose from.
	Coins []coinChoice
	// PricesDown is true when coins the project accepts are left out of
	// Coins for want of a fresh price.
	PricesDown bool
	// Quote is the chosen coin's address, nil before a coin is chosen.
	Quote *quoteView
	// Status is the live status.
	Status statusView
	// Error is what went wrong with the customer's choice.
	Error string
	// PollMS is the script's poll interval.
	PollMS int64
	// Hidden are extra form fields (a renewal's option).
	Hidden map[string]string
	// Refund is what the payer may ask back, and the refunds asked for
	// (nil: nothing of either).
	Refund *refundView
}

// refundView is the refund section of an invoice page.
type refundView struct {
	// Offer says what the payer may ask back ("" when nothing): the form
	// shows then, asking for an address of Label's coin.
	Offer, Label string
	// Requests are the refunds of the invoice's payments.
	Requests []refundLine
}

// refundLine is one refund as the payer sees it.
type refundLine struct {
	ID, Amount, Label, Address, Text string
}

// coinChoice is one coin the customer may pay with.
type coinChoice struct {
	// Coin is its API name (btc, trc20_usdt); Label is shown.
	Coin, Label string
	// Selected marks the chosen coin.
	Selected bool
}

// quoteView is an address handed out with its quote.
type quoteView struct {
	// Coin and Label name the coin.
	Coin, Label string
	// Address is address_in.
	Address string
	// Amount is the exact amount in the coin ("" for an open amount).
	Amount string
	// Rate is the held rate, in the invoice's currency per coin.
	Rate string
	// URI is the payment URI the QR code carries ("" when the coin has
	// none: the QR carries the address).
	URI template.URL
	// QR is the QR code, a data: URI of a PNG.
	QR template.URL
	// QuoteExpiresAt is when the held rate ends.
	QuoteExpiresAt *time.Time
}

// statusView is the live status, as the page and status.json show it.
type statusView struct {
	// Code is waiting, detected, confirming, paid, partial or expired.
	Code string `json:"status"`
	// Text says it to the customer.
	Text string `json:"text"`
	// Confirmations and Required are the newest payment's depth and the
	// depth that confirms it.
	Confirmations int64 `json:"confirmations"`
	Required      int64 `json:"required"`
	// Due is what is still due in fiat, for partial ("" otherwise).
	Due string `json:"due,omitempty"`
	// Redirect is where to send the customer once paid: redirect_url
	// with success_token ("" when there is none, or it is not http(s)).
	Redirect string `json:"redirect,omitempty"`
	// Final is true once nothing more is expected (paid, expired).
	Final bool `json:"final"`
}

// coins returns the coins the project accepts that can be quoted for inv
// (a fixed amount needs the coin's price in the invoice's currency), and
// whether any was left out for want of a fresh price.
func (h *Handler) coins(ctx context.Context, inv *entdb.Invoice, chosen string) ([]coinChoice, bool, error) {
	p, err := project.Get(ctx, h.cfg.DB, inv.ProjectID)
	if err != nil {
		return nil, false, err
	}
	accepted := map[string]bool{}
	for _, t := range p.Tickers {
		accepted[t] = true
	}
	var out []coinChoice
	stale := false
	for _, t := range h.cfg.Addresses.Registry().All() {
		if len(accepted) > 0 && !accepted[t.Ticker] {
			continue
		}
		if inv.Value != nil {
			if _, ok := invoice.Rate(h.cfg.Prices, t, inv.Currency); !ok {
				stale = stale || price.Why(h.cfg.Prices, t.Ticker, inv.Currency) != nil
				continue
			}
		}
		name := invoice.TickerName(t)
		out = append(out, coinChoice{Coin: name, Label: web.CoinLabel(t), Selected: name == chosen})
	}
	return out, stale, nil
}

// invoicePage shows a checkout or deposit: the coins to choose from, and
// once one is chosen (?coin=), its address, amount and status.
func (h *Handler) invoicePage(w http.ResponseWriter, r *http.Request, kind invoice.Kind, id string) {
	inv, err := h.cfg.Invoices.Find(r.Context(), kind, id)
	if errors.Is(err, invoice.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "find invoice", err)
		return
	}
	h.showInvoice(w, r, inv, r.URL.Path, r.URL.Query().Get("coin"), "", http.StatusOK, nil)
}

// showInvoice renders inv's page at path with coin chosen (when its
// address was handed out) and errMsg; hidden are extra form fields.
func (h *Handler) showInvoice(w http.ResponseWriter, r *http.Request, inv *entdb.Invoice, path, coin, errMsg string, status int, hidden map[string]string) {
	ctx := r.Context()
	d, err := h.invoiceData(ctx, inv, path, coin)
	if err != nil {
		h.pages.Fail(w, "invoice page", err)
		return
	}
	d.Error, d.Hidden = errMsg, hidden
	h.pages.Render(w, status, "invoice", d)
}

func (h *Handler) invoiceData(ctx context.Context, inv *entdb.Invoice, path, coin string) (*invoicePageData, error) {
	l, err := h.cfg.Invoices.Logs(ctx, invoice.Kind(inv.Kind), inv.ProjectID, inv.PublicID)
	if err != nil {
		return nil, err
	}
	now := h.cfg.Now()
	d := &invoicePageData{
		Kind: string(inv.Kind), Path: path, PaymentID: inv.PublicID, Description: inv.ItemDescription,
		Currency: inv.Currency, ExpiresAt: inv.ExpiresAt, Now: now, PollMS: h.cfg.PollInterval.Milliseconds(),
	}
	d.Title = "Payment"
	if inv.Kind == "deposit" {
		d.Title = "Deposit"
	}
	if inv.Value != nil {
		d.Value = inv.Value.StringFixed(l.FiatPlaces)
	}
	if coin != "" {
		if q, err := h.quote(l, coin); err == nil {
			d.Quote = q
		}
	}
	if d.Quote == nil {
		coin = ""
	}
	if d.Coins, d.PricesDown, err = h.coins(ctx, inv, coin); err != nil {
		return nil, err
	}
	d.Status = h.status(l, d.Quote)
	st := url.Values{}
	if d.Quote != nil {
		st.Set("coin", d.Quote.Coin)
	}
	if inv.Kind == "subscription" {
		st.Set("payment_id", inv.PublicID)
	}
	d.StatusPath = path + "status.json"
	if len(st) > 0 {
		d.StatusPath += "?" + st.Encode()
	}
	if d.Refund, err = h.refundView(ctx, l); err != nil {
		return nil, err
	}
	if d.Refund != nil && d.Refund.Offer != "" {
		d.Refresh = 0 // the payer is typing an address
	} else if !d.Status.Final {
		d.Refresh = 15
	} else if d.Status.Redirect != "" {
		d.Refresh, d.RefreshURL = 3, d.Status.Redirect
	}
	return d, nil
}

// refundView is the refund section of l's page: what the payer may ask
// back (refund.Service.Candidates) and the refunds asked for.
func (h *Handler) refundView(ctx context.Context, l *invoice.Logs) (*refundView, error) {
	kind := invoice.Kind(l.Invoice.Kind)
	if h.cfg.Refunds == nil || (kind != invoice.Checkout && kind != invoice.Deposit) {
		return nil, nil
	}
	cands, err := h.cfg.Refunds.Candidates(ctx, l)
	if err != nil {
		return nil, err
	}
	rs, err := h.cfg.Refunds.Requested(ctx, l.Invoice)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 && len(rs) == 0 {
		return nil, nil
	}
	v := &refundView{}
	if len(cands) > 0 {
		c := cands[0]
		label := web.CoinLabel(c.Ticker)
		total := decimal.Zero
		for _, c := range cands {
			total = total.Add(c.Value)
		}
		amount := payload.FormatAmount(total, c.Ticker.Decimals) + " " + label
		switch c.Reason {
		case refund.ReasonOverpaid:
			v.Offer = "You paid " + amount + " more than was due. Give an address to get it back."
		case refund.ReasonLate:
			v.Offer = "Your payment of " + amount + " arrived after this payment request expired. Give an address to get it back."
		default:
			v.Offer = "This payment request expired before it was paid in full. Give an address to get your " + amount + " back."
		}
		v.Label = label
	}
	for _, r := range rs {
		t, err := h.cfg.Addresses.Lookup(r.Ticker)
		if err != nil {
			continue
		}
		text := map[string]string{
			"requested": "asked for; the shop will send it",
			"pending":   "being sent",
			"completed": "sent",
			"failed":    "could not be sent; the shop will contact you",
		}[string(r.Status)]
		if r.Txid != "" {
			text += " (transaction " + r.Txid + ")"
		}
		v.Requests = append(v.Requests, refundLine{
			ID: r.UUID, Amount: payload.FormatAmount(r.Value, t.Decimals), Label: web.CoinLabel(t), Address: r.Address, Text: text,
		})
	}
	return v, nil
}

// invoiceRefund records the refund the payer asks for on the page
// (refund.Service.PayerRequest) and shows the page again.
func (h *Handler) invoiceRefund(w http.ResponseWriter, r *http.Request, kind invoice.Kind, id string) {
	if h.cfg.Refunds == nil {
		h.pages.NotFound(w)
		return
	}
	inv, ok := h.postedInvoice(w, r, kind, id)
	if !ok {
		return
	}
	ctx := r.Context()
	page := strings.TrimSuffix(r.URL.Path, "refund")
	l, err := h.cfg.Invoices.Logs(ctx, kind, inv.ProjectID, inv.PublicID)
	if err != nil {
		h.pages.Fail(w, "invoice logs", err)
		return
	}
	_, err = h.cfg.Refunds.PayerRequest(ctx, l, strings.TrimSpace(r.PostForm.Get("address")))
	switch k := ikind.Of(err); {
	case err == nil:
		http.Redirect(w, r, page, http.StatusSeeOther)
	case k == ikind.Invalid || k == ikind.FailedPrecondition:
		h.showInvoice(w, r, inv, page, "", ikind.Message(err), http.StatusBadRequest, nil)
	default:
		h.pages.Fail(w, "record a refund request", err)
	}
}

// quote returns the address handed out for coin among l's addresses.
func (h *Handler) quote(l *invoice.Logs, coin string) (*quoteView, error) {
	t, err := h.cfg.Addresses.Lookup(strings.Replace(strings.TrimSpace(coin), "_", "/", 1))
	if err != nil {
		return nil, err
	}
	for _, a := range l.Addresses {
		if a.Ticker != t.Ticker {
			continue
		}
		q := &quoteView{Coin: invoice.TickerName(t), Label: web.CoinLabel(t), Address: a.AddressIn, QuoteExpiresAt: a.QuoteExpiresAt}
		if a.QuoteValueCoin != nil {
			q.Amount = payload.FormatAmount(*a.QuoteValueCoin, t.Decimals)
		}
		if a.QuoteRate != nil {
			q.Rate = a.QuoteRate.Round(l.FiatPlaces).String()
		}
		content := a.AddressIn
		if uri, err := address.PaymentURI(t, a.AddressIn, a.QuoteValueCoin); err == nil {
			q.URI, content = template.URL(uri), uri
		}
		png, err := qrcode.Encode(content, qrcode.Medium, 256)
		if err != nil {
			return nil, err
		}
		q.QR = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
		return q, nil
	}
	return nil, invoice.ErrNotFound
}

// status is the live status of l, for the chosen quote q (nil: none).
func (h *Handler) status(l *invoice.Logs, q *quoteView) statusView {
	inv := l.Invoice
	var st statusView
	switch l.Status {
	case invoice.Paid:
		st = statusView{Code: "paid", Text: "Paid. Thank you!", Final: inv.Kind != "deposit"}
		if inv.Kind == "deposit" {
			st.Text = "Received. Thank you! You may send more to the same address."
		}
		st.Redirect = redirect(inv)
	case invoice.Expired:
		st = statusView{Code: "expired", Text: "This payment request has expired.", Final: true}
	case invoice.Partial:
		st = statusView{Code: "partial", Text: "Partly paid."}
		if inv.Value != nil {
			due := inv.Value.Sub(l.PaidFiat)
			if due.IsPositive() {
				st.Due = due.RoundUp(l.FiatPlaces).StringFixed(l.FiatPlaces) + " " + inv.Currency
				st.Text = "Partly paid: " + st.Due + " still due."
			}
		}
	case invoice.Pending:
		st = statusView{Code: "detected", Text: "Payment detected, waiting for confirmations."}
		if p := newest(l.Payments); p != nil {
			st.Confirmations = p.Confirmations
			if a := p.Edges.Address; a != nil {
				st.Required = int64(a.RequiredConfirmations)
			}
			if p.Confirmations > 0 {
				st.Code = "confirming"
				st.Text = "Payment detected: " + strconv.FormatInt(p.Confirmations, 10) + " of " + strconv.FormatInt(st.Required, 10) + " confirmations."
			}
		}
	default:
		st = statusView{Code: "waiting", Text: "Waiting for your payment."}
		if q == nil {
			st.Text = "Choose a coin to pay with."
		}
	}
	return st
}

// newest is the newest payment that counts (neither dropped nor reverted).
func newest(ps []*entdb.Payment) *entdb.Payment {
	for i := len(ps) - 1; i >= 0; i-- {
		if s := ps[i].Status; s != entpayment.StatusDropped && s != entpayment.StatusReverted {
			return ps[i]
		}
	}
	return nil
}

// redirect is inv's redirect_url with success_token added, "" when there
// is none or it is not an absolute http(s) URL (checked again here: the
// page never sends a customer to javascript: or data:).
func redirect(inv *entdb.Invoice) string {
	if inv.RedirectURL == "" {
		return ""
	}
	u, err := url.Parse(inv.RedirectURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	if inv.SuccessToken != "" {
		q := u.Query()
		q.Set("success_token", inv.SuccessToken)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// postedInvoice reads the (small) form of a POST to invoice id's page and
// finds the invoice; false when it answered (a bad form, no such invoice).
func (h *Handler) postedInvoice(w http.ResponseWriter, r *http.Request, kind invoice.Kind, id string) (*entdb.Invoice, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return nil, false
	}
	inv, err := h.cfg.Invoices.Find(r.Context(), kind, id)
	if errors.Is(err, invoice.ErrNotFound) {
		h.pages.NotFound(w)
		return nil, false
	}
	if err != nil {
		h.pages.Fail(w, "find invoice", err)
		return nil, false
	}
	return inv, true
}

// invoiceChoose hands out the address of the coin the customer chose, as
// the merchant API's address request does, then shows it (POST, redirect,
// GET: reloading never posts again).
func (h *Handler) invoiceChoose(w http.ResponseWriter, r *http.Request, kind invoice.Kind, id string) {
	inv, ok := h.postedInvoice(w, r, kind, id)
	if !ok {
		return
	}
	ctx := r.Context()
	coin := r.PostForm.Get("coin")
	caller, err := h.cfg.Invoices.HostedCaller(ctx, inv.ProjectID)
	if err == nil {
		_, err = h.cfg.Invoices.Address(ctx, kind, caller, id, coin)
	}
	if msg, status, ok := customerError(err); ok {
		h.showInvoice(w, r, inv, r.URL.Path, "", msg, status, nil)
		return
	}
	if err != nil {
		h.pages.Fail(w, "hand out address", err)
		return
	}
	http.Redirect(w, r, r.URL.Path+"?coin="+url.QueryEscape(coin), http.StatusSeeOther)
}

// pricesDownText tells the payer what to do when no fresh price can be had.
const pricesDownText = "Prices are unavailable right now; try again in a few minutes or contact the merchant."

// customerError returns what the customer may read of err, and the page's
// status: the reason of a refused choice (a coin without a price, below
// the minimum, expired: 400; one address too many: 409), or what to do
// when prices are down (503).
func customerError(err error) (string, int, bool) {
	var ie *invoice.InvalidError
	if errors.As(err, &ie) {
		return ie.Reason, http.StatusBadRequest, true
	}
	var ce *invoice.CapError
	if errors.As(err, &ce) {
		return ce.Reason, http.StatusConflict, true
	}
	if errors.Is(err, invoice.ErrNoKey) {
		return "This shop cannot take payments right now.", http.StatusBadRequest, true
	}
	if errors.Is(err, price.ErrStale) {
		return pricesDownText, http.StatusServiceUnavailable, true
	}
	return "", 0, false
}

// invoiceStatus answers the live status of a checkout or deposit as JSON.
func (h *Handler) invoiceStatus(w http.ResponseWriter, r *http.Request, kind invoice.Kind, id string) {
	inv, err := h.cfg.Invoices.Find(r.Context(), kind, id)
	if errors.Is(err, invoice.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, map[string]string{"status": "not_found"})
		return
	}
	if err != nil {
		h.cfg.Logger.Error("hosted page: status", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"status": "error"})
		return
	}
	h.writeStatus(w, r, inv)
}

func (h *Handler) writeStatus(w http.ResponseWriter, r *http.Request, inv *entdb.Invoice) {
	l, err := h.cfg.Invoices.Logs(r.Context(), invoice.Kind(inv.Kind), inv.ProjectID, inv.PublicID)
	if err != nil {
		h.cfg.Logger.Error("hosted page: status", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"status": "error"})
		return
	}
	var q *quoteView
	if coin := r.URL.Query().Get("coin"); coin != "" {
		q = &quoteView{Coin: coin}
	}
	writeJSON(w, http.StatusOK, h.status(l, q))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
