/**
 * Verifiers of payhook's notification signatures, for merchants' Node
 * servers. They use node:crypto only (no protobuf), and decide exactly as
 * payhook's Go package receiver does: the repository's cross-language
 * vectors (receiver/testdata/vectors.json, webhook_vectors.json) are their
 * tests.
 *
 * Low-level callbacks carry `x-ca-signature`: the standard Base64 of an RSA
 * PKCS#1 v1.5 signature over the SHA-256 of the signed data
 * (verifyCallback), by the project's own key (GET /pubkey/ with the
 * project's API key). Merchant webhooks follow the Standard Webhooks
 * construction under payhook's header names `x-service-id`,
 * `x-service-timestamp` and `x-service-signature` (verifyWebhook).
 * Low-level callbacks carry those headers too: give verifyCallback the
 * project's secrets and it requires both signatures.
 *
 * For both, the signed data is, for GET, the full URL as requested (scheme,
 * host, path and query, byte for byte: never re-encode it) and, for POST,
 * the raw body (verify the bytes before parsing them; never re-serialise).
 * Behind a TLS-terminating proxy, rebuild the URL with requestUrl and the
 * base URL the service calls, not with forwarded headers.
 *
 * x-ca-signature has no timestamp and retries reuse it, and a webhook can
 * be replayed within the tolerance: process notifications idempotently,
 * keyed by their uuid.
 */
import { createHmac, createPublicKey, timingSafeEqual, verify as rsaVerify, type KeyObject } from "node:crypto";

/** SIGNATURE_HEADER carries a low-level callback's RSA signature. */
export const SIGNATURE_HEADER = "x-ca-signature";
/** WEBHOOK_ID_HEADER carries a webhook's uuid, the same at every attempt. */
export const WEBHOOK_ID_HEADER = "x-service-id";
/** WEBHOOK_TIMESTAMP_HEADER carries the attempt's Unix time in seconds. */
export const WEBHOOK_TIMESTAMP_HEADER = "x-service-timestamp";
/**
 * WEBHOOK_SIGNATURE_HEADER carries space-separated "v1,<Base64>"
 * signatures, one per secret the service signed with.
 */
export const WEBHOOK_SIGNATURE_HEADER = "x-service-signature";
/** WEBHOOK_SECRET_PREFIX starts every webhook secret ("whsec_<Base64 key>"). */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** MIN_WEBHOOK_SECRET_BYTES is the shortest HMAC key a secret may hold. */
export const MIN_WEBHOOK_SECRET_BYTES = 16;
/** MIN_KEY_BITS is the smallest RSA key verifyCallback accepts. */
export const MIN_KEY_BITS = 2048;
/**
 * DEFAULT_TOLERANCE_SECONDS is how far x-service-timestamp may be from the
 * verifier's clock, either way, unless toleranceSeconds says otherwise.
 */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * SignatureErrorCode says why a notification was refused, as the Go
 * receiver's errors do: missing_signature, bad_signature (x-ca-signature);
 * missing_webhook_header, bad_timestamp, stale_timestamp,
 * bad_webhook_signature (webhooks); method (neither GET nor POST); config
 * (an unusable key or secret: a fault of the receiver, not of the request).
 */
export type SignatureErrorCode =
  | "missing_signature"
  | "bad_signature"
  | "missing_webhook_header"
  | "bad_timestamp"
  | "stale_timestamp"
  | "bad_webhook_signature"
  | "method"
  | "config";

/**
 * SignatureError is thrown by the verifiers. Its message never contains a
 * secret. Answer 401 for every code but config (500) and method (405).
 */
export class SignatureError extends Error {
  /** code says why, for the caller to branch on (never match messages). */
  readonly code: SignatureErrorCode;

  constructor(code: SignatureErrorCode, message: string) {
    super(message);
    this.name = "SignatureError";
    this.code = code;
  }
}

/**
 * HeaderSource is a request's headers: Node's IncomingHttpHeaders (names in
 * lower case, a repeated header as an array), a plain object with names in
 * any case, or a Fetch API Headers.
 */
