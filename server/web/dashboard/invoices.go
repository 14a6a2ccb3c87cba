package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/merchant/refund"
	"github.com/payhook/payhook/server/merchant/subscription"
	"github.com/payhook/payhook/server/web"
)

// invoiceSection is one of the dashboard's listings of invoices or
// subscriptions.
type invoiceSection struct {
	// Path is the section's path below /dashboard/ (checkouts).
	Path string
	// Kind is the invoice kind ("" for subscriptions).
	Kind invoice.Kind
	// Prefix starts every id of the section.
	Prefix string
	// Title and Singular name the section on its pages.
	Title, Singular string
}

// invoiceSections are the dashboard's sections of invoices and
// subscriptions, by path.
var invoiceSections = map[string]invoiceSection{
	"checkouts":     {Path: "checkouts", Kind: invoice.Checkout, Prefix: "chk_", Title: "Checkouts", Singular: "Checkout"},
	"deposits":      {Path: "deposits", Kind: invoice.Deposit, Prefix: "dep_", Title: "Deposits", Singular: "Deposit"},
	"subscriptions": {Path: "subscriptions", Prefix: "sub_", Title: "Subscriptions", Singular: "Subscription"},
}

// maxIDLength bounds a payment_id or token in a path: ids are a prefix
// and 32 base32 characters.
const maxIDLength = 64

// wellFormed reports whether id can be one of the section's: its prefix,
// then lower-case letters and digits. Anything else is a 404 without a
// query.
func (sec invoiceSection) wellFormed(id string) bool {
	rest, ok := strings.CutPrefix(id, sec.Prefix)
	if !ok || rest == "" || len(id) > maxIDLength {
		return false
	}
	for _, c := range rest {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// invoiceRoutes serves the dashboard's pages of checkouts, deposits and subscriptions with their payments when rest (the path below
// /dashboard/) is one of theirs, and reports whether it did.
func (h *Handler) invoiceRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	name, tail, slash := strings.Cut(rest, "/")
	sec, ok := invoiceSections[name]
	if !ok {
		return false
	}
	id, extra, idSlash := strings.Cut(tail, "/")
	switch {
	case extra == "refund" && sec.Kind != "" && sec.wellFormed(id) && post:
		h.invoiceRefund(w, r, s, sec, id)
	case extra == "refund" && sec.Kind != "" && sec.wellFormed(id):
		web.MethodNotAllowed(w, "POST")
	case extra != "" || (id != "" && !sec.wellFormed(id)):
		h.pages.NotFound(w)
	case !get:
		web.MethodNotAllowed(w, "GET, HEAD")
	case !slash || (id != "" && !idSlash):
		// /dashboard/checkouts -> /dashboard/checkouts/, likewise an id.
		target := Prefix + rest + "/"
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusMovedPermanently)
	case id == "" && sec.Kind == "":
		h.subscriptionsPage(w, r, s, sec)
	case id == "":
		h.invoicesPage(w, r, s, sec)
	case sec.Kind == "":
		h.subscriptionDetail(w, r, s, sec, id)
	default:
		h.invoiceDetail(w, r, s, sec, id)
	}
	return true
}

// dateFilter reads the from and to dates (whole UTC days, to inclusive)
// of a listing's query, naming each bad one.
func dateFilter(q url.Values) (from, until time.Time, bad []string) {
	for _, b := range []struct {
		name string
		dst  *time.Time
		add  time.Duration
	}{{"from", &from, 0}, {"to", &until, 24 * time.Hour}} {
		if v := q.Get(b.name); v != "" {
			t, err := time.Parse("2006-01-02", v)
			if err != nil {
				bad = append(bad, b.name+" is not a date (YYYY-MM-DD)")
				continue
			}
			*b.dst = t.Add(b.add)
		}
	}
	return from, until, bad
}

// nextPage is the query of the page after this one: the same filter and
// the cursor next ("" when there is none).
func nextPage(q url.Values, next string) string {
	if next == "" {
		return ""
	}
	nq := url.Values{}
	for k, v := range q {
		nq[k] = v
	}
	nq.Set("cursor", next)
	return "?" + nq.Encode()
}

