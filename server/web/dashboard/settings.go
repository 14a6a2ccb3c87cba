package dashboard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/notification"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web"
)

// settingsPath is the settings page; its forms post below it.
const settingsPath = Prefix + "settings/"

// MaxKeyName is the longest API key name (in characters) the dashboard
// accepts.
const MaxKeyName = 100

// recentTests is how many of the project's latest test webhooks the
// settings page lists with their outcome.
const recentTests = 5

// settingsDone are the notes a redirect after a change shows (?done=): fixed
// texts, so nothing a URL carries is echoed.
var settingsDone = map[string]string{
	"wallet-saved":   "The payout wallet is saved: payments of that coin are forwarded to it from now on.",
	"wallet-removed": "The payout wallet is removed: payments of that coin are now held (the operator's payhook funds lists them).",
	"watch-saved":    "The watch-only wallet is saved: new addresses of that coin are derived from your key, and their payments go straight to your own wallet (nothing is forwarded).",
	"watch-removed":  "The watch-only wallet is removed: new addresses of that coin come from this server again and their payments are held until a payout wallet is set; the addresses already handed out from your key are still watched.",
	"key-revoked":    "The API key is revoked: it authenticates nothing from now on.",
	"payout-webhook": "The payout webhook is saved: each payout done or failed from now on is notified there.",
	"exceptions":     "The payment exception rules are saved: checkouts created from now on follow them (each checkout may name its own).",
	"branding":       "The colour and support contact are saved: every hosted page shows them from now on.",
	"logo-saved":     "The logo is saved: every hosted page shows it from now on.",
	"logo-removed":   "The logo is removed.",
	"callback-key":   "The callback signing key is rotated: callbacks are signed with the new key from now on.",
}

// settingsData is the project settings page: the IPN secret, the webhook
// test, the payout wallets and the API keys, each section with its own
// error (a refused form) and echo of what was typed.
type settingsData struct {
	dashLayout
	// Grace is how long a rotated-out secret keeps signing, for people
	// ("24 hours").
	Grace      string
	Secret     string
	GraceUntil time.Time
	Previous   *time.Time
	// Done is the note of a change just made (settingsDone).
	Done string

	// TestURL prefills the webhook test's URL; Tests are the latest test
	// webhooks with their delivery status.
	TestURL   string
	TestError string
	Tests     []*entdb.Notification

	// Tickers are the offered coins a wallet can be set for.
	Tickers []tickerChoice
	Wallets []walletRow
	// WatchWallets are the coins whose wallet is the merchant's own key.
	WatchWallets []watchRow
	// WalletTicker, WalletAddresses and WalletGap echo a refused wallet
	// form; WalletKeyCleared says the addresses field was emptied rather
	// than echoed (a key, or a private key among addresses).
	WalletTicker     string
	WalletAddresses  string
	WalletGap        string
	WalletError      string
	WalletKeyCleared bool
	// DefaultGapLimit and MaxGapLimit bound the gap limit field.
	DefaultGapLimit, MaxGapLimit int

	// Keys are the project's merchant keys (never an operator's).
	Keys []*entdb.APIKey
	// NewKey is a key just created, shown on this response only; NewKeyName
	// is its name and NewKeyScopes its scopes.
	NewKey       string
	NewKeyName   string
	NewKeyScopes []string
	KeyName      string
	KeyError     string
	// KeyScopes are the key form's scope boxes: all checked, or what a
	// refused form chose.
	KeyScopes []scopeChoice

	// PayoutURL and PayoutGET are the payout webhook's URL and transport;
	// PayoutError says why a change was refused. PayoutLimits are the
	// operator's limits per coin (read only here).
	PayoutURL    string
	PayoutGET    bool
	PayoutError  string
	PayoutLimits []payoutLimitRow

	// Tolerance and LateRefund are the payment exception rules (or what a
	// refused form typed); ExceptionsError says why a change was refused.
	Tolerance  string
	LateRefund bool
	// AutoRefund is auto_refund_overpaid.
	AutoRefund      bool
	ExceptionsError string

	// BrandColor and SupportContact are the hosted pages' colour and
	// support contact (or what a refused form typed); LogoURL previews the
	// logo ("" when there is none); BrandingError says why a change was
	// refused; MaxLogoKiB is the logo's limit.
	BrandColor     string
	SupportContact string
	LogoURL        string
	BrandingError  string
	MaxLogoKiB     int

	// CallbackKey is the project's callback signing key; nil when the
	// dashboard has no CallbackKeys.
	CallbackKey *callbackKeyView
}

