package metrics

import (
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// UnknownBuild is the version or commit of a binary that does not say (a
// test binary, or one built outside a VCS checkout).
const UnknownBuild = "unknown"

// BuildInfo describes the running binary: what `payhook version` prints and
// payhook_build_info carries.
type BuildInfo struct {
	// Version is the release (set with -ldflags "-X main.version=v1.2.3", or
	// the module version of `go install ...@v1.2.3`); "dev" otherwise.
	Version string
	// Commit is the VCS revision the binary was built from, with "-dirty"
	// when the work tree had changes; UnknownBuild when not recorded.
	Commit string
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
	// Time is the commit's time (vcs.time); zero when not recorded. Go
	// records no build time, to keep builds reproducible: the commit time
	// is the closest honest date.
	Time time.Time
}

// ReadBuild returns the running binary's build information: version as
// given (the -ldflags value; empty falls back to the main module's version,
// then "dev"), and the commit, its time and the Go version from
// runtime/debug.ReadBuildInfo.
func ReadBuild(version string) BuildInfo {
	b := BuildInfo{Version: version, Commit: UnknownBuild, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Time, _ = time.Parse(time.RFC3339, s.Value)
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && b.Commit != UnknownBuild {
			b.Commit += "-dirty"
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// ObserveBuild registers payhook_build_info{version,commit,goversion}, a
// gauge always 1, so dashboards can show what runs where and alerts can
// join on it. Call it at most once.
func (m *Metrics) ObserveBuild(b BuildInfo) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   Namespace,
		Name:        "build_info",
		Help:        "Always 1; its labels name the running binary's version, VCS commit and Go version.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.GoVersion},
	})
	g.Set(1)
	m.reg.MustRegister(g)
}