// filterError words a listing's refused parameter for its 400 page.
func filterError(err error) (string, bool) {
	var ie *address.InvalidError
	if errors.As(err, &ie) {
		return ie.Param + ": " + ie.Reason, true
	}
	return "", false
}

// money shows an amount in a currency with its minor unit (25.00 USD).
func money(d decimal.Decimal, places int32, currency string) string {
	return d.StringFixed(places) + " " + currency
}

// timeText shows an optional time ("" when nil).
func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// invoicesData is a listing of checkouts or deposits.
type invoicesData struct {
	dashLayout
	// Section is the listing's section.
	Section invoiceSection
	// Filter is the query as given; Statuses the status filter's values.
	Filter   url.Values
	Statuses []invoice.Status
	// Rows are the page's invoices; Next the query of the next page.
	Rows []invoiceRow
	Next string
	// Error names the refused filter parameters.
	Error string
}

// invoiceRow is one invoice of a listing.
type invoiceRow struct {
	// ID is the payment_id.
	ID string
	// Created is when it was created.
	Created time.Time
	// Description is item_description.
	Description string
	// Amount is its value in its currency ("" for an open amount).
	Amount string
	// Currency is its currency.
	Currency string
	// Status is its invoice_status.
	Status string
	// Payments counts its payments.
	Payments int
	// Received is the confirmed fiat; Coins what arrived per coin.
	Received string
	Coins    []string
}

func (h *Handler) invoicesPage(w http.ResponseWriter, r *http.Request, s *session, sec invoiceSection) {
	q := r.URL.Query()
	d := invoicesData{
		dashLayout: h.layoutOf(r, s, sec.Title, sec.Path),
		Section:    sec, Filter: q, Statuses: invoice.Statuses,
	}
	f := invoice.ListFilter{Status: invoice.Status(q.Get("status")), Cursor: q.Get("cursor")}
	var bad []string
	f.From, f.Until, bad = dateFilter(q)
	if len(bad) > 0 {
		d.Error = strings.Join(bad, "; ")
		h.pages.Render(w, http.StatusBadRequest, "checkouts", d)
		return
	}
	rows, next, err := h.cfg.Invoices.List(r.Context(), sec.Kind, s.user.ProjectID, f)
	if msg, ok := filterError(err); ok {
		d.Error = msg
		h.pages.Render(w, http.StatusBadRequest, "checkouts", d)
		return
	}
	if err != nil {
		h.pages.Fail(w, "list "+sec.Path, err)
		return
	}
	for _, row := range rows {
		inv := row.Invoice
		places := invoice.FiatPlaces(h.cfg.Prices, inv.Currency)
		v := invoiceRow{
			ID: inv.PublicID, Created: inv.CreatedAt, Description: inv.ItemDescription, Currency: inv.Currency,
			Status: string(row.Status), Payments: row.Payments, Received: money(row.PaidFiat, places, inv.Currency),
		}
		if inv.Value != nil {
			v.Amount = money(*inv.Value, places, inv.Currency)
		}
		for _, c := range row.Received {
			v.Coins = append(v.Coins, c.Value.String()+" "+strings.ToUpper(c.Coin))
		}
		d.Rows = append(d.Rows, v)
	}
	d.Next = nextPage(q, next)
	h.pages.Render(w, http.StatusOK, "checkouts", d)
}

// invoiceData is one checkout's or deposit's page.
type invoiceData struct {
	dashLayout
	// Section is the invoice's section.
	Section invoiceSection
	// Inv is the invoice; Status its invoice_status as Logs computes it.
	Inv    *entdb.Invoice
	Status string
	// Value is its amount ("" for an open amount); PaidFiat the confirmed
	// incoming fiat.
	Value, PaidFiat string
	// ExpiresAt is its expiry ("" for none).
	ExpiresAt string
	// PaymentURL is the customer's hosted page.
	PaymentURL string
	// Addresses are the addresses handed out; Payments its payments.
	Addresses []addressView
	Payments  []paymentView
	// Notifications are its webhooks, oldest first.
	Notifications []*entdb.Notification
	// Refundable are the txids of its credited payments (the refund form's
	// choices); Refunds its refunds; Done and Refused what the last refund
	// did or why it was refused.
	Refundable    []string
	Refunds       []*entdb.Refund
	Done, Refused string
}

