// The verifiers against every vector of the repository's cross-language
// files, receiver/testdata/vectors.json (RSA x-ca-signature) and
// webhook_vectors.json (merchant HMAC): each must decide as the vector's
// "valid" says, from the parts and through a real node:http request whose
// URL requestUrl rebuilds. PAYHOOK_VECTORS_DIR overrides where the files
// are read from.
import assert from "node:assert/strict";
import { createHmac, generateKeyPairSync, createPrivateKey, sign as rsaSign } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  requestUrl,
  SignatureError,
  verifyCallback,
  verifyWebhook,
  verifyWebhookSignature,
  type SignedRequest,
} from "@payhook/client/verify";

const dir = process.env.PAYHOOK_VECTORS_DIR ?? fileURLToPath(new URL("../../../../receiver/testdata/", import.meta.url));

interface CallbackVector {
  description: string;
  method: string;
  url: string;
  content_type: string;
  body: string;
  signature: string;
  valid: boolean;
}

interface WebhookVector {
  description: string;
  secret: string;
  verify_at: number;
  method: string;
  url: string;
  content_type: string;
  signed_data: string;
  headers: Record<string, string>;
  valid: boolean;
}

const callbacks = JSON.parse(readFileSync(dir + "vectors.json", "utf8")) as {
  public_key_pem: string;
  vectors: CallbackVector[];
};
const webhooks = JSON.parse(readFileSync(dir + "webhook_vectors.json", "utf8")) as {
  tolerance_seconds: number;
  vectors: WebhookVector[];
};

/** accepted runs verify and reports whether it accepted, rethrowing anything but a SignatureError. */
function accepted(verify: () => unknown): { ok: boolean; why: string } {
  try {
    verify();
    return { ok: true, why: "" };
  } catch (err) {
    if (!(err instanceof SignatureError)) {
      throw err;
    }
    return { ok: false, why: `${err.code}: ${err.message}` };
  }
}

/** Received is a request as a node:http server saw it. */
interface Received {
  req: IncomingMessage;
  body: Buffer;
}

/**
 * receiver is a node:http server that hands each request (headers and raw
 * body) to the test that sent it.
 */
class Receiver {
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      res.end("ok");
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.({ req, body: Buffer.concat(chunks) });
    });
  });
  private waiting: ((r: Received) => void) | undefined;
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.server.close((err) => (err ? reject(err) : resolve())));
  }

  /**
   * send makes the request url names (its request target and Host, sent to
   * this server) with headers and body, and returns what the server got.
   */
  async send(method: string, url: string, headers: Record<string, string>, body: string): Promise<Received> {
    const u = new URL(url);
    const target = url.slice(`${u.protocol}//${u.host}`.length);
    const got = new Promise<Received>((resolve) => (this.waiting = resolve));
    await new Promise<void>((resolve, reject) => {
      const r = request(
        { host: "127.0.0.1", port: this.port, method, path: target, headers: { ...headers, host: u.host }, agent: false },
        (res) => {
          res.resume();
          res.on("end", resolve);
        },
      );
      r.on("error", reject);
      r.end(method === "POST" ? body : undefined);
    });
    const rec = await got;
    assert.equal(rec.req.url, target, "the server saw another request target");
    return rec;
  }
}