export type HeaderSource =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** SignedRequest is a notification as received. */
export interface SignedRequest {
  /** method is GET or POST, as received. */
  readonly method: string;
  /**
   * url is the full URL as requested (scheme://host[:port] + the request
   * target, unchanged): the signed data of a GET. See requestUrl.
   */
  readonly url?: string;
  /** body is the raw body: the signed data of a POST (a string is UTF-8). */
  readonly body?: string | Uint8Array;
  /** headers are the request's headers. */
  readonly headers: HeaderSource;
}

/** WebhookOptions adjust verifyWebhook's clock check. */
export interface WebhookOptions {
  /**
   * toleranceSeconds is how far the timestamp may be from the clock, in
   * the past or in the future; DEFAULT_TOLERANCE_SECONDS when absent or not
   * positive.
   */
  readonly toleranceSeconds?: number;
  /** now is the clock in milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
}

/**
 * PublicKeyInput is the callback signing key: the PEM "pubkey" of
 * GET /pubkey/ (or GetPublicKey), as text or bytes, or a KeyObject.
 */
export type PublicKeyInput = string | Uint8Array | KeyObject;

/** CallbackOptions adjust verifyCallback. */
export interface CallbackOptions extends WebhookOptions {
  /**
   * secrets are the project's IPN secrets ("whsec_...", the new and the old
   * one during a rotation). Given, a callback must also carry the
   * project's HMAC headers, checked as verifyWebhook checks them (the
   * clock with toleranceSeconds and now): the RSA signature says payhook
   * sent the callback, the HMAC that it was sent for this project. Give
   * them whenever you hold the secret. An empty list, or an empty or
   * malformed secret, throws config; undefined checks x-ca-signature only.
   */
  readonly secrets?: string | readonly string[];
  /**
   * previousKeys are keys also accepted for x-ca-signature: the
   * previous_pubkey of GET /pubkey/ during a rotation of the project's
   * callback key, until its previous_until.
   */
  readonly previousKeys?: readonly PublicKeyInput[];
}

/**
 * parsePublicKey parses the callback signing key once, for reuse: a PEM
 * "PUBLIC KEY" (or PKCS#1 "RSA PUBLIC KEY") block of an RSA key of at least
 * MIN_KEY_BITS bits. Fetch it once from an origin you trust, or ship it with
 * your configuration; do not fetch it per callback. Throws SignatureError
 * (config).
 */
export function parsePublicKey(key: PublicKeyInput): KeyObject {
  let k: KeyObject;
  try {
    k = typeof key === "string" || key instanceof Uint8Array ? createPublicKey({ key: Buffer.from(key), format: "pem" }) : key;
  } catch {
    throw new SignatureError("config", "unusable public key: not a PEM public key");
  }
  if (k.type !== "public" || k.asymmetricKeyType !== "rsa") {
    throw new SignatureError("config", "unusable public key: not an RSA public key");
  }
  const bits = k.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_KEY_BITS) {
    throw new SignatureError("config", `unusable public key: ${bits}-bit key, at least ${MIN_KEY_BITS} bits required`);
  }
  return k;
}

/**
 * verifyCallback checks the x-ca-signature of a low-level callback against
 * the pinned public key (or one of options.previousKeys) and, given
 * options.secrets, the project's HMAC headers as well, and returns the data
 * they cover (the full URL of a GET, the raw body of a POST). Throws
 * SignatureError: missing_signature, bad_signature, method or config, and
 * with secrets also missing_webhook_header, bad_timestamp,
 * stale_timestamp or bad_webhook_signature.
 */
