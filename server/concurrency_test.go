package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/servertest"
)

// TestOneAddressPerInvoiceAndCoin: 12 concurrent requests for ltc on each
// of 10 checkouts — through two keys of one project and the hosted page —
// and 12 concurrent low-level creates of one callback through the two keys
// leave exactly one ltc address per checkout and one per callback, and every
// answer names it. The unique index is the one the lookup uses, so the
// losers of a race find the winner's address instead of adding theirs.
func TestOneAddressPerInvoiceAndCoin(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			in := servertest.Start(t, d)
			ctx := context.Background()
			var ids []string
			for i := range 10 {
				r := in.Get(t, "/checkout/request/", q("notify_url", "https://shop.example/n", "value", fmt.Sprint(10+i), "currency", "USD"), in.KeyA)
				id, _ := r.JSON["payment_id"].(string)
				if r.Code != 200 || id == "" {
					t.Fatalf("checkout: %d %s", r.Code, r.Body)
				}
				ids = append(ids, id)
			}
			var (
				mu      sync.Mutex
				got     = map[string]map[string]bool{} // payment_id (or callback) -> addresses answered
				failure []string
				wg      sync.WaitGroup
			)
			answer := func(id, addr string) {
				mu.Lock()
				defer mu.Unlock()
				if got[id] == nil {
					got[id] = map[string]bool{}
				}
				got[id][addr] = true
			}
			fail := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				failure = append(failure, fmt.Sprintf(format, args...))
			}
			for _, id := range ids {
				for j := range 12 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if j%3 == 2 {
							// The hosted page: the customer picks ltc.
							resp, err := http.PostForm(in.BaseURL+"/payment/"+id+"/", url.Values{"coin": {"ltc"}})
							if err != nil {
								fail("page: %v", err)
								return
							}
							body, _ := io.ReadAll(resp.Body)
							resp.Body.Close()
							if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="address"`) {
								fail("page %s: %d", id, resp.StatusCode)
							}
							return
						}
						key := []string{in.KeyA, in.KeyA2}[j%3]
						r := in.Do(t, http.MethodGet, in.BaseURL+"/checkout/address/?"+q("payment_id", id, "coin", "ltc").Encode(), key)
						addr, _ := r.JSON["address_in"].(string)
						if r.Code != 200 || addr == "" {
							fail("address of %s: %d %s", id, r.Code, r.Body)
							return
						}
						answer(id, addr)
					}()
				}
			}
			const callback = "https://shop.example/same?order=1"
			for j := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := []string{in.KeyA, in.KeyA2}[j%2]
					r := in.Do(t, http.MethodGet, in.BaseURL+"/ltc/create/?"+q("callback", callback).Encode(), key)
					addr, _ := r.JSON["address_in"].(string)
					if r.Code != 200 || addr == "" {
						fail("create: %d %s", r.Code, r.Body)
						return
					}
					answer(callback, addr)
				}()
			}
			wg.Wait()
			if len(failure) > 0 {
				t.Fatalf("%d requests failed: %v", len(failure), failure)
			}
			for id, addrs := range got {
				if len(addrs) != 1 {
					t.Errorf("%s: %d addresses answered: %v", id, len(addrs), addrs)
				}
			}
			db := in.Server.DB().Client
			byInvoice := map[int64]int{}
			as, err := db.Address.Query().Where(entaddress.Ticker("ltc")).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lowLevel := 0
			for _, a := range as {
				if a.InvoiceID != nil {
					byInvoice[*a.InvoiceID]++
				} else {
					lowLevel++
				}
			}
			if len(byInvoice) != len(ids) || lowLevel != 1 {
				t.Errorf("ltc addresses: %v per invoice, %d low-level; want one per checkout and one for the callback", byInvoice, lowLevel)
			}
			for inv, n := range byInvoice {
				if n != 1 {
					t.Errorf("invoice %d has %d ltc addresses", inv, n)
				}
			}
		})
	}
}