describe("x-ca-signature vectors", () => {
  const srv = new Receiver();
  before(() => srv.start());
  after(() => srv.stop());

  assert.ok(callbacks.vectors.length >= 10, `only ${callbacks.vectors.length} vectors`);
  for (const v of callbacks.vectors) {
    test(v.description, async () => {
      const headers: Record<string, string> = {};
      if (v.content_type !== "") {
        headers["content-type"] = v.content_type;
      }
      if (v.signature !== "") {
        headers["x-ca-signature"] = v.signature;
      }
      const parts: SignedRequest = { method: v.method, url: v.url, body: v.body, headers };
      const fromParts = accepted(() => verifyCallback(callbacks.public_key_pem, parts));
      assert.equal(fromParts.ok, v.valid, `from the parts: ${fromParts.why || "accepted"}, vector says valid=${v.valid}`);
      if (v.valid) {
        const want = v.method === "GET" ? v.url : v.body;
        assert.equal(Buffer.from(verifyCallback(callbacks.public_key_pem, parts)).toString("utf8"), want);
      }

      // Over HTTP: an https URL is received behind a TLS-terminating proxy,
      // so the verifier is given the base URL the service called.
      const rec = await srv.send(v.method, v.url, headers, v.body);
      const base = v.url.startsWith("https://") ? new URL(v.url).origin : undefined;
      const received: SignedRequest = { method: rec.req.method ?? "", url: requestUrl(rec.req, base), body: rec.body, headers: rec.req.headers };
      const overHTTP = accepted(() => verifyCallback(callbacks.public_key_pem, received));
      assert.equal(overHTTP.ok, v.valid, `over HTTP: ${overHTTP.why || "accepted"}, vector says valid=${v.valid}`);
    });
  }
});

describe("merchant webhook vectors", () => {
  const srv = new Receiver();
  before(() => srv.start());
  after(() => srv.stop());

  assert.ok(webhooks.vectors.length >= 15, `only ${webhooks.vectors.length} vectors`);
  for (const v of webhooks.vectors) {
    test(v.description, async () => {
      const now = () => v.verify_at * 1000;
      const headers: Record<string, string> = { ...v.headers };
      if (v.content_type !== "") {
        headers["content-type"] = v.content_type;
      }
      const parts: SignedRequest = { method: v.method, url: v.url, body: v.method === "POST" ? v.signed_data : undefined, headers };
      const fromParts = accepted(() => verifyWebhook([v.secret], parts, { now }));
      assert.equal(fromParts.ok, v.valid, `from the parts: ${fromParts.why || "accepted"}, vector says valid=${v.valid}`);
      if (v.valid) {
        assert.equal(Buffer.from(verifyWebhook(v.secret, parts, { now })).toString("utf8"), v.signed_data);
      }

      const rec = await srv.send(v.method, v.url, headers, v.signed_data);
      const base = v.url.startsWith("https://") ? new URL(v.url).origin : undefined;
      const received: SignedRequest = { method: rec.req.method ?? "", url: requestUrl(rec.req, base), body: rec.body, headers: rec.req.headers };
      const overHTTP = accepted(() => verifyWebhook([v.secret], received, { now }));
      assert.equal(overHTTP.ok, v.valid, `over HTTP: ${overHTTP.why || "accepted"}, vector says valid=${v.valid}`);

      // Without the clock only the signature counts: a vector refused for
      // its age alone verifies.
      const ts = Number(v.headers["x-service-timestamp"]);
      const stale = Math.abs(v.verify_at - ts) > webhooks.tolerance_seconds;
      const noClock = accepted(() =>
        verifyWebhookSignature(v.secret, v.headers["x-service-id"], v.headers["x-service-timestamp"], v.signed_data, v.headers["x-service-signature"]),
      );
      assert.equal(noClock.ok, v.valid || stale, `without the clock: ${noClock.why || "accepted"}`);
    });
  }
});

