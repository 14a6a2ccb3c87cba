package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	entdb "github.com/payhook/payhook/ent/db"
	entapikey "github.com/payhook/payhook/ent/db/apikey"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	entrefund "github.com/payhook/payhook/ent/db/refund"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/dashboard"
)

// authzFixture is what the matrix's requests name: resources of project A
// (KeyA), created before the matrix runs.
type authzFixture struct {
	// hook is a notify and callback URL the server accepts.
	hook string
	// addressIn is A's btc address, created with callback hook.
	addressIn string
	// checkout, deposit are A's invoices; subscription is A's token;
	// notification is A's notification uuid.
	checkout, deposit, subscription, notification string
	// spareProject is a project the operator methods change.
	spareProject int64
	// payout is a created payout of A; newRequest records a pending
	// payout request of A and returns its id, newPayout a created payout
	// of A (each call of the matrix consumes one).
	payout                int64
	newRequest, newPayout func() int64
	// psbtPayout is a processing payout of A whose transaction waits for
	// the merchant's signature (a PSBT), recorded directly.
	psbtPayout int64
	// checkoutTx, depositTx are confirmed btc payments of the checkout and
	// the deposit, which the refund methods refund a little of per call.
	checkoutTx, depositTx string
	// refund is a refund of A's checkout payment; newRequested records a
	// refund of it as a payer asks for one and returns its id.
	refund       string
	newRequested func() string
	// newWrongAsset records a credited erc20/usdt payment of A held as
	// wrong_asset (sent to an ETH address) and returns its txid_in.
	newWrongAsset func() string
	// endpoint is a webhook endpoint of A; newEndpoint makes another and
	// returns its id (for the calls that delete one).
	endpoint                    string
	newEndpoint, pausedEndpoint func() string
}

// authzRow says how to call one method for the matrix.
type authzRow struct {
	// req is a valid request: with a key that may call the method, the
	// call succeeds, which proves authorization passed.
	req func(f *authzFixture) proto.Message
	// ownedByA: the request names a resource of project A, so any other
	// project's key (the operator's is one) gets NotFound.
	ownedByA bool
	// passed: a valid request that the method itself refuses once
	// authorization passed, with this outcome instead of allowed
	// (SubmitPayoutPSBT: the fixture's PSBT is no signed one, and only a
	// real chain makes one).
	passed authzOutcome
	// checksSentKey: a public method that reads a key it is sent
	// (GetPublicKey answers that key's project's callback key), so a bad
	// key is refused rather than ignored.
	checksSentKey bool
}

