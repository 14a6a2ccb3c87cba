package server_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/servertest"
)

// TestKeyScopes (issue 24, finding 7): a key does only what its scopes
// allow, over REST (403) and gRPC (PermissionDenied), and the refusal names
// the scope it lacks: a read-only key reads but cannot create an address;
// a create key creates but cannot pay out; the operator API makes a
// project whose first key has the scopes asked for, and refuses an unknown
// one.
func TestKeyScopes(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			in := servertest.Start(t, d)
			ctx := context.Background()
			db := in.Server.DB().Client
			reader, _, err := apikey.CreateScoped(ctx, db, "reader", in.ProjectA, []string{"read"}, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			creator, _, err := apikey.CreateScoped(ctx, db, "creator", in.ProjectA, []string{"create"}, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			const hook = "https://shop.example/hook"
			create := url.Values{"callback": {hook}, "address": {btcDest}}
			payout := url.Values{"address": {btcDest}, "value": {"0.001"}}
			lacks := func(scope string) string { return `this API key lacks the \"` + scope + `\" scope` }

			// REST.
			if r := in.Get(t, "/btc/create/", create, reader); r.Code != 403 || !strings.Contains(string(r.Body), lacks("create")) {
				t.Fatalf("a read-only key creates an address: %d %s", r.Code, r.Body)
			}
			if r := in.Get(t, "/notification/list/", nil, reader); r.Code != 200 {
				t.Fatalf("a read-only key lists notifications: %d %s", r.Code, r.Body)
			}
			r := in.Get(t, "/btc/create/", create, creator)
			if r.Code != 200 || r.JSON["address_in"] == "" {
				t.Fatalf("a create key creates an address: %d %s", r.Code, r.Body)
			}
			if r := in.Get(t, "/btc/payout/", payout, creator); r.Code != 403 || !strings.Contains(string(r.Body), lacks("payouts")) {
				t.Fatalf("a create key pays out: %d %s", r.Code, r.Body)
			}
			if r := in.PostJSON(t, "/payout/create/", `{"request_ids":"1"}`, creator); r.Code != 403 || !strings.Contains(string(r.Body), lacks("payouts")) {
				t.Fatalf("a create key creates a payout: %d %s", r.Code, r.Body)
			}
			if r := in.Get(t, "/btc/logs/", url.Values{"callback": {hook}}, creator); r.Code != 403 || !strings.Contains(string(r.Body), lacks("read")) {
				t.Fatalf("a create key reads logs: %d %s", r.Code, r.Body)
			}
			// A key with every scope does all of it.
			if r := in.Get(t, "/btc/logs/", url.Values{"callback": {hook}}, in.KeyA); r.Code != 200 {
				t.Fatalf("a full key reads logs: %d %s", r.Code, r.Body)
			}

			// gRPC.
			addresses := payhookv1.NewAddressServiceClient(in.Conn)
			_, err = addresses.CreateAddress(servertest.WithKey(ctx, reader), &payhookv1.CreateAddressRequest{Ticker: "btc", Callback: hook + "?g=1", Address: btcDest})
			if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), `lacks the "create" scope`) {
				t.Fatalf("gRPC: a read-only key creates an address: %v", err)
			}
			if _, err := addresses.CreateAddress(servertest.WithKey(ctx, creator), &payhookv1.CreateAddressRequest{Ticker: "btc", Callback: hook + "?g=1", Address: btcDest}); err != nil {
				t.Fatalf("gRPC: a create key creates an address: %v", err)
			}
			_, err = payhookv1.NewPayoutServiceClient(in.Conn).CreatePayoutRequests(servertest.WithKey(ctx, creator),
				&payhookv1.CreatePayoutRequestsRequest{Ticker: "btc", Outputs: map[string]string{btcDest: "0.001"}})
			if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), `lacks the "payouts" scope`) {
				t.Fatalf("gRPC: a create key requests a payout: %v", err)
			}

			// The operator API's first key of a new project.
			operator, _, err := apikey.CreateOperator(ctx, db, "ops", clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			projects := payhookv1.NewProjectServiceClient(in.Conn)
			p, err := projects.CreateProject(servertest.WithKey(ctx, operator), &payhookv1.CreateProjectRequest{Name: "kiosk", ApikeyScopes: []string{"create", "read"}})
			if err != nil || !slices.Equal(p.GetApikeyScopes(), []string{"read", "create"}) {
				t.Fatalf("create a project with a read and create key: %v %v", p, err)
			}
			if r := in.Get(t, "/btc/payout/", payout, p.GetApikey()); r.Code != 403 || !strings.Contains(string(r.Body), lacks("payouts")) {
				t.Fatalf("the new project's key pays out: %d %s", r.Code, r.Body)
			}
			full, err := projects.CreateProject(servertest.WithKey(ctx, operator), &payhookv1.CreateProjectRequest{Name: "shop"})
			if err != nil || len(full.GetApikeyScopes()) != 4 {
				t.Fatalf("create a project without scopes: %v %v", full, err)
			}
			r = in.PostJSON(t, "/operator/project/create/", `{"name":"x","apikey_scopes":["read","admin"]}`, operator)
			if r.Code != 400 || !strings.Contains(string(r.Body), "apikey_scopes") {
				t.Fatalf("an unknown scope: %d %s", r.Code, r.Body)
			}
			// An operator key restricted to reading lists projects but
			// creates none.
			auditor, _, err := apikey.Issue(ctx, db, apikey.Spec{Name: "auditor", Operator: true, Scopes: []string{"read"}}, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if r := in.Get(t, "/operator/project/list/", nil, auditor); r.Code != 200 {
				t.Fatalf("a read-only operator key lists projects: %d %s", r.Code, r.Body)
			}
			if r := in.PostJSON(t, "/operator/project/create/", `{"name":"y"}`, auditor); r.Code != 403 || !strings.Contains(string(r.Body), lacks("management")) {
				t.Fatalf("a read-only operator key creates a project: %d %s", r.Code, r.Body)
			}
		})
	}
}
