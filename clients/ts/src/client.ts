import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AddressService } from "./gen/payhook/v1/address_pb.js";
import { DeliveryService } from "./gen/payhook/v1/delivery_pb.js";
import { DevnetService } from "./gen/payhook/v1/devnet_pb.js";
import { ExportService } from "./gen/payhook/v1/export_pb.js";
import { CheckoutService, DepositService, NotificationService } from "./gen/payhook/v1/merchant_pb.js";
import { OperatorService } from "./gen/payhook/v1/operator_pb.js";
import { PayoutService } from "./gen/payhook/v1/payout_pb.js";
import { ProjectService } from "./gen/payhook/v1/project_pb.js";
import { RefundService } from "./gen/payhook/v1/refund_pb.js";
import { SubscriptionService } from "./gen/payhook/v1/subscription_pb.js";

/**
 * PayhookClient holds one typed client per payhook service, all over the
 * same transport.
 */
export interface PayhookClient {
  /** address is the low-level payment address API (create, logs, info...). */
  readonly address: Client<typeof AddressService>;
  /** checkout is the merchant checkout API. */
  readonly checkout: Client<typeof CheckoutService>;
  /** deposit is the merchant deposit API. */
  readonly deposit: Client<typeof DepositService>;
  /** subscription is the merchant subscription API. */
  readonly subscription: Client<typeof SubscriptionService>;
  /** notification resends, tests and lists merchant notifications. */
  readonly notification: Client<typeof NotificationService>;
  /** payout is the project's payout wallet, balance, payout requests and payouts. */
  readonly payout: Client<typeof PayoutService>;
  /** refund refunds invoice payments and handles wrong-asset payments. */
  readonly refund: Client<typeof RefundService>;
  /** export streams the project's accounting export (ExportLedger: the file's parts). */
  readonly export: Client<typeof ExportService>;
  /** project manages projects, IPN secrets and wallets. */
  readonly project: Client<typeof ProjectService>;
  /** delivery streams delivery events (WatchDeliveries). */
  readonly delivery: Client<typeof DeliveryService>;
  /** operator lists held funds and payout requests (operator keys only). */
  readonly operator: Client<typeof OperatorService>;
  /** devnet pays, mines and reorganises the simulated chains of a --dev server. */
  readonly devnet: Client<typeof DevnetService>;
}

/**
 * createPayhookClient returns clients of every payhook service over
 * transport. The transport decides the protocol: today payhook serves gRPC
 * (createGrpcTransport of @connectrpc/connect-node); a Connect or gRPC-Web
 * transport (connect-node, connect-web) works unchanged once the server
 * speaks those protocols. Put withApiKey(key) in the transport's
 * interceptors to authenticate.
 */
export function createPayhookClient(transport: Transport): PayhookClient {
  return {
    address: createClient(AddressService, transport),
    checkout: createClient(CheckoutService, transport),
    deposit: createClient(DepositService, transport),
    subscription: createClient(SubscriptionService, transport),
    notification: createClient(NotificationService, transport),
    payout: createClient(PayoutService, transport),
    refund: createClient(RefundService, transport),
    export: createClient(ExportService, transport),
    project: createClient(ProjectService, transport),
    delivery: createClient(DeliveryService, transport),
    operator: createClient(OperatorService, transport),
    devnet: createClient(DevnetService, transport),
  };
}