// addressView is an address handed out for an invoice.
type addressView struct {
	// Coin and Address say where to pay.
	Coin, Address string
	// ValueCoin is the quoted amount ("" for an open amount), Rate the
	// held rate and QuoteExpires its end.
	ValueCoin, Rate, QuoteExpires string
}

// paymentView is one payment of an invoice or a renewal.
type paymentView struct {
	// Coin, Address, TxidIn and ValueCoin say what arrived where.
	Coin, Address, TxidIn, ValueCoin string
	// Fiat is its valuation in the invoice's currency ("" when unknown).
	Fiat string
	// Confirmations and Status are its depth and payment_status.
	Confirmations int64
	Status        string
	// TxidOut is the forwarding transaction; Forwarded the amount sent
	// after fees; Held that the funds stay on the payment address.
	TxidOut, Forwarded string
	Held               bool
	// Note says what the status does not.
	Note string
	// Created is when it was seen.
	Created time.Time
}

// paymentOf describes p, valued in a currency of places decimals.
func paymentOf(p *entdb.Payment, places int32) paymentView {
	v := paymentView{
		TxidIn: p.TxidIn, ValueCoin: p.ValueCoin.String(), Confirmations: p.Confirmations,
		Status: p.Status.String(), TxidOut: p.TxidOut, Note: p.Note, Created: p.CreatedAt, Coin: invoice.CoinName(p.Ticker),
	}
	if a := p.Edges.Address; a != nil {
		v.Address = a.AddressIn
		if v.Coin == "" {
			v.Coin = invoice.CoinName(a.Ticker)
		}
	}
	if p.ValueFiat != nil {
		v.Fiat = p.ValueFiat.StringFixed(places)
	}
	if p.ValueForwardedCoin != nil {
		v.Forwarded = p.ValueForwardedCoin.String()
	}
	if fw := p.Edges.Forward; fw != nil {
		v.Held = fw.Held
		if v.TxidOut == "" {
			v.TxidOut = fw.TxidOut
		}
		if v.Forwarded == "" && !fw.Held {
			v.Forwarded = fw.ValueForwardedCoin.String()
		}
	}
	return v
}

func (h *Handler) invoiceDetail(w http.ResponseWriter, r *http.Request, s *session, sec invoiceSection, id string) {
	h.showInvoice(w, r, s, sec, id, http.StatusOK, r.URL.Query().Get("done"), "")
}

// invoiceRefund refunds a payment of the user's invoice id from the
// refund form (refund.Service.Refund, as the merchant API does), then
// shows the invoice with what happened.
func (h *Handler) invoiceRefund(w http.ResponseWriter, r *http.Request, s *session, sec invoiceSection, id string) {
	if h.cfg.Refunds == nil {
		h.pages.NotFound(w)
		return
	}
	caller, err := h.cfg.Invoices.HostedCaller(r.Context(), s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "refund", err)
		return
	}
	ref, _, err := h.cfg.Refunds.Refund(r.Context(), payout.Caller{APIKeyID: caller.APIKeyID, ProjectID: s.user.ProjectID}, refund.Request{
		Kind: sec.Kind, PaymentID: id, TxidIn: r.PostFormValue("txid_in"),
		Address: strings.TrimSpace(r.PostFormValue("address")), Value: strings.TrimSpace(r.PostFormValue("value")),
	})
	switch k := kind.Of(err); {
	case err == nil:
		http.Redirect(w, r, Prefix+sec.Path+"/"+id+"/?done="+url.QueryEscape(string(ref.Refund.Status)), http.StatusSeeOther)
	case errors.Is(err, invoice.ErrNotFound):
		h.pages.NotFound(w)
	case k == kind.Invalid || k == kind.NotFound || k == kind.FailedPrecondition || k == kind.Aborted:
		h.showInvoice(w, r, s, sec, id, http.StatusBadRequest, "", kind.Message(err))
	default:
		h.pages.Fail(w, "refund", err)
	}
}

