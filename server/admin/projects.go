package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
// with the project administration (the embedded registry or registryFile).
func withProjects(ctx context.Context, dsn, registryFile string, fn func(*project.Service) error) error {
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
		return fn(Projects(db.Client, registry, nil, clock.UTC))
	})
}

// CreateProject creates a project in the database named by dsn, with its
// first API key and IPN secret (shown this once).
func CreateProject(ctx context.Context, dsn, registryFile string, req *payhookv1.CreateProjectRequest) (resp *payhookv1.CreateProjectResponse, err error) {
	err = withProjects(ctx, dsn, registryFile, func(p *project.Service) error {
		resp, err = rpc.NewProjectServer(p).CreateProject(ctx, req)
		return err
	})
	return resp, err
}

// ListProjects lists the projects of the database named by dsn.
func ListProjects(ctx context.Context, dsn string) (resp *payhookv1.ListProjectsResponse, err error) {
	err = withProjects(ctx, dsn, "", func(p *project.Service) error {
		resp, err = rpc.NewProjectServer(p).ListProjects(ctx, &payhookv1.ListProjectsRequest{})
		return err
	})
	return resp, err
}

// RotateProjectSecret rotates a project's IPN secret; the old one signs
// beside the new one for grace.
func RotateProjectSecret(ctx context.Context, dsn string, id int64, grace time.Duration) (secret string, err error) {
	err = withProjects(ctx, dsn, "", func(p *project.Service) error {
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
// published for grace.
func RotateCallbackKey(ctx context.Context, dsn string, id int64, grace time.Duration) (pub string, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		pub, err = project.RotateCallbackKey(ctx, db.Client, id, grace, 0, clock.Now())
		return err
	})
	return pub, err
}

// SetProjectWallet sets a project's payout wallets for a ticker from a
// TICKER=ADDRESS[,ADDRESS@SHARE...] spec.
func SetProjectWallet(ctx context.Context, dsn, registryFile string, id int64, spec string) error {
	return withProjects(ctx, dsn, registryFile, func(p *project.Service) error { return p.SetWallet(ctx, id, spec) })
}

// SetProjectPayoutNotify sets where a project's payout webhooks go ("" for
// none), as form POSTs or, when post is false, GET requests.
func SetProjectPayoutNotify(ctx context.Context, dsn string, id int64, rawURL string, post bool) error {
	return withProjects(ctx, dsn, "", func(p *project.Service) error { return p.SetPayoutNotify(ctx, id, rawURL, post) })
}

// SetProjectPayoutLimit sets what a project may pay out of ticker without a
// dashboard user's approval, per payout and per UTC day ("0" or "": none).
func SetProjectPayoutLimit(ctx context.Context, dsn, registryFile string, id int64, ticker, perPayout, perDay string) error {
	return withProjects(ctx, dsn, registryFile, func(p *project.Service) error {
		return p.SetPayoutLimit(ctx, id, ticker, perPayout, perDay)
	})
}

// SetProjectPaymentExceptions sets a project's payment exception rules:
// its underpaid_tolerance (percent) and late_payments policy (credit or
// refund), and whether payers' refunds of overpayments are approved at
// once (autoRefund); nil leaves one as it is.
func SetProjectPaymentExceptions(ctx context.Context, dsn string, id int64, tolerance, late *string, autoRefund *bool) error {
	return withProjects(ctx, dsn, "", func(p *project.Service) error {
		return p.SetPaymentExceptions(ctx, id, tolerance, late, autoRefund)
	})
}

// SetProjectRateLimit sets the request limit of each of a project's API
// keys: rate per second (0: the server's --key-rate; negative: none) and
// burst (0: the server's --key-burst); nil leaves one as it is.
func SetProjectRateLimit(ctx context.Context, dsn string, id int64, rate *float64, burst *int64) error {
	return withProjects(ctx, dsn, "", func(p *project.Service) error { return p.SetRateLimit(ctx, id, rate, burst) })
}

// SetProjectBranding sets what a project's hosted pages show payers: its
// brand colour (#rrggbb, "" for payhook's), support contact (an email
// address or https URL, "" for none) and logo (the file at logoFile, a
// PNG, JPEG or SVG of at most 100 KiB; "" removes it). A nil argument
// leaves that setting; a refused one changes nothing.
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
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		return project.SetBranding(ctx, db.Client, id, b, clock.UTC())
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
func RemoveProjectWallet(ctx context.Context, dsn, registryFile string, id int64, ticker string) error {
	return withProjects(ctx, dsn, registryFile, func(p *project.Service) error { return p.RemoveWallet(ctx, id, ticker) })
}

// CreateDashboardUser creates, in the database named by dsn, a dashboard
// user of project id who signs in with email and password, and returns the
// user's id.
func CreateDashboardUser(ctx context.Context, dsn string, id int64, email, password string) (uid int64, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.CreateUser(ctx, db.Client, id, email, password, clock.UTC())
		if err != nil {
			return err
		}
		uid = u.ID
		return nil
	})
	return uid, err
}
