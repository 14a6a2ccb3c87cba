package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// sdkDir holds the npm project that pins this API family's public SDKs.
const sdkDir = "../clients/sdkcompat"

// sdkFunctions are every exported function of @cryptapi/api 1.1.0 and
// @blockbee/api 1.1.0 (constructors included), as sdk.test.cjs names them.
var sdkFunctions = []string{
	"CryptAPI.getInfo", "CryptAPI.getSupportedCoins", "new CryptAPI", "CryptAPI.getAddress",
	"CryptAPI.checkLogs", "CryptAPI.getQrcode", "CryptAPI.getEstimate", "CryptAPI.getConvert",
	"BlockBee.getInfo", "BlockBee.getSupportedCoins", "new BlockBee", "BlockBee.getAddress",
	"BlockBee.checkLogs", "BlockBee.getQrcode", "BlockBee.getEstimate", "BlockBee.getConvert",
	"BlockBee.createPayout",
}

// inCI reports whether a missing tool must fail the test rather than skip
// it (.ci/run sets PAYHOOK_CI=1; CI services set CI=true).
func inCI() bool {
	return os.Getenv("PAYHOOK_CI") != "" || os.Getenv("CI") == "true"
}

// needSDKs returns the path of node, or skips (fails in CI) when node, npm
// or the installed SDKs are missing, saying how to install them.
func needSDKs(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		msg := what + `: install Node.js 20 or later with npm (https://nodejs.org/ or "apt-get install nodejs npm"), then run "npm ci --prefix clients/sdkcompat"`
		if inCI() {
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
	for _, pkg := range []string{"@cryptapi/api", "@blockbee/api"} {
		b, err := os.ReadFile(filepath.Join(sdkDir, "node_modules", pkg, "package.json"))
		if err != nil {
			missing(pkg + " is not installed")
		}
		var meta struct{ Version string }
		if err := json.Unmarshal(b, &meta); err != nil || meta.Version != "1.1.0" {
			missing(pkg + " 1.1.0 is not installed (found " + meta.Version + ")")
		}
	}
	return node
}

// TestSDKs runs every function of the family's public npm SDKs, unmodified,
// against a real server (SQLite, devnet), and checks that each passed
// (clients/sdkcompat/sdk.test.cjs checks their results).
func TestSDKs(t *testing.T) {
	t.Parallel()
	node := needSDKs(t)
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true // devnet calls apply their block before answering
	})
	btcUSD, ok := price.Default().USD("btc")
	if !ok {
		t.Fatal("no btc price")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sdk.test.cjs")
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(),
		"PAYHOOK_URL="+in.BaseURL,
		"PAYHOOK_KEY="+in.KeyA,
		"PAYHOOK_BTC_USD="+btcUSD.String(),
	)
	out, err := cmd.CombinedOutput()
	passed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "ok "); ok {
			passed[name] = true
		}
	}
	for _, fn := range sdkFunctions {
		if !passed[fn] {
			t.Errorf("%s did not pass", fn)
		}
	}
	if err != nil || t.Failed() {
		t.Fatalf("node sdk.test.cjs: %v\n%s", err, out)
	}
}
