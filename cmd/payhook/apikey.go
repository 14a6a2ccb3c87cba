package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/admin"
)

// apikeyList prints the API keys: never a key or its hash, only the
// prefix kept for recognising one.
func apikeyList(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("payhook apikey list", e.stderr)
	dsn := dbFlag(fs)
	project := fs.Int64("project", 0, "only this project's keys (default: every project's)")
	asJSON := fs.Bool("json", false, "print a JSON array of {id, name, prefix, project_id, operator, created_at, revoked_at, last_used_at, scopes}")
	if err := parse(fs, args); err != nil {
		return err
	}
	keys, err := admin.ListAPIKeys(ctx, *dsn, *project)
	if err != nil {
		return err
	}
	if *asJSON {
		if keys == nil {
			keys = []admin.APIKeyInfo{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(keys)
	}
	if len(keys) == 0 {
		fmt.Fprintln(e.stdout, "no API keys: create one with payhook apikey create --name NAME")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tPROJECT\tKIND\tSCOPES\tCREATED\tLAST USED\tREVOKED")
	for _, k := range keys {
		kind, revoked, used := "merchant", "-", "never"
		if k.Operator {
			kind = "operator"
		}
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		if k.LastUsedAt != nil {
			used = k.LastUsedAt.UTC().Format(time.RFC3339)
		}
		scopes := strings.Join(k.Scopes, ",")
		if scopes == "" {
			scopes = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s…\t%d\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.ProjectID, kind, scopes, k.CreatedAt.UTC().Format(time.RFC3339), used, revoked)
	}
	return tw.Flush()
}

// apikeyRevoke revokes one key, by id or by name: payhook apikey revoke
// ID|NAME [--project ID]. The key may come before or after the flags.
func apikeyRevoke(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("payhook apikey revoke", e.stderr)
	dsn := dbFlag(fs)
	project := fs.Int64("project", 0, "the key's project (narrows a name that several projects use)")
	// The key may come before, between or after the flags.
	rest, err := parseN(fs, args, 1)
	if err != nil {
		return err
	}
	var ref string
	if len(rest) > 0 {
		ref = rest[0]
	}
	if strings.TrimSpace(ref) == "" {
		return errors.New("usage: payhook apikey revoke ID|NAME [--project ID]: which key?")
	}
	k, err := admin.RevokeAPIKey(ctx, *dsn, *project, ref, clock.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked API key %d %q (project %d) at %s\n", k.ID, k.Name, k.ProjectID, k.RevokedAt.UTC().Format(time.RFC3339))
	fmt.Fprintln(e.stderr, "every payhook instance refuses it from its next request on (401).")
	return nil
}
