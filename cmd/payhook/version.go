package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/payhook/payhook/server/metrics"
)

// version is the release, set at build time:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)" ./cmd/payhook
//
// (scripts/build.sh does this). It and commit are the package-level
// variables here because the linker can set nothing else; they are never
// written at run time. Empty means: the main module's version (go install
// ...@v1.2.3), else "dev".
var version string

// commit is the commit the binary was built from, stamped the same way
// (-X main.commit=...). It wins over the VCS data Go embeds, which `go
// run`, `go test`, -buildvcs=false and a build context without .git (a
// container) leave out; without either, the commit is "unknown".
var commit string

// build is what this binary says of itself, read once per call.
func build() metrics.BuildInfo {
	b := metrics.ReadBuild(version)
	if commit != "" {
		b.Commit = commit
	}
	return b
}

// unstamped explains an unknown commit where a person reads it.
const unstamped = " (not stamped: build with scripts/build.sh, or go build -ldflags \"-X main.commit=$(git rev-parse HEAD)\")"

// versionCmd prints the version, the commit and its date, and the Go
// version: payhook version [--json].
func versionCmd(_ context.Context, e *env, args []string) error {
	fs := newFlagSet("payhook version", e.stderr)
	asJSON := fs.Bool("json", false, `print {"version":..,"commit":..,"commit_time":..,"go_version":..}`)
	if err := parse(fs, args); err != nil {
		return err
	}
	b := build()
	date := ""
	if !b.Time.IsZero() {
		date = b.Time.UTC().Format(time.RFC3339)
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]string{
			"version": b.Version, "commit": b.Commit, "commit_time": date, "go_version": b.GoVersion,
		})
	}
	shown := b.Commit
	if shown == metrics.UnknownBuild {
		shown += unstamped
	}
	fmt.Fprintf(e.stdout, "payhook %s\ncommit  %s\n", b.Version, shown)
	if date != "" {
		fmt.Fprintf(e.stdout, "date    %s (commit time)\n", date)
	}
	fmt.Fprintf(e.stdout, "go      %s\n", b.GoVersion)
	return nil
}