// callbackKeyView is the settings page's callback signing key section.
type callbackKeyView struct {
	// PEM is the public key that verifies the project's callbacks now.
	PEM string
	// PreviousUntil is when /pubkey/ stops publishing the rotated-out key
	// (nil when none is published).
	PreviousUntil *time.Time
	// Shared is set while the project signs with the server's key (the
	// default project before its first rotation).
	Shared bool
	// Grace is how long a rotated-out key stays published, for people.
	Grace string
}

// scopeChoice is one scope box of the key form.
type scopeChoice struct {
	Value, What string
	Checked     bool
}

// scopeWhat says what each scope allows a project's key to do.
var scopeWhat = map[string]string{
	apikey.ScopeRead:       "read: logs, lists, statuses, QR codes, the delivery stream",
	apikey.ScopeCreate:     "create: addresses, checkouts, deposits, subscriptions",
	apikey.ScopePayouts:    "payouts: payout requests and payouts, refunds, wrong-asset forwards and refunds",
	apikey.ScopeManagement: "management: test and resend webhooks",
}

// scopeChoices returns the key form's boxes, checked as chosen (nil: all).
func scopeChoices(chosen []string) []scopeChoice {
	var out []scopeChoice
	for _, s := range apikey.AllScopes() {
		out = append(out, scopeChoice{Value: s, What: scopeWhat[s], Checked: chosen == nil || slices.Contains(chosen, s)})
	}
	return out
}

// payoutLimitRow is one coin's payout limits, for people ("none" for 0).
type payoutLimitRow struct{ Ticker, PerPayout, PerDay string }

// tickerChoice is one coin of the wallet form's select.
type tickerChoice struct {
	Value, Label string
	Selected     bool
}

// walletRow is one ticker's payout wallet.
type walletRow struct {
	Ticker, Label string
	// Offered is false for a ticker this server no longer offers.
	Offered      bool
	Destinations []schema.Destination
}

// settingsRoutes serves the dashboard's pages of payout wallets, API keys and the webhook test when rest (the path below
// /dashboard/) is one of theirs, and reports whether it did. The settings page itself (GET settings/) and the
// secret's rotation are routed by dashboard; they live here too.
func (h *Handler) settingsRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	sub, ok := strings.CutPrefix(rest, "settings/")
	if !ok {
		return false
	}
	if sub == "logo" && get {
		h.serveLogo(w, r, s)
		return true
	}
	var do func()
	switch {
	case sub == "branding":
		do = func() { h.setBranding(w, r, s) }
	case sub == "logo":
		do = func() { h.setLogo(w, r, s) }
	case sub == "logo/remove":
		do = func() { h.removeLogo(w, r, s) }
	case sub == "wallets":
		do = func() { h.setWallet(w, r, s) }
	case sub == "wallets/remove":
		do = func() { h.removeWallet(w, r, s) }
	case sub == "keys":
		do = func() { h.createKey(w, r, s) }
	case strings.HasPrefix(sub, "keys/") && strings.HasSuffix(sub, "/revoke"):
		id := strings.TrimSuffix(strings.TrimPrefix(sub, "keys/"), "/revoke")
		do = func() { h.revokeKey(w, r, s, id) }
	case sub == "test-webhook":
		do = func() { h.testWebhook(w, r, s) }
	case sub == "payout-webhook":
		do = func() { h.setPayoutWebhook(w, r, s) }
	case sub == "exceptions":
		do = func() { h.setExceptions(w, r, s) }
	default:
		return false
	}
	if !post {
		web.MethodNotAllowed(w, "POST")
		return true
	}
	do()
	return true
}

