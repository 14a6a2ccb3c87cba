"""The webhook verifiers against every vector of receiver/testdata (the
same files payhook's Go receiver and the standardwebhooks npm package are
checked against), plus the refusals the vectors do not spell out."""

import base64
import hashlib
import hmac
import unittest

import support  # noqa: F401  (sys.path)

from payhook import webhooks


class CallbackVectorsTest(unittest.TestCase):
    """receiver/testdata/vectors.json: RSA x-ca-signature."""

    @classmethod
    def setUpClass(cls):
        cls.file = support.vectors("vectors.json")
        cls.key = webhooks.load_public_key(cls.file["public_key_pem"])

    def test_every_vector(self):
        vs = self.file["vectors"]
        self.assertGreaterEqual(len(vs), 10)
        self.assertEqual(self.file["header"], webhooks.SIGNATURE_HEADER)
        for v in vs:
            with self.subTest(v["description"]):
                sig = v["signature"] or None
                args = dict(method=v["method"], url=v["url"], body=v["body"].encode("utf-8"))
                if v["valid"]:
                    data = webhooks.verify_callback(self.key, sig, **args)
                    want = v["url"] if v["method"] == "GET" else v["body"]
                    self.assertEqual(data, want.encode("utf-8"))
                    # The PEM string works as well as a parsed key.
                    webhooks.verify_callback(self.file["public_key_pem"], sig, **args)
                else:
                    with self.assertRaises(webhooks.VerificationError):
                        webhooks.verify_callback(self.key, sig, **args)

    def test_refusals(self):
        v = next(v for v in self.file["vectors"] if v["valid"] and v["method"] == "POST")
        args = dict(method="POST", url=v["url"], body=v["body"])
        with self.assertRaises(webhooks.MissingSignature):
            webhooks.verify_callback(self.key, None, **args)
        with self.assertRaises(webhooks.MissingSignature):
            webhooks.verify_callback(self.key, "  ", **args)
        with self.assertRaises(webhooks.InvalidSignature):
            webhooks.verify_callback(self.key, "not*base64!", **args)
        with self.assertRaises(webhooks.MethodNotSigned):
            webhooks.verify_callback(self.key, v["signature"], method="PUT", url=v["url"], body=v["body"])
        # The signature of a POST covers the body, not the URL.
        with self.assertRaises(webhooks.InvalidSignature):
            webhooks.verify_callback(self.key, v["signature"], method="GET", url=v["url"])
        with self.assertRaises(webhooks.ConfigError):
            webhooks.load_public_key("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")


def _sign(secret, msg_id, ts, data):
    key = base64.b64decode(secret[len("whsec_"):])
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + data.encode("utf-8"), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


class WebhookVectorsTest(unittest.TestCase):
    """receiver/testdata/webhook_vectors.json: merchant HMAC (Standard
    Webhooks under x-service-* names)."""

    @classmethod
    def setUpClass(cls):
        cls.file = support.vectors("webhook_vectors.json")

    def verify(self, v, **kw):
        h = v["headers"]
        args = dict(
            webhook_id=h.get("x-service-id"),
            timestamp=h.get("x-service-timestamp"),
            signature=h.get("x-service-signature"),
            method=v["method"],
            url=v["url"],
            body=v["signed_data"] if v["method"] == "POST" else b"",
            now=lambda: v["verify_at"],
        )
        args.update(kw)
        return webhooks.verify_webhook([v["secret"]], **args)

    def test_every_vector(self):
        vs = self.file["vectors"]
        self.assertGreaterEqual(len(vs), 15)
        self.assertEqual(self.file["tolerance_seconds"], webhooks.DEFAULT_TOLERANCE)
        for v in vs:
            with self.subTest(v["description"]):
                body = v["signed_data"] if v["method"] == "POST" else ""
                self.assertEqual(webhooks.signed_data(v["method"], v["url"], body), v["signed_data"].encode("utf-8"))
                h = v["headers"]
                if v["valid"] and "unknown version" not in v["description"]:
                    # The header holds the signature computed from the definition.
                    self.assertIn(_sign(v["secret"], h["x-service-id"], h["x-service-timestamp"], v["signed_data"]),
                                  h["x-service-signature"].split())
                if v["valid"]:
                    self.assertEqual(self.verify(v), v["signed_data"].encode("utf-8"))
                else:
                    with self.assertRaises(webhooks.VerificationError):
                        self.verify(v)

    def test_several_secrets(self):
        v = self.file["vectors"][0]
        other = "whsec_" + base64.b64encode(b"some other secret of 32 bytes...").decode()
        self.assertTrue(self.verify(v))
        webhooks.verify_webhook([other, v["secret"]], webhook_id=v["headers"]["x-service-id"],
                                timestamp=v["headers"]["x-service-timestamp"],
                                signature=v["headers"]["x-service-signature"], method=v["method"], url=v["url"],
                                body=v["signed_data"], now=lambda: v["verify_at"])
        with self.assertRaises(webhooks.InvalidSignature):
            webhooks.verify_webhook(other, webhook_id=v["headers"]["x-service-id"],
                                    timestamp=v["headers"]["x-service-timestamp"],
                                    signature=v["headers"]["x-service-signature"], method=v["method"], url=v["url"],
                                    body=v["signed_data"], now=lambda: v["verify_at"])

    def test_tolerance(self):
        v = self.file["vectors"][0]
        late = lambda: v["verify_at"] + 3600  # noqa: E731
        with self.assertRaises(webhooks.StaleTimestamp):
            self.verify(v, now=late)
        self.assertTrue(self.verify(v, now=late, tolerance=3600))
        with self.assertRaises(webhooks.StaleTimestamp):
            self.verify(v, now=lambda: v["verify_at"] - 3601, tolerance=3600)

    def test_refusals(self):
        v = self.file["vectors"][0]
        for field, exc in (("webhook_id", webhooks.MissingSignature), ("timestamp", webhooks.MissingSignature),
                           ("signature", webhooks.MissingSignature)):
            with self.subTest(field):
                with self.assertRaises(exc):
                    self.verify(v, **{field: None})
        for ts in ("-1795000000", "1795000000.5", "1e9", "१२३"):
            with self.subTest(ts):
                with self.assertRaises(webhooks.InvalidTimestamp):
                    self.verify(v, timestamp=ts)
        with self.assertRaises(webhooks.MethodNotSigned):
            self.verify(v, method="DELETE")

    def test_bad_secrets(self):
        v = self.file["vectors"][0]
        short = "whsec_" + base64.b64encode(b"short").decode()
        for secrets in ([], [""], ["sk_abc"], ["whsec_not base64!"], [short]):
            with self.subTest(secrets=secrets):
                with self.assertRaises(webhooks.ConfigError) as cm:
                    webhooks.verify_webhook(secrets, webhook_id="x", timestamp="1", signature="v1,x", method="POST",
                                            url="https://x/", body=b"")
                for s in secrets:
                    if s:
                        self.assertNotIn(s, str(cm.exception))


if __name__ == "__main__":
    unittest.main()
