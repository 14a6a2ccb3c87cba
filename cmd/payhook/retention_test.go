package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestRetentionFlags: --retention-days and --audit-retention-days take
// whole days, 0 keeping everything (a negative age), and are independent;
// left out, the server's defaults apply (0); anything else is refused,
// naming the flag.
func TestRetentionFlags(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	for _, tt := range []struct {
		args            []string
		delivery, audit time.Duration
	}{
		{nil, 0, 0},
		{[]string{"--audit-retention-days", "800"}, 0, 800 * day},
		{[]string{"--audit-retention-days", "0"}, 0, -1},
		{[]string{"--retention-days", "0", "--audit-retention-days", "30"}, -1, 30 * day},
	} {
		cfg, err := serveConfig(tt.args, io.Discard, io.Discard)
		if err != nil || cfg.Retention != tt.delivery || cfg.AuditRetention != tt.audit {
			t.Errorf("%q: retention %v, audit retention %v (%v); want %v, %v", tt.args, cfg.Retention, cfg.AuditRetention, err, tt.delivery, tt.audit)
		}
	}
	for _, v := range []string{"-1", "1.5", "36501", "a year"} {
		_, err := serveConfig([]string{"--audit-retention-days", v}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "audit-retention-days") {
			t.Errorf("--audit-retention-days %q: %v, want an error naming the flag", v, err)
		}
	}
}