// authzRows has one row per method of every payhook.v1 service. A method
// without a row fails TestAuthorizationMatrix, as does a row for a method
// that no longer exists.
var authzRows = map[protoreflect.FullName]authzRow{
	"payhook.v1.AddressService.CreateAddress": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.CreateAddressRequest{Ticker: "btc", Callback: f.hook, Address: btcDest}
	}},
	"payhook.v1.AddressService.GetLogs": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetLogsRequest{Ticker: "btc", Callback: f.hook + "?owner=a"}
	}},
	"payhook.v1.AddressService.GetPublicKey": {req: func(*authzFixture) proto.Message { return &payhookv1.GetPublicKeyRequest{} }, checksSentKey: true},
	"payhook.v1.AddressService.GetInfo":      {req: func(*authzFixture) proto.Message { return &payhookv1.GetInfoRequest{Ticker: "btc"} }},
	"payhook.v1.AddressService.GetQrCode": {req: func(*authzFixture) proto.Message {
		return &payhookv1.GetQrCodeRequest{Ticker: "btc", Address: btcDest, Value: "0.001"}
	}},
	"payhook.v1.AddressService.EstimateFee": {req: func(*authzFixture) proto.Message { return &payhookv1.EstimateFeeRequest{Ticker: "btc"} }},
	"payhook.v1.AddressService.CreatePayout": {req: func(*authzFixture) proto.Message {
		return &payhookv1.CreatePayoutRequest{Ticker: "btc", Address: btcDest, Value: "0.001"}
	}},
	"payhook.v1.AddressService.Convert": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ConvertRequest{Ticker: "btc", Value: "10", From: "USD"}
	}},
	"payhook.v1.EventService.ListEventTypes": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ListEventTypesRequest{Name: "checkout.payment.confirmed"}
	}},

	"payhook.v1.CheckoutService.RequestCheckout": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.RequestCheckoutRequest{NotifyUrl: f.hook, Value: "10", Currency: "USD"}
	}},
	"payhook.v1.CheckoutService.GetCheckoutAddress": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetCheckoutAddressRequest{PaymentId: f.checkout, Coin: "btc"}
	}},
	"payhook.v1.CheckoutService.GetCheckoutLogs": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetCheckoutLogsRequest{PaymentId: f.checkout}
	}},
	"payhook.v1.DepositService.RequestDeposit": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.RequestDepositRequest{NotifyUrl: f.hook}
	}},
	"payhook.v1.DepositService.GetDepositAddress": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetDepositAddressRequest{PaymentId: f.deposit, Coin: "btc"}
	}},
	"payhook.v1.DepositService.GetDepositLogs": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetDepositLogsRequest{PaymentId: f.deposit}
	}},

	"payhook.v1.SubscriptionService.CreateSubscription": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.CreateSubscriptionRequest{NotifyUrl: f.hook, Currency: "USD", Option: []string{"1m:50"}}
	}},
	"payhook.v1.SubscriptionService.GetSubscriptionAddress": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetSubscriptionAddressRequest{Token: f.subscription, Coin: "btc", Option: "1m"}
	}},
	"payhook.v1.SubscriptionService.FetchSubscription": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.FetchSubscriptionRequest{Token: f.subscription}
	}},
	"payhook.v1.SubscriptionService.ListSubscriptions": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ListSubscriptionsRequest{Limit: 5}
	}},

	"payhook.v1.NotificationService.ResendNotification": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.ResendNotificationRequest{Uuid: f.notification}
	}},
	"payhook.v1.EventService.ListEvents": {req: func(*authzFixture) proto.Message { return &payhookv1.ListEventsRequest{} }},
	"payhook.v1.ExportService.ExportLedger": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ExportLedgerRequest{From: "2026-01-01", To: "2026-02-01"}
	}},
	"payhook.v1.EndpointService.CreateEndpoint": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.CreateEndpointRequest{Url: f.hook, EventTypes: []string{"*"}}
	}},
	"payhook.v1.EndpointService.ListEndpoints": {req: func(*authzFixture) proto.Message { return &payhookv1.ListEndpointsRequest{} }},
	"payhook.v1.EndpointService.GetEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetEndpointRequest{EndpointId: f.endpoint}
	}},
	"payhook.v1.EndpointService.UpdateEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		d := "changed"
		return &payhookv1.UpdateEndpointRequest{EndpointId: f.endpoint, Description: &d}
	}},
	"payhook.v1.EndpointService.DeleteEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.DeleteEndpointRequest{EndpointId: f.newEndpoint()}
	}},
	"payhook.v1.EndpointService.RotateEndpointSecret": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.RotateEndpointSecretRequest{EndpointId: f.endpoint}
	}},
	"payhook.v1.EndpointService.PauseEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.PauseEndpointRequest{EndpointId: f.endpoint} // pausing twice is no error
	}},
	"payhook.v1.EndpointService.ResumeEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.ResumeEndpointRequest{EndpointId: f.pausedEndpoint()}
	}},
	"payhook.v1.EndpointService.ReplayEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.ReplayEndpointRequest{EndpointId: f.endpoint, Since: timestamppb.New(time.Unix(0, 0))}
	}},
	"payhook.v1.EndpointService.TestEndpoint": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.TestEndpointRequest{EndpointId: f.endpoint}
	}},
	"payhook.v1.NotificationService.TestNotification": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.TestNotificationRequest{Url: f.hook}
	}},
	"payhook.v1.NotificationService.ListNotifications": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ListNotificationsRequest{Limit: 5}
	}},

	// Every key that may watch has at least one event (see the fixture),
	// so a stream that passed authorization delivers a first message.
	"payhook.v1.DeliveryService.WatchDeliveries": {req: func(*authzFixture) proto.Message {
		return &payhookv1.WatchDeliveriesRequest{}
	}},

	"payhook.v1.DevnetService.Pay": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.PayRequest{Ticker: "btc", AddressIn: f.addressIn, ValueCoin: "0.001"}
	}},
	// Mine runs before Reorg (methods run in name order), so every reorg
	// undoes a block mined for it.
	"payhook.v1.DevnetService.Mine": {req: func(*authzFixture) proto.Message {
		one := int32(1)
		return &payhookv1.MineRequest{Ticker: "btc", Blocks: &one}
	}},
	"payhook.v1.DevnetService.Reorg": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ReorgRequest{Ticker: "btc", Depth: 1}
	}},

	"payhook.v1.OperatorService.ListHeldFunds":      {req: func(*authzFixture) proto.Message { return &payhookv1.ListHeldFundsRequest{} }},
	"payhook.v1.OperatorService.ListPayoutRequests": {req: func(*authzFixture) proto.Message { return &payhookv1.ListPayoutRequestsRequest{} }},

	"payhook.v1.PayoutService.GetPayoutWallet":  {req: func(*authzFixture) proto.Message { return &payhookv1.GetPayoutWalletRequest{Ticker: "btc"} }},
	"payhook.v1.PayoutService.GetPayoutBalance": {req: func(*authzFixture) proto.Message { return &payhookv1.GetPayoutBalanceRequest{Ticker: "btc"} }},
	"payhook.v1.PayoutService.CreatePayoutRequests": {req: func(*authzFixture) proto.Message {
		return &payhookv1.CreatePayoutRequestsRequest{Ticker: "btc", Outputs: map[string]string{btcDest: "0.001"}}
	}},
	"payhook.v1.PayoutService.ProcessPayoutRequests": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ProcessPayoutRequestsRequest{Ticker: "btc", Outputs: map[string]string{btcDest: "0.001"}}
	}},
	"payhook.v1.PayoutService.ListPayoutRequestPage": {req: func(*authzFixture) proto.Message {
		return &payhookv1.ListPayoutRequestPageRequest{Ticker: "btc"}
	}},
	"payhook.v1.PayoutService.ListPayouts": {req: func(*authzFixture) proto.Message { return &payhookv1.ListPayoutsRequest{Ticker: "btc"} }},
	"payhook.v1.PayoutService.CreatePayoutFromRequests": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.CreatePayoutFromRequestsRequest{RequestIds: strconv.FormatInt(f.newRequest(), 10)}
	}},
	"payhook.v1.PayoutService.ProcessPayout": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.ProcessPayoutRequest{PayoutId: f.newPayout()}
	}},
	"payhook.v1.PayoutService.GetPayoutStatus": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetPayoutStatusRequest{PayoutId: f.payout}
	}},
	"payhook.v1.PayoutService.GetPayoutPSBT": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetPayoutPSBTRequest{PayoutId: f.psbtPayout}
	}},
	"payhook.v1.PayoutService.SubmitPayoutPSBT": {ownedByA: true, passed: refusedInput, req: func(f *authzFixture) proto.Message {
		return &payhookv1.SubmitPayoutPSBTRequest{PayoutId: f.psbtPayout, Psbt: "cHNidP8AAAA="}
	}},

	"payhook.v1.RefundService.RefundCheckout": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.RefundCheckoutRequest{PaymentId: f.checkout, TxidIn: f.checkoutTx, Address: btcDest, Value: "0.0001"}
	}},
	"payhook.v1.RefundService.RefundDeposit": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.RefundDepositRequest{PaymentId: f.deposit, TxidIn: f.depositTx, Address: btcDest, Value: "0.0001"}
	}},

	"payhook.v1.RefundService.ApproveRefund": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.ApproveRefundRequest{RefundId: f.newRequested()}
	}},
	"payhook.v1.RefundService.ForwardWrongAsset": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.ForwardWrongAssetRequest{Coin: "erc20_usdt", TxidIn: f.newWrongAsset()}
	}},
	"payhook.v1.RefundService.RefundWrongAsset": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.RefundWrongAssetRequest{Coin: "erc20_usdt", TxidIn: f.newWrongAsset(), Address: ethDest}
	}},
	"payhook.v1.RefundService.GetRefund": {ownedByA: true, req: func(f *authzFixture) proto.Message {
		return &payhookv1.GetRefundRequest{RefundId: f.refund}
	}},

	"payhook.v1.ProjectService.CreateProject": {req: func(*authzFixture) proto.Message {
		return &payhookv1.CreateProjectRequest{Name: "made by the matrix"}
	}},
	"payhook.v1.ProjectService.ListProjects": {req: func(*authzFixture) proto.Message { return &payhookv1.ListProjectsRequest{} }},
	"payhook.v1.ProjectService.RotateSecret": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.RotateSecretRequest{ProjectId: f.spareProject}
	}},
	"payhook.v1.ProjectService.SetWallet": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.SetWalletRequest{ProjectId: f.spareProject, Wallet: "btc=" + btcDest}
	}},
	"payhook.v1.ProjectService.RemoveWallet": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.RemoveWalletRequest{ProjectId: f.spareProject, Ticker: "btc"}
	}},
	"payhook.v1.ProjectService.SetPayoutLimit": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.SetPayoutLimitRequest{ProjectId: f.spareProject, Ticker: "btc", PerPayout: "1", PerDay: "5"}
	}},
	"payhook.v1.ProjectService.SetPaymentExceptions": {req: func(f *authzFixture) proto.Message {
		late := "refund"
		return &payhookv1.SetPaymentExceptionsRequest{ProjectId: f.spareProject, LatePayments: &late}
	}},
	"payhook.v1.ProjectService.SetRateLimit": {req: func(f *authzFixture) proto.Message {
		rate := 25.0
		return &payhookv1.SetRateLimitRequest{ProjectId: f.spareProject, RateLimit: &rate}
	}},
	"payhook.v1.ProjectService.SetPayoutNotify": {req: func(f *authzFixture) proto.Message {
		return &payhookv1.SetPayoutNotifyRequest{ProjectId: f.spareProject, PayoutNotifyUrl: f.hook}
	}},
}

