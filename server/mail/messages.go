package mail

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	entproject "github.com/payhook/payhook/ent/db/project"
)

// What each kind of email says, and to whom. Every message names the
// project (or, for the operator, the server) and what to do; each is
// English, as the dashboard is.

// PayoutApproval stores, in tx, the email telling each of the project's
// owners (who alone may approve; not disabled) that payout p waits for their approval (p is
// pending_approval; its approval_reason says which limit it passed). Once
// per payout and user.
func (o *Outbox) PayoutApproval(ctx context.Context, tx *entdb.Tx, p *entdb.Payout) error {
	if o == nil {
		return nil
	}
	name, _, users, err := o.projectUsers(ctx, tx, p.ProjectID, dashboarduser.RoleOwner)
	if err != nil || len(users) == 0 {
		return err
	}
	amount := p.TotalRequested.String() + " " + coin(p.Ticker)
	b := body{
		intro: []string{fmt.Sprintf("A payout of project %s, %s, waits for a dashboard user's approval: %s.", name, amount, p.ApprovalReason)},
		facts: []fact{
			{"Project", name},
			{"Payout", strconv.FormatInt(p.ID, 10)},
			{"Amount", amount},
			{"Why it waits", p.ApprovalReason},
		},
		outro: []string{
			"Nothing is sent until one of the project's dashboard users approves it (Payouts, in the dashboard). If you did not expect this payout, leave it unapproved and check the project's API keys: a key with the payouts scope asked for it.",
		},
	}
	if o.cfg.DashboardURL != "" {
		b.action = &action{"Review and approve it", o.cfg.DashboardURL + "payouts/"}
	} else {
		b.outro[0] = "Nothing is sent until one of the project's dashboard users approves it: sign in to payhook's dashboard (/dashboard/payouts/). If you did not expect this payout, leave it unapproved and check the project's API keys: a key with the payouts scope asked for it."
	}
	subject := fmt.Sprintf("[%s] Payout %d of %s awaits your approval", name, p.ID, amount)
	return o.toUsers(ctx, tx, p.ProjectID, KindPayoutApproval, "payout-"+strconv.FormatInt(p.ID, 10), users, subject, b)
}

// EndpointPaused stores, in tx, the email telling each of the project's
// owners and developers (not disabled) that payhook paused the webhooks to endpointURL at since
// (deliveries to it kept failing). Once per endpoint, pause and user: a
// later pause of the same endpoint is another email.
func (o *Outbox) EndpointPaused(ctx context.Context, tx *entdb.Tx, projectID int64, endpointURL string, since time.Time) error {
	if o == nil {
		return nil
	}
	name, _, users, err := o.projectUsers(ctx, tx, projectID, dashboarduser.RoleOwner, dashboarduser.RoleDeveloper)
	if err != nil || len(users) == 0 {
		return err
	}
	b := body{
		intro: []string{
			fmt.Sprintf("payhook paused the webhooks of project %s to %s: deliveries to it kept failing.", name, endpointURL),
			"While it is paused, the webhooks meant for it are kept, not sent, and not lost.",
		},
		facts: []fact{
			{"Project", name},
			{"Endpoint", endpointURL},
			{"Paused since", utc(since)},
		},
		outro: []string{"Check that the endpoint answers (its server is up, its URL and TLS certificate are right, it acknowledges with HTTP 2xx), then resume it in the dashboard."},
	}
	if o.cfg.DashboardURL != "" {
		b.action = &action{"Open the dashboard", o.cfg.DashboardURL}
	}
	subject := fmt.Sprintf("[%s] Webhooks to %s are paused", name, endpointHost(endpointURL))
	return o.toUsers(ctx, tx, projectID, KindEndpointPaused, endpointURL+"@"+since.UTC().Format(time.RFC3339Nano), users, subject, b)
}

