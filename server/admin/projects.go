package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/rpc"
	"github.com/payhook/payhook/server/web/dashboard"
)

// Projects is the project administration (the ProjectService's logic) of
// db, checking wallets against registry, on the clock now: what the server
// serves and the `payhook project` commands use.
func Projects(db *entdb.Client, registry *chains.Registry, rules *egress.Rules, now func() time.Time) *project.Service {
	return project.NewService(project.ServiceConfig{DB: db, Registry: registry, Now: now, IssueKey: apikey.CreateScoped, Rules: rules})
}

// withProjects opens the database named by dsn, migrates it and runs fn
// with the project administration (the embedded registry or registryFile)
// and the database.
func withProjects(ctx context.Context, dsn, registryFile string, fn func(*project.Service, *entdb.Client) error) error {
	registry, err := LoadRegistry(registryFile)
	if err != nil {
		return err
	}
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		// Without the secrets key a project made by `apikey create` keeps
		// waiting for its secret: the server gives it one at start.
		if err := project.EnsureSecrets(ctx, db.Client); err != nil && !errors.Is(err, store.ErrNoSecretsKey) {
			return err
		}
		// No destination rules: the command does not know serve's
		// --allow-private-endpoint; the notifier checks every attempt.
		return fn(Projects(db.Client, registry, nil, clock.UTC), db.Client)
	})
}

// changeProject runs change on project id with the project administration
// (withProjects) and, once it succeeded, records action on target in the
// project's audit log. The project service commits each change in a
// transaction of its own, so the entry follows it (recordDone).
func changeProject(ctx context.Context, dsn, registryFile string, id int64, action, target string, change func(*project.Service) error) error {
	return withProjects(ctx, dsn, registryFile, func(p *project.Service, db *entdb.Client) error {
		if err := change(p); err != nil {
			return err
		}
		recordDone(ctx, db, id, action, target)
		return nil
	})
}

// changeProjectDB is changeProject for a change made on the database
// itself.
func changeProjectDB(ctx context.Context, dsn string, id int64, action, target string, change func(*entdb.Client) error) error {
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		if err := change(db.Client); err != nil {
			return err
		}
		recordDone(ctx, db.Client, id, action, target)
		return nil
	})
}

// CreateProject creates a project in the database named by dsn, with its
// first API key and IPN secret (shown this once), recorded in the new
// project's audit log (project.create, on its name).
func CreateProject(ctx context.Context, dsn, registryFile string, req *payhookv1.CreateProjectRequest) (resp *payhookv1.CreateProjectResponse, err error) {
	err = withProjects(ctx, dsn, registryFile, func(p *project.Service, db *entdb.Client) error {
		if resp, err = rpc.NewProjectServer(p).CreateProject(ctx, req); err != nil {
			return err
		}
		recordDone(ctx, db, resp.GetProjectId(), "project.create", req.GetName())
		return nil
	})
	return resp, err
}

// ListProjects lists the projects of the database named by dsn.
func ListProjects(ctx context.Context, dsn string) (resp *payhookv1.ListProjectsResponse, err error) {
	err = withProjects(ctx, dsn, "", func(p *project.Service, _ *entdb.Client) error {
		resp, err = rpc.NewProjectServer(p).ListProjects(ctx, &payhookv1.ListProjectsRequest{})
		return err
	})
	return resp, err
}

// RotateProjectSecret rotates a project's IPN secret; the old one signs
// beside the new one for grace. Audited as settings.rotate_ipn_secret
// (never the secret).
func RotateProjectSecret(ctx context.Context, dsn string, id int64, grace time.Duration) (secret string, err error) {
	err = changeProject(ctx, dsn, "", id, "settings.rotate_ipn_secret", "", func(p *project.Service) error {
		secret, err = p.RotateSecret(ctx, id, grace)
		return err
	})
	return secret, err
}

// DefaultCallbackKeyGrace is how long a rotated-out callback key is still
// published (project.DefaultCallbackKeyGrace).
const DefaultCallbackKeyGrace = project.DefaultCallbackKeyGrace

// RotateCallbackKey gives a project a new callback signing key (of the
// server's default size) and returns its public half; the old one is still
// published for grace. Audited as settings.rotate_callback_key.
func RotateCallbackKey(ctx context.Context, dsn string, id int64, grace time.Duration) (pub string, err error) {
	err = changeProjectDB(ctx, dsn, id, "settings.rotate_callback_key", "", func(db *entdb.Client) error {
		pub, err = project.RotateCallbackKey(ctx, db, id, grace, 0, clock.Now())
		return err
	})
	return pub, err
}

// SetProjectWallet sets a project's payout wallets for a ticker from a
// TICKER=ADDRESS[,ADDRESS@SHARE...] spec. Audited as settings.wallet_set
// on the ticker.
func SetProjectWallet(ctx context.Context, dsn, registryFile string, id int64, spec string) error {
	ticker, _, _ := strings.Cut(spec, "=")
	ticker = strings.ToLower(strings.TrimSpace(ticker))
	return changeProject(ctx, dsn, registryFile, id, "settings.wallet_set", ticker, func(p *project.Service) error { return p.SetWallet(ctx, id, spec) })
}

