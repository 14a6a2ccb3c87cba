// The generated client against a running payhook server started with
// --dev (clients/ts/ts_test.go starts one and runs `npm test`):
// create a payment address, pay it on the devnet, follow WatchDeliveries
// until its callback is stored (and, with a reachable receiver, delivered),
// verify that callback's x-ca-signature with the server's public key, and
// read the address's logs; read the project's payout wallet and balance,
// and stream the accounting export.
//
// Environment:
//   PAYHOOK_GRPC_ADDR     host:port of the server's gRPC listener (the test
//                         skips without it)
//   PAYHOOK_CONNECT_URL   the origin serving Connect and gRPC-Web, when the
//                         server does (e.g. http://127.0.0.1:8080): the
//                         tests run over those protocols too
//   PAYHOOK_API_KEY       an API key of a project
//   PAYHOOK_CALLBACK_URL  a callback receiver the server may reach, answering
//                         {"status":"ok"}; the test then also waits for the
//                         acknowledged attempt. Without it the callback goes
//                         to a public-looking URL and only its creation is
//                         awaited.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from "@connectrpc/connect-node";
// The browser transports, on Node's fetch: what a web page's code runs.
import {
  createConnectTransport as createBrowserConnectTransport,
  createGrpcWebTransport as createBrowserGrpcWebTransport,
} from "@connectrpc/connect-web";
import {
  AddressService,
  createPayhookClient,
  verifyCallback,
  withApiKey,
  type DeliveryEvent,
  type WatchDeliveriesResponse,
} from "@payhook/client";

const addr = process.env.PAYHOOK_GRPC_ADDR ?? "";
const connectUrl = process.env.PAYHOOK_CONNECT_URL ?? "";
const apiKey = process.env.PAYHOOK_API_KEY ?? "";
const receiverUrl = process.env.PAYHOOK_CALLBACK_URL ?? "";

/** deadlineMs bounds the whole flow: no sleeps, a deadline. */
const deadlineMs = 60_000;

/** MakeTransport builds a transport, with interceptors or without. */
type MakeTransport = (interceptors: Interceptor[]) => Transport;

// The same tests run over every protocol the server is known to serve: gRPC
// (HTTP/2, the server's gRPC listener) and, once payhook serves them next to
// REST and PAYHOOK_CONNECT_URL names that origin, Connect and gRPC-Web.
const grpcSessions = addr === "" ? undefined : new Http2SessionManager(`http://${addr}`);
after(() => grpcSessions?.abort());
suite("gRPC", addr === "" ? "PAYHOOK_GRPC_ADDR is not set: run `go test ./clients/ts` to start a server" : false, (interceptors) =>
  createGrpcTransport({ baseUrl: `http://${addr}`, sessionManager: grpcSessions, interceptors }),
);
if (connectUrl !== "") {
  suite("Connect", false, (interceptors) => createConnectTransport({ baseUrl: connectUrl, httpVersion: "1.1", interceptors }));
  suite("gRPC-Web", false, (interceptors) => createGrpcWebTransport({ baseUrl: connectUrl, httpVersion: "1.1", interceptors }));
  suite("Connect (connect-web, fetch)", false, (interceptors) => createBrowserConnectTransport({ baseUrl: connectUrl, interceptors }));
  suite("gRPC-Web (connect-web, fetch)", false, (interceptors) => createBrowserGrpcWebTransport({ baseUrl: connectUrl, interceptors }));
}