// settingsPage shows the settings; secret, when not empty, is a secret
// just rotated, shown this once.
func (h *Handler) settingsPage(w http.ResponseWriter, r *http.Request, s *session, secret string) {
	h.showSettings(w, r, s, http.StatusOK, func(d *settingsData) {
		d.Secret = secret
		d.Done = settingsDone[r.URL.Query().Get("done")]
	})
}

// showSettings renders the settings page with status after set has filled
// in what the request adds (a new secret or key, an error, an echo).
func (h *Handler) showSettings(w http.ResponseWriter, r *http.Request, s *session, status int, set func(*settingsData)) {
	ctx := r.Context()
	p, err := project.Get(ctx, h.cfg.DB, s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "get project", err)
		return
	}
	d := settingsData{dashLayout: h.layoutOf(r, s, "Project settings", "settings"), Grace: hours(h.cfg.SecretGrace)}
	if p.PreviousSecretUntil != nil && h.cfg.Now().Before(*p.PreviousSecretUntil) {
		d.Previous = p.PreviousSecretUntil
	}
	if err := h.fillSettings(ctx, p, &d); err != nil {
		h.pages.Fail(w, "settings page", err)
		return
	}
	set(&d)
	if d.KeyScopes == nil {
		d.KeyScopes = scopeChoices(nil)
	}
	if d.Secret != "" && p.PreviousSecretUntil != nil {
		d.GraceUntil = *p.PreviousSecretUntil
	}
	for i := range d.Tickers {
		d.Tickers[i].Selected = d.Tickers[i].Value == d.WalletTicker
	}
	h.pages.Render(w, status, "settings", d)
}

// fillSettings loads the wallets, keys and test webhooks of project p.
func (h *Handler) fillSettings(ctx context.Context, p *entdb.Project, d *settingsData) error {
	for _, t := range h.cfg.Addresses.Registry().All() {
		d.Tickers = append(d.Tickers, tickerChoice{Value: t.Ticker, Label: web.CoinLabel(t) + " · " + t.Ticker})
	}
	for _, name := range project.WalletTickers(p) {
		row := walletRow{Ticker: name, Label: strings.ToUpper(name), Destinations: p.Wallets[name]}
		if t, err := h.cfg.Addresses.Lookup(name); err == nil {
			row.Label, row.Offered = web.CoinLabel(t), true
		}
		d.Wallets = append(d.Wallets, row)
	}
	var err error
	if d.WatchWallets, err = h.watchRows(ctx, p); err != nil {
		return err
	}
	d.DefaultGapLimit, d.MaxGapLimit = project.DefaultGapLimit, project.MaxGapLimit
	d.PayoutURL, d.PayoutGET = p.PayoutNotifyURL, !p.PayoutNotifyPost
	d.Tolerance, d.LateRefund = p.UnderpaidTolerance.String(), p.LatePayments == entproject.LatePaymentsRefund
	d.AutoRefund = p.AutoRefundOverpaid
	d.BrandColor, d.SupportContact, d.MaxLogoKiB = p.BrandColor, p.SupportContact, project.MaxLogoBytes>>10
	if len(project.Logo(p)) > 0 {
		d.LogoURL = logoURL(p.UpdatedAt.Unix())
	}
	for _, t := range slices.Sorted(maps.Keys(p.PayoutLimits)) {
		l := p.PayoutLimits[t]
		show := func(v decimal.Decimal) string {
			if v.Sign() <= 0 {
				return "none"
			}
			return v.String() + " " + t
		}
		d.PayoutLimits = append(d.PayoutLimits, payoutLimitRow{Ticker: t, PerPayout: show(l.PerPayout), PerDay: show(l.PerDay)})
	}
	keys, err := apikey.List(ctx, h.cfg.DB, p.ID)
	if err != nil {
		return err
	}
	if d.CallbackKey, err = h.callbackKey(ctx, p.ID); err != nil {
		return err
	}
	for _, k := range keys {
		if !k.Operator {
			d.Keys = append(d.Keys, k)
		}
	}
	d.Tests, _, err = h.cfg.Notifications.List(ctx, p.ID, notifier.ListFilter{Event: notification.TestEvent, Limit: recentTests})
	if err != nil {
		return err
	}
	latest, _, err := h.cfg.Notifications.List(ctx, p.ID, notifier.ListFilter{Limit: 1})
	if err != nil {
		return err
	}
	if len(latest) == 1 {
		d.TestURL = webhookURL(latest[0])
	}
	return nil
}

