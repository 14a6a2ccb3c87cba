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
  payhook user create --project ID --email EMAIL [--db DSN]   (the password is read from standard input)`

// maxPasswordBytes bounds the password line read from standard input.
const maxPasswordBytes = 1024

// userCmd runs `payhook user ...`.
func userCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New(userUsage)
	}
	fs := newFlagSet("payhook user create", stderr)
	dsn := dbFlag(fs)
	id := fs.Int64("project", 0, "the project the user sees (required)")
	email := fs.String("email", "", "the user's sign-in email (required)")
	if err := parse(fs, args[1:]); err != nil {
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
	uid, err := admin.CreateDashboardUser(ctx, *dsn, *id, *email, password)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "user_id  %d\n", uid)
	fmt.Fprintf(stderr, "dashboard user %s of project %d created; they sign in at /dashboard/.\n", strings.ToLower(strings.TrimSpace(*email)), *id)
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