// showInvoice renders the user's invoice id with what the last refund did
// (done) or why it was refused.
func (h *Handler) showInvoice(w http.ResponseWriter, r *http.Request, s *session, sec invoiceSection, id string, status int, done, refused string) {
	l, err := h.cfg.Invoices.Logs(r.Context(), sec.Kind, s.user.ProjectID, id)
	if errors.Is(err, invoice.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "get "+string(sec.Kind), err)
		return
	}
	inv := l.Invoice
	d := invoiceData{
		dashLayout: h.layoutOf(r, s, sec.Singular+" "+inv.PublicID, sec.Path),
		Section:    sec, Inv: inv, Status: string(l.Status),
		PaidFiat:  money(l.PaidFiat, l.FiatPlaces, inv.Currency),
		ExpiresAt: timeText(inv.ExpiresAt), PaymentURL: h.cfg.Invoices.PaymentURL(inv),
		Notifications: l.Notifications,
	}
	if inv.Value != nil {
		d.Value = money(*inv.Value, l.FiatPlaces, inv.Currency)
	}
	for _, a := range l.Addresses {
		av := addressView{Coin: invoice.CoinName(a.Ticker), Address: a.AddressIn, QuoteExpires: timeText(a.QuoteExpiresAt)}
		if a.QuoteValueCoin != nil {
			av.ValueCoin = a.QuoteValueCoin.String()
		}
		if a.QuoteRate != nil {
			av.Rate = a.QuoteRate.Round(8).String() + " " + inv.Currency
		}
		d.Addresses = append(d.Addresses, av)
	}
	for _, p := range l.Payments {
		d.Payments = append(d.Payments, paymentOf(p, l.FiatPlaces))
		if refund.Credited(p) {
			d.Refundable = append(d.Refundable, p.TxidIn)
		}
	}
	if h.cfg.Refunds != nil {
		if d.Refunds, err = h.cfg.Refunds.Requested(r.Context(), inv); err != nil {
			h.pages.Fail(w, "refunds", err)
			return
		}
	} else {
		d.Refundable = nil
	}
	d.Done, d.Refused = done, refused
	h.pages.Render(w, status, "checkout", d)
}

// subscriptionsData is the listing of subscriptions.
type subscriptionsData struct {
	dashLayout
	// Filter is the query as given; Statuses the status filter's values.
	Filter   url.Values
	Statuses []subscription.Status
	// Rows are the page's subscriptions; Next the query of the next page.
	Rows []subscriptionRow
	Next string
	// Error names the refused filter parameters.
	Error string
}

// subscriptionRow is one subscription of the listing.
type subscriptionRow struct {
	// Token identifies it; Customer is the merchant's reference.
	Token, Customer string
	// Created is when it was created; ExpiresAt when its paid period ends
	// ("" when never paid).
	Created   time.Time
	ExpiresAt string
	// Status is pending, active or expired.
	Status string
	// Options are its plans, Renewals the count of renewals paid into.
	Options  []string
	Renewals int
}

// planOf says a plan option (1 month: 10.00 USD).
func planOf(period, value string, places int32, currency string) string {
	if v, err := decimal.NewFromString(value); err == nil {
		value = v.StringFixed(places)
	}
	return web.PeriodLabel(period) + ": " + value + " " + currency
}

