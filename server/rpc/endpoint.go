package rpc

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	entdb "github.com/payhook/payhook/ent/db"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/merchant/endpoint"
)

// EndpointServer implements payhookv1.EndpointServiceServer.
type EndpointServer struct {
	payhookv1.UnimplementedEndpointServiceServer
	endpoints *endpoint.Service
}

// NewEndpointServer returns the endpoint service.
func NewEndpointServer(e *endpoint.Service) *EndpointServer { return &EndpointServer{endpoints: e} }

// CreateEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) CreateEndpoint(ctx context.Context, req *payhookv1.CreateEndpointRequest) (*payhookv1.CreateEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.endpoints.Create(ctx, projectID, endpoint.Spec{
		URL: req.GetUrl(), EventTypes: req.GetEventTypes(), Description: req.GetDescription(), MaxPerSecond: int(req.GetMaxPerSecond()),
	})
	if err != nil {
		return nil, err
	}
	return &payhookv1.CreateEndpointResponse{Endpoint: endpointOf(e), Secret: e.Secret}, nil
}

// ListEndpoints implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) ListEndpoints(ctx context.Context, _ *payhookv1.ListEndpointsRequest) (*payhookv1.ListEndpointsResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	es, err := s.endpoints.List(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListEndpointsResponse{Endpoints: make([]*payhookv1.Endpoint, len(es))}
	for i, e := range es {
		out.Endpoints[i] = endpointOf(e)
	}
	return out, nil
}

// GetEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) GetEndpoint(ctx context.Context, req *payhookv1.GetEndpointRequest) (*payhookv1.GetEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.endpoints.Get(ctx, projectID, req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.GetEndpointResponse{Endpoint: endpointOf(e)}, nil
}

// UpdateEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) UpdateEndpoint(ctx context.Context, req *payhookv1.UpdateEndpointRequest) (*payhookv1.UpdateEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	up := endpoint.Update{URL: req.Url, Description: req.Description, EventTypes: req.GetEventTypes()}
	if req.MaxPerSecond != nil {
		n := int(req.GetMaxPerSecond())
		up.MaxPerSecond = &n
	}
	e, err := s.endpoints.Update(ctx, projectID, req.GetEndpointId(), up)
	if err != nil {
		return nil, err
	}
	return &payhookv1.UpdateEndpointResponse{Endpoint: endpointOf(e)}, nil
}

// DeleteEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) DeleteEndpoint(ctx context.Context, req *payhookv1.DeleteEndpointRequest) (*payhookv1.DeleteEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.endpoints.Delete(ctx, projectID, req.GetEndpointId()); err != nil {
		return nil, err
	}
	return &payhookv1.DeleteEndpointResponse{}, nil
}

// RotateEndpointSecret implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) RotateEndpointSecret(ctx context.Context, req *payhookv1.RotateEndpointSecretRequest) (*payhookv1.RotateEndpointSecretResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.endpoints.RotateSecret(ctx, projectID, req.GetEndpointId(), time.Duration(req.GetGraceSeconds())*time.Second)
	if err != nil {
		return nil, err
	}
	out := &payhookv1.RotateEndpointSecretResponse{Secret: e.Secret}
	if e.PreviousSecretUntil != nil {
		out.PreviousSecretUntil = timestamppb.New(*e.PreviousSecretUntil)
	}
	return out, nil
}

// PauseEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) PauseEndpoint(ctx context.Context, req *payhookv1.PauseEndpointRequest) (*payhookv1.PauseEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.endpoints.Pause(ctx, projectID, req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.PauseEndpointResponse{Endpoint: endpointOf(e)}, nil
}

// ResumeEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) ResumeEndpoint(ctx context.Context, req *payhookv1.ResumeEndpointRequest) (*payhookv1.ResumeEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.endpoints.Resume(ctx, projectID, req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.ResumeEndpointResponse{Endpoint: endpointOf(e)}, nil
}

// ReplayEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) ReplayEndpoint(ctx context.Context, req *payhookv1.ReplayEndpointRequest) (*payhookv1.ReplayEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	r := endpoint.ReplayRange{Since: req.GetSince().AsTime(), EventTypes: req.GetEventTypes()}
	if req.Until != nil {
		r.Until = req.GetUntil().AsTime()
	}
	done, err := s.endpoints.Replay(ctx, projectID, req.GetEndpointId(), r)
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ReplayEndpointResponse{Replayed: int32(done.Count)} //nolint:gosec // at most endpoint.MaxReplay
	if !done.Next.IsZero() {
		out.NextSince = timestamppb.New(done.Next)
	}
	return out, nil
}

// TestEndpoint implements payhookv1.EndpointServiceServer.
func (s *EndpointServer) TestEndpoint(ctx context.Context, req *payhookv1.TestEndpointRequest) (*payhookv1.TestEndpointResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	id, err := s.endpoints.Test(ctx, projectID, req.GetEndpointId())
	if err != nil {
		return nil, err
	}
	return &payhookv1.TestEndpointResponse{Uuid: id}, nil
}

// endpointOf is an endpoint on the wire (never its secret).
func endpointOf(e *entdb.Endpoint) *payhookv1.Endpoint {
	out := &payhookv1.Endpoint{
		EndpointId: e.PublicID, Url: e.URL, Description: e.Description, EventTypes: e.EventTypes,
		MaxPerSecond: int32(e.MaxPerSecond), Status: "active", //nolint:gosec // at most endpoint.MaxPerSecondLimit
		CreatedAt: timestamppb.New(e.CreatedAt), UpdatedAt: timestamppb.New(e.UpdatedAt),
	}
	if e.PausedAt != nil {
		out.Status, out.PausedAt = "paused", timestamppb.New(*e.PausedAt)
		if e.PausedReason != nil {
			out.PausedReason = string(*e.PausedReason)
		}
	}
	if e.FailingSince != nil {
		out.FailingSince = timestamppb.New(*e.FailingSince)
	}
	return out
}