describe("refusals name their reason", () => {
  const cb = callbacks.vectors.find((v) => v.valid && v.method === "POST")!;
  const wh = webhooks.vectors.find((v) => v.valid && v.method === "POST")!;
  const code = (verify: () => unknown): string => {
    try {
      verify();
    } catch (err) {
      assert.ok(err instanceof SignatureError, `not a SignatureError: ${String(err)}`);
      return err.code;
    }
    return "accepted";
  };
  const whReq = (headers: Record<string, string | string[]>, method = "POST"): SignedRequest => ({ method, url: wh.url, body: wh.signed_data, headers });
  const now = () => wh.verify_at * 1000;

  const cases: Array<[string, () => unknown, string]> = [
    ["callback without a signature", () => verifyCallback(callbacks.public_key_pem, { method: "POST", body: cb.body, headers: {} }), "missing_signature"],
    ["callback signature given twice", () => verifyCallback(callbacks.public_key_pem, { method: "POST", body: cb.body, headers: { "x-ca-signature": [cb.signature, cb.signature] } }), "bad_signature"],
    ["callback signature with spaces around it", () => verifyCallback(callbacks.public_key_pem, { method: "POST", body: cb.body, headers: { "X-CA-Signature": ` ${cb.signature} ` } }), "accepted"],
    ["callback signature Base64 with junk Node's decoder would skip", () => verifyCallback(callbacks.public_key_pem, { method: "POST", body: cb.body, headers: { "x-ca-signature": cb.signature.slice(0, 4) + "!!!!" + cb.signature.slice(4) } }), "bad_signature"],
    ["callback by PUT", () => verifyCallback(callbacks.public_key_pem, { method: "PUT", body: cb.body, headers: { "x-ca-signature": cb.signature } }), "method"],
    ["callback key that is not PEM", () => verifyCallback("not a key", { method: "POST", body: cb.body, headers: { "x-ca-signature": cb.signature } }), "config"],
    ["callback headers as a Fetch Headers", () => verifyCallback(callbacks.public_key_pem, { method: "POST", body: cb.body, headers: new Headers({ "x-ca-signature": cb.signature }) }), "accepted"],
    ["webhook without x-service-id", () => verifyWebhook(wh.secret, whReq({ ...wh.headers, "x-service-id": "" }), { now }), "missing_webhook_header"],
    ["webhook without x-service-signature", () => verifyWebhook(wh.secret, whReq({ ...wh.headers, "x-service-signature": " " }), { now }), "missing_webhook_header"],
    ["webhook timestamp given twice", () => verifyWebhook(wh.secret, whReq({ ...wh.headers, "x-service-timestamp": [wh.headers["x-service-timestamp"], wh.headers["x-service-timestamp"]] }), { now }), "bad_webhook_signature"],
    ["webhook timestamp not decimal", () => verifyWebhook(wh.secret, whReq({ ...wh.headers, "x-service-timestamp": "-1795000000" }), { now }), "bad_timestamp"],
    ["webhook timestamp beyond int64", () => verifyWebhook(wh.secret, whReq({ ...wh.headers, "x-service-timestamp": "99999999999999999999" }), { now }), "bad_timestamp"],
    ["webhook 301 s old", () => verifyWebhook(wh.secret, whReq(wh.headers), { now: () => now() + 301_000 }), "stale_timestamp"],
    ["webhook 301 s old within a 600 s tolerance", () => verifyWebhook(wh.secret, whReq(wh.headers), { now: () => now() + 301_000, toleranceSeconds: 600 }), "accepted"],
    ["webhook signature list given as two header values", () => verifyWebhook(wh.secret, whReq({ ...wh.headers, "x-service-signature": ["v1,AAAA", wh.headers["x-service-signature"]] }), { now }), "accepted"],
    ["webhook by DELETE", () => verifyWebhook(wh.secret, whReq(wh.headers, "DELETE"), { now }), "method"],
    ["webhook with no secret", () => verifyWebhook([], whReq(wh.headers), { now }), "config"],
    ["webhook secret without whsec_", () => verifyWebhook(wh.secret.slice("whsec_".length), whReq(wh.headers), { now }), "config"],
    ["webhook secret too short", () => verifyWebhook("whsec_" + Buffer.alloc(15).toString("base64"), whReq(wh.headers), { now }), "config"],
    ["webhook with an old and the current secret", () => verifyWebhook(["whsec_" + Buffer.alloc(32).toString("base64"), wh.secret], whReq(wh.headers), { now }), "accepted"],
  ];
  for (const [name, verify, want] of cases) {
    test(name, () => assert.equal(code(verify), want));
  }

  test("errors never contain a secret", () => {
    const bad = "whsec_c2VjcmV0IGJ1dCBub3QgQmFzZTY0!!";
    try {
      verifyWebhook(bad, whReq(wh.headers), { now });
      assert.fail("accepted a malformed secret");
    } catch (err) {
      assert.ok(err instanceof SignatureError && err.code === "config");
      assert.ok(!err.message.includes("c2VjcmV0"), err.message);
    }
  });

  test("requestUrl", () => {
    const req = (url: string, host: string, encrypted = false) => ({ url, headers: { host }, socket: { encrypted } });
    assert.equal(requestUrl(req("/ipn?a=b%20c+d", "shop.example:8080")), "http://shop.example:8080/ipn?a=b%20c+d");
    assert.equal(requestUrl(req("/ipn?x=1", "shop.example", true)), "https://shop.example/ipn?x=1");
    assert.equal(requestUrl(req("/ipn?x=1", "10.0.0.5:3000"), "https://shop.example/"), "https://shop.example/ipn?x=1");
    assert.equal(requestUrl(req("http://10.0.0.5/ipn?x=1", "10.0.0.5")), "http://10.0.0.5/ipn?x=1");
    assert.equal(requestUrl(req("http://10.0.0.5/ipn?x=1", "10.0.0.5"), "https://shop.example"), "https://shop.example/ipn?x=1");
    for (const base of ["ftp://shop.example", "https://shop.example/path", "https://user@shop.example", "https://shop.example?x", "shop.example"]) {
      assert.throws(() => requestUrl(req("/", "h"), base), (err: unknown) => err instanceof SignatureError && err.code === "config", base);
    }
  });
});