// SetProjectWatchKey makes a merchant's key (TICKER=KEY: an extended
// public key or an output descriptor) a project's watch-only wallet of the
// ticker, with gap limit gap (0 keeps the key's), and returns the key as
// stored. Audited as settings.wallet_set on the ticker (a public key is no
// secret, but the entry names only the ticker, as for addresses).
func SetProjectWatchKey(ctx context.Context, dsn, registryFile string, id int64, spec string, gap int) (wk *entdb.WatchKey, err error) {
	ticker, _, _ := strings.Cut(spec, "=")
	ticker = strings.ToLower(strings.TrimSpace(ticker))
	err = changeProject(ctx, dsn, registryFile, id, "settings.wallet_set", ticker, func(p *project.Service) error {
		wk, err = p.SetWatchKey(ctx, id, spec, gap)
		return err
	})
	return wk, err
}

// ProjectWatchWallets returns a project's watch-only wallets with what the
// merchant's wallet needs to scan.
func ProjectWatchWallets(ctx context.Context, dsn, registryFile string, id int64) (ws []project.WatchWallet, err error) {
	err = withProjects(ctx, dsn, registryFile, func(p *project.Service, _ *entdb.Client) error {
		ws, err = p.WatchWallets(ctx, id)
		return err
	})
	return ws, err
}

// SetProjectPayoutNotify sets where a project's payout webhooks go ("" for
// none), as form POSTs or, when post is false, GET requests. Audited as
// settings.payout_webhook, without the URL (it may carry credentials).
func SetProjectPayoutNotify(ctx context.Context, dsn string, id int64, rawURL string, post bool) error {
	return changeProject(ctx, dsn, "", id, "settings.payout_webhook", "", func(p *project.Service) error { return p.SetPayoutNotify(ctx, id, rawURL, post) })
}

// SetProjectPayoutLimit sets what a project may pay out of ticker without a
// dashboard user's approval, per payout and per UTC day ("0" or "": none).
// Audited as settings.payout_limit on the ticker.
func SetProjectPayoutLimit(ctx context.Context, dsn, registryFile string, id int64, ticker, perPayout, perDay string) error {
	target := strings.ToLower(strings.TrimSpace(ticker))
	return changeProject(ctx, dsn, registryFile, id, "settings.payout_limit", target, func(p *project.Service) error {
		return p.SetPayoutLimit(ctx, id, ticker, perPayout, perDay)
	})
}

// SetProjectPaymentExceptions sets a project's payment exception rules:
// its underpaid_tolerance (percent) and late_payments policy (credit or
// refund), and whether payers' refunds of overpayments are approved at
// once (autoRefund); nil leaves one as it is. Audited as
// settings.payment_exceptions.
func SetProjectPaymentExceptions(ctx context.Context, dsn string, id int64, tolerance, late *string, autoRefund *bool) error {
	return changeProject(ctx, dsn, "", id, "settings.payment_exceptions", "", func(p *project.Service) error {
		return p.SetPaymentExceptions(ctx, id, tolerance, late, autoRefund)
	})
}

// SetProjectRateLimit sets the request limit of each of a project's API
// keys: rate per second (0: the server's --key-rate; negative: none) and
// burst (0: the server's --key-burst); nil leaves one as it is. Audited
// as settings.rate_limit.
func SetProjectRateLimit(ctx context.Context, dsn string, id int64, rate *float64, burst *int64) error {
	return changeProject(ctx, dsn, "", id, "settings.rate_limit", "", func(p *project.Service) error { return p.SetRateLimit(ctx, id, rate, burst) })
}

// SetProjectBranding sets what a project's hosted pages show payers: its
// brand colour (#rrggbb, "" for payhook's), support contact (an email
// address or https URL, "" for none) and logo (the file at logoFile, a
// PNG, JPEG or SVG of at most 100 KiB; "" removes it). A nil argument
// leaves that setting; a refused one changes nothing. Audited as
// settings.branding.
func SetProjectBranding(ctx context.Context, dsn string, id int64, color, contact, logoFile *string) error {
	b := project.Branding{Color: color, Contact: contact}
	if logoFile != nil {
		logo := []byte{}
		if *logoFile != "" {
			var err error
			if logo, err = readLogo(*logoFile); err != nil {
				return err
			}
		}
		b.Logo = &logo
	}
	return changeProjectDB(ctx, dsn, id, "settings.branding", "", func(db *entdb.Client) error {
		return project.SetBranding(ctx, db, id, b, clock.UTC())
	})
}

// readLogo reads a logo file, at most one byte over the limit (so a larger
// file is refused by its size, never read whole).
func readLogo(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--logo: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	b, err := io.ReadAll(io.LimitReader(f, project.MaxLogoBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--logo %s: %w", path, err)
	}
	if len(b) > project.MaxLogoBytes {
		return nil, fmt.Errorf("--logo %s: over the %d KiB a logo may have", path, project.MaxLogoBytes>>10)
	}
	return b, nil
}

// RemoveProjectWallet removes a project's payout wallets for a ticker.
// Audited as settings.wallet_remove on the ticker.
func RemoveProjectWallet(ctx context.Context, dsn, registryFile string, id int64, ticker string) error {
	target := strings.ToLower(strings.TrimSpace(ticker))
	return changeProject(ctx, dsn, registryFile, id, "settings.wallet_remove", target, func(p *project.Service) error { return p.RemoveWallet(ctx, id, ticker) })
}

// CreateDashboardUser creates, in the database named by dsn, a dashboard
// user of project id who signs in with email and password, and returns the
// user's id. Audited as user.create, "EMAIL as owner" (never the
// password).
func CreateDashboardUser(ctx context.Context, dsn string, id int64, email, password string) (uid int64, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.CreateUser(ctx, db.Client, id, email, password, clock.UTC())
		if err != nil {
			return err
		}
		uid = u.ID
		recordDone(ctx, db.Client, u.ProjectID, "user.create", u.Email+" as "+string(u.Role))
		return nil
	})
	return uid, err
}