// authzOutcome is what one call was answered, reduced to what the matrix
// decides.
type authzOutcome string

const (
	allowed         authzOutcome = "allowed"
	refusedInput    authzOutcome = "refused its input (authorization passed)"
	unauthenticated authzOutcome = "unauthenticated"
	denied          authzOutcome = "permission denied"
	notFound        authzOutcome = "not found"
	unserved        authzOutcome = "not served"
)

// authzIdentity is who calls: an apikey header, a cookie, or neither.
type authzIdentity struct {
	name   string
	key    string
	cookie string // a Cookie header value
	// kind decides the expected outcome.
	kind string // "none", "bad key", "project A", "project B", "operator"
	// scopes are the key's scopes when it has fewer than all (a
	// restricted key of project A).
	scopes []string
}

// expectedOutcome is the contract: what identity id may do with a method
// declaring access and scope.
func expectedOutcome(access payhookv1.Access, scope string, id authzIdentity, ownedByA bool) (authzOutcome, string) {
	switch access {
	case payhookv1.Access_ACCESS_PUBLIC, payhookv1.Access_ACCESS_DEVNET:
		return allowed, ""
	}
	switch id.kind {
	case "none":
		return unauthenticated, "missing api key"
	case "bad key":
		return unauthenticated, "unknown api key"
	}
	if access == payhookv1.Access_ACCESS_OPERATOR {
		if id.kind == "operator" {
			return allowed, ""
		}
		return denied, "operator's key"
	}
	if id.scopes != nil && !slices.Contains(id.scopes, scope) {
		return denied, fmt.Sprintf("this API key lacks the %q scope", scope)
	}
	if ownedByA && id.kind != "project A" {
		return notFound, ""
	}
	return allowed, ""
}

