package rpc

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	entdb "github.com/payhook/payhook/ent/db"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/merchant/project"
)

// ProjectAdmin is what the project service does (project.Service).
type ProjectAdmin interface {
	// Create creates a project with its first key (and its scopes).
	Create(ctx context.Context, p project.Request) (project *entdb.Project, apikey project.IssuedKey, err error)
	// List lists the projects.
	List(ctx context.Context) ([]*entdb.Project, error)
	// RotateSecret rotates a project's IPN secret.
	RotateSecret(ctx context.Context, id int64, grace time.Duration) (string, error)
	// SetWallet sets a ticker's payout wallets from a spec.
	SetWallet(ctx context.Context, id int64, spec string) error
	// RemoveWallet removes a ticker's payout wallets.
	RemoveWallet(ctx context.Context, id int64, ticker string) error
	// SetPayoutNotify sets the payout webhook URL and transport.
	SetPayoutNotify(ctx context.Context, id int64, rawURL string, post bool) error
	// SetPayoutLimit sets a coin's payout limits.
	SetPayoutLimit(ctx context.Context, id int64, ticker, perPayout, perDay string) error
	// SetPaymentExceptions sets the payment exception rules (nil: unchanged).
	SetPaymentExceptions(ctx context.Context, id int64, tolerance, late *string, autoRefund *bool) error
	// SetRateLimit sets the request limit of the project's keys (nil:
	// unchanged).
	SetRateLimit(ctx context.Context, id int64, rate *float64, burst *int64) error
	// Get returns a project.
	Get(ctx context.Context, id int64) (*entdb.Project, error)
	// Now is the clock (whether a rotation's grace still runs).
	Now() time.Time
}

var _ ProjectAdmin = (*project.Service)(nil)

// ProjectServer implements payhookv1.ProjectServiceServer.
type ProjectServer struct {
	payhookv1.UnimplementedProjectServiceServer
	admin ProjectAdmin
}

// NewProjectServer returns the project service.
func NewProjectServer(admin ProjectAdmin) *ProjectServer { return &ProjectServer{admin: admin} }

// CreateProject implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) CreateProject(ctx context.Context, req *payhookv1.CreateProjectRequest) (*payhookv1.CreateProjectResponse, error) {
	p, key, err := s.admin.Create(ctx, project.Request{
		Name: req.GetName(), Currency: req.GetCurrency(), Wallets: req.GetWallets(),
		Tickers: req.GetTickers(), Confirmations: req.GetConfirmations(), APIKeyScopes: req.GetApikeyScopes(),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreateProjectResponse{ProjectId: p.ID, Apikey: key.Key, IpnSecret: p.IpnSecret, ApikeyScopes: key.Scopes}, nil
}

// ListProjects implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) ListProjects(ctx context.Context, _ *payhookv1.ListProjectsRequest) (*payhookv1.ListProjectsResponse, error) {
	ps, err := s.admin.List(ctx)
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListProjectsResponse{Projects: make([]*payhookv1.Project, 0, len(ps))}
	for _, p := range ps {
		out.Projects = append(out.Projects, ProjectOf(p, s.admin.Now()))
	}
	return out, nil
}

// ProjectOf describes p without its secrets; now decides whether a
// rotation's grace period still runs.
func ProjectOf(p *entdb.Project, now time.Time) *payhookv1.Project {
	pp := &payhookv1.Project{
		ProjectId: p.ID, Name: p.Name, Currency: p.Currency, CreatedAt: timestamppb.New(p.CreatedAt),
		Wallets:         []*payhookv1.ProjectWallet{},
		SecretRotating:  len(project.Secrets(p, now)) > 1,
		Tickers:         p.Tickers,
		Confirmations:   p.Confirmations,
		PayoutNotifyUrl: p.PayoutNotifyURL, PayoutNotifyPost: p.PayoutNotifyPost,
		UnderpaidTolerance: p.UnderpaidTolerance.String(), LatePayments: p.LatePayments.String(),
		RateLimit: p.RateLimit, RateBurst: int64(p.RateBurst),
	}
	for _, t := range project.WalletTickers(p) {
		for _, d := range p.Wallets[t] {
			pp.Wallets = append(pp.Wallets, &payhookv1.ProjectWallet{Ticker: t, Address: d.Address, Share: d.Share.String()})
		}
	}
	return pp
}

