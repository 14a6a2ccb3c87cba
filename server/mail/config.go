package mail

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/schedule"
)

// Defaults of Config.
const (
	// DefaultTimeout bounds connecting to the SMTP server and each of its
	// commands.
	DefaultTimeout = 30 * time.Second
	// DefaultLease is how long a claimed email is reserved for the instance
	// sending it: longer than a batch takes at DefaultTimeout per command.
	DefaultLease = 10 * time.Minute
	// DefaultPollInterval is how often a Sender looks for emails that came
	// due (a retry, or an email another instance stored).
	DefaultPollInterval = 30 * time.Second
	// DefaultBatch is the most emails one claim takes, sent over one SMTP
	// connection.
	DefaultBatch = 20
)

// Config is how payhook sends email. The zero value (no URL) is email
// off: nothing is stored and nothing is sent.
type Config struct {
	// URL is the SMTP server (--smtp-url):
	//
	//	smtp://[USER[:PASSWORD]@]HOST[:PORT]?from=ADDRESS[&tls=none]
	//	smtps://[USER[:PASSWORD]@]HOST[:PORT]?from=ADDRESS
	//
	// smtp:// requires STARTTLS (port 587 by default) unless tls=none,
	// which sends in clear (a relay on this host, tests); smtps:// is
	// implicit TLS (port 465 by default). from is the sender address
	// (URL-encoded: payhook%40shop.example, or "Payhook <...>"). Empty
	// turns email off.
	URL string
	// Password is the SMTP password (PAYHOOK_SMTP_PASSWORD), given instead
	// of the URL's; never logged.
	Password string
	// Operators are the operator's addresses (--operator-email): price
	// source alerts go to them. None sends none.
	Operators []string
	// DashboardURL is the dashboard's absolute URL (the public URL and
	// /dashboard/), linked from the project users' emails; empty links
	// nothing (without --public-url the server knows no address its users
	// reach).
	DashboardURL string
	// Policy is the retry schedule: the webhooks' (notifier/schedule's
	// Default: 1m, 5m, 15m, 1h, then every 3h, for 48 hours) when zero.
	Policy schedule.Policy
	// Timeout bounds connecting and each SMTP command (DefaultTimeout).
	Timeout time.Duration
	// Lease is how long a claimed email is reserved for the instance
	// sending it before another may take it over (DefaultLease).
	Lease time.Duration
	// PollInterval is how often a Sender looks for due emails
	// (DefaultPollInterval); emails stored by this instance wake it at
	// once.
	PollInterval time.Duration
	// Batch is the most emails one claim takes (DefaultBatch).
	Batch int
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
	// RootCAs, when set, verify the SMTP server's certificate instead of
	// the system's roots. Tests.
	RootCAs *x509.CertPool
	// Faults inject crashes. Tests.
	Faults Faults
}

// Faults are crashes a test injects into a Sender.
type Faults struct {
	// AfterSend, when it returns true for an email the SMTP server took,
	// makes the Sender drop its outcome as a process dying right then
	// would: the email stays leased, unrecorded, and is sent again once
	// its lease lapses.
	AfterSend func(id int64) bool
}

