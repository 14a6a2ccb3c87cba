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
	// ErrLastOwner refuses a change that would leave a project without an
	// enabled owner (the one who manages its users): its last enabled
	// owner cannot be given another role or disabled.
	ErrLastOwner = errors.New("a project keeps at least one enabled owner")
	// ErrTwoFactorOff reports a user without two-factor sign-in where it is
	// needed (new recovery codes).
	ErrTwoFactorOff = errors.New("two-factor sign-in is off")
	// ErrBusy reports a sign-in refused because the password checks
	// running at once are at their bound (MaxConcurrentPasswordChecks).
	ErrBusy = errors.New("too many sign-ins at once; try again in a moment")
)
