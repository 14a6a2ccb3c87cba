package dashboard

import (
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/ledger/export"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/notification"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/refund"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// DefaultSessionTTL is how long a dashboard session lasts.
const DefaultSessionTTL = 12 * time.Hour

// DefaultInvitationTTL is how long an invitation's link works.
const DefaultInvitationTTL = 7 * 24 * time.Hour

// DefaultStreamHeartbeat is how often an idle live stream of the dashboard
// writes a comment (and re-checks its session).
const DefaultStreamHeartbeat = 15 * time.Second

// DefaultMaxLiveStreams bounds the dashboard's open live streams, all
// sessions together.
const DefaultMaxLiveStreams = 256

// Config configures the dashboard.
type Config struct {
	// DB is the database: users, sessions, projects, API keys and the
	// delivery activity.
	DB *entdb.Client
	// Invoices lists a project's checkouts and deposits and reads one with
	// its payments.
	Invoices *invoice.Service
	// Subscriptions lists a project's subscriptions and reads one with its
	// renewals.
	Subscriptions *subscription.Service
	// Addresses knows the offered coins (the payout wallet form).
	Addresses *address.Service
	// Prices tell each currency's minor unit (amounts in the listings).
	Prices price.Source
	// Notifications lists and resends a project's notifications (the
	// same service as the API's).
	Notifications *notification.Service
	// Endpoints creates, changes, pauses, resumes, tests and replays the
	// project's webhook endpoints (the same service as the API's); nil
	// hides their pages, their nav link and the paused-endpoint banner.
	Endpoints *endpoint.Service
	// Payouts lists and approves the payouts waiting for approval; nil
	// shows none.
	Payouts *payout.Service
	// Refunds lists and approves the refunds payers ask for; nil shows
	// none.
	Refunds *refund.Service
	// Payments forwards the wrong-asset payments a user releases.
	Payments refund.Forwarder
	// Export writes the project's accounting export (the export page);
	// nil serves no export page.
	Export *export.Exporter
	// Events is the delivery-event stream (the same as WatchDeliveries'):
	// the live updates read it.
	Events *notifier.Events
	// CallbackKeys are the projects' callback signing keys: the settings
	// page shows the project's public key and rotates it. Nil hides the
	// section.
	CallbackKeys *project.CallbackKeys
	// Rules check the payout webhook URL a user sets as the notifier will
	// (the operator's exceptions of the user's project included); nil
	// checks the URL rules only.
	Rules *egress.Rules
	// Mail stores the invitations' emails; nil (email off) refuses to
	// invite.
	Mail *mail.Outbox
	// InvitationTTL is how long an invitation's link works
	// (DefaultInvitationTTL when 0).
	InvitationTTL time.Duration
	// PublicURL is the server's configured public base URL; when it is
	// https, cookies are Secure even if TLS ends in a proxy. Invitation
	// links start with it (no invitation without it).
	PublicURL string
	// TrustedProxies are the networks of reverse proxies in front of
	// payhook: a request from one is attributed to the address its
	// X-Forwarded-For names (for the per-network sign-in limit). Without
	// them the connection's peer is the client.
	TrustedProxies []netip.Prefix
	// ReauthWindow is how long after proving it is them (sign-in, or the
	// password or a TOTP code again) a user may rotate secrets and keys or
	// change payout wallets (DefaultReauthWindow when 0).
	ReauthWindow time.Duration
	// SessionTTL is how long a session lasts (DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// SecretGrace is how long a secret rotated on the dashboard keeps
	// signing (project.DefaultGrace when 0).
	SecretGrace time.Duration
	// Now is the clock (clock.UTC when nil).
	Now func() time.Time
	// StreamHeartbeat is how often an idle live stream (/dashboard/events)
	// writes a comment, so proxies keep it, and re-checks that its session
	// is still open (DefaultStreamHeartbeat when 0).
	StreamHeartbeat time.Duration
	// MaxLiveStreams bounds the open live streams of all sessions together
	// (DefaultMaxLiveStreams when 0); one session may hold at most
	// MaxLiveStreamsPerSession.
	MaxLiveStreams int
	// Logger logs failures that the user sees only as "try again".
	Logger *slog.Logger
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = clock.UTC
	}
	if c.InvitationTTL <= 0 {
		c.InvitationTTL = DefaultInvitationTTL
	}
	if c.ReauthWindow <= 0 {
		c.ReauthWindow = DefaultReauthWindow
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.SecretGrace <= 0 {
		c.SecretGrace = project.DefaultGrace
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.StreamHeartbeat == 0 {
		c.StreamHeartbeat = DefaultStreamHeartbeat
	}
	if c.MaxLiveStreams == 0 {
		c.MaxLiveStreams = DefaultMaxLiveStreams
	}
	return c
}

// Validate reports the first field that cannot serve the dashboard.
func (c Config) Validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("%w: DB is required", ErrConfig)
	case c.Invoices == nil:
		return fmt.Errorf("%w: Invoices is required", ErrConfig)
	case c.Subscriptions == nil:
		return fmt.Errorf("%w: Subscriptions is required", ErrConfig)
	case c.Addresses == nil:
		return fmt.Errorf("%w: Addresses is required", ErrConfig)
	case c.Notifications == nil:
		return fmt.Errorf("%w: Notifications is required", ErrConfig)
	case c.Events == nil:
		return fmt.Errorf("%w: Events is required", ErrConfig)
	case c.StreamHeartbeat < 10*time.Millisecond:
		return fmt.Errorf("%w: StreamHeartbeat %s is below 10ms", ErrConfig, c.StreamHeartbeat)
	case c.MaxLiveStreams < 1:
		return fmt.Errorf("%w: MaxLiveStreams %d is below 1", ErrConfig, c.MaxLiveStreams)
	}
	return nil
}