// Enabled reports whether email is on (a URL is configured).
func (c Config) Enabled() bool { return c.URL != "" }

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	if len(c.Policy.Delays) == 0 && c.Policy.Window == 0 {
		c.Policy = schedule.Default()
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Lease == 0 {
		c.Lease = DefaultLease
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	return c
}

// Validate reports the first bad setting, naming it by its flag. Its
// messages never hold the password.
func (c Config) Validate() error {
	if !c.Enabled() {
		if len(c.Operators) > 0 {
			return errors.New("--operator-email: needs --smtp-url (without an SMTP server payhook sends no email)")
		}
		if c.Password != "" {
			return errors.New("PAYHOOK_SMTP_PASSWORD: needs --smtp-url")
		}
		return nil
	}
	if _, err := c.server(); err != nil {
		return err
	}
	for _, o := range c.Operators {
		if err := checkAddress(o); err != nil {
			return fmt.Errorf("--operator-email %q: %w", o, err)
		}
	}
	if c.DashboardURL != "" {
		if u, err := url.Parse(c.DashboardURL); err != nil || !u.IsAbs() {
			return fmt.Errorf("dashboard URL %q: not an absolute URL", c.DashboardURL)
		}
	}
	if err := c.Policy.Validate(); err != nil {
		return fmt.Errorf("email retry schedule: %w", err)
	}
	if c.Timeout < 0 || c.PollInterval < 0 || c.Batch < 0 {
		return errors.New("email timeout, poll interval and batch must not be negative")
	}
	if c.Lease <= c.Timeout {
		return fmt.Errorf("email lease %s must be longer than its timeout %s", c.Lease, c.Timeout)
	}
	return nil
}

// server is the SMTP server a URL names.
type server struct {
	host string
	port int
	// implicitTLS: smtps://, TLS from the first byte.
	implicitTLS bool
	// plain: smtp:// with tls=none, no TLS at all.
	plain              bool
	username, password string
	// from is the sender as given (a display name may come with it);
	// fromAddr is its address alone.
	from, fromAddr string
}

// String names the server without its credentials, for the log.
func (s server) String() string {
	scheme := "smtp"
	switch {
	case s.implicitTLS:
		scheme = "smtps"
	case s.plain:
		scheme = "smtp (no TLS)"
	}
	return scheme + " " + net.JoinHostPort(s.host, strconv.Itoa(s.port)) + " from " + s.fromAddr
}

// server parses URL (and Password). Its errors name what is wrong and
// never quote the URL, which may hold a password.
func (c Config) server() (server, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("--smtp-url: "+format, args...)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return server{}, bad("not a URL; want smtp://[USER[:PASSWORD]@]HOST[:PORT]?from=ADDRESS (special characters of the password percent-encoded, or in PAYHOOK_SMTP_PASSWORD)")
	}
	var s server
	switch u.Scheme {
	case "smtp":
		s.port = 587
	case "smtps":
		s.port, s.implicitTLS = 465, true
	default:
		return server{}, bad("scheme %q: want smtp:// (STARTTLS) or smtps:// (implicit TLS)", u.Scheme)
	}
	s.host = u.Hostname()
	if s.host == "" {
		return server{}, bad("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return server{}, bad("port %q: want 1 to 65535", p)
		}
		s.port = n
	}
	if (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return server{}, bad("nothing may follow the host but ?from=... (no path or fragment)")
	}
	if u.User != nil {
		s.username = u.User.Username()
		s.password, _ = u.User.Password()
	}
	if c.Password != "" {
		if s.password != "" {
			return server{}, errors.New("--smtp-url holds a password and PAYHOOK_SMTP_PASSWORD is set: give the password one way")
		}
		if s.username == "" {
			return server{}, errors.New("PAYHOOK_SMTP_PASSWORD: the --smtp-url names no user (smtp://USER@HOST)")
		}
		s.password = c.Password
	}
	q := u.Query()
	for k := range q {
		if k != "from" && k != "tls" {
			return server{}, bad("unknown parameter %q: want from and, for smtp://, tls=none", k)
		}
	}
	switch tls := q.Get("tls"); {
	case !q.Has("tls"):
	case tls == "none" && !s.implicitTLS:
		s.plain = true
	default:
		return server{}, bad("tls=%q: the one value is none, with smtp:// (STARTTLS is required otherwise; smtps:// is TLS throughout)", tls)
	}
	if s.plain && s.password != "" && !loopback(s.host) {
		return server{}, bad("tls=none would send the password in clear to %s: use STARTTLS (drop tls=none) or smtps://", s.host)
	}
	s.from = q.Get("from")
	if s.from == "" {
		return server{}, bad("no sender: add ?from=ADDRESS (URL-encoded: from=payhook%%40shop.example)")
	}
	a, err := netmail.ParseAddress(s.from)
	if err != nil {
		return server{}, bad("from %q is not an email address", s.from)
	}
	s.fromAddr = a.Address
	return s, nil
}

// loopback reports whether host is this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkAddress accepts a bare email address (no display name).
func checkAddress(s string) error {
	a, err := netmail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return errors.New("not an email address (name@example.com)")
	}
	if len(s) > maxAddress {
		return fmt.Errorf("longer than %d characters", maxAddress)
	}
	return nil
}

// maxAddress is the longest address SMTP carries (RFC 5321's path limit
// less its brackets).
const maxAddress = 254

// operators returns the operator addresses, each once (whatever its
// case), in order.
func (c Config) operators() []string {
	var out, seen []string
	for _, o := range c.Operators {
		o = strings.TrimSpace(o)
		if o != "" && !slices.Contains(seen, strings.ToLower(o)) {
			out, seen = append(out, o), append(seen, strings.ToLower(o))
		}
	}
	return out
}
