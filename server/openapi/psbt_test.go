package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/watchonly"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// psbtPayouts exercises the PSBT payout operations, which need a real
// chain: a server on litecoind (regtest) whose project's ltc wallet is a
// merchant's key held by a wallet of the node. A payout is prepared, its
// PSBT answered, refused unsigned, accepted signed.
func psbtPayouts(t *testing.T, c *contract, d store.Dialect) {
	t.Helper()
	n := nodetest.StartLitecoind(t, 110)
	in := servertest.Start(t, d, func(cfg *server.Config) {
		cfg.ManualDelivery = true
		cfg.Chains.OfferWithoutNodes = false
		cfg.Chains.Nodes = map[string]string{"ltc": n.URL + "?network=regtest"}
		cfg.Chains.Prices = server.PricesTable
	})
	call := func(r request) map[string]any { t.Helper(); return c.call(t, in.BaseURL, r) }
	ctx := context.Background()
	reg, _ := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	tk, _ := reg.Lookup("ltc")
	key, err := watchonly.Parse(tk, n.MerchantWallet(t, "merchant", []byte(strings.Repeat("openapi!", 4))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := project.SetWatchKey(ctx, in.Server.DB().Client, in.ProjectA, project.WatchKeyParams{Ticker: tk, Key: key}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	poll := func() {
		t.Helper()
		for range 2 {
			if err := in.Server.Watcher("ltc").PollOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll()
	r := in.Get(t, "/ltc/create/", url.Values{"callback": {"https://shop.example/cb?psbt=1"}, "confirmations": {"1"}}, in.KeyA)
	if r.Code != 200 {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	n.Must(nil, "sendtoaddress", r.JSON["address_in"], json.Number("1"))
	var a string
	n.Must(&a, "getnewaddress")
	n.Must(nil, "generatetoaddress", 1, a)
	poll()

	var dest string
	n.Must(&dest, "getnewaddress")
	p := call(request{op: "PayoutService_ProcessPayoutRequests", path: "/ltc/payout/request/bulk/process/", body: fmt.Sprintf(`{"outputs": {%q: "0.4"}}`, dest), key: in.KeyA, want: 200})
	info, _ := p["payout_info"].(map[string]any)
	id := fmt.Sprint(info["id"])
	got := call(request{op: "PayoutService_GetPayoutPSBT", path: "/payout/psbt/", query: url.Values{"payout_id": {id}}, key: in.KeyA, want: 200})
	call(request{op: "PayoutService_GetPayoutPSBT", path: "/payout/psbt/", query: url.Values{"payout_id": {id}}, key: in.KeyB, want: 404})
	unsigned, _ := got["psbt"].(string)
	call(request{op: "PayoutService_SubmitPayoutPSBT", path: "/payout/psbt/", body: fmt.Sprintf(`{"payout_id": %s, "psbt": %q}`, id, unsigned), key: in.KeyA, want: 400})
	var signed struct {
		PSBT     string `json:"psbt"`
		Complete bool   `json:"complete"`
	}
	if err := n.CallWallet("merchant", &signed, "walletprocesspsbt", unsigned); err != nil || !signed.Complete {
		t.Fatalf("walletprocesspsbt: %+v %v", signed, err)
	}
	done := call(request{op: "PayoutService_SubmitPayoutPSBT", path: "/payout/psbt/", body: fmt.Sprintf(`{"payout_id": %s, "psbt": %q}`, id, signed.PSBT), key: in.KeyA, want: 200})
	if info, _ := done["payout_info"].(map[string]any); info["status"] != "done" {
		t.Fatalf("the signed PSBT's payout: %v", done)
	}
}