export function verifyCallback(publicKey: PublicKeyInput, req: SignedRequest, options: CallbackOptions = {}): Uint8Array {
  const keys = [publicKey, ...(options.previousKeys ?? [])].map(parsePublicKey);
  const hmacKeys = options.secrets === undefined ? undefined : webhookKeys(options.secrets);
  const values = headerValues(req.headers, SIGNATURE_HEADER);
  if (values.length === 0 || (values.length === 1 && values[0].trim() === "")) {
    throw new SignatureError("missing_signature", `missing ${SIGNATURE_HEADER} header`);
  }
  if (values.length > 1) {
    throw new SignatureError("bad_signature", `invalid ${SIGNATURE_HEADER}: header given ${values.length} times`);
  }
  const sig = decodeBase64(values[0].trim());
  if (sig === undefined) {
    throw new SignatureError("bad_signature", `invalid ${SIGNATURE_HEADER}: not standard Base64`);
  }
  const wh = hmacKeys === undefined ? undefined : webhookHeaders(req, options);
  const data = signedData(req);
  if (!keys.some((key) => rsaVerify("sha256", data, key, sig))) {
    throw new SignatureError("bad_signature", `invalid ${SIGNATURE_HEADER}: does not match the ${signedName(req.method)}`);
  }
  if (hmacKeys !== undefined && wh !== undefined && !webhookMatches(hmacKeys, wh.id, wh.ts, data, wh.signature)) {
    throw new SignatureError("bad_webhook_signature", `invalid ${WEBHOOK_SIGNATURE_HEADER}: no v1 signature matches the ${signedName(req.method)}`);
  }
  return data;
}

/**
 * verifyWebhook checks a merchant webhook and returns the data its
 * signature covers: x-service-id must be present, x-service-timestamp
 * within the tolerance of the clock (either way), and one "v1," entry of
 * x-service-signature the HMAC-SHA256 of "<id>.<timestamp>.<data>" under
 * one of secrets (compared in constant time). During a secret rotation give
 * the new and the old secret. Throws SignatureError:
 * missing_webhook_header, bad_timestamp, stale_timestamp,
 * bad_webhook_signature, method or config.
 */
export function verifyWebhook(secrets: string | readonly string[], req: SignedRequest, options: WebhookOptions = {}): Uint8Array {
  const keys = webhookKeys(secrets);
  const { id, ts, signature } = webhookHeaders(req, options);
  const data = signedData(req);
  if (!webhookMatches(keys, id, ts, data, signature)) {
    throw new SignatureError("bad_webhook_signature", `invalid ${WEBHOOK_SIGNATURE_HEADER}: no v1 signature matches the ${signedName(req.method)}`);
  }
  return data;
}

/**
 * webhookHeaders reads x-service-id, x-service-timestamp (checked against
 * the clock) and x-service-signature.
 */
function webhookHeaders(req: SignedRequest, options: WebhookOptions): { id: string; ts: bigint; signature: string } {
  const id = oneHeader(req.headers, WEBHOOK_ID_HEADER);
  const tsHeader = oneHeader(req.headers, WEBHOOK_TIMESTAMP_HEADER);
  const signature = headerValues(req.headers, WEBHOOK_SIGNATURE_HEADER).join(" ");
  if (signature.trim() === "") {
    throw new SignatureError("missing_webhook_header", `missing webhook signature header: ${WEBHOOK_SIGNATURE_HEADER}`);
  }
  const ts = parseTimestamp(tsHeader);
  checkClock(ts, options);
  return { id, ts, signature };
}

/**
 * verifyWebhookSignature checks the parts of a webhook against one secret
 * without looking at the clock: check the timestamp yourself, or use
 * verifyWebhook, or a captured webhook can be replayed. Throws
 * SignatureError: missing_webhook_header, bad_timestamp,
 * bad_webhook_signature or config.
 */
export function verifyWebhookSignature(secret: string, id: string, timestamp: string, data: string | Uint8Array, signature: string): void {
  const keys = webhookKeys([secret]);
  if (id === "") {
    throw new SignatureError("missing_webhook_header", `missing webhook signature header: ${WEBHOOK_ID_HEADER}`);
  }
  if (signature.trim() === "") {
    throw new SignatureError("missing_webhook_header", `missing webhook signature header: ${WEBHOOK_SIGNATURE_HEADER}`);
  }
  const ts = parseTimestamp(timestamp);
  if (!webhookMatches(keys, id, ts, toBytes(data), signature)) {
    throw new SignatureError("bad_webhook_signature", `invalid ${WEBHOOK_SIGNATURE_HEADER}: no v1 signature matches the data`);
  }
}

