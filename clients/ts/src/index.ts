/**
 * @payhook/client: typed clients of payhook's gRPC API, generated from its
 * protos with protobuf-es and Connect, and the verifiers of payhook's
 * webhook signatures.
 *
 * The message types and service descriptors of payhook.v1 are re-exported
 * as generated; the verifiers are also available alone, without protobuf,
 * from "@payhook/client/verify".
 */
export * from "./gen/payhook/v1/address_pb.js";
export * from "./gen/payhook/v1/delivery_pb.js";
export * from "./gen/payhook/v1/devnet_pb.js";
export * from "./gen/payhook/v1/export_pb.js";
export * from "./gen/payhook/v1/merchant_pb.js";
export * from "./gen/payhook/v1/operator_pb.js";
export * from "./gen/payhook/v1/payout_pb.js";
export * from "./gen/payhook/v1/project_pb.js";
export * from "./gen/payhook/v1/refund_pb.js";
export * from "./gen/payhook/v1/subscription_pb.js";
export { API_KEY_HEADER, withApiKey } from "./auth.js";
export { createPayhookClient, type PayhookClient } from "./client.js";
export * from "./verify.js";
