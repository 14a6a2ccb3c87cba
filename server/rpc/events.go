package rpc

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/merchant/eventtype"
)

// EventServer implements payhookv1.EventServiceServer: the event
// catalogue, converted once when the server starts (it never changes while
// the binary runs).
type EventServer struct {
	payhookv1.UnimplementedEventServiceServer
	types     []*payhookv1.EventType
	endpoints *endpoint.Service
}

// NewEventServer returns the event service over the projects' event logs
// (endpoints); an error means a schema of the catalogue does not convert
// to a google.protobuf.Struct.
func NewEventServer(endpoints *endpoint.Service) (*EventServer, error) {
	all := eventtype.All()
	s := &EventServer{types: make([]*payhookv1.EventType, len(all)), endpoints: endpoints}
	for i, e := range all {
		schema, err := structpb.NewStruct(e.Schema())
		if err != nil {
			return nil, fmt.Errorf("the schema of event type %s: %w", e.Name, err)
		}
		s.types[i] = &payhookv1.EventType{Name: e.Name, Description: e.Description, Services: e.Services, Schema: schema}
	}
	return s, nil
}

// ListEvents implements payhookv1.EventServiceServer.
func (s *EventServer) ListEvents(ctx context.Context, req *payhookv1.ListEventsRequest) (*payhookv1.ListEventsResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	evs, next, err := s.endpoints.Log(ctx, projectID, req.GetAfter(), int(req.GetLimit()), req.GetEventTypes())
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListEventsResponse{NextCursor: next, Events: make([]*payhookv1.Event, len(evs))}
	for i, e := range evs {
		out.Events[i] = &payhookv1.Event{
			Cursor: e.Cursor, Uuid: e.Row.UUID, Type: e.Row.Type,
			CreatedAt: e.Row.CreatedAt.UTC().Format(time.RFC3339), Payload: string(e.Data),
		}
	}
	return out, nil
}

// ListEventTypes implements payhookv1.EventServiceServer.
func (s *EventServer) ListEventTypes(_ context.Context, req *payhookv1.ListEventTypesRequest) (*payhookv1.ListEventTypesResponse, error) {
	if req.GetName() == "" {
		return &payhookv1.ListEventTypesResponse{EventTypes: s.types}, nil
	}
	for _, t := range s.types {
		if t.GetName() == req.GetName() {
			return &payhookv1.ListEventTypesResponse{EventTypes: []*payhookv1.EventType{t}}, nil
		}
	}
	return nil, eventtype.Unknown(req.GetName())
}
