package receiver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/receiver"
)

// sdkcompatDir holds the npm project that pins the standardwebhooks package.
const sdkcompatDir = "../clients/sdkcompat"

// standardWebhooksVersion is the version package.json pins.
const standardWebhooksVersion = "1.1.1"

// needNode returns the path of node, or skips (fails in CI: .ci/run sets
// PAYHOOK_CI=1, CI services set CI=true) when node, npm or the pinned
// standardwebhooks package is missing, saying how to install them.
func needNode(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		msg := what + `: install Node.js 20 or later with npm (https://nodejs.org/ or "apt-get install nodejs npm"), then run "npm ci --prefix clients/sdkcompat"`
		if os.Getenv("PAYHOOK_CI") != "" || os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing("npm is not installed")
	}
	b, err := os.ReadFile(filepath.Join(sdkcompatDir, "node_modules", "standardwebhooks", "package.json"))
	if err != nil {
		missing("standardwebhooks is not installed")
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(b, &meta); err != nil || meta.Version != standardWebhooksVersion {
		missing("standardwebhooks " + standardWebhooksVersion + " is not installed (found " + meta.Version + ")")
	}
	return node
}

// librarySigned is one message the library signed.
type librarySigned struct {
	Secret     string `json:"secret"`
	ID         string `json:"id"`
	Timestamp  int64  `json:"timestamp"`
	SignedData string `json:"signed_data"`
	Signature  string `json:"signature"`
}

// TestStandardWebhooksLibrary cross-checks the signature construction with
// the standardwebhooks npm package, unmodified
// (clients/sdkcompat/webhook_vectors.test.cjs): the library, given the
// x-service-* headers renamed webhook-*, decides every vector of
// testdata/webhook_vectors.json as the vector says; and what the library
// signs, payhook's signer signs identically and payhook's receiver accepts
// (a new random secret at the current time included).
func TestStandardWebhooksLibrary(t *testing.T) {
	node := needNode(t)
	file := readWebhookVectors(t)
	valid := 0
	for _, v := range file.Vectors {
		if v.Valid {
			valid++
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	abs, err := filepath.Abs(webhookVectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, "webhook_vectors.test.cjs", abs)
	cmd.Dir = sdkcompatDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node webhook_vectors.test.cjs: %v\n%s", err, out)
	}

	verified := map[string]bool{}
	var signed []librarySigned
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if desc, ok := strings.CutPrefix(line, "ok verify "); ok {
			verified[desc] = true
		}
		if js, ok := strings.CutPrefix(line, "signed "); ok {
			var s librarySigned
			if err := json.Unmarshal([]byte(js), &s); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			signed = append(signed, s)
		}
	}
	for _, v := range file.Vectors {
		if !verified[v.Description] {
			t.Errorf("the library did not agree on %q\n%s", v.Description, out)
		}
	}
	if len(signed) != valid+1 {
		t.Fatalf("the library signed %d messages, want %d (each valid vector and a new one)\n%s", len(signed), valid+1, out)
	}
	for i, s := range signed {
		ours, err := signer.Sign(s.Secret, s.ID, s.Timestamp, []byte(s.SignedData))
		if err != nil || ours != s.Signature {
			t.Errorf("message %d: library signed %q, payhook's signer %q (%v)", i+1, s.Signature, ours, err)
		}
		ts := strconv.FormatInt(s.Timestamp, 10)
		if err := receiver.VerifyWebhookSignature(s.Secret, s.ID, ts, []byte(s.SignedData), s.Signature); err != nil {
			t.Errorf("message %d: VerifyWebhookSignature: %v", i+1, err)
		}
		v := receiver.NewWebhookVerifier([]string{s.Secret}, receiver.WithClock(func() time.Time { return time.Unix(s.Timestamp, 0) }))
		if i == len(signed)-1 {
			v = receiver.NewWebhookVerifier([]string{s.Secret}) // signed now: the real clock
		}
		if err := v.VerifySigned(s.ID, ts, []byte(s.SignedData), s.Signature); err != nil {
			t.Errorf("message %d: VerifySigned: %v", i+1, err)
		}
	}
}