// hours shows a duration of whole hours as "N hours", any other as Go
// writes it.
func hours(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d > 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + " hours"
	}
	return d.String()
}

// webhookURL is the URL a notification was sent to, without the payload a
// GET request carries in its query.
func webhookURL(n *entdb.Notification) string {
	if n.Method != http.MethodGet {
		return n.URL
	}
	u, err := url.Parse(n.URL)
	if err != nil {
		return ""
	}
	u.RawQuery = ""
	return u.String()
}

// rotateSecret rotates the project's IPN secret and shows the new one on
// this response only (no-store; never in a URL or a log).
func (h *Handler) rotateSecret(w http.ResponseWriter, r *http.Request, s *session) {
	secret, err := project.RotateSecret(r.Context(), h.cfg.DB, s.user.ProjectID, h.cfg.SecretGrace, h.cfg.Now())
	if err != nil {
		h.pages.Fail(w, "rotate secret", err)
		return
	}
	h.settingsPage(w, r, s, secret)
}

// rotateCallbackKey gives the project a new callback signing key (its
// public half is no secret: the page shows it after a redirect).
func (h *Handler) rotateCallbackKey(w http.ResponseWriter, r *http.Request, s *session) {
	if _, err := h.cfg.CallbackKeys.Rotate(r.Context(), s.user.ProjectID, project.DefaultCallbackKeyGrace); err != nil {
		h.pages.Fail(w, "rotate callback key", err)
		return
	}
	settingsRedirect(w, r, "callback-key", "callback-key")
}