// PriceDegraded stores, in tx, the email telling the operator
// (--operator-email) that payhook has had no fresh price of a coin it
// serves since since, the start of this episode of degradation; reason is
// /healthz's. Once per episode (its start) and operator address; none
// without operator addresses.
func (o *Outbox) PriceDegraded(ctx context.Context, tx *entdb.Tx, since time.Time, reason string) error {
	if o == nil {
		return nil
	}
	ops := o.cfg.operators()
	if len(ops) == 0 {
		return nil
	}
	b := body{
		intro: []string{
			"payhook has no fresh price for a coin it serves: " + reason + ".",
			"Until the price providers answer again, requests that need a price (a checkout with an amount, an address with an amount, /convert/, /estimate/) are answered 503, webhooks carry no price, and /healthz reports degraded.",
		},
		facts: []fact{
			{"Stale since", utc(since)},
			{"Reason", reason},
		},
		outro: []string{
			"Check the price providers (--price-provider) and this server's network access to them; payhook asks them again every --price-ttl and recovers by itself once one answers.",
			"This email is sent once per episode: /healthz and the payhook_price_* metrics show the state now.",
		},
	}
	cause := since.UTC().Format(time.RFC3339Nano)
	emails := make([]Email, len(ops))
	for i, to := range ops {
		emails[i] = Email{Kind: KindPriceDegraded, Cause: cause, To: to,
			Subject: "payhook: prices stale since " + utc(since) + ", amounts cannot be priced",
			Text:    b.text(), HTML: b.html()}
	}
	return o.Enqueue(ctx, tx, emails...)
}

// Invitation is an owner's invitation to a project's dashboard.
type Invitation struct {
	// ID is the invitation's id (one email per invitation).
	ID int64
	// ProjectID is the project the invitee joins.
	ProjectID int64
	// To is the invitee's address.
	To string
	// Role is what they may do (owner, developer, viewer); Inviter who
	// invited them (an email).
	Role, Inviter string
	// Link is the one-time link that sets their password: it holds the
	// token, and is in no log.
	Link string
	// Expires is when the link stops working.
	Expires time.Time
}

// roleWhat says what each role may do, for the invitee.
var roleWhat = map[string]string{
	"owner":     "everything, users and payout approval included",
	"developer": "endpoints, API keys, secrets, events and settings, but not payouts, payout wallets or users",
	"viewer":    "read everything, change nothing",
}

// Invite stores, in tx, the invitation's email to the invitee: who invited
// them to which project as what, and the one-time link to set a password.
// Once per invitation.
func (o *Outbox) Invite(ctx context.Context, tx *entdb.Tx, inv Invitation) error {
	if o == nil {
		return nil
	}
	p, err := tx.Project.Query().Where(entproject.ID(inv.ProjectID)).Select(entproject.FieldName).Only(ctx)
	if err != nil {
		return fmt.Errorf("project %d: %w", inv.ProjectID, err)
	}
	b := body{
		intro: []string{fmt.Sprintf("%s invited you to the payhook dashboard of project %s, as %s: %s.", inv.Inviter, p.Name, inv.Role, roleWhat[inv.Role])},
		facts: []fact{
			{"Project", p.Name},
			{"Role", inv.Role},
			{"Invited by", inv.Inviter},
			{"Link valid until", utc(inv.Expires)},
		},
		action: &action{"Accept: choose your password", inv.Link},
		outro: []string{
			"The link works once: it lets you choose a password and signs you in. Your sign-in name is this address.",
			"If you did not expect this invitation, ignore this email: nothing happens unless the link is opened and a password chosen.",
		},
	}
	return o.Enqueue(ctx, tx, Email{ProjectID: inv.ProjectID, Kind: KindInvitation, Cause: strconv.FormatInt(inv.ID, 10), To: inv.To,
		Subject: fmt.Sprintf("[%s] You are invited to the payhook dashboard", p.Name), Text: b.text(), HTML: b.html()})
}

// Receipt is a paid checkout's receipt, for the payer who gave the
// checkout their address.
type Receipt struct {
	// ProjectID is the checkout's project: its name and support contact
	// sign the receipt.
	ProjectID int64
	// To is the payer's address (the checkout's email).
	To string
	// PaymentID is the checkout's payment_id.
	PaymentID string
	// Description is its item_description; empty shows none.
	Description string
	// Value is its amount with its currency ("100.00 USD"); empty for an
	// open amount.
	Value string
	// Payments are what paid it, in order.
	Payments []ReceiptPayment
	// PaidAt is when it was paid.
	PaidAt time.Time
}

// ReceiptPayment is one payment a receipt lists.
type ReceiptPayment struct {
	// Amount and Coin are what was paid ("0.00125", "btc").
	Amount, Coin string
	// TxID is the transaction that paid it.
	TxID string
}

