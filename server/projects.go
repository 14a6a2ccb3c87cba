package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/rpc"
	"github.com/payhook/payhook/server/web/dashboard"
)

// projects is the operator's project administration, shared by the
// ProjectService and the `payhook project` commands. Wallet addresses are
// checked against the ticker registry.
type projects struct {
	db       *entdb.Client
	registry *chains.Registry
	now      func() time.Time
}

var _ rpc.ProjectAdmin = (*projects)(nil)

// wallet parses and checks a wallet spec.
func (p *projects) wallet(spec string) (string, []schema.Destination, error) {
	ticker, ds, err := project.ParseWallet(spec)
	if err != nil {
		return "", nil, err
	}
	t, ok := p.registry.Lookup(chainsTicker(ticker))
	if !ok {
		return "", nil, fmt.Errorf("%w: wallet %q: unknown ticker %s", project.ErrInvalid, spec, ticker)
	}
	if err := project.CheckAddresses(t, ds); err != nil {
		return "", nil, fmt.Errorf("wallet %q: %w", spec, err)
	}
	return t.Ticker, ds, nil
}

// chainsTicker turns trc20_usdt into trc20/usdt.
func chainsTicker(s string) string { return strings.Replace(s, "_", "/", 1) }

// Now implements rpc.ProjectAdmin.
func (p *projects) Now() time.Time { return p.now() }

// ticker resolves a ticker as the merchant API names it (btc, trc20_usdt,
// trc20/usdt).
func (p *projects) ticker(param, s string) (chains.Ticker, error) {
	t, ok := p.registry.Lookup(chainsTicker(strings.ToLower(strings.TrimSpace(s))))
	if !ok {
		return chains.Ticker{}, fmt.Errorf("%w: %s: unknown ticker %q", project.ErrInvalid, param, s)
	}
	return t, nil
}

// Create implements rpc.ProjectAdmin.
func (p *projects) Create(ctx context.Context, req rpc.NewProject) (*entdb.Project, string, error) {
	wallets := map[string][]schema.Destination{}
	for _, spec := range req.Wallets {
		t, ds, err := p.wallet(spec)
		if err != nil {
			return nil, "", err
		}
		wallets[t] = ds
	}
	var tickers []string
	for _, s := range req.Tickers {
		t, err := p.ticker("tickers", s)
		if err != nil {
			return nil, "", err
		}
		tickers = append(tickers, t.Ticker)
	}
	confs := map[string]int32{}
	for _, spec := range req.Confirmations {
		name, count, ok := strings.Cut(spec, "=")
		t, err := p.ticker("confirmations", name)
		if err != nil {
			return nil, "", err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(count), 10, 32)
		if !ok || err != nil || n < int64(t.MinConfirmations) || n > 100 {
			return nil, "", fmt.Errorf("%w: confirmations %q: want %s=N with N from %d to 100", project.ErrInvalid, spec, t.Ticker, t.MinConfirmations)
		}
		if fixed, ok := t.Rules().FixedConfirmations(t); ok {
			n = fixed // Solana has no numeric depth
		}
		confs[t.Ticker] = int32(n)
	}
	name, currency := req.Name, req.Currency
	var pr *entdb.Project
	var key string
	err := store.WithTx(ctx, p.db, func(tx *entdb.Tx) error {
		var err error
		if pr, err = project.Create(ctx, tx.Client(), project.Params{Name: name, Currency: currency, Wallets: wallets, Tickers: tickers, Confirmations: confs}, p.now()); err != nil {
			return err
		}
		key, _, err = apikey.CreateInProject(ctx, tx.Client(), name, pr.ID, p.now())
		return err
	})
	return pr, key, err
}

// List implements rpc.ProjectAdmin.
func (p *projects) List(ctx context.Context) ([]*entdb.Project, error) {
	return project.List(ctx, p.db)
}

// RotateSecret implements rpc.ProjectAdmin.
func (p *projects) RotateSecret(ctx context.Context, id int64, grace time.Duration) (string, error) {
	return project.RotateSecret(ctx, p.db, id, grace, p.now())
}

// SetWallet implements rpc.ProjectAdmin.
func (p *projects) SetWallet(ctx context.Context, id int64, spec string) error {
	t, ds, err := p.wallet(spec)
	if err != nil {
		return err
	}
	return project.SetWallet(ctx, p.db, id, t, ds, p.now())
}

// RemoveWallet implements rpc.ProjectAdmin.
func (p *projects) RemoveWallet(ctx context.Context, id int64, ticker string) error {
	t, ok := p.registry.Lookup(chainsTicker(ticker))
	if ok {
		ticker = t.Ticker
	}
	return project.RemoveWallet(ctx, p.db, id, ticker, p.now())
}

// withProjects opens the database named by dsn, migrates it and runs fn
// with the project administration (the embedded registry or registryFile).
func withProjects(ctx context.Context, dsn, registryFile string, fn func(*projects) error) error {
	registry, err := loadRegistry(registryFile)
	if err != nil {
		return err
	}
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		if err := project.EnsureSecrets(ctx, db.Client); err != nil {
			return err
		}
		return fn(&projects{db: db.Client, registry: registry, now: func() time.Time { return time.Now().UTC() }})
	})
}

// CreateProject creates a project in the database named by dsn, with its
// first API key and IPN secret (shown this once).
func CreateProject(ctx context.Context, dsn, registryFile string, req *payhookv1.CreateProjectRequest) (resp *payhookv1.CreateProjectResponse, err error) {
	err = withProjects(ctx, dsn, registryFile, func(p *projects) error {
		resp, err = rpc.NewProjectServer(p).CreateProject(ctx, req)
		return err
	})
	return resp, err
}

// ListProjects lists the projects of the database named by dsn.
func ListProjects(ctx context.Context, dsn string) (resp *payhookv1.ListProjectsResponse, err error) {
	err = withProjects(ctx, dsn, "", func(p *projects) error {
		resp, err = rpc.NewProjectServer(p).ListProjects(ctx, &payhookv1.ListProjectsRequest{})
		return err
	})
	return resp, err
}

// RotateProjectSecret rotates a project's IPN secret; the old one signs
// beside the new one for grace.
func RotateProjectSecret(ctx context.Context, dsn string, id int64, grace time.Duration) (secret string, err error) {
	err = withProjects(ctx, dsn, "", func(p *projects) error {
		secret, err = p.RotateSecret(ctx, id, grace)
		return err
	})
	return secret, err
}

// SetProjectWallet sets a project's payout wallets for a ticker from a
// TICKER=ADDRESS[,ADDRESS@SHARE...] spec.
func SetProjectWallet(ctx context.Context, dsn, registryFile string, id int64, spec string) error {
	return withProjects(ctx, dsn, registryFile, func(p *projects) error { return p.SetWallet(ctx, id, spec) })
}

// RemoveProjectWallet removes a project's payout wallets for a ticker.
func RemoveProjectWallet(ctx context.Context, dsn, registryFile string, id int64, ticker string) error {
	return withProjects(ctx, dsn, registryFile, func(p *projects) error { return p.RemoveWallet(ctx, id, ticker) })
}

// CreateDashboardUser creates, in the database named by dsn, a dashboard
// user of project id who signs in with email and password, and returns the
// user's id.
func CreateDashboardUser(ctx context.Context, dsn string, id int64, email, password string) (uid int64, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.CreateUser(ctx, db.Client, id, email, password, time.Now().UTC())
		if err != nil {
			return err
		}
		uid = u.ID
		return nil
	})
	return uid, err
}