// callbackKey reads project id's callback signing key for the settings page.
func (h *Handler) callbackKey(ctx context.Context, id int64) (*callbackKeyView, error) {
	ck := h.cfg.CallbackKeys
	if ck == nil {
		return nil, nil
	}
	pub, err := ck.Public(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &callbackKeyView{PEM: pub.PEM, Grace: hours(project.DefaultCallbackKeyGrace)}
	if pub.PreviousPEM != "" {
		v.PreviousUntil = &pub.PreviousUntil
	}
	server, err := ck.ServerPublic()
	if err != nil {
		return nil, err
	}
	v.Shared = pub.PEM == server
	return v, nil
}

// settingsRedirect sends the browser back to the settings page's section
// with a note (post/redirect/get: a reload does not post again).
func settingsRedirect(w http.ResponseWriter, r *http.Request, done, section string) {
	http.Redirect(w, r, settingsPath+"?done="+done+"#"+section, http.StatusSeeOther)
}

// coin is the wallet form's coin, one this server offers.
func (h *Handler) coin(ticker string) (chains.Ticker, error) {
	ticker = strings.ToLower(strings.TrimSpace(ticker))
	if ticker == "" {
		return chains.Ticker{}, errors.New("choose a coin")
	}
	t, err := h.cfg.Addresses.Lookup(strings.Replace(ticker, "_", "/", 1))
	if err != nil {
		return chains.Ticker{}, fmt.Errorf("%s is not a coin this server offers", ticker)
	}
	return t, nil
}

// wallet parses and checks the wallet form as `payhook project wallet set`
// does (project.ParseWallet, then each address against the ticker's
// network), for tickers this server offers only. A refusal's message names
// what is wrong.
func (h *Handler) wallet(ticker, addresses string) (string, []schema.Destination, error) {
	t, err := h.coin(ticker)
	if err != nil {
		return "", nil, err
	}
	if strings.TrimSpace(addresses) == "" {
		return "", nil, errors.New("enter at least one address")
	}
	_, ds, err := project.ParseWallet(t.Ticker + "=" + addresses)
	if err != nil {
		return "", nil, err
	}
	if err := project.CheckAddresses(t, ds); err != nil {
		return "", nil, err
	}
	return t.Ticker, ds, nil
}

// setWallet sets the coin's payout wallet from the form's addresses or,
// when the field holds a key (project.IsKeySpec), its watch-only wallet
// (setWatchKey), as `payhook project wallet set` does.
func (h *Handler) setWallet(w http.ResponseWriter, r *http.Request, s *session) {
	tickerIn, addrs, gapIn := r.PostFormValue("ticker"), r.PostFormValue("addresses"), r.PostFormValue("gap_limit")
	if project.IsKeySpec(addrs) {
		h.setWatchKey(w, r, s, tickerIn, addrs, gapIn)
		return
	}
	refuse := func(err error) {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.WalletTicker, d.WalletAddresses, d.WalletGap = tickerIn, addrs, gapIn
			d.WalletError = "The wallet was not saved: " + strings.TrimPrefix(err.Error(), project.ErrInvalid.Error()+": ")
		})
	}
	if why := secretIn(addrs); why != "" {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.WalletTicker, d.WalletGap, d.WalletKeyCleared = tickerIn, gapIn, true
			d.WalletError = "The wallet was not saved: " + why + "."
		})
		return
	}
	if strings.TrimSpace(gapIn) != "" {
		refuse(errors.New("the gap limit is only for a key (a watch-only wallet): leave it blank for addresses"))
		return
	}
	ticker, ds, err := h.wallet(tickerIn, addrs)
	if err != nil {
		refuse(err)
		return
	}
	err = project.SetWallet(r.Context(), h.cfg.DB, s.user.ProjectID, ticker, ds, h.cfg.Now())
	if errors.Is(err, project.ErrInvalid) {
		refuse(err)
		return
	}
	if err != nil {
		h.pages.Fail(w, "set wallet", err)
		return
	}
	settingsRedirect(w, r, "wallet-saved", "wallets")
}

func (h *Handler) removeWallet(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ticker := strings.ToLower(strings.TrimSpace(r.PostFormValue("ticker")))
	p, err := project.Get(ctx, h.cfg.DB, s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "get project", err)
		return
	}
	_, payout := p.Wallets[ticker]
	if !payout && !project.HasWatchKey(p, ticker) {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.WalletError = fmt.Sprintf("The project has no payout wallet or watch-only wallet for %q to remove.", ticker)
		})
		return
	}
	if err := project.RemoveWallet(ctx, h.cfg.DB, s.user.ProjectID, ticker, h.cfg.Now()); err != nil {
		h.pages.Fail(w, "remove wallet", err)
		return
	}
	done := "wallet-removed"
	if !payout {
		done = "watch-removed"
	}
	settingsRedirect(w, r, done, "wallets")
}

// createKey issues a key of the project with the scopes checked (at least
// one) and shows it on this response only (no-store; never in a URL or a
// log).
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	chosen := r.PostForm["scope"]
	scopes, scopeErr := apikey.ParseScopes(chosen)
	var problem string
	switch {
	case scopeErr != nil:
		problem = "The key was not created: " + scopeErr.Error() + "."
	case len(chosen) == 0:
		problem = "Choose at least one scope: what the key may do."
	case name == "":
		problem = "The key needs a name (what uses it, e.g. \"shop backend\")."
	case utf8.RuneCountInString(name) > MaxKeyName:
		problem = fmt.Sprintf("The name is longer than %d characters.", MaxKeyName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(c rune) bool { return c < ' ' || c == 0x7f }):
		problem = "The name must be text without control characters."
	}
	if problem != "" {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.KeyName, d.KeyError = name, problem
			echo := []string{} // none checked: what was chosen, if anything
			if scopeErr == nil && len(chosen) > 0 {
				echo = scopes
			}
			d.KeyScopes = scopeChoices(echo)
		})
		return
	}
	key, row, err := apikey.CreateScoped(r.Context(), h.cfg.DB, name, s.user.ProjectID, scopes, h.cfg.Now())
	if err != nil {
		h.pages.Fail(w, "create api key", err)
		return
	}
	h.showSettings(w, r, s, http.StatusOK, func(d *settingsData) {
		d.NewKey, d.NewKeyName, d.NewKeyScopes = key, name, row.Scopes
	})
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		h.pages.NotFound(w)
		return
	}
	_, err = apikey.RevokeMerchant(r.Context(), h.cfg.DB, s.user.ProjectID, id, h.cfg.Now())
	if errors.Is(err, apikey.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "revoke api key", err)
		return
	}
	settingsRedirect(w, r, "key-revoked", "keys")
}