// authzResult is one answer: its outcome, its message, and the raw answer
// for failure messages.
type authzResult struct {
	outcome authzOutcome
	message string
	raw     string
}

// authzMethods returns every method of every payhook.v1 service, in name
// order.
func authzMethods(t *testing.T) []protoreflect.MethodDescriptor {
	t.Helper()
	var out []protoreflect.MethodDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage("payhook.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				out = append(out, sd.Methods().Get(j))
			}
		}
		return true
	})
	slices.SortFunc(out, func(a, b protoreflect.MethodDescriptor) int {
		return strings.Compare(string(a.FullName()), string(b.FullName()))
	})
	if len(out) < 30 {
		t.Fatalf("%d methods in payhook.v1: the generated package is not registered", len(out))
	}
	return out
}

// TestAuthorizationMatrix drives every method of every payhook.v1 service
// (read from the descriptors: a method without a row fails) over REST (its
// google.api.http route), gRPC and Connect, with every identity: no key,
// an unknown key, a revoked key, another project's key, the project's key,
// an operator's key, and a dashboard session cookie (which is no API
// credential). Each answer must be what the method's (payhook.v1.access)
// option promises (and, for keys of project A restricted to the read or
// the create scope, its (payhook.v1.scope) option): 401/Unauthenticated,
// 403/PermissionDenied, 404/NotFound
// for project A's resources read with another project's key, or success.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	methods := authzMethods(t)
	seen := map[protoreflect.FullName]bool{}
	for _, md := range methods {
		seen[md.FullName()] = true
		if _, ok := authzRows[md.FullName()]; !ok {
			t.Errorf("%s has no row in authzRows: add one (a valid request, and whether it names project A's resource)", md.FullName())
		}
	}
	for name := range authzRows {
		if !seen[name] {
			t.Errorf("authzRows has a row for %s, which is not a method any more", name)
		}
	}
	if t.Failed() {
		return
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			runAuthzMatrix(t, d, methods)
		})
	}
}

