package rpc

import (
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	entdb "github.com/payhook/payhook/ent/db"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier"
)

// DeliveryServer implements payhookv1.DeliveryServiceServer.
type DeliveryServer struct {
	payhookv1.UnimplementedDeliveryServiceServer

	notifier *notifier.Notifier
}

// NewDeliveryServer returns the delivery service.
func NewDeliveryServer(n *notifier.Notifier) *DeliveryServer {
	return &DeliveryServer{notifier: n}
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
		APIKeyID:  keyID,
		AddressIn: req.GetAddressIn(),
		Ticker:    strings.ToLower(req.GetTicker()),
		UUID:      req.GetUuid(),
	}
	cursor := req.GetAfterCursor()
	if req.GetLiveOnly() {
		// Read before subscribing: an event committed in between is newer
		// than the cursor, so the first read after a signal or poll sends it.
		if cursor, err = s.notifier.LastCursor(ctx, keyID); err != nil {
			return err
		}
	}
	signal, unsubscribe := s.notifier.Subscribe(keyID)
	defer unsubscribe()
	poll := time.NewTicker(notifier.WatchPollInterval)
	defer poll.Stop()
	for {
		for {
			evs, err := s.notifier.Events(ctx, f, cursor, watchPage, req.GetIncludeRequest())
			if err != nil {
				return err
			}
			for _, e := range evs {
				if err := stream.Send(&payhookv1.WatchDeliveriesResponse{Event: deliveryEvent(e, req.GetIncludeRequest())}); err != nil {
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

func deliveryEvent(e *entdb.DeliveryEvent, withRequest bool) *payhookv1.DeliveryEvent {
	out := &payhookv1.DeliveryEvent{
		Cursor:         e.ID,
		Uuid:           e.UUID,
		AddressIn:      e.AddressIn,
		Ticker:         e.Ticker,
		PaymentStatus:  e.PaymentStatus,
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
		h := map[string]string{}
		if n.ContentType != "" {
			h["Content-Type"] = n.ContentType
		}
		if n.Signature != "" {
			h[notifier.SignatureHeader] = n.Signature
		}
		out.Request = &payhookv1.DeliveryRequest{Method: n.Method, Url: n.URL, Headers: h, Body: n.Body}
	}
	return out
}
