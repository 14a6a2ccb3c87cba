package rpc

import (
	"context"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/merchant/notification"
)

// NotificationServer implements payhookv1.NotificationServiceServer.
type NotificationServer struct {
	payhookv1.UnimplementedNotificationServiceServer
	notifications *notification.Service
}

// NewNotificationServer returns the notification service.
func NewNotificationServer(n *notification.Service) *NotificationServer {
	return &NotificationServer{notifications: n}
}

// ResendNotification implements payhookv1.NotificationServiceServer.
func (s *NotificationServer) ResendNotification(ctx context.Context, req *payhookv1.ResendNotificationRequest) (*payhookv1.ResendNotificationResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	n, err := s.notifications.Resend(ctx, projectID, req.GetUuid())
	if err != nil {
		return nil, err
	}
	return &payhookv1.ResendNotificationResponse{Notification: notificationOf(n)}, nil
}

// TestNotification implements payhookv1.NotificationServiceServer.
func (s *NotificationServer) TestNotification(ctx context.Context, req *payhookv1.TestNotificationRequest) (*payhookv1.TestNotificationResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	id, err := s.notifications.Test(ctx, projectID, req.GetUrl())
	if err != nil {
		return nil, err
	}
	return &payhookv1.TestNotificationResponse{Uuid: id}, nil
}

// ListNotifications implements payhookv1.NotificationServiceServer.
func (s *NotificationServer) ListNotifications(ctx context.Context, req *payhookv1.ListNotificationsRequest) (*payhookv1.ListNotificationsResponse, error) {
	projectID, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	// Each notification with its attempts: what happened to a webhook is
	// the question a merchant opens the list with.
	ns, next, err := s.notifications.List(ctx, projectID, notifier.ListFilter{Status: req.GetStatus(), Limit: int(req.GetLimit()), Cursor: req.GetCursor(), WithAttempts: true})
	if err != nil {
		return nil, err
	}
	out := &payhookv1.ListNotificationsResponse{Notifications: make([]*payhookv1.Notification, 0, len(ns)), NextCursor: next}
	for _, n := range ns {
		out.Notifications = append(out.Notifications, notificationOf(n))
	}
	return out, nil
}
