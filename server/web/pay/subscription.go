package pay

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/subscription"
	"github.com/payhook/payhook/server/web/pay/i18n"
)

// subscriptionPageData is the subscription page: its status, its plan
// options, and a renewal being paid.
type subscriptionPageData struct {
	chrome
	// Path is the page's path.
	Path string
	// Customer is the merchant's customer reference.
	Customer string
	// Status is pending, active or expired; ExpiresAt is when it ends.
	Status    string
	ExpiresAt time.Time
	// Currency is the plans' currency.
	Currency string
	// Options are the plan options.
	Options []optionView
	// Coins are the coins to choose from.
	Coins []coinChoice
	// PricesDown is true when coins are left out for want of a fresh
	// price.
	PricesDown bool
	// Renewal is the renewal being paid (?payment_id=), nil otherwise.
	Renewal *invoicePageData
	// OptionLabel is the renewal's option.
	OptionLabel string
	// Error is what went wrong with the customer's choice.
	Error string
}

// optionView is one plan option.
type optionView struct {
	// Period is its period (1m); Label says it (1 month).
	Period, Label string
	// Value is its price.
	Value string
}

// renewal returns the renewal with payment id of sub, nil when id is not
// one of sub's renewals.
func (h *Handler) renewal(r *http.Request, sub *entdb.Subscription, id string) *entdb.Invoice {
	if id == "" {
		return nil
	}
	inv, err := h.cfg.Invoices.Find(r.Context(), invoice.Subscription, id)
	if err != nil || inv.SubscriptionID == nil || *inv.SubscriptionID != sub.ID {
		return nil
	}
	return inv
}

func (h *Handler) findSubscription(w http.ResponseWriter, r *http.Request, tok string) *entdb.Subscription {
	sub, err := h.cfg.Subscriptions.Find(r.Context(), tok)
	if errors.Is(err, subscription.ErrNotFound) {
		h.notFound(w, r)
		return nil
	}
	if err != nil {
		h.fail(w, r, "find subscription", err)
		return nil
	}
	return sub
}

// subscriptionPage shows a subscription: its status and plans to choose
// from, or, with ?payment_id=, the renewal being paid.
func (h *Handler) subscriptionPage(w http.ResponseWriter, r *http.Request, tok string) {
	sub := h.findSubscription(w, r, tok)
	if sub == nil {
		return
	}
	h.showSubscription(w, r, sub, "", http.StatusOK)
}

func (h *Handler) showSubscription(w http.ResponseWriter, r *http.Request, sub *entdb.Subscription, errMsg string, status int) {
	ctx := r.Context()
	pr := h.printer(w, r)
	p, err := project.Get(ctx, h.cfg.DB, sub.ProjectID)
	if err != nil {
		h.fail(w, r, "subscription page", err)
		return
	}
	d := &subscriptionPageData{
		Path: r.URL.Path, Customer: sub.Customer, Currency: sub.Currency, Error: errMsg,
		Status: string(subscription.StatusAt(sub.ExpiresAt, h.cfg.Now())),
	}
	d.chrome = h.chromeOf(r, pr, p, r.URL.Path, pr.T("title.subscription"))
	if sub.ExpiresAt != nil {
		d.ExpiresAt = *sub.ExpiresAt
	}
	places := h.cfg.Subscriptions.FiatPlaces(sub.Currency)
	for _, o := range sub.Options {
		v := o.Value
		if dv, err := decimal.NewFromString(o.Value); err == nil {
			v = dv.StringFixed(places)
		}
		d.Options = append(d.Options, optionView{Period: o.Period, Label: periodLabel(pr, o.Period), Value: v})
	}
	// The coins of a plan: quoted like a checkout of a fixed amount, each
	// with what every option costs in it now.
	probe := &entdb.Invoice{ProjectID: sub.ProjectID, Currency: sub.Currency, Value: &decimal.Decimal{}}
	d.Coins, d.PricesDown = h.coins(p, probe, "")
	h.planAmounts(d.Coins, sub, pr)
	if inv := h.renewal(r, sub, r.URL.Query().Get("payment_id")); inv != nil {
		rd, err := h.invoiceData(ctx, pr, p, inv, r.URL.Path, r.URL.Query().Get("coin"))
		if err != nil {
			h.fail(w, r, "subscription page", err)
			return
		}
		if rd.Status.Code == "paid" {
			// A paid renewal has extended the subscription just now.
			rd.Status.Text = pr.T("status.paid")
		}
		rd.Hidden = map[string]string{"option": inv.Option}
		d.Renewal, d.OptionLabel = rd, periodLabel(pr, inv.Option)
		d.Refresh, d.RefreshURL = rd.refresh()
	}
	h.render(w, pr, status, "subscription", d)
}

