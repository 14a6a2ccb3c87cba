package pay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/payhook/payhook/chains"
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
	"github.com/payhook/payhook/server/web/pay/i18n"
)

func kindOf(segment string) invoice.Kind {
	if segment == "deposit" {
		return invoice.Deposit
	}
	return invoice.Checkout
}

// chrome is what every hosted page shows around its content: the frame,
// the merchant's identity, the language switch and the script's words.
type chrome struct {
	web.Layout
	// Brand is the merchant's identity.
	Brand brandView
	// Langs is the language switch.
	Langs []langLink
	// JS are the words the script shows, in the page's language.
	JS jsWords
}

// jsWords are the script's words (data- attributes of the body): the copy
// buttons' and the countdown's ("{t} left", {t} replaced by the time).
type jsWords struct {
	Copy, Copied, Left, Expired string
}

// chromeOf returns the chrome of a page of project p at path (the page's
// own path, below which its logo and stylesheet are served) for r, in
// pr's language.
func (h *Handler) chromeOf(r *http.Request, pr *i18n.Printer, p *entdb.Project, path, title string) chrome {
	brand, css := brandOf(p, path)
	return chrome{
		Layout: web.Layout{Title: title, Lang: pr.Language.Code, Stylesheet: css},
		Brand:  brand,
		Langs:  h.langLinks(r, pr),
		JS:     jsWords{Copy: pr.T("pay.copy"), Copied: pr.T("pay.copied"), Left: pr.T("pay.left", "{t}"), Expired: pr.T("pay.expired_short")},
	}
}

// invoicePageData is the checkout and deposit page.
type invoicePageData struct {
	chrome
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
	// Done is true once the invoice is paid and nothing more is expected
	// (not a deposit): the payment instructions and the countdown are
	// gone.
	Done bool
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
	// Coin is its API name (btc, trc20_usdt); Label is shown; Symbol is
	// the coin's (USDT), after an amount.
	Coin, Label, Symbol string
	// Icon is the URL of its icon.
	Icon string
	// Amount is what the invoice's value is in the coin now ("" for an
	// open amount): the quote choosing it would hold.
	Amount string
	// Selected marks the chosen coin.
	Selected bool
	// Plans are, on a subscription page, what each plan option costs in
	// the coin now (the quote choosing both would hold).
	Plans []planAmount

	ticker chains.Ticker
}

// planAmount is what a subscription's plan option costs in one coin.
type planAmount struct {
	// Option is the option's period (1m); Label says it (1 month).
	Option, Label string
	// Amount is the option's value in the coin.
	Amount string
}