/**
 * IncomingRequestLike is what requestUrl reads of a node:http
 * IncomingMessage (or an Express/Fastify request wrapping one).
 */
export interface IncomingRequestLike {
  readonly url?: string;
  readonly headers: { readonly host?: string };
  /** socket is a TLSSocket (encrypted: true) when the request came over TLS. */
  readonly socket?: unknown;
}

/**
 * requestUrl rebuilds the full URL a GET notification was signed over from
 * a node:http request: the request target exactly as received (req.url,
 * never re-encoded) after baseUrl ("scheme://host[:port]", the origin the
 * service calls) or, without it, after https (TLS socket) or http and the
 * Host header. Behind a TLS-terminating proxy pass baseUrl: forwarded
 * headers are not trusted. Throws SignatureError (config) for a bad baseUrl.
 */
export function requestUrl(req: IncomingRequestLike, baseUrl?: string): string {
  const base = baseUrl === undefined ? "" : checkBaseUrl(baseUrl);
  const target = req.url ?? "/";
  if (!target.startsWith("/")) {
    // Absolute form ("GET http://host/path HTTP/1.1"): the URL is given.
    if (base === "") {
      return target;
    }
    const i = target.indexOf("://");
    if (i >= 0) {
      const rest = target.slice(i + 3);
      const j = rest.search(/[/?]/);
      return j >= 0 ? base + rest.slice(j) : base + "/";
    }
  }
  if (base !== "") {
    return base + target;
  }
  const sock = req.socket;
  const tls = typeof sock === "object" && sock !== null && (sock as { encrypted?: unknown }).encrypted === true;
  const scheme = tls ? "https" : "http";
  return `${scheme}://${req.headers.host ?? ""}${target}`;
}

/** checkBaseUrl returns baseUrl without a trailing slash, or throws. */
function checkBaseUrl(baseUrl: string): string {
  const m = /^(https?:\/\/[^/?#@\s]+)\/?$/.exec(baseUrl);
  if (m === null) {
    throw new SignatureError("config", `base URL ${JSON.stringify(baseUrl)} is not scheme://host[:port]`);
  }
  return m[1];
}

/** signedData is what a request's signature covers. */
function signedData(req: SignedRequest): Uint8Array {
  switch (req.method) {
    case "GET":
    case "":
      if (req.url === undefined || req.url === "") {
        throw new SignatureError("config", "a GET notification is verified over its full URL: give url (see requestUrl)");
      }
      return Buffer.from(req.url, "utf8");
    case "POST":
      return toBytes(req.body ?? "");
    default:
      throw new SignatureError("method", `method not used by notifications: ${req.method}`);
  }
}

function signedName(method: string): string {
  return method === "POST" ? "body" : "URL";
}

function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? Buffer.from(data, "utf8") : data;
}

/** headerValues returns every value of a header, whatever holds them. */
function headerValues(headers: HeaderSource, name: string): string[] {
  if (typeof Headers !== "undefined" && headers instanceof Headers) {
    const v = headers.get(name);
    return v === null ? [] : [v];
  }
  const out: string[] = [];
  for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (k.toLowerCase() !== name || v === undefined) {
      continue;
    }
    if (typeof v === "string") {
      out.push(v);
    } else {
      out.push(...v);
    }
  }
  return out;
}

/** oneHeader returns the trimmed value of a header given once. */
function oneHeader(headers: HeaderSource, name: string): string {
  const values = headerValues(headers, name);
  if (values.length === 0 || (values.length === 1 && values[0].trim() === "")) {
    throw new SignatureError("missing_webhook_header", `missing webhook signature header: ${name}`);
  }
  if (values.length > 1) {
    throw new SignatureError("bad_webhook_signature", `invalid ${WEBHOOK_SIGNATURE_HEADER}: ${name} given ${values.length} times`);
  }
  return values[0].trim();
}

const MAX_INT64 = (1n << 63n) - 1n;

