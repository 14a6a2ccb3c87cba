package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/payhook/payhook/server/admin"
)

const userUsage = `usage:
  payhook user create --project ID --email EMAIL [--role owner|developer|viewer] [--db DSN]   (the password is read from standard input)
  payhook user disable --email EMAIL [--db DSN]
  payhook user enable --email EMAIL [--db DSN]
  payhook user role --email EMAIL --role owner|developer|viewer [--db DSN]
  payhook user reset-password --email EMAIL [--generate] [--db DSN]
  payhook user sessions revoke --email EMAIL [--db DSN]`

// maxPasswordBytes bounds the password line read from standard input.
const maxPasswordBytes = 1024

// userCmd runs `payhook user ...`; args[0] is the subcommand (create,
// disable, enable, role, reset-password, sessions-revoke).
func userCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(userUsage)
	}
	switch args[0] {
	case "create":
		return userCreate(ctx, args[1:], stdin, stdout, stderr)
	case "disable", "enable", "role", "reset-password", "sessions-revoke":
	default:
		return errors.New(userUsage)
	}
	name := "payhook user " + strings.Replace(args[0], "-revoke", " revoke", 1)
	fs := newFlagSet(name, stderr)
	dsn := dbFlag(fs)
	email := fs.String("email", "", "the user's sign-in email (required)")
	generate := false
	if args[0] == "reset-password" {
		fs.BoolVar(&generate, "generate", false, "generate a random password and print it, instead of reading one from standard input")
	}
	var role string
	if args[0] == "role" {
		fs.StringVar(&role, "role", "", "the user's new role (required): owner (everything), developer (no payouts, payout wallets or users), viewer (read only)")
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	who := strings.ToLower(strings.TrimSpace(*email))
	if who == "" {
		return errors.New("--email: required")
	}
	if args[0] == "role" && strings.TrimSpace(role) == "" {
		return errors.New("--role: required (owner, developer or viewer)")
	}
	switch args[0] {
	case "enable":
		enabled, err := admin.EnableDashboardUser(ctx, *dsn, who)
		if err != nil {
			return err
		}
		if !enabled {
			fmt.Fprintf(stderr, "dashboard user %s is not disabled: nothing changed.\n", who)
			return nil
		}
		fmt.Fprintf(stderr, "dashboard user %s enabled: they sign in with their password again.\n", who)
	case "role":
		was, err := admin.SetDashboardUserRole(ctx, *dsn, who, role)
		if err != nil {
			return err
		}
		now := strings.ToLower(strings.TrimSpace(role))
		if was == now {
			fmt.Fprintf(stderr, "dashboard user %s is %s already: nothing changed.\n", who, now)
			return nil
		}
		fmt.Fprintf(stderr, "dashboard user %s is now %s (was %s), from their next request; their sessions go on.\n", who, now, was)
	case "disable":
		if err := admin.DisableDashboardUser(ctx, *dsn, who); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "dashboard user %s disabled: their sessions are ended and they cannot sign in.\n", who)
	case "sessions-revoke":
		n, err := admin.RevokeDashboardSessions(ctx, *dsn, who)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sessions_ended  %d\n", n)
	case "reset-password":
		var password string
		var err error
		if generate {
			if password, err = admin.GeneratePassword(); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(stderr, "reading the new password from standard input (first line)")
			if password, err = readPassword(stdin); err != nil {
				return err
			}
		}
		if err := admin.ResetDashboardPassword(ctx, *dsn, who, password); err != nil {
			return err
		}
		if generate {
			fmt.Fprintf(stdout, "password  %s\n", password)
		}
		fmt.Fprintf(stderr, "the password of dashboard user %s is set; their sessions are ended and a lockout is lifted.\n", who)
	}
	return nil
}

// userCreate runs `payhook user create`.
func userCreate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook user create", stderr)
	dsn := dbFlag(fs)
	id := fs.Int64("project", 0, "the project the user sees (required)")
	email := fs.String("email", "", "the user's sign-in email (required)")
	role := fs.String("role", "owner", "what the user may do: owner (everything), developer (no payouts, payout wallets or users), viewer (read only)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	if strings.TrimSpace(*email) == "" {
		return errors.New("--email: required")
	}
	fmt.Fprintln(stderr, "reading the password from standard input (first line)")
	password, err := readPassword(stdin)
	if err != nil {
		return err
	}
	uid, err := admin.CreateDashboardUserRole(ctx, *dsn, *id, *email, password, *role)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "user_id  %d\n", uid)
	fmt.Fprintf(stderr, "dashboard user %s (%s) of project %d created; they sign in at /dashboard/.\n", strings.ToLower(strings.TrimSpace(*email)), strings.ToLower(*role), *id)
	return nil
}

// readPassword returns the first line of r without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, maxPasswordBytes+2), maxPasswordBytes+2).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	if !strings.HasSuffix(line, "\n") && len(line) > maxPasswordBytes {
		return "", fmt.Errorf("password: longer than %d bytes", maxPasswordBytes)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("password: nothing on standard input")
	}
	return line, nil
}
