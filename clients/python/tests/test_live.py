"""The client against a running --dev payhook server: create an address, pay
and mine on the devnet, follow WatchDeliveries until the callback's events
arrive, verify the callback's signature, and read it back in the logs; read
the project's payout wallet and balance, and stream the accounting export.

clients/python/python_test.go starts the server and sets
PAYHOOK_GRPC_ADDR (host:port of its gRPC API), PAYHOOK_API_KEY (a project's
key) and PAYHOOK_CALLBACK_URL (a receiver the server may deliver to, which
acknowledges). Without PAYHOOK_GRPC_ADDR the test is skipped.
"""

import csv
import datetime
import io
import json
import os
import time
import unittest
import uuid

import support  # noqa: F401  (sys.path)

import grpc

import payhook
from payhook import webhooks
from payhook.v1 import address_pb2, delivery_pb2, devnet_pb2, export_pb2, payout_pb2

#: DEADLINE bounds the whole flow, in seconds; every call's timeout is what
#: is left of it.
DEADLINE = 60.0


@unittest.skipUnless(os.environ.get("PAYHOOK_GRPC_ADDR"), "PAYHOOK_GRPC_ADDR is not set (run by clients/python/python_test.go)")
class LiveTest(unittest.TestCase):
    def setUp(self):
        self.target = os.environ["PAYHOOK_GRPC_ADDR"]
        self.key = os.environ["PAYHOOK_API_KEY"]
        self.callback = os.environ.get("PAYHOOK_CALLBACK_URL", "https://merchant.example/ipn")
        self.end = time.monotonic() + DEADLINE
        self.client = payhook.Client(self.target, self.key)
        self.addCleanup(self.client.close)

    def left(self):
        """left is the time left before the deadline, for a call's timeout."""
        return max(0.1, self.end - time.monotonic())

    def test_key_is_sent_on_every_call(self):
        req = address_pb2.CreateAddressRequest(ticker="btc", callback=self.callback)
        with payhook.Client(self.target, None) as anonymous:
            with self.assertRaises(grpc.RpcError) as cm:
                anonymous.address.CreateAddress(req, timeout=self.left())
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
            # Public methods need no key.
            self.assertTrue(anonymous.address.GetPublicKey(address_pb2.GetPublicKeyRequest(), timeout=self.left()).pubkey)
        with payhook.Client(self.target, "not-a-key") as wrong:
            with self.assertRaises(grpc.RpcError) as cm:
                wrong.address.CreateAddress(req, timeout=self.left())
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
            # A per-call key wins over the client's.
            wrong.address.CreateAddress(req, timeout=self.left(), metadata=(("apikey", self.key),))

    def test_pay_watch_and_read_logs(self):
        c = self.client
        pubkey = webhooks.load_public_key(c.address.GetPublicKey(address_pb2.GetPublicKeyRequest(), timeout=self.left()).pubkey)

        # 1. A payment address; the callback URL identifies it, so it is new.
        order = uuid.uuid4().hex
        created = c.address.CreateAddress(
            address_pb2.CreateAddressRequest(
                ticker="btc", callback=f"{self.callback}?order={order}", confirmations=1, json=True
            ),
            timeout=self.left(),
        )
        self.assertTrue(created.address_in)
        self.assertIn(f"order={order}", created.callback_url)
        self.assertEqual(created.required_confirmations, 1)

        # 2. Watch that address's deliveries. The stream sends the stored
        # events first, then live ones, so nothing between the call and the
        # payment is missed; the call's timeout is the test's deadline.
        stream = c.delivery.WatchDeliveries(
            delivery_pb2.WatchDeliveriesRequest(address_in=created.address_in, include_request=True),
            timeout=self.left(),
        )
        self.addCleanup(stream.cancel)

        # 3. Pay and mine on the devnet.
        paid = c.devnet.Pay(
            devnet_pb2.PayRequest(ticker="btc", address_in=created.address_in, value_coin="0.0015"),
            timeout=self.left(),
        )
        self.assertTrue(paid.txid_in)
        mined = c.devnet.Mine(devnet_pb2.MineRequest(ticker="btc", blocks=1), timeout=self.left())
        self.assertGreater(mined.height, 0)

        # 4. The callback is stored (created, with its exact request), then
        # delivered and acknowledged by the receiver (attempt).
        created_event, acked = None, None
        try:
            for resp in stream:
                ev = resp.event
                self.assertEqual(ev.address_in, created.address_in)
                self.assertEqual(ev.ticker, "btc")
                if ev.kind == "created" and created_event is None:
                    created_event = ev
                elif ev.kind == "attempt" and created_event is not None and ev.uuid == created_event.uuid:
                    self.assertEqual(ev.outcome, "acknowledged", ev)
                    acked = ev
                    break
        except grpc.RpcError as e:
            self.fail(f"WatchDeliveries ended before the callback was acknowledged: {e.code()} {e.details()}; created event: {created_event}")
        self.assertIsNotNone(acked)
        self.assertEqual(acked.delivery_status, "acknowledged")
        self.assertEqual(acked.http_status, 200)
        self.assertGreater(acked.cursor, created_event.cursor)

        # The event carries the callback exactly as sent: verify its RSA
        # signature as a merchant's receiver would.
        rq = created_event.request
        self.assertEqual(rq.method, "POST")
        self.assertTrue(rq.url.startswith(self.callback))
        body = webhooks.verify_callback(pubkey, rq.headers[webhooks.SIGNATURE_HEADER], method=rq.method, url=rq.url, body=rq.body)
        fields = json.loads(body)
        self.assertEqual(fields["address_in"], created.address_in)
        self.assertEqual(fields["txid_in"], paid.txid_in)
        self.assertEqual(fields["uuid"], created_event.uuid)
        self.assertEqual(fields["order"], order)
        self.assertEqual(fields["payment_status"], created_event.payment_status)
        with self.assertRaises(webhooks.InvalidSignature):
            webhooks.verify_callback(pubkey, rq.headers[webhooks.SIGNATURE_HEADER], method="POST", url=rq.url,
                                     body=rq.body.replace(b"0.0015", b"1.5"))

        # 5. The logs show the payment and the acknowledged attempt.
        logs = c.address.GetLogs(address_pb2.GetLogsRequest(ticker="btc", callback=created.callback_url), timeout=self.left())
        self.assertEqual(logs.address_in, created.address_in)
        self.assertEqual(logs.notify_confirmations, 1)
        self.assertEqual(len(logs.callbacks), 1, logs)
        cb = logs.callbacks[0]
        self.assertEqual(cb.txid_in, paid.txid_in)
        self.assertEqual(cb.value_coin, "0.0015")
        self.assertIn(cb.payment_status, ("confirmed", "completed"))
        attempts = [a for a in cb.logs if a.uuid == created_event.uuid]
        self.assertTrue(attempts, cb)
        self.assertEqual(attempts[0].outcome, "acknowledged")
        self.assertEqual(attempts[0].response_status, 200)
        self.assertEqual(attempts[0].request_method, "POST")
        self.assertIn(created_event.uuid, [d.uuid for d in cb.deliveries])

    def test_payout_wallet_and_export(self):
        c = self.client
        # The wallet is handed out on first use, then stays the project's.
        wallet = c.payout.GetPayoutWallet(payout_pb2.GetPayoutWalletRequest(ticker="ltc"), timeout=self.left())
        self.assertTrue(wallet.address)
        again = c.payout.GetPayoutWallet(payout_pb2.GetPayoutWalletRequest(ticker="ltc"), timeout=self.left())
        self.assertEqual(again.address, wallet.address)
        balance = c.payout.GetPayoutBalance(payout_pb2.GetPayoutBalanceRequest(ticker="ltc"), timeout=self.left())
        self.assertRegex(balance.balance, r"^\d+(\.\d+)?$")

        # The export is a stream of the file's parts; the header metadata
        # names the file.
        today = datetime.datetime.now(datetime.timezone.utc).date()
        start, end = (today - datetime.timedelta(days=1)).isoformat(), (today + datetime.timedelta(days=2)).isoformat()
        req = export_pb2.ExportLedgerRequest(to=end, format="csv", **{"from": start})  # from is a keyword
        stream = c.export.ExportLedger(req, timeout=self.left())
        self.addCleanup(stream.cancel)
        parts = []
        for part in stream:
            self.assertEqual(part.content_type, "text/csv; charset=utf-8")
            parts.append(part.data)
        headers = dict(stream.initial_metadata())
        self.assertEqual(headers.get("content-disposition"), f"attachment; filename=ledger-{start}-{end}.csv")
        rows = list(csv.reader(io.StringIO(b"".join(parts).decode("utf-8"))))
        self.assertEqual(rows[0], ["entry_id", "time", "kind", "coin", "amount", "fiat_value", "fiat_currency",
                                   "fiat_source", "txid", "invoice_id", "payout_id", "refund_id"])
        for row in rows[1:]:
            self.assertEqual(len(row), 12, row)

        # A reversed range is refused before anything is sent.
        with self.assertRaises(grpc.RpcError) as cm:
            list(c.export.ExportLedger(export_pb2.ExportLedgerRequest(to=start, **{"from": end}), timeout=self.left()))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)


if __name__ == "__main__":
    unittest.main()