/**
 * Low-level callbacks carry x-ca-signature and the project's HMAC headers.
 * Issue 24, finding 1: with the project's secrets, verifyCallback requires
 * both, so a callback another project pointed at this URL (signed by
 * payhook, but not with this project's secret) is refused; and during a
 * key rotation the previous key is accepted while it is given.
 */
describe("verifyCallback with secrets and previous keys", () => {
  const ours = "whsec_" + Buffer.from("our project's TEST-ONLY secret..").toString("base64");
  const old = "whsec_" + Buffer.from("our rotated-away TEST-ONLY key..").toString("base64");
  const theirs = "whsec_" + Buffer.from("another project's TEST-ONLY key.").toString("base64");
  const ts = 1795000000;
  const now = () => (ts + 60) * 1000;
  const hmac = (secret: string, id: string, data: string, at = ts) =>
    "v1," + createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${id}.${at}.${data}`).digest("base64");
  const post = callbacks.vectors.find((v) => v.valid && v.method === "POST")!;
  const get = callbacks.vectors.find((v) => v.valid && v.method === "GET")!;
  const id = "6f1c2d3e-0000-4000-8000-000000000001";
  /** req is a vector's callback with the HMAC headers of secrets (none: no headers), then extra. */
  const req = (v: CallbackVector, secrets: string[], extra: Record<string, string> = {}): SignedRequest => {
    const data = v.method === "GET" ? v.url : v.body;
    const headers: Record<string, string> = { "x-ca-signature": v.signature };
    if (secrets.length > 0) {
      headers["x-service-id"] = id;
      headers["x-service-timestamp"] = String(ts);
      headers["x-service-signature"] = secrets.map((s) => hmac(s, id, data)).join(" ");
    }
    return { method: v.method, url: v.url, body: v.method === "POST" ? v.body : undefined, headers: { ...headers, ...extra } };
  };
  const code = (verify: () => unknown): string => {
    try {
      verify();
    } catch (err) {
      assert.ok(err instanceof SignatureError, `not a SignatureError: ${String(err)}`);
      return err.code;
    }
    return "accepted";
  };
  const pem = callbacks.public_key_pem;
  const { publicKey: newKey, privateKey: newPriv } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const newPem = newKey.export({ type: "spki", format: "pem" }).toString();

  for (const v of [post, get]) {
    const cases: Array<[string, () => unknown, string]> = [
      ["valid RSA and HMAC", () => verifyCallback(pem, req(v, [ours]), { secrets: ours, now }), "accepted"],
      ["valid RSA, HMAC of the new and the old secret", () => verifyCallback(pem, req(v, [ours, old]), { secrets: [ours], now }), "accepted"],
      ["receiver holding the old and the new secret", () => verifyCallback(pem, req(v, [ours]), { secrets: [old, ours], now }), "accepted"],
      ["valid RSA, HMAC of another project", () => verifyCallback(pem, req(v, [theirs]), { secrets: ours, now }), "bad_webhook_signature"],
      ["valid RSA, HMAC headers stripped", () => verifyCallback(pem, req(v, []), { secrets: ours, now }), "missing_webhook_header"],
      ["valid RSA, HMAC of another uuid", () => verifyCallback(pem, req(v, [ours], { "x-service-id": "another" }), { secrets: ours, now }), "bad_webhook_signature"],
      ["valid RSA and HMAC, an hour late", () => verifyCallback(pem, req(v, [ours]), { secrets: ours, now: () => now() + 3600_000 }), "stale_timestamp"],
      ["the same within a 2 h tolerance", () => verifyCallback(pem, req(v, [ours]), { secrets: ours, now: () => now() + 3600_000, toleranceSeconds: 7200 }), "accepted"],
      ["valid HMAC, x-ca-signature stripped", () => verifyCallback(pem, req(v, [ours], { "x-ca-signature": "" }), { secrets: ours, now }), "missing_signature"],
      ["valid HMAC, x-ca-signature by a key not pinned", () => verifyCallback(newPem, req(v, [ours]), { secrets: ours, now }), "bad_signature"],
      ["without secrets the HMAC is not looked at", () => verifyCallback(pem, req(v, [theirs])), "accepted"],
      ["secrets: [] is a configuration error", () => verifyCallback(pem, req(v, [ours]), { secrets: [], now }), "config"],
      ["secrets: '' is a configuration error", () => verifyCallback(pem, req(v, [ours]), { secrets: "", now }), "config"],
      ["previous key given: its signature is accepted", () => verifyCallback(newPem, req(v, [ours]), { secrets: ours, previousKeys: [pem], now }), "accepted"],
      ["previous key given: still the project's HMAC", () => verifyCallback(newPem, req(v, [theirs]), { secrets: ours, previousKeys: [pem], now }), "bad_webhook_signature"],
      ["previous key without secrets", () => verifyCallback(newPem, req(v, []), { previousKeys: [pem] }), "accepted"],
      ["previous key that is not a key", () => verifyCallback(pem, req(v, []), { previousKeys: ["not a key"] }), "config"],
    ];
    for (const [name, verify, want] of cases) {
      test(`${v.method}: ${name}`, () => assert.equal(code(verify), want));
    }
  }

  test("the current key's signature with a previous key given", () => {
    const body = '{"uuid":"x"}';
    const signature = rsaSign("sha256", Buffer.from(body), createPrivateKey(newPriv.export({ type: "pkcs8", format: "pem" }))).toString("base64");
    const r: SignedRequest = {
      method: "POST",
      body,
      headers: { "x-ca-signature": signature, "x-service-id": id, "x-service-timestamp": String(ts), "x-service-signature": hmac(ours, id, body) },
    };
    assert.equal(Buffer.from(verifyCallback(newPem, r, { secrets: ours, previousKeys: [pem], now })).toString(), body);
    assert.equal(code(() => verifyCallback(pem, r, { secrets: ours, now })), "bad_signature");
  });
});
