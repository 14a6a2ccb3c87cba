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


class CallbackWithSecretsTest(unittest.TestCase):
    """Low-level callbacks carry x-ca-signature and the project's HMAC
    headers. Issue 24, finding 1: given the project's secrets,
    verify_callback requires both, so a callback another project pointed at
    this URL (signed by payhook, not with this project's secret) is refused;
    during a key rotation the previous key is accepted while it is given."""

    OURS = "whsec_" + base64.b64encode(b"our project's TEST-ONLY secret..").decode()
    OLD = "whsec_" + base64.b64encode(b"our rotated-away TEST-ONLY key..").decode()
    THEIRS = "whsec_" + base64.b64encode(b"another project's TEST-ONLY key.").decode()
    ID = "6f1c2d3e-0000-4000-8000-000000000001"
    TS = 1795000000

    @classmethod
    def setUpClass(cls):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        cls.file = support.vectors("vectors.json")
        cls.pem = cls.file["public_key_pem"]
        cls.new_priv = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        cls.new_pem = cls.new_priv.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        cls.post = next(v for v in cls.file["vectors"] if v["valid"] and v["method"] == "POST")
        cls.get = next(v for v in cls.file["vectors"] if v["valid"] and v["method"] == "GET")

    def call(self, v, hmac_secrets, key=None, **kw):
        """call verifies vector v carrying the HMAC of hmac_secrets (none:
        no HMAC headers) at a clock a minute after the attempt."""
        data = v["url"] if v["method"] == "GET" else v["body"]
        args = dict(method=v["method"], url=v["url"], body=v["body"] if v["method"] == "POST" else None,
                    now=lambda: self.TS + 60)
        if hmac_secrets:
            args.update(webhook_id=self.ID, timestamp=str(self.TS),
                        webhook_signature=" ".join(_sign(s, self.ID, self.TS, data) for s in hmac_secrets))
        args.update(kw)
        signature = args.pop("signature", v["signature"])
        return webhooks.verify_callback(key or self.pem, signature, **args)

    def test_cases(self):
        ok = None
        cases = [
            ("valid RSA and HMAC", [self.OURS], dict(secrets=self.OURS), ok),
            ("valid RSA, HMAC of the new and the old secret", [self.OURS, self.OLD], dict(secrets=[self.OURS]), ok),
            ("receiver holding the old and the new secret", [self.OURS], dict(secrets=[self.OLD, self.OURS]), ok),
            ("valid RSA, HMAC of another project", [self.THEIRS], dict(secrets=self.OURS), webhooks.InvalidSignature),
            ("valid RSA, HMAC headers stripped", [], dict(secrets=self.OURS), webhooks.MissingSignature),
            ("valid RSA, HMAC of another uuid", [self.OURS], dict(secrets=self.OURS, webhook_id="another"),
             webhooks.InvalidSignature),
            ("valid RSA and HMAC, an hour late", [self.OURS], dict(secrets=self.OURS, now=lambda: self.TS + 3600),
             webhooks.StaleTimestamp),
            ("the same within a 2 h tolerance", [self.OURS],
             dict(secrets=self.OURS, now=lambda: self.TS + 3600, tolerance=7200), ok),
            ("valid HMAC, x-ca-signature stripped", [self.OURS], dict(secrets=self.OURS, signature=None),
             webhooks.MissingSignature),
            ("valid HMAC, x-ca-signature by a key not pinned", [self.OURS], dict(secrets=self.OURS, key="new"),
             webhooks.InvalidSignature),
            ("without secrets the HMAC is not looked at", [self.THEIRS], {}, ok),
            ("secrets=[] is a configuration error", [self.OURS], dict(secrets=[]), webhooks.ConfigError),
            ("secrets='' is a configuration error", [self.OURS], dict(secrets=""), webhooks.ConfigError),
            ("previous key given: its signature is accepted", [self.OURS],
             dict(secrets=self.OURS, key="new", previous_keys=[self.pem]), ok),
            ("previous key given as one PEM", [self.OURS], dict(secrets=self.OURS, key="new", previous_keys=self.pem), ok),
            ("previous key given: still the project's HMAC", [self.THEIRS],
             dict(secrets=self.OURS, key="new", previous_keys=[self.pem]), webhooks.InvalidSignature),
            ("previous key without secrets", [], dict(key="new", previous_keys=[self.pem]), ok),
            ("previous key that is not a key", [], dict(previous_keys=["not a key"]), webhooks.ConfigError),
        ]
        for v in (self.post, self.get):
            for name, hmac_secrets, kw, want in cases:
                with self.subTest(f"{v['method']}: {name}"):
                    kw = dict(kw)
                    key = self.new_pem if kw.pop("key", None) == "new" else None
                    if want is None:
                        want_data = v["url"] if v["method"] == "GET" else v["body"]
                        self.assertEqual(self.call(v, hmac_secrets, key, **kw), want_data.encode("utf-8"))
                    else:
                        with self.assertRaises(want):
                            self.call(v, hmac_secrets, key, **kw)

    def test_current_key_with_previous_given(self):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        body = b'{"uuid":"x"}'
        sig = base64.b64encode(self.new_priv.sign(body, padding.PKCS1v15(), hashes.SHA256())).decode()
        args = dict(method="POST", url="https://shop.example/ipn", body=body, secrets=self.OURS,
                    webhook_id=self.ID, timestamp=str(self.TS),
                    webhook_signature=_sign(self.OURS, self.ID, self.TS, body.decode()), now=lambda: self.TS)
        self.assertEqual(webhooks.verify_callback(self.new_pem, sig, previous_keys=[self.pem], **args), body)
        with self.assertRaises(webhooks.InvalidSignature):
            webhooks.verify_callback(self.pem, sig, **args)


if __name__ == "__main__":
    unittest.main()
