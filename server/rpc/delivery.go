package rpc

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	entdb "github.com/payhook/payhook/ent/db"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/address"
)

// DeliveryServer implements payhookv1.DeliveryServiceServer.
type DeliveryServer struct {
	payhookv1.UnimplementedDeliveryServiceServer

	events *notifier.Events
	queue  *notifier.Queue
	now    func() time.Time
}

// NewDeliveryServer returns the delivery service: it streams events from
// the event log, and builds the requests it includes with the queue's
// headers of an attempt made now.
func NewDeliveryServer(events *notifier.Events, queue *notifier.Queue, now func() time.Time) *DeliveryServer {
	return &DeliveryServer{events: events, queue: queue, now: now}
}

// watchPage is how many events one read of the event log returns.
const watchPage = 500

// WatchDeliveries implements payhookv1.DeliveryServiceServer. The database
// event log is the truth: the stream reads it after the watcher's cursor
// whenever the notifier signals new events for the owner (and every few
// seconds, for events committed by other instances), so events arrive in
// cursor order with no gap and no duplicate, and a slow watcher only delays
// itself.
func (s *DeliveryServer) WatchDeliveries(req *payhookv1.WatchDeliveriesRequest, stream grpc.ServerStreamingServer[payhookv1.WatchDeliveriesResponse]) error {
	ctx := stream.Context()
	keyID, err := owner(ctx)
	if err != nil {
		return err
	}
	f := notifier.EventFilter{
		Owner: keyID,
		Ref:   req.GetAddressIn(),
		Topic: strings.ToLower(req.GetTicker()),
		UUID:  req.GetUuid(),
	}
	cursor := req.GetAfterCursor()
	if req.GetLiveOnly() {
		// Read before subscribing: an event committed in between is newer
		// than the cursor, so the first read after a signal or poll sends it.
		if cursor, err = s.events.LastCursor(ctx, keyID); err != nil {
			return err
		}
	}
	signal, unsubscribe := s.events.Subscribe(keyID)
	defer unsubscribe()
	// Headers now, not with the first event: the call is accepted, and a
	// client (the REST gateway among them) need not wait for a match to
	// know it.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	poll := time.NewTicker(notifier.WatchPollInterval)
	defer poll.Stop()
	for {
		for {
			evs, err := s.events.Read(ctx, f, cursor, watchPage, req.GetIncludeRequest())
			if err != nil {
				return err
			}
			for _, e := range evs {
				ev, err := s.deliveryEvent(ctx, e, req.GetIncludeRequest())
				if err != nil {
					return err
				}
				if err := stream.Send(&payhookv1.WatchDeliveriesResponse{Event: ev}); err != nil {
					return err
				}
				cursor = e.ID
			}
			if len(evs) < watchPage {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-signal:
			if !ok {
				return status.Error(codes.Unavailable, "server is shutting down; reconnect with after_cursor")
			}
		case <-poll.C:
		}
	}
}

func (s *DeliveryServer) deliveryEvent(ctx context.Context, e *entdb.DeliveryEvent, withRequest bool) (*payhookv1.DeliveryEvent, error) {
	out := &payhookv1.DeliveryEvent{
		Cursor:         e.ID,
		Uuid:           e.UUID,
		AddressIn:      e.Subject,
		Ticker:         e.Topic,
		PaymentStatus:  address.StatusOf(e.Event),
		Kind:           e.Kind.String(),
		Attempt:        int32(e.Attempt),
		Outcome:        e.Outcome,
		Error:          e.Error,
		DeliveryStatus: e.DeliveryStatus,
		Time:           timestamppb.New(e.CreatedAt),
	}
	if e.HTTPStatus != nil {
		v := int32(*e.HTTPStatus)
		out.HttpStatus = &v
	}
	if e.NextAttemptAt != nil {
		out.NextAttemptAt = timestamppb.New(*e.NextAttemptAt)
	}
	if n := e.Edges.Notification; withRequest && n != nil {
		// The headers of an attempt made now, as the dispatcher would send
		// them: a relay replays exactly that.
		h, err := s.queue.AttemptHeaders(ctx, n, s.now())
		if err != nil {
			return nil, err
		}
		headers := make(map[string]string, len(h))
		for k := range h {
			headers[strings.ToLower(k)] = h.Get(k) // as HTTP/2 writes them
		}
		out.Request = &payhookv1.DeliveryRequest{Method: n.Method, Url: n.URL, Headers: headers, Body: n.Body}
	}
	return out, nil
}