func runAuthzMatrix(t *testing.T, d store.Dialect, methods []protoreflect.MethodDescriptor) {
	const hook = "https://shop.example/hook"
	in := servertest.Start(t, d, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := in.Server.DB().Client
	now := clock.Now()

	revoked, revokedRow, err := apikey.CreateInProject(ctx, db, "revoked", in.ProjectA, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apikey.Revoke(ctx, db, in.ProjectA, revokedRow.ID, now); err != nil {
		t.Fatal(err)
	}
	operator, _, err := apikey.CreateOperator(ctx, db, "operator", now)
	if err != nil {
		t.Fatal(err)
	}
	// Restricted keys of project A: one that only reads, one that only
	// creates payments.
	reader, _, err := apikey.CreateScoped(ctx, db, "reader", in.ProjectA, []string{apikey.ScopeRead}, now)
	if err != nil {
		t.Fatal(err)
	}
	creator, _, err := apikey.CreateScoped(ctx, db, "creator", in.ProjectA, []string{apikey.ScopeCreate}, now)
	if err != nil {
		t.Fatal(err)
	}
	identities := []authzIdentity{
		{name: "no key", kind: "none"},
		{name: "unknown key", key: "ph_thiskeywasneverissued", kind: "bad key"},
		{name: "revoked key", key: revoked, kind: "bad key"},
		{name: "other project's key", key: in.KeyB, kind: "project B"},
		{name: "project key", key: in.KeyA, kind: "project A"},
		{name: "operator key", key: operator, kind: "operator"},
		{name: "read-only key", key: reader, kind: "project A", scopes: []string{apikey.ScopeRead}},
		{name: "create-only key", key: creator, kind: "project A", scopes: []string{apikey.ScopeCreate}},
		{name: "dashboard session", cookie: dashboardSession(t, in, now), kind: "none"},
	}

	// Project A's resources, made with A's key.
	f := &authzFixture{hook: hook}
	a := servertest.WithKey(ctx, in.KeyA)
	addr, err := payhookv1.NewAddressServiceClient(in.Conn).CreateAddress(a,
		&payhookv1.CreateAddressRequest{Ticker: "btc", Callback: hook + "?owner=a", Address: btcDest})
	if err != nil {
		t.Fatal(err)
	}
	f.addressIn = addr.GetAddressIn()
	chk, err := payhookv1.NewCheckoutServiceClient(in.Conn).RequestCheckout(a, &payhookv1.RequestCheckoutRequest{NotifyUrl: hook, Value: "100"})
	if err != nil {
		t.Fatal(err)
	}
	f.checkout = chk.GetPaymentId()
	dep, err := payhookv1.NewDepositServiceClient(in.Conn).RequestDeposit(a, &payhookv1.RequestDepositRequest{NotifyUrl: hook})
	if err != nil {
		t.Fatal(err)
	}
	f.deposit = dep.GetPaymentId()
	sub, err := payhookv1.NewSubscriptionServiceClient(in.Conn).CreateSubscription(a,
		&payhookv1.CreateSubscriptionRequest{NotifyUrl: hook, Option: []string{"1m:50"}})
	if err != nil {
		t.Fatal(err)
	}
	f.subscription = sub.GetToken()
	// A test webhook per key that may watch deliveries: each then has an
	// event for its stream to deliver first.
	notifications := payhookv1.NewNotificationServiceClient(in.Conn)
	for _, key := range []string{in.KeyA, in.KeyB, operator} {
		n, err := notifications.TestNotification(servertest.WithKey(ctx, key), &payhookv1.TestNotificationRequest{Url: hook})
		if err != nil {
			t.Fatal(err)
		}
		if key == in.KeyA {
			f.notification = n.GetUuid()
		}
	}
	endpoints := payhookv1.NewEndpointServiceClient(in.Conn)
	f.newEndpoint = func() string {
		e, err := endpoints.CreateEndpoint(a, &payhookv1.CreateEndpointRequest{Url: hook, EventTypes: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		return e.GetEndpoint().GetEndpointId()
	}
	f.endpoint = f.newEndpoint()
	resumable := f.newEndpoint()
	f.pausedEndpoint = func() string {
		if _, err := endpoints.PauseEndpoint(a, &payhookv1.PauseEndpointRequest{EndpointId: resumable}); err != nil {
			t.Fatal(err)
		}
		return resumable
	}
	spare, err := payhookv1.NewProjectServiceClient(in.Conn).CreateProject(servertest.WithKey(ctx, operator),
		&payhookv1.CreateProjectRequest{Name: "spare"})
	if err != nil {
		t.Fatal(err)
	}
	f.spareProject = spare.GetProjectId()
	// Payouts: A's requests and payouts, made with A's key, and btc in the
	// payout wallets of A, B and the operator's project: eight outputs
	// each, so that every successful payout of the matrix (each spends one
	// output; its change confirms after the matrix) finds one.
	payouts := payhookv1.NewPayoutServiceClient(in.Conn)
	f.newRequest = func() int64 {
		r, err := payouts.CreatePayoutRequests(a, &payhookv1.CreatePayoutRequestsRequest{Ticker: "btc", Outputs: map[string]string{btcDest: "0.001"}})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetRequestIds()[0]
	}
	f.newPayout = func() int64 {
		p, err := payouts.CreatePayoutFromRequests(a, &payhookv1.CreatePayoutFromRequestsRequest{RequestIds: strconv.FormatInt(f.newRequest(), 10)})
		if err != nil {
			t.Fatal(err)
		}
		return p.GetPayoutInfo().GetId()
	}
	f.payout = f.newPayout()
	f.psbtPayout = psbtPayoutOf(ctx, t, db, in.ProjectA, now)
	devnetClient := payhookv1.NewDevnetServiceClient(in.Conn)
	for _, key := range []string{in.KeyA, in.KeyB, operator} {
		w, err := payouts.GetPayoutWallet(servertest.WithKey(ctx, key), &payhookv1.GetPayoutWalletRequest{Ticker: "btc"})
		if err != nil {
			t.Fatal(err)
		}
		// One held output per payout or refund the matrix sends (its change
		// is credited only once mined).
		for range 24 {
			if _, err := devnetClient.Pay(ctx, &payhookv1.PayRequest{Ticker: "btc", AddressIn: w.GetAddress(), ValueCoin: "0.1"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A confirmed payment of the checkout and of the deposit, to refund.
	chkAddr, err := payhookv1.NewCheckoutServiceClient(in.Conn).GetCheckoutAddress(a, &payhookv1.GetCheckoutAddressRequest{PaymentId: f.checkout, Coin: "btc"})
	if err != nil {
		t.Fatal(err)
	}
	depAddr, err := payhookv1.NewDepositServiceClient(in.Conn).GetDepositAddress(a, &payhookv1.GetDepositAddressRequest{PaymentId: f.deposit, Coin: "btc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		to   string
		txid *string
	}{{chkAddr.GetAddressIn(), &f.checkoutTx}, {depAddr.GetAddressIn(), &f.depositTx}} {
		r, err := devnetClient.Pay(ctx, &payhookv1.PayRequest{Ticker: "btc", AddressIn: p.to, ValueCoin: "0.05"})
		if err != nil {
			t.Fatal(err)
		}
		*p.txid = r.GetTxidIn()
	}
	three := int32(3)
	if _, err := devnetClient.Mine(ctx, &payhookv1.MineRequest{Ticker: "btc", Blocks: &three}); err != nil {
		t.Fatal(err)
	}
	ref, err := payhookv1.NewRefundServiceClient(in.Conn).RefundCheckout(a, &payhookv1.RefundCheckoutRequest{
		PaymentId: f.checkout, TxidIn: f.checkoutTx, Address: btcDest, Value: "0.0001",
	})
	if err != nil {
		t.Fatal(err)
	}
	f.refund = ref.GetRefund().GetRefundId()
	stored, err := in.Server.DB().Client.Refund.Query().Where(entrefund.UUID(f.refund)).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.newWrongAsset = func() string {
		addr, err := payhookv1.NewAddressServiceClient(in.Conn).CreateAddress(a, &payhookv1.CreateAddressRequest{
			Ticker: "eth", Callback: f.hook + "?wrong=" + uuid.NewString(), Address: ethDest,
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := devnetClient.Pay(ctx, &payhookv1.PayRequest{Ticker: "erc20/usdt", AddressIn: addr.GetAddressIn(), ValueCoin: "50"})
		if err != nil {
			t.Fatal(err)
		}
		blocks := int32(20)
		if _, err := devnetClient.Mine(ctx, &payhookv1.MineRequest{Ticker: "erc20/usdt", Blocks: &blocks}); err != nil {
			t.Fatal(err)
		}
		return p.GetTxidIn()
	}
	f.newRequested = func() string {
		id := uuid.NewString()
		if err := in.Server.DB().Client.Refund.Create().SetUUID(id).SetProjectID(stored.ProjectID).SetInvoiceID(stored.InvoiceID).
			SetPaymentID(stored.PaymentID).SetTicker(stored.Ticker).SetAddress(stored.Address).SetValue(stored.Value).
			SetStatus(entrefund.StatusRequested).SetReason("overpaid").SetCreatedAt(stored.CreatedAt).SetUpdatedAt(stored.CreatedAt).
			Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// A block below the devnet's head, so the first reorg has one to undo.
	one := int32(1)
	if _, err := payhookv1.NewDevnetServiceClient(in.Conn).Mine(ctx, &payhookv1.MineRequest{Ticker: "btc", Blocks: &one}); err != nil {
		t.Fatal(err)
	}

	transports := []struct {
		name string
		call func(ctx context.Context, t *testing.T, in *servertest.Instance, md protoreflect.MethodDescriptor, req proto.Message, id authzIdentity) authzResult
	}{
		{"REST", callREST},
		{"gRPC", callGRPC},
		{"Connect", callConnect},
	}
	for _, md := range methods {
		row := authzRows[md.FullName()]
		access := interceptor.MethodAccess(md)
		scope := interceptor.ScopeName(interceptor.MethodScope(md))
		t.Run(string(md.Parent().Name())+"/"+string(md.Name()), func(t *testing.T) {
			for _, tr := range transports {
				for _, id := range identities {
					want, wantMsg := expectedOutcome(access, scope, id, row.ownedByA)
					if want == allowed && row.passed != "" {
						want, wantMsg = row.passed, ""
					}
					if row.checksSentKey && id.kind == "bad key" {
						want, wantMsg = unauthenticated, "unknown api key"
					}
					got := tr.call(ctx, t, in, md, row.req(f), id)
					if got.outcome != want || !strings.Contains(got.message, wantMsg) {
						t.Errorf("%s, %s (%s): %s %q, want %s with %q\n%s", tr.name, id.name, access, got.outcome, got.message, want, wantMsg, got.raw)
					}
				}
			}
		})
	}

	// The devnet is served only by a --dev server: on another, its methods
	// are not routed, whoever calls.
	t.Run("devnet absent without --dev", func(t *testing.T) {
		plain := servertest.Start(t, d)
		for _, md := range methods {
			if interceptor.MethodAccess(md) != payhookv1.Access_ACCESS_DEVNET {
				continue
			}
			for _, tr := range transports {
				got := tr.call(ctx, t, plain, md, authzRows[md.FullName()].req(f), identities[0])
				if got.outcome != unserved {
					t.Errorf("%s %s on a server without --dev: %s %q, want it not served\n%s", tr.name, md.FullName(), got.outcome, got.message, got.raw)
				}
			}
		}
	})
}

// dashboardSession signs in a dashboard user of project A through the
// sign-in form and returns the Cookie header of the session, checked to
// open the dashboard.
func dashboardSession(t *testing.T, in *servertest.Instance, now time.Time) string {
	t.Helper()
	const email, password = "alice@shop.example", "correct horse battery staple"
	if _, err := dashboard.CreateUser(context.Background(), in.Server.DB().Client, in.ProjectA, email, password, now); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		resp, err := c.Get(in.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, form := get("/dashboard/signin")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(form)
	if m == nil {
		t.Fatalf("sign-in page without a csrf field:\n%s", form)
	}
	resp, err := c.PostForm(in.BaseURL+"/dashboard/signin", url.Values{"csrf": {m[1]}, "email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in answered %d", resp.StatusCode)
	}
	if code, body := get("/dashboard/notifications/"); code != 200 || !strings.Contains(body, email) {
		t.Fatalf("the session does not open the dashboard: %d", code)
	}
	u, _ := url.Parse(in.BaseURL + "/dashboard/")
	var parts []string
	for _, ck := range jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	if !strings.Contains(strings.Join(parts, "; "), "payhook_session=") {
		t.Fatalf("no session cookie after sign-in: %v", parts)
	}
	return strings.Join(parts, "; ")
}

// restRequest builds the REST request of req from md's google.api.http
// rule: path parameters filled in, the body (body: "*") or the query made
// of the remaining fields by their proto names.
func restRequest(ctx context.Context, t *testing.T, base string, md protoreflect.MethodDescriptor, req proto.Message) *http.Request {
	t.Helper()
	rule, ok := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if !ok || rule == nil {
		t.Fatalf("%s has no google.api.http rule", md.FullName())
	}
	var verb, pattern string
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		verb, pattern = http.MethodGet, p.Get
	case *annotations.HttpRule_Post:
		verb, pattern = http.MethodPost, p.Post
	default:
		t.Fatalf("%s: HTTP rule %v not handled by the matrix", md.FullName(), rule)
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]any{}
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	path := regexp.MustCompile(`\{([a-z_]+)(=[^}]*)?\}`).ReplaceAllStringFunc(pattern, func(m string) string {
		name := strings.TrimPrefix(strings.SplitN(m, "=", 2)[0], "{")
		name = strings.TrimSuffix(name, "}")
		v := fmt.Sprint(fields[name])
		delete(fields, name)
		return v
	})
	var body io.Reader
	target := base + path + "/"
	if rule.GetBody() == "*" {
		b, _ := json.Marshal(fields)
		body = bytes.NewReader(b)
	} else {
		q := url.Values{}
		for k, v := range fields {
			switch v := v.(type) {
			case []any:
				for _, e := range v {
					q.Add(k, fmt.Sprint(e))
				}
			default:
				q.Add(k, fmt.Sprint(v))
			}
		}
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
	}
	r, err := http.NewRequestWithContext(ctx, verb, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

func callREST(ctx context.Context, t *testing.T, in *servertest.Instance, md protoreflect.MethodDescriptor, req proto.Message, id authzIdentity) authzResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r := restRequest(ctx, t, in.BaseURL, md, req)
	if id.key != "" {
		r.Header.Set("apikey", id.key)
	}
	if id.cookie != "" {
		r.Header.Set("Cookie", id.cookie)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	defer resp.Body.Close()
	var raw []byte
	// A stream of google.api.HttpBody is a file (the export): read whole.
	if resp.StatusCode == http.StatusOK && md.IsStreamingServer() && md.Output().FullName() != "google.api.HttpBody" {
		// The stream's first message, past heartbeats (empty lines).
		br := bufio.NewReader(resp.Body)
		for len(bytes.TrimSpace(raw)) == 0 {
			if raw, err = br.ReadBytes('\n'); err != nil {
				return authzResult{outcome: "stream ended", message: err.Error()}
			}
		}
		if !bytes.Contains(raw, []byte(`"result"`)) {
			return authzResult{outcome: "bad stream message", raw: string(raw)}
		}
	} else if raw, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	// The family's error body, {"status":"error","error":"..."}, or the
	// gateway's own for a stream that failed before its first message,
	// {"error":{"code":16,"message":"..."}}.
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	var msg string
	if json.Unmarshal(e.Error, &msg) != nil {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(e.Error, &st)
		msg = st.Message
	}
	res := authzResult{message: msg, raw: fmt.Sprintf("%s %s -> %d %s", r.Method, r.URL, resp.StatusCode, raw)}
	switch resp.StatusCode {
	case http.StatusOK:
		res.outcome = allowed
	case http.StatusUnauthorized:
		res.outcome = unauthenticated
	case http.StatusForbidden:
		res.outcome = denied
	case http.StatusBadRequest:
		res.outcome = refusedInput
	case http.StatusNotFound:
		res.outcome = notFound
		if strings.HasPrefix(msg, "no such endpoint") {
			res.outcome = unserved
		}
	default:
		res.outcome = authzOutcome(fmt.Sprintf("HTTP %d", resp.StatusCode))
	}
	return res
}

func callGRPC(ctx context.Context, t *testing.T, in *servertest.Instance, md protoreflect.MethodDescriptor, req proto.Message, id authzIdentity) authzResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if id.key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "apikey", id.key)
	}
	if id.cookie != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "cookie", id.cookie)
	}
	method := "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	out := dynamicpb.NewMessage(md.Output())
	var err error
	if md.IsStreamingServer() {
		var cs grpc.ClientStream
		if cs, err = in.Conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method); err == nil {
			if err = cs.SendMsg(req); err == nil {
				if err = cs.CloseSend(); err == nil {
					err = cs.RecvMsg(out)
				}
			}
		}
	} else {
		err = in.Conn.Invoke(ctx, method, req, out)
	}
	st := status.Convert(err)
	return authzResult{outcome: outcomeOf(st.Code()), message: st.Message(), raw: fmt.Sprintf("%s -> %v", method, err)}
}

// outcomeOf reduces a gRPC code (Connect's codes are the same numbers) to
// the matrix's outcomes.
func outcomeOf(code codes.Code) authzOutcome {
	switch code {
	case codes.OK:
		return allowed
	case codes.Unauthenticated:
		return unauthenticated
	case codes.PermissionDenied:
		return denied
	case codes.NotFound:
		return notFound
	case codes.InvalidArgument:
		return refusedInput
	case codes.Unimplemented:
		return unserved
	}
	return authzOutcome(code.String())
}

// dynamicInit makes the Connect client's dynamic response messages of the
// method's output type.
func dynamicInit(spec connect.Spec, msg any) error {
	m, ok := msg.(*dynamicpb.Message)
	if !ok {
		return nil
	}
	md, ok := spec.Schema.(protoreflect.MethodDescriptor)
	if !ok {
		return fmt.Errorf("schema %T is not a method", spec.Schema)
	}
	*m = *dynamicpb.NewMessage(md.Output())
	return nil
}

func callConnect(ctx context.Context, t *testing.T, in *servertest.Instance, md protoreflect.MethodDescriptor, req proto.Message, id authzIdentity) authzResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	u := in.BaseURL + "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	client := connect.NewClient[dynamicpb.Message, dynamicpb.Message](http.DefaultClient, u,
		connect.WithSchema(md), connect.WithResponseInitializer(dynamicInit), connect.WithProtoJSON())
	dyn := dynamicpb.NewMessage(md.Input())
	b, err := proto.Marshal(req)
	if err == nil {
		err = proto.Unmarshal(b, dyn)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := connect.NewRequest(dyn)
	if id.key != "" {
		r.Header().Set("apikey", id.key)
	}
	if id.cookie != "" {
		r.Header().Set("Cookie", id.cookie)
	}
	if md.IsStreamingServer() {
		var s *connect.ServerStreamForClient[dynamicpb.Message]
		if s, err = client.CallServerStream(ctx, r); err == nil {
			if !s.Receive() {
				err = s.Err()
				if err == nil {
					err = errors.New("stream ended without a message")
				}
			}
			_ = s.Close()
		}
	} else {
		_, err = client.CallUnary(ctx, r)
	}
	res := authzResult{outcome: allowed, raw: fmt.Sprintf("POST %s -> %v", u, err)}
	if err == nil {
		return res
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		res.message = ce.Message()
	}
	res.outcome = outcomeOf(codes.Code(connect.CodeOf(err)))
	return res
}

// psbtPayoutOf records a processing btc payout of project whose
// transaction waits for the merchant's signature, as a watch-only
// project's payout leaves it (the PSBT's bytes are not read by the
// methods the matrix calls before they refuse or answer).
func psbtPayoutOf(ctx context.Context, t *testing.T, db *entdb.Client, project int64, now time.Time) int64 {
	t.Helper()
	k, err := db.APIKey.Query().Where(entapikey.ProjectID(project)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o, err := db.Outbound.Create().SetCreatedAt(now).SetUpdatedAt(now).SetKey("payout:psbt-fixture").SetTicker("btc").
		SetPurpose(entoutbound.PurposePayoutPsbt).SetProjectID(project).SetFromAddress("psbt:0").SetFromIndex(0).
		SetInputs([]schema.Transfer{}).SetOutputs([]schema.Output{{Address: btcDest, Amount: decimal.RequireFromString("0.001")}}).
		SetNetworkFee(decimal.Zero).SetState(entoutbound.StateAwaitingSignature).SetPsbt([]byte("psbt\xff\x00")).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.Payout.Create().SetCreatedAt(now).SetUpdatedAt(now).SetProjectID(project).SetAPIKeyID(k.ID).SetTicker("btc").
		SetStatus(entpayout.StatusProcessing).SetTotalRequested(decimal.RequireFromString("0.001")).SetOutboundID(o.ID).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}
