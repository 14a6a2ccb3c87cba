package rpc

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/merchant/eventtype"
)

// EventServer implements payhookv1.EventServiceServer: the event
// catalogue, converted once when the server starts (it never changes while
// the binary runs).
type EventServer struct {
	payhookv1.UnimplementedEventServiceServer
	types []*payhookv1.EventType
}

// NewEventServer returns the event service; an error means a schema of the
// catalogue does not convert to a google.protobuf.Struct.
func NewEventServer() (*EventServer, error) {
	all := eventtype.All()
	s := &EventServer{types: make([]*payhookv1.EventType, len(all))}
	for i, e := range all {
		schema, err := structpb.NewStruct(e.Schema())
		if err != nil {
			return nil, fmt.Errorf("the schema of event type %s: %w", e.Name, err)
		}
		s.types[i] = &payhookv1.EventType{Name: e.Name, Description: e.Description, Services: e.Services, Schema: schema}
	}
	return s, nil
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