func (h *Handler) subscriptionsPage(w http.ResponseWriter, r *http.Request, s *session, sec invoiceSection) {
	q := r.URL.Query()
	d := subscriptionsData{
		dashLayout: h.layoutOf(r, s, sec.Title, sec.Path), Filter: q,
		Statuses: []subscription.Status{subscription.Pending, subscription.Active, subscription.Expired},
	}
	f := subscription.Filter{Status: subscription.Status(q.Get("status")), Cursor: q.Get("cursor")}
	var bad []string
	f.From, f.Until, bad = dateFilter(q)
	if len(bad) > 0 {
		d.Error = strings.Join(bad, "; ")
		h.pages.Render(w, http.StatusBadRequest, "subscriptions", d)
		return
	}
	vs, next, err := h.cfg.Subscriptions.Filtered(r.Context(), s.user.ProjectID, f)
	if msg, ok := filterError(err); ok {
		d.Error = msg
		h.pages.Render(w, http.StatusBadRequest, "subscriptions", d)
		return
	}
	if err != nil {
		h.pages.Fail(w, "list subscriptions", err)
		return
	}
	for _, v := range vs {
		sub := v.Subscription
		places := h.cfg.Subscriptions.FiatPlaces(sub.Currency)
		row := subscriptionRow{
			Token: sub.Token, Customer: sub.Customer, Created: sub.CreatedAt, ExpiresAt: timeText(sub.ExpiresAt),
			Status: string(v.Status), Renewals: len(v.Renewals),
		}
		for _, o := range sub.Options {
			row.Options = append(row.Options, planOf(o.Period, o.Value, places, sub.Currency))
		}
		d.Rows = append(d.Rows, row)
	}
	d.Next = nextPage(q, next)
	h.pages.Render(w, http.StatusOK, "subscriptions", d)
}

// subscriptionData is one subscription's page.
type subscriptionData struct {
	dashLayout
	// Sub is the subscription; Status its status now and ExpiresAt the
	// end of its paid period ("" when never paid).
	Sub       *entdb.Subscription
	Status    string
	ExpiresAt string
	// URL is the customer's hosted page.
	URL string
	// Options are its plans.
	Options []string
	// Renewals are those paid into, oldest first; Open those without a
	// payment yet, newest first.
	Renewals []renewalView
	Open     []renewalView
	// Notifications are its renewal webhooks, oldest first.
	Notifications []*entdb.Notification
}

// renewalView is one renewal of a subscription.
type renewalView struct {
	// ID is its payment_id; Option its plan (1 month).
	ID, Option string
	// Value is its price; Received the confirmed fiat ("" when unknown).
	Value, Received string
	// Status is its invoice_status.
	Status string
	// Created is when it was opened; ExpiresAt when it closes to new
	// addresses.
	Created   time.Time
	ExpiresAt string
	// Payments are its payments.
	Payments []paymentView
}

func (h *Handler) subscriptionDetail(w http.ResponseWriter, r *http.Request, s *session, sec invoiceSection, tok string) {
	dt, err := h.cfg.Subscriptions.Detail(r.Context(), s.user.ProjectID, tok)
	if errors.Is(err, subscription.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "get subscription", err)
		return
	}
	sub := dt.Subscription
	places := h.cfg.Subscriptions.FiatPlaces(sub.Currency)
	d := subscriptionData{
		dashLayout: h.layoutOf(r, s, sec.Singular+" "+sub.Token, sec.Path),
		Sub:        sub, Status: string(dt.Status), ExpiresAt: timeText(sub.ExpiresAt),
		URL: h.cfg.Subscriptions.URL(sub), Notifications: dt.Notifications,
	}
	for _, o := range sub.Options {
		d.Options = append(d.Options, planOf(o.Period, o.Value, places, sub.Currency))
	}
	view := func(rn subscription.Renewal) renewalView {
		inv := rn.Invoice
		v := renewalView{
			ID: inv.PublicID, Option: web.PeriodLabel(inv.Option), Status: string(rn.Status),
			Created: inv.CreatedAt, ExpiresAt: timeText(inv.ExpiresAt),
		}
		if inv.Value != nil {
			v.Value = money(*inv.Value, places, sub.Currency)
		}
		if rn.ReceivedFiat != nil {
			v.Received = money(*rn.ReceivedFiat, places, sub.Currency)
		}
		for _, p := range rn.Payments {
			v.Payments = append(v.Payments, paymentOf(p, places))
		}
		return v
	}
	for _, rn := range dt.Renewals {
		d.Renewals = append(d.Renewals, view(rn))
	}
	for _, rn := range dt.Open {
		d.Open = append(d.Open, view(rn))
	}
	h.pages.Render(w, http.StatusOK, "subscription", d)
}