// quoteView is an address handed out with its quote.
type quoteView struct {
	// Coin and Label name the coin; Icon is its icon's URL.
	Coin, Label, Icon string
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

// coins returns the coins project p accepts that can be quoted for inv
// (a fixed amount needs the coin's price in the invoice's currency), in
// the project's order of preference (its accepted tickers as listed; every
// offered coin, in the registry's order, when it lists none), each with
// its icon and, for a fixed amount, what the value is in it now; and
// whether any was left out for want of a fresh price.
func (h *Handler) coins(p *entdb.Project, inv *entdb.Invoice, chosen string) ([]coinChoice, bool) {
	offered := h.cfg.Addresses.Registry().All()
	order := offered
	if len(p.Tickers) > 0 {
		order = nil
		seen := map[string]bool{}
		for _, name := range p.Tickers {
			t, err := h.cfg.Addresses.Lookup(name)
			if err != nil || seen[t.Ticker] {
				continue // no longer offered
			}
			seen[t.Ticker] = true
			order = append(order, t)
		}
	}
	var out []coinChoice
	stale := false
	for _, t := range order {
		c := coinChoice{Coin: invoice.TickerName(t), Label: web.CoinLabel(t), Symbol: strings.ToUpper(t.Coin), Icon: h.iconOf(t.Coin), ticker: t}
		if inv.Value != nil {
			rate, ok := invoice.Rate(h.cfg.Prices, t, inv.Currency)
			if !ok {
				stale = stale || price.Why(h.cfg.Prices, t.Ticker, inv.Currency) != nil
				continue
			}
			if inv.Value.IsPositive() {
				c.Amount = payload.FormatAmount(invoice.QuoteCoin(*inv.Value, rate, t.Decimals), t.Decimals)
			}
		}
		c.Selected = c.Coin == chosen
		out = append(out, c)
	}
	return out, stale
}

// invoicePage shows a checkout or deposit: the coins to choose from, and
// once one is chosen (?coin=), its address, amount and status.
func (h *Handler) invoicePage(w http.ResponseWriter, r *http.Request, kind invoice.Kind, id string) {
	inv, err := h.cfg.Invoices.Find(r.Context(), kind, id)
	if errors.Is(err, invoice.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.fail(w, r, "find invoice", err)
		return
	}
	h.showInvoice(w, r, inv, r.URL.Path, r.URL.Query().Get("coin"), "", http.StatusOK, nil)
}

// showInvoice renders inv's page at path with coin chosen (when its
// address was handed out) and errMsg; hidden are extra form fields.
func (h *Handler) showInvoice(w http.ResponseWriter, r *http.Request, inv *entdb.Invoice, path, coin, errMsg string, status int, hidden map[string]string) {
	pr := h.printer(w, r)
	p, err := project.Get(r.Context(), h.cfg.DB, inv.ProjectID)
	if err != nil {
		h.fail(w, r, "invoice page", err)
		return
	}
	d, err := h.invoiceData(r.Context(), pr, p, inv, path, coin)
	if err != nil {
		h.fail(w, r, "invoice page", err)
		return
	}
	d.chrome = h.chromeOf(r, pr, p, path, d.Title)
	d.Refresh, d.RefreshURL = d.refresh()
	d.Error, d.Hidden = errMsg, hidden
	h.render(w, pr, status, "invoice", d)
}

// invoiceData is inv's page (of project p) at path, in pr's language,
// without its chrome.
func (h *Handler) invoiceData(ctx context.Context, pr *i18n.Printer, p *entdb.Project, inv *entdb.Invoice, path, coin string) (*invoicePageData, error) {
	l, err := h.cfg.Invoices.Logs(ctx, invoice.Kind(inv.Kind), inv.ProjectID, inv.PublicID)
	if err != nil {
		return nil, err
	}
	now := h.cfg.Now()
	d := &invoicePageData{
		Kind: string(inv.Kind), Path: path, PaymentID: inv.PublicID, Description: inv.ItemDescription,
		Currency: inv.Currency, ExpiresAt: inv.ExpiresAt, Now: now, PollMS: h.cfg.PollInterval.Milliseconds(),
	}
	d.Title = pr.T("title.payment")
	if inv.Kind == "deposit" {
		d.Title = pr.T("title.deposit")
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
	d.Coins, d.PricesDown = h.coins(p, inv, coin)
	d.Status = h.status(ctx, pr, l, d.Quote)
	d.Done = d.Status.Code == "paid" && d.Status.Final
	st := url.Values{"lang": {pr.Language.Code}}
	if d.Quote != nil {
		st.Set("coin", d.Quote.Coin)
	}
	if inv.Kind == "subscription" {
		st.Set("payment_id", inv.PublicID)
	}
	d.StatusPath = path + "status.json?" + st.Encode()
	if d.Refund, err = h.refundView(ctx, pr, l); err != nil {
		return nil, err
	}
	return d, nil
}

// refresh is the page's <noscript> refresh: none while the payer may
// type a refund address, every 15 seconds while the status may change,
// and to the shop once paid with a redirect.
func (d *invoicePageData) refresh() (int, string) {
	switch {
	case d.Refund != nil && d.Refund.Offer != "":
		return 0, "" // the payer is typing an address
	case !d.Status.Final:
		return 15, ""
	case d.Status.Redirect != "":
		return 3, d.Status.Redirect
	}
	return 0, ""
}

// refundView is the refund section of l's page: what the payer may ask
// back (refund.Service.Candidates) and the refunds asked for.
func (h *Handler) refundView(ctx context.Context, pr *i18n.Printer, l *invoice.Logs) (*refundView, error) {
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
			v.Offer = pr.T("refund.overpaid", amount)
		case refund.ReasonLate:
			v.Offer = pr.T("refund.late", amount)
		default:
			v.Offer = pr.T("refund.expired", amount)
		}
		v.Label = label
	}
	for _, r := range rs {
		t, err := h.cfg.Addresses.Lookup(r.Ticker)
		if err != nil {
			continue
		}
		text := pr.T("refund." + string(r.Status))
		if r.Txid != "" {
			text += " " + pr.T("refund.txid", r.Txid)
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
		h.notFound(w, r)
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
		h.fail(w, r, "invoice logs", err)
		return
	}
	_, err = h.cfg.Refunds.PayerRequest(ctx, l, strings.TrimSpace(r.PostForm.Get("address")))
	switch k := ikind.Of(err); {
	case err == nil:
		http.Redirect(w, r, page, http.StatusSeeOther)
	case k == ikind.Invalid || k == ikind.FailedPrecondition:
		msg, _, ok := customerError(h.printer(w, r), err)
		if !ok {
			msg = payerText(h.printer(w, r), nil)
		}
		h.showInvoice(w, r, inv, page, "", msg, http.StatusBadRequest, nil)
	default:
		h.fail(w, r, "record a refund request", err)
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
		q := &quoteView{Coin: invoice.TickerName(t), Label: web.CoinLabel(t), Icon: h.iconOf(t.Coin), Address: a.AddressIn, QuoteExpiresAt: a.QuoteExpiresAt}
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

// status is the live status of l, for the chosen quote q (nil: none), in
// pr's language. A payment waiting in a mempool (Config.Mempool), which is
// no payment yet, shows as detected on an invoice still waiting or partly
// paid: the payer sees it at once, the merchant hears of it from its
// block.
func (h *Handler) status(ctx context.Context, pr *i18n.Printer, l *invoice.Logs, q *quoteView) statusView {
	inv := l.Invoice
	var st statusView
	switch l.Status {
	case invoice.Paid:
		st = statusView{Code: "paid", Text: pr.T("status.paid"), Final: inv.Kind != "deposit"}
		if inv.Kind == "deposit" {
			st.Text = pr.T("status.received")
		}
		st.Redirect = redirect(inv)
	case invoice.Expired:
		st = statusView{Code: "expired", Text: pr.T("status.expired"), Final: true}
	case invoice.Partial:
		st = statusView{Code: "partial", Text: pr.T("status.partial")}
		if inv.Value != nil {
			due := inv.Value.Sub(l.PaidFiat)
			if due.IsPositive() {
				st.Due = due.RoundUp(l.FiatPlaces).StringFixed(l.FiatPlaces) + " " + inv.Currency
				st.Text = pr.T("status.partial_due", st.Due)
			}
		}
	case invoice.Pending:
		st = statusView{Code: "detected", Text: pr.T("status.detected")}
		if p := newest(l.Payments); p != nil {
			st.Confirmations = p.Confirmations
			if a := p.Edges.Address; a != nil {
				st.Required = int64(a.RequiredConfirmations)
			}
			if p.Confirmations > 0 {
				st.Code = "confirming"
				st.Text = pr.T("status.confirming", p.Confirmations, st.Required)
			}
		}
	default:
		st = statusView{Code: "waiting", Text: pr.T("status.waiting")}
		if q == nil {
			st.Text = pr.T("status.choose")
		}
	}
	if (st.Code == "waiting" || st.Code == "partial") && h.inMempool(ctx, l) {
		st.Code, st.Text = "detected", pr.T("status.detected")
	}
	return st
}

// inMempool reports whether a transfer to one of l's addresses waits in
// its chain's mempool that is not already one of l's payments.
func (h *Handler) inMempool(ctx context.Context, l *invoice.Logs) bool {
	if h.cfg.Mempool == nil {
		return false
	}
	known := make(map[string]bool, len(l.Payments))
	for _, p := range l.Payments {
		known[p.TxidIn] = true
	}
	for _, a := range l.Addresses {
		for _, t := range h.cfg.Mempool.Detected(ctx, a.Ticker, a.AddressIn) {
			if !known[t.TxID] {
				return true
			}
		}
	}
	return false
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
		h.badForm(w, r)
		return nil, false
	}
	inv, err := h.cfg.Invoices.Find(r.Context(), kind, id)
	if errors.Is(err, invoice.ErrNotFound) {
		h.notFound(w, r)
		return nil, false
	}
	if err != nil {
		h.fail(w, r, "find invoice", err)
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
	if msg, status, ok := customerError(h.printer(w, r), err); ok {
		h.showInvoice(w, r, inv, r.URL.Path, "", msg, status, nil)
		return
	}
	if err != nil {
		h.fail(w, r, "hand out address", err)
		return
	}
	http.Redirect(w, r, r.URL.Path+"?coin="+url.QueryEscape(coin), http.StatusSeeOther)
}

// customerError returns what the customer may read of err, in pr's
// language, with the page's status, and whether err is one the customer
// may read at all (a refusal of their choice, not a failure). A refusal
// is said by its PayerText; one without is a generic "choose again" (the
// service's own reason is English and written for a merchant's
// developer).
func customerError(pr *i18n.Printer, err error) (string, int, bool) {
	var ie *invoice.InvalidError
	if errors.As(err, &ie) {
		return payerText(pr, ie.Payer), http.StatusBadRequest, true
	}
	var ce *invoice.CapError
	if errors.As(err, &ce) {
		return payerText(pr, ce.Payer), http.StatusConflict, true
	}
	if errors.Is(err, invoice.ErrNoKey) {
		return pr.T("error.no_key"), http.StatusBadRequest, true
	}
	if errors.Is(err, price.ErrStale) {
		return pr.T("choose.prices_down"), http.StatusServiceUnavailable, true
	}
	if errors.Is(err, refund.ErrNothingToRefund) {
		return pr.T("error.nothing_to_refund"), http.StatusConflict, true
	}
	return "", 0, false
}

// payerText says t in pr's language; nil is the generic refusal.
func payerText(pr *i18n.Printer, t *address.PayerText) string {
	if t == nil {
		return pr.T("error.choice")
	}
	return pr.T(t.Key, t.Args...)
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
	// The page's language, not a choice: see printer.
	writeJSON(w, http.StatusOK, h.status(r.Context(), h.printerOf(w, r, false), l, q))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