function suite(protocol: string, skip: string | false, transport: MakeTransport): void {
  // The order parameter names the protocol in URL-safe characters.
  const tag = protocol.replace(/[^A-Za-z0-9]+/g, "-").replace(/-+$/, "");
  describe(`payhook API over ${protocol}`, { skip }, () => {
    const payhook = createPayhookClient(transport([withApiKey(apiKey)]));

    test("a call without an API key is refused as unauthenticated", async () => {
      const anonymous = createClient(AddressService, transport([]));
      await assert.rejects(
        anonymous.createAddress({ ticker: "btc", callback: "https://merchant.example/ipn" }),
        (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated,
      );
      // Public methods need none.
      const info = await anonymous.getInfo({ ticker: "btc" });
      assert.deepEqual(info.coins.map((c) => c.ticker), ["btc"]);
    });

    test("protovalidate rules answer invalid argument", async () => {
      await assert.rejects(
        payhook.address.createAddress({ ticker: "btc", callback: "ftp://merchant.example/ipn" }),
        (err: unknown) => ConnectError.from(err).code === Code.InvalidArgument,
      );
    });

    test("read the payout wallet and balance, export the ledger", async () => {
      const deadline = AbortSignal.timeout(deadlineMs);
      // The wallet is handed out on first use, then stays the project's.
      const { address } = await payhook.payout.getPayoutWallet({ ticker: "ltc" }, { signal: deadline });
      assert.notEqual(address, "");
      assert.equal((await payhook.payout.getPayoutWallet({ ticker: "ltc" }, { signal: deadline })).address, address);
      const { balance } = await payhook.payout.getPayoutBalance({ ticker: "ltc" }, { signal: deadline });
      assert.match(balance, /^\d+(\.\d+)?$/);

      // The export is a stream of the file's parts; the header names it.
      const day = 86_400_000;
      const from = new Date(Date.now() - day).toISOString().slice(0, 10);
      const to = new Date(Date.now() + 2 * day).toISOString().slice(0, 10);
      let disposition = "";
      const onHeader = (h: Headers) => {
        disposition = h.get("content-disposition") ?? "";
      };
      const parts: Uint8Array[] = [];
      for await (const part of payhook.export.exportLedger({ from, to, format: "csv" }, { signal: deadline, onHeader })) {
        assert.equal(part.contentType, "text/csv; charset=utf-8");
        parts.push(part.data);
      }
      assert.equal(disposition, `attachment; filename=ledger-${from}-${to}.csv`);
      const csv = Buffer.concat(parts).toString("utf8");
      assert.ok(csv.endsWith("\n"), csv);
      const [header, ...rows] = csv.slice(0, -1).split("\n");
      assert.equal(header, "entry_id,time,kind,coin,amount,fiat_value,fiat_currency,fiat_source,txid,invoice_id,payout_id,refund_id");
      for (const row of rows) {
        assert.match(row, /^\d+,[^,]+,[a-z_]+,[a-z0-9_]+,-?\d/, row);
      }
      await assert.rejects(
        async () => {
          for await (const _ of payhook.export.exportLedger({ from: to, to: from }, { signal: deadline })) {
            // a reversed range sends nothing
          }
        },
        (err: unknown) => ConnectError.from(err).code === Code.InvalidArgument,
      );
    });

    test("create an address, pay it, follow its delivery, read its logs", async () => {
      const deadline = AbortSignal.timeout(deadlineMs);
      const { pubkey } = await payhook.address.getPublicKey({}, { signal: deadline });
      assert.match(pubkey, /^-----BEGIN PUBLIC KEY-----/);

      const callback = receiverUrl !== "" ? receiverUrl : "https://merchant.example/payhook/ipn";
      const created = await payhook.address.createAddress(
        { ticker: "btc", callback, cbParams: `order=ts-${process.pid}-${tag}` },
        { signal: deadline },
      );
      assert.notEqual(created.addressIn, "");
      assert.ok(created.callbackUrl.startsWith(callback + "?"), created.callbackUrl);
      assert.ok(created.callbackUrl.endsWith(`order=ts-${process.pid}-${tag}`), created.callbackUrl);
      assert.ok(created.requiredConfirmations >= 1);

      // Watch first, then pay: the stream replays stored events after
      // cursor 0, so nothing is missed whichever comes first.
      const stop = new AbortController();
      const stream = payhook.delivery.watchDeliveries(
        { addressIn: created.addressIn, includeRequest: true },
        { signal: AbortSignal.any([deadline, stop.signal]) },
      );
      const events = stream[Symbol.asyncIterator]();

      const paid = await payhook.devnet.pay({ ticker: "btc", addressIn: created.addressIn, valueCoin: "0.0015" }, { signal: deadline });
      assert.notEqual(paid.txidIn, "");
      const mined = await payhook.devnet.mine({ ticker: "btc", blocks: 1 }, { signal: deadline });
      assert.ok(mined.height > 0);

      let first: DeliveryEvent | undefined;
      let acknowledged: DeliveryEvent | undefined;
      const seen: string[] = [];
      try {
        while (first === undefined || (receiverUrl !== "" && acknowledged === undefined)) {
          const next: IteratorResult<WatchDeliveriesResponse> = await events.next();
          assert.ok(!next.done, `the stream ended after ${JSON.stringify(seen)}`);
          const ev = next.value.event;
          assert.ok(ev !== undefined);
          seen.push(`${ev.kind}/${ev.paymentStatus}/${ev.outcome}`);
          assert.equal(ev.addressIn, created.addressIn, "the filter let another address through");
          assert.equal(ev.ticker, "btc");
          if (ev.kind === "created" && first === undefined) {
            first = ev;
          }
          if (first !== undefined && ev.uuid === first.uuid && ev.kind === "attempt" && ev.outcome === "acknowledged") {
            acknowledged = ev;
          }
        }
      } finally {
        stop.abort();
        await events.return?.();
      }
      assert.ok(first !== undefined);
      assert.ok(first.cursor > 0n);
      assert.ok(["pending", "confirmed"].includes(first.paymentStatus), first.paymentStatus);

      // The stored request is what the merchant receives: its signature
      // verifies with the server's key, over the full URL of a GET.
      const req = first.request;
      assert.ok(req !== undefined, "include_request did not include the request");
      assert.equal(req.method, "GET");
      assert.ok(req.url.startsWith(created.callbackUrl + "&"), req.url);
      const signed = verifyCallback(pubkey, { method: req.method, url: req.url, body: req.body, headers: req.headers });
      assert.equal(Buffer.from(signed).toString("utf8"), req.url);
      const query = new URL(req.url).searchParams;
      assert.equal(query.get("txid_in"), paid.txidIn);
      assert.equal(query.get("address_in"), created.addressIn);
      assert.equal(query.get("uuid"), first.uuid);
      // A tampered URL does not verify.
      assert.throws(() => verifyCallback(pubkey, { method: "GET", url: req.url.replace("value_coin=", "value_coin=1"), headers: req.headers }));

      const logs = await payhook.address.getLogs({ ticker: "btc", callback: created.callbackUrl }, { signal: deadline });
      assert.equal(logs.addressIn, created.addressIn);
      assert.equal(logs.callbackUrl, created.callbackUrl);
      const payment = logs.callbacks.find((c) => c.txidIn === paid.txidIn);
      assert.ok(payment !== undefined, `the logs lack ${paid.txidIn}`);
      assert.equal(Number(payment.valueCoin), 0.0015);
      assert.ok(payment.lastUpdate !== undefined);
      const delivery = payment.deliveries.find((d) => d.uuid === first.uuid);
      assert.ok(delivery !== undefined, `the logs lack notification ${first.uuid}`);
      if (acknowledged !== undefined) {
        assert.equal(acknowledged.httpStatus, 200);
        const attempt = payment.logs.find((l) => l.uuid === first.uuid && l.outcome === "acknowledged");
        assert.ok(attempt !== undefined, `the logs lack the acknowledged attempt: ${JSON.stringify(payment.logs.map((l) => l.outcome))}`);
        assert.equal(attempt.requestMethod, "GET");
        assert.equal(attempt.responseStatus, 200);
        assert.equal(delivery.status, "acknowledged");
      }
    });
  });
}