/** parseTimestamp parses a Unix time in decimal seconds (digits only). */
function parseTimestamp(s: string): bigint {
  if (s === "") {
    throw new SignatureError("missing_webhook_header", `missing webhook signature header: ${WEBHOOK_TIMESTAMP_HEADER}`);
  }
  if (!/^[0-9]+$/.test(s)) {
    throw new SignatureError("bad_timestamp", `invalid ${WEBHOOK_TIMESTAMP_HEADER}: not a Unix time in decimal seconds`);
  }
  const ts = BigInt(s);
  if (ts > MAX_INT64) {
    throw new SignatureError("bad_timestamp", `invalid ${WEBHOOK_TIMESTAMP_HEADER}: out of range`);
  }
  return ts;
}

/** checkClock refuses a timestamp further from the clock than the tolerance. */
function checkClock(ts: bigint, options: WebhookOptions): void {
  const tol = options.toleranceSeconds !== undefined && options.toleranceSeconds > 0 ? options.toleranceSeconds : DEFAULT_TOLERANCE_SECONDS;
  const now = (options.now ?? Date.now)();
  const ageMs = now - Number(ts) * 1000;
  if (ageMs > tol * 1000) {
    throw new SignatureError("stale_timestamp", `${WEBHOOK_TIMESTAMP_HEADER} outside the tolerance: ${Math.trunc(ageMs / 1000)}s old, tolerance ${tol}s`);
  }
  if (ageMs < -tol * 1000) {
    throw new SignatureError("stale_timestamp", `${WEBHOOK_TIMESTAMP_HEADER} outside the tolerance: ${Math.trunc(-ageMs / 1000)}s in the future, tolerance ${tol}s`);
  }
}

/** webhookKeys decodes "whsec_" secrets; errors describe shapes, never content. */
function webhookKeys(secrets: string | readonly string[]): Uint8Array[] {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  if (list.length === 0) {
    throw new SignatureError("config", "no webhook secret");
  }
  return list.map((secret, i) => {
    const n = i + 1;
    if (secret === "") {
      throw new SignatureError("config", `webhook secret ${n} is empty`);
    }
    if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
      throw new SignatureError("config", `webhook secret ${n} does not start with "${WEBHOOK_SECRET_PREFIX}"`);
    }
    const key = decodeBase64(secret.slice(WEBHOOK_SECRET_PREFIX.length));
    if (key === undefined) {
      throw new SignatureError("config", `webhook secret ${n} is not standard Base64 after "${WEBHOOK_SECRET_PREFIX}"`);
    }
    if (key.length < MIN_WEBHOOK_SECRET_BYTES) {
      throw new SignatureError("config", `webhook secret ${n} holds ${key.length} bytes, at least ${MIN_WEBHOOK_SECRET_BYTES} required`);
    }
    return key;
  });
}

/**
 * webhookMatches reports whether a v1 entry of the space-separated list is
 * the HMAC-SHA256 of "<id>.<ts>.<data>" under one of keys. Entries of other
 * versions, or not Base64, are skipped, as Standard Webhooks says.
 */
function webhookMatches(keys: Uint8Array[], id: string, ts: bigint, data: Uint8Array, signatures: string): boolean {
  const prefix = Buffer.from(`${id}.${ts.toString()}.`, "utf8");
  const macs = keys.map((k) => createHmac("sha256", k).update(prefix).update(data).digest());
  for (const entry of signatures.split(/\s+/)) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") {
      continue;
    }
    const got = decodeBase64(entry.slice(comma + 1));
    if (got === undefined) {
      continue;
    }
    for (const mac of macs) {
      if (got.length === mac.length && timingSafeEqual(got, mac)) {
        return true;
      }
    }
  }
  return false;
}

/**
 * decodeBase64 decodes standard Base64 with padding, strictly (Node's
 * decoder skips what is not Base64, which would accept what the Go
 * receiver refuses).
 */
function decodeBase64(s: string): Buffer | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) {
    return undefined;
  }
  return Buffer.from(s, "base64");
}