// testWebhook stores a test.webhook for the URL given (the service applies
// the webhook URL rules) and sends the browser to its page, where its
// attempts appear.
func (h *Handler) testWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	raw := strings.TrimSpace(r.PostFormValue("url"))
	refuse := func(reason string) {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.TestURL, d.TestError = raw, "No test was sent: "+reason+"."
		})
	}
	if raw == "" {
		refuse("enter the URL of your webhook endpoint")
		return
	}
	id, err := h.cfg.Notifications.Test(r.Context(), s.user.ProjectID, raw)
	var bad *address.InvalidError
	if errors.As(err, &bad) {
		refuse(bad.Reason)
		return
	}
	if err != nil {
		h.pages.Fail(w, "test webhook", err)
		return
	}
	http.Redirect(w, r, Prefix+"notifications/"+url.PathEscape(id)+"/", http.StatusSeeOther)
}

// setPayoutWebhook sets (or, empty, clears) where the project's payout
// webhooks go and whether they are GET requests.
func (h *Handler) setPayoutWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	raw := strings.TrimSpace(r.PostFormValue("url"))
	get := r.PostFormValue("get") == "1"
	err := project.SetPayoutNotify(r.Context(), h.cfg.DB, h.cfg.Rules, s.user.ProjectID, raw, !get, h.cfg.Now())
	if errors.Is(err, project.ErrInvalid) {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.PayoutURL, d.PayoutGET = raw, get
			d.PayoutError = "The payout webhook was not saved: " + strings.TrimPrefix(err.Error(), project.ErrInvalid.Error()+": ")
		})
		return
	}
	if err != nil {
		h.pages.Fail(w, "set payout webhook", err)
		return
	}
	settingsRedirect(w, r, "payout-webhook", "payout-webhook")
}

// setExceptions sets the project's payment exception rules: the
// underpaid_tolerance percent, the late_payments policy (refund when the
// box is checked, else credit) and auto_refund_overpaid. A bad tolerance is a 400 page naming
// it, with what was typed kept, and changes nothing.
func (h *Handler) setExceptions(w http.ResponseWriter, r *http.Request, s *session) {
	tol := strings.TrimSpace(r.PostFormValue("underpaid_tolerance"))
	refund := r.PostFormValue("late_refund") == "1"
	auto := r.PostFormValue("auto_refund_overpaid") == "1"
	late := schema.LateCredit
	if refund {
		late = schema.LateRefund
	}
	var err error
	d, perr := project.ParseTolerance(tol)
	if perr != nil {
		err = fmt.Errorf("%w: underpaid_tolerance: %v", project.ErrInvalid, perr)
	} else {
		err = project.SetPaymentExceptions(r.Context(), h.cfg.DB, s.user.ProjectID, &d, &late, &auto, h.cfg.Now())
	}
	if errors.Is(err, project.ErrInvalid) {
		h.showSettings(w, r, s, http.StatusBadRequest, func(d *settingsData) {
			d.Tolerance, d.LateRefund, d.AutoRefund = tol, refund, auto
			d.ExceptionsError = "The rules were not saved: " + strings.TrimPrefix(err.Error(), project.ErrInvalid.Error()+": ")
		})
		return
	}
	if err != nil {
		h.pages.Fail(w, "set payment exceptions", err)
		return
	}
	settingsRedirect(w, r, "exceptions", "exceptions")
}