// RotateSecret implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) RotateSecret(ctx context.Context, req *payhookv1.RotateSecretRequest) (*payhookv1.RotateSecretResponse, error) {
	grace := project.DefaultGrace
	if req.GraceSeconds != nil {
		grace = time.Duration(req.GetGraceSeconds()) * time.Second
	}
	secret, err := s.admin.RotateSecret(ctx, req.GetProjectId(), grace)
	if err != nil {
		return nil, err
	}
	return &payhookv1.RotateSecretResponse{IpnSecret: secret}, nil
}

// SetWallet implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) SetWallet(ctx context.Context, req *payhookv1.SetWalletRequest) (*payhookv1.SetWalletResponse, error) {
	if err := s.admin.SetWallet(ctx, req.GetProjectId(), req.GetWallet()); err != nil {
		return nil, err
	}
	return &payhookv1.SetWalletResponse{}, nil
}

// SetPayoutNotify implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) SetPayoutNotify(ctx context.Context, req *payhookv1.SetPayoutNotifyRequest) (*payhookv1.SetPayoutNotifyResponse, error) {
	if err := s.admin.SetPayoutNotify(ctx, req.GetProjectId(), req.GetPayoutNotifyUrl(), !req.GetGet()); err != nil {
		return nil, err
	}
	return &payhookv1.SetPayoutNotifyResponse{}, nil
}

// SetPayoutLimit implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) SetPayoutLimit(ctx context.Context, req *payhookv1.SetPayoutLimitRequest) (*payhookv1.SetPayoutLimitResponse, error) {
	if err := s.admin.SetPayoutLimit(ctx, req.GetProjectId(), req.GetTicker(), req.GetPerPayout(), req.GetPerDay()); err != nil {
		return nil, err
	}
	return &payhookv1.SetPayoutLimitResponse{}, nil
}

// SetPaymentExceptions implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) SetPaymentExceptions(ctx context.Context, req *payhookv1.SetPaymentExceptionsRequest) (*payhookv1.SetPaymentExceptionsResponse, error) {
	if err := s.admin.SetPaymentExceptions(ctx, req.GetProjectId(), req.UnderpaidTolerance, req.LatePayments, req.AutoRefundOverpaid); err != nil {
		return nil, err
	}
	p, err := s.admin.Get(ctx, req.GetProjectId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.SetPaymentExceptionsResponse{
		UnderpaidTolerance: p.UnderpaidTolerance.String(), LatePayments: p.LatePayments.String(), AutoRefundOverpaid: p.AutoRefundOverpaid,
	}, nil
}

// SetRateLimit implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) SetRateLimit(ctx context.Context, req *payhookv1.SetRateLimitRequest) (*payhookv1.SetRateLimitResponse, error) {
	if err := s.admin.SetRateLimit(ctx, req.GetProjectId(), req.RateLimit, req.RateBurst); err != nil {
		return nil, err
	}
	p, err := s.admin.Get(ctx, req.GetProjectId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.SetRateLimitResponse{RateLimit: p.RateLimit, RateBurst: int64(p.RateBurst)}, nil
}

// RemoveWallet implements payhookv1.ProjectServiceServer.
func (s *ProjectServer) RemoveWallet(ctx context.Context, req *payhookv1.RemoveWalletRequest) (*payhookv1.RemoveWalletResponse, error) {
	if err := s.admin.RemoveWallet(ctx, req.GetProjectId(), req.GetTicker()); err != nil {
		return nil, err
	}
	return &payhookv1.RemoveWalletResponse{}, nil
}
