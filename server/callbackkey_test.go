package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// pubkey fetches /pubkey/ with key ("" for none) and returns its key and
// the previous one.
func pubkey(t *testing.T, in *servertest.Instance, key string) (pub, prev string) {
	t.Helper()
	r := in.Get(t, "/pubkey/", nil, key)
	wantStatus(t, r, http.StatusOK)
	pub, _ = r.JSON["pubkey"].(string)
	prev, _ = r.JSON["previous_pubkey"].(string)
	return pub, prev
}

// TestCallbackKeysPerProject: issue 24, finding 1. Project B points an
// address's callback at project A's receiver; A's receiver, which pins
// the key /pubkey/ gives A's API key, rejects B's callbacks, because each
// project signs with its own key. /pubkey/ without a key still answers the
// server's key, which signs no other project's callbacks. A rotation
// signs the next callbacks with a new key and keeps publishing the old one
// for its grace.
func TestCallbackKeysPerProject(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDevEnv(t, d)
			pubA, prevA := pubkey(t, e.in, e.in.KeyA)
			pubA2, _ := pubkey(t, e.in, e.in.KeyA2)
			pubB, _ := pubkey(t, e.in, e.in.KeyB)
			server, _ := pubkey(t, e.in, "")
			if pubA != pubA2 || prevA != "" {
				t.Errorf("two keys of project A got different callback keys, or a previous one before any rotation")
			}
			if pubA == pubB || pubA == server || pubB == server {
				t.Fatalf("projects A, B and the server share a callback key")
			}
			if r := e.in.Get(t, "/pubkey/", nil, "not-a-key"); r.Code != http.StatusUnauthorized {
				t.Errorf("/pubkey/ with an unknown key: HTTP %d, want 401", r.Code)
			}

			// B's callback to A's receiver (the sink pins A's key).
			addr := e.in.Get(t, "/ltc/create/", q("callback", e.sink.URL+"/hook?from=b", "address", ltcDest(t)), e.in.KeyB)
			wantStatus(t, addr, http.StatusOK)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": addr.JSON["address_in"], "value_coin": "0.5"}), http.StatusOK)
			e.mine(t, "ltc", 6)
			if len(e.sink.statuses()) != 0 || len(e.sink.errs) == 0 {
				t.Fatalf("A's receiver accepted %d callbacks of B's payment (rejected %d): want none accepted", len(e.sink.statuses()), len(e.sink.errs))
			}

			// A's own callbacks verify with A's key; after a rotation the next
			// ones verify with the new key, and /pubkey/ publishes the old one
			// beside it.
			e.sink.errs = nil
			addr = e.in.Get(t, "/ltc/create/", q("callback", e.sink.URL+"/hook?from=a", "address", ltcDest(t)), e.in.KeyA)
			wantStatus(t, addr, http.StatusOK)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": addr.JSON["address_in"], "value_coin": "0.5"}), http.StatusOK)
			e.mine(t, "ltc", 6)
			if len(e.sink.errs) != 0 || len(e.sink.statuses()) == 0 {
				t.Fatalf("A's receiver: %d verified, rejected %v", len(e.sink.statuses()), e.sink.errs)
			}
			ctx := context.Background()
			newPub, err := project.RotateCallbackKey(ctx, e.in.Server.DB().Client, e.in.ProjectA, time.Hour, 0, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			e.in.Server.ForgetCallbackKey(e.in.ProjectA)
			got, prev := pubkey(t, e.in, e.in.KeyA)
			if got != newPub || got == pubA || prev != pubA {
				t.Errorf("after rotation /pubkey/ = new %v, previous is the old key %v; want the new key and the old one as previous", got == newPub, prev == pubA)
			}
			// The sink still pins the old key: the next callback of A is
			// signed with the new key, so it is rejected until the merchant
			// pins the new one.
			before := len(e.sink.statuses())
			addr = e.in.Get(t, "/ltc/create/", q("callback", e.sink.URL+"/hook?from=a2", "address", ltcDest(t)), e.in.KeyA)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": addr.JSON["address_in"], "value_coin": "0.5"}), http.StatusOK)
			e.mine(t, "ltc", 6)
			if len(e.sink.statuses()) != before || len(e.sink.errs) == 0 {
				t.Errorf("a callback signed after the rotation verified with the old key")
			}
			if !strings.Contains(got, "PUBLIC KEY") {
				t.Errorf("new key is not PEM: %q", got)
			}
		})
	}
}

// ltcDest is a litecoin address of the devnet to forward to.
func ltcDest(t *testing.T) string {
	t.Helper()
	tk, ok := family.DefaultRegistry().Lookup("ltc")
	if !ok {
		t.Fatal("no ltc")
	}
	a, _ := destinations(t, tk)
	return a
}