// Receipts stores, in tx, the receipt of each of rs to its payer. Once per
// checkout and address. The projects are read in one query and the emails
// written in one statement.
func (o *Outbox) Receipts(ctx context.Context, tx *entdb.Tx, rs ...Receipt) error {
	if o == nil || len(rs) == 0 {
		return nil
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.ProjectID
	}
	ps, err := tx.Project.Query().Where(entproject.IDIn(ids...)).
		Select(entproject.FieldName, entproject.FieldSupportContact).All(ctx)
	if err != nil {
		return fmt.Errorf("projects of %d receipts: %w", len(rs), err)
	}
	byID := make(map[int64]*entdb.Project, len(ps))
	for _, p := range ps {
		byID[p.ID] = p
	}
	emails := make([]Email, 0, len(rs))
	for _, r := range rs {
		p, ok := byID[r.ProjectID]
		if !ok {
			return fmt.Errorf("receipt of %s: no project %d", r.PaymentID, r.ProjectID)
		}
		b := receiptBody(r, p.Name, p.SupportContact)
		emails = append(emails, Email{ProjectID: r.ProjectID, Kind: KindReceipt, Cause: r.PaymentID, To: r.To,
			Subject: "Receipt: your payment to " + p.Name, Text: b.text(), HTML: b.html()})
	}
	return o.Enqueue(ctx, tx, emails...)
}

// receiptBody is r's receipt, signed by project name with its support
// contact (an email address or an https URL; empty: none).
func receiptBody(r Receipt, name, contact string) body {
	b := body{intro: []string{fmt.Sprintf("Thank you: your payment to %s was received and confirmed.", name)}}
	b.facts = append(b.facts, fact{"Payment ID", r.PaymentID})
	if r.Description != "" {
		b.facts = append(b.facts, fact{"For", r.Description})
	}
	if r.Value != "" {
		b.facts = append(b.facts, fact{"Amount", r.Value})
	}
	for _, p := range r.Payments {
		b.facts = append(b.facts, fact{"Paid", p.Amount + " " + coin(p.Coin)}, fact{"Transaction", p.TxID})
	}
	if !r.PaidAt.IsZero() {
		b.facts = append(b.facts, fact{"Paid at", utc(r.PaidAt)})
	}
	if contact != "" {
		b.outro = append(b.outro, fmt.Sprintf("Questions about this payment? Contact %s: %s, naming the payment ID.", name, contact))
	} else {
		b.outro = append(b.outro, fmt.Sprintf("Questions about this payment? Contact %s, naming the payment ID.", name))
	}
	b.outro = append(b.outro, fmt.Sprintf("This receipt was sent by payhook, the payment gateway %s uses, to the address given with your order. Keep it: the transaction above is your proof of payment.", name))
	return b
}

// projectUsers reads the project's name and support contact, and the
// addresses of its dashboard users of roles who are not disabled (their
// sign-in names; one that is no email address is skipped and logged).
func (o *Outbox) projectUsers(ctx context.Context, tx *entdb.Tx, projectID int64, roles ...dashboarduser.Role) (name, contact string, users []string, err error) {
	p, err := tx.Project.Query().Where(entproject.ID(projectID)).
		Select(entproject.FieldName, entproject.FieldSupportContact).Only(ctx)
	if err != nil {
		return "", "", nil, fmt.Errorf("project %d: %w", projectID, err)
	}
	us, err := tx.DashboardUser.Query().Where(dashboarduser.ProjectID(projectID), dashboarduser.RoleIn(roles...), dashboarduser.DisabledAtIsNil()).
		Order(entdb.Asc(dashboarduser.FieldID)).Select(dashboarduser.FieldEmail).All(ctx)
	if err != nil {
		return "", "", nil, fmt.Errorf("dashboard users of project %d: %w", projectID, err)
	}
	for _, u := range us {
		if checkAddress(u.Email) != nil {
			o.logger.Warn("a dashboard user's sign-in name is no email address: they get no email", "project", projectID, "user", u.ID)
			continue
		}
		users = append(users, u.Email)
	}
	return p.Name, p.SupportContact, users, nil
}

// toUsers stores one email of kind about cause to each of users.
func (o *Outbox) toUsers(ctx context.Context, tx *entdb.Tx, projectID int64, kind Kind, cause string, users []string, subject string, b body) error {
	text, html := b.text(), b.html()
	emails := make([]Email, len(users))
	for i, u := range users {
		emails[i] = Email{ProjectID: projectID, Kind: kind, Cause: cause, To: u, Subject: subject, Text: text, HTML: html}
	}
	return o.Enqueue(ctx, tx, emails...)
}

// coin is a ticker as people write it: BTC, TRC20/USDT.
func coin(ticker string) string { return strings.ToUpper(strings.ReplaceAll(ticker, "_", "/")) }

// utc is t in UTC to the second, as the emails show times.
func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// endpointHost is the host of an endpoint URL, for a subject line (the URL
// itself when it has none).
func endpointHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}