// planAmounts sets what each of sub's options costs in each coin, at the
// rate a renewal's quote would hold now (coins lists only coins with one).
func (h *Handler) planAmounts(coins []coinChoice, sub *entdb.Subscription, pr *i18n.Printer) {
	for i := range coins {
		t := coins[i].ticker
		rate, ok := invoice.Rate(h.cfg.Prices, t, sub.Currency)
		if !ok {
			continue
		}
		for _, o := range sub.Options {
			v, err := decimal.NewFromString(o.Value)
			if err != nil || !v.IsPositive() {
				continue
			}
			coins[i].Plans = append(coins[i].Plans, planAmount{
				Option: o.Period, Label: periodLabel(pr, o.Period),
				Amount: payload.FormatAmount(invoice.QuoteCoin(v, rate, t.Decimals), t.Decimals),
			})
		}
	}
}

// periodLabel says a subscription period in words in pr's language: 1m
// is "1 month", 12m "12 months". A period that does not parse is shown as
// given.
func periodLabel(pr *i18n.Printer, raw string) string {
	p, err := subscription.ParsePeriod(raw)
	if err != nil {
		return raw
	}
	key := map[subscription.Unit]string{subscription.Day: "period.d", subscription.Week: "period.w", subscription.Month: "period.m", subscription.Year: "period.y"}[p.Unit]
	if key == "" {
		return raw
	}
	return pr.T(key, p.Count)
}

// subscriptionChoose opens (or reuses) the renewal of the chosen option
// and hands out its address for the chosen coin, as the merchant API's
// /subscription/address/ does, then shows it.
func (h *Handler) subscriptionChoose(w http.ResponseWriter, r *http.Request, tok string) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		h.badForm(w, r)
		return
	}
	sub := h.findSubscription(w, r, tok)
	if sub == nil {
		return
	}
	ctx := r.Context()
	coin := r.PostForm.Get("coin")
	caller, err := h.cfg.Invoices.HostedCaller(ctx, sub.ProjectID)
	var q *invoice.Quote
	if err == nil {
		q, err = h.cfg.Subscriptions.Address(ctx, caller, tok, r.PostForm.Get("option"), coin)
	}
	if msg, status, ok := customerError(h.printer(w, r), err); ok {
		h.showSubscription(w, r, sub, msg, status)
		return
	}
	if err != nil {
		h.fail(w, r, "hand out address", err)
		return
	}
	v := url.Values{"payment_id": {q.Invoice.PublicID}, "coin": {coin}}
	http.Redirect(w, r, r.URL.Path+"?"+v.Encode(), http.StatusSeeOther)
}

// subscriptionStatus answers the live status of one of the subscription's
// renewals (?payment_id=) as JSON.
func (h *Handler) subscriptionStatus(w http.ResponseWriter, r *http.Request, tok string) {
	sub, err := h.cfg.Subscriptions.Find(r.Context(), tok)
	var inv *entdb.Invoice
	if err == nil {
		inv = h.renewal(r, sub, r.URL.Query().Get("payment_id"))
	}
	if inv == nil || inv.Kind != entinvoice.KindSubscription {
		writeJSON(w, http.StatusNotFound, map[string]string{"status": "not_found"})
		return
	}
	h.writeStatus(w, r, inv)
}
