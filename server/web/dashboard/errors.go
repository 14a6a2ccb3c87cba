package dashboard

import "errors"

// ErrConfig reports a Config that cannot serve the dashboard; the message
// names the field.
var ErrConfig = errors.New("dashboard config")

// Errors of dashboard users.
var (
	// ErrInvalidUser reports a user that cannot be created; the message
	// names the field.
	ErrInvalidUser = errors.New("invalid dashboard user")
	// ErrNoUser reports an email no dashboard user signs in with.
	ErrNoUser = errors.New("no such dashboard user")
	// ErrUserExists reports an email that already has a dashboard user.
	ErrUserExists = errors.New("dashboard user exists")
	// ErrBusy reports a sign-in refused because the password checks
	// running at once are at their bound (MaxConcurrentPasswordChecks).
	ErrBusy = errors.New("too many sign-ins at once; try again in a moment")
)
