"""Verifies what payhook sends to a merchant's server.

Two signatures, the same rules as payhook's Go package receiver (and its
cross-language vectors, receiver/testdata):

* ``verify_callback``: low-level callbacks carry ``x-ca-signature``, the
  standard Base64 of an RSASSA-PKCS1-v1_5 / SHA-256 signature by the
  project's key (``GetPublicKey``, ``GET /pubkey/``, called with the
  project's API key), and the project's HMAC headers of ``verify_webhook``:
  given the project's ``secrets`` it checks both. It needs the
  ``cryptography`` package (Debian: python3-cryptography), imported only when
  a callback is verified.
* ``verify_webhook``: merchant webhooks carry ``x-service-id``,
  ``x-service-timestamp`` and ``x-service-signature`` (the Standard Webhooks
  construction: HMAC-SHA256 under the project's ``whsec_`` secret). Standard
  library only.

What is signed is the data as received, never a re-encoding: for a POST the
raw request body (verify before parsing it), for a GET the full URL exactly
as requested, ``scheme://host[:port]`` followed by the request target as it
arrived (not a decoded and re-quoted path). Behind a TLS-terminating proxy
the scheme and host are the public ones payhook used, not the proxy's.

Every failure raises a subclass of ``VerificationError``; messages never
contain a secret.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import Callable, Iterable, Optional, Union

__all__ = [
    "SIGNATURE_HEADER",
    "WEBHOOK_ID_HEADER",
    "WEBHOOK_TIMESTAMP_HEADER",
    "WEBHOOK_SIGNATURE_HEADER",
    "WEBHOOK_EVENT_HEADER",
    "DEFAULT_TOLERANCE",
    "MIN_KEY_BITS",
    "MIN_WEBHOOK_SECRET_BYTES",
    "VerificationError",
    "ConfigError",
    "MissingSignature",
    "InvalidSignature",
    "InvalidTimestamp",
    "StaleTimestamp",
    "MethodNotSigned",
    "signed_data",
    "load_public_key",
    "verify_callback",
    "verify_webhook",
]

#: SIGNATURE_HEADER carries a low-level callback's RSA signature.
SIGNATURE_HEADER = "x-ca-signature"
#: WEBHOOK_ID_HEADER carries the notification's uuid, the same at every attempt.
WEBHOOK_ID_HEADER = "x-service-id"
#: WEBHOOK_TIMESTAMP_HEADER carries the attempt's Unix time in seconds.
WEBHOOK_TIMESTAMP_HEADER = "x-service-timestamp"
#: WEBHOOK_SIGNATURE_HEADER carries space-separated "v1,<Base64>" signatures.
WEBHOOK_SIGNATURE_HEADER = "x-service-signature"
#: WEBHOOK_EVENT_HEADER carries the event type; it is not signed.
WEBHOOK_EVENT_HEADER = "x-service-event"
#: DEFAULT_TOLERANCE is how far, in seconds, a webhook timestamp may be from
#: the receiver's clock, either way.
DEFAULT_TOLERANCE = 300
#: MIN_KEY_BITS is the smallest RSA key accepted.
MIN_KEY_BITS = 2048
#: WEBHOOK_SECRET_PREFIX starts every webhook secret.
WEBHOOK_SECRET_PREFIX = "whsec_"
#: MIN_WEBHOOK_SECRET_BYTES is the shortest HMAC key a secret may hold.
MIN_WEBHOOK_SECRET_BYTES = 16

Bytes = Union[bytes, bytearray, memoryview, str]


class VerificationError(Exception):
    """VerificationError is the base of every refusal: answer the request
    with an error status (payhook retries it)."""


class ConfigError(VerificationError):
    """ConfigError is a receiver misconfiguration: a bad public key or
    secret. The message describes its shape, never its content."""


class MissingSignature(VerificationError):
    """MissingSignature: a signature header (or the webhook id) is absent."""


class InvalidSignature(VerificationError):
    """InvalidSignature: no signature matches the signed data."""


class InvalidTimestamp(VerificationError):
    """InvalidTimestamp: x-service-timestamp is not Unix seconds."""


class StaleTimestamp(VerificationError):
    """StaleTimestamp: x-service-timestamp is outside the tolerance (a stale
    or replayed webhook, or a skewed clock)."""


class MethodNotSigned(VerificationError):
    """MethodNotSigned: payhook sends only GET and POST."""


def _bytes(b: Optional[Bytes]) -> bytes:
    if b is None:
        return b""
    if isinstance(b, str):
        return b.encode("utf-8")
    return bytes(b)


def signed_data(method: str, url: str, body: Optional[Bytes] = None) -> bytes:
    """signed_data returns what a request's signature covers: the full URL
    for GET, the raw body for POST."""
    m = (method or "GET").upper()
    if m == "GET":
        return url.encode("utf-8")
    if m == "POST":
        return _bytes(body)
    raise MethodNotSigned(f"method {method} is not signed: payhook sends GET and POST")


def load_public_key(pem: Bytes):
    """load_public_key parses the callback signing key: a PEM "PUBLIC KEY"
    block (the pubkey of GetPublicKey) or a PKCS#1 "RSA PUBLIC KEY" block,
    RSA of at least MIN_KEY_BITS. It returns a cryptography RSAPublicKey."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        key = serialization.load_pem_public_key(_bytes(pem))
    except (ValueError, TypeError) as e:
        raise ConfigError(f"public key: not a PEM public key ({e.__class__.__name__})") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise ConfigError(f"public key: {type(key).__name__} is not an RSA key")
    if key.key_size < MIN_KEY_BITS:
        raise ConfigError(f"public key: {key.key_size}-bit key, at least {MIN_KEY_BITS} bits required")
    return key


def verify_callback(
    public_key,
    signature: Optional[str],
    *,
    method: str,
    url: str,
    body: Optional[Bytes] = None,
    secrets: Union[str, Iterable[str], None] = None,
    webhook_id: Optional[str] = None,
    timestamp: Optional[str] = None,
    webhook_signature: Optional[str] = None,
    previous_keys: Iterable = (),
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[Callable[[], float]] = None,
) -> bytes:
    """verify_callback checks a low-level callback's x-ca-signature and,
    given secrets, the project's HMAC headers as well, and returns the data
    they cover (the URL of a GET, the raw body of a POST).

    public_key is the PEM of GetPublicKey (str or bytes) or a key from
    load_public_key (parse it once and reuse it); previous_keys are keys
    also accepted, the previous_pubkey of GET /pubkey/ during a rotation of
    the project's callback key, until its previous_until. signature is the
    x-ca-signature value (None when absent). url is the full URL as
    requested; body the raw body of a POST.

    secrets are the project's IPN secrets ("whsec_...", the new and the old
    one during a rotation); give them whenever you hold them. The callback
    must then also carry the project's HMAC, checked as verify_webhook
    checks it: webhook_id, timestamp and webhook_signature are the values of
    x-service-id, x-service-timestamp and x-service-signature, and the
    timestamp must be within tolerance seconds of now(). The RSA signature
    says payhook sent the callback, the HMAC that it was sent for your
    project. An empty list, or an empty or malformed secret, raises
    ConfigError rather than checking less; None checks x-ca-signature only.
    """
    from cryptography.exceptions import InvalidSignature as _CryptoInvalid
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    if isinstance(previous_keys, (str, bytes, bytearray, memoryview)):
        previous_keys = [previous_keys]  # one PEM, not its characters
    keys = [load_public_key(k) if isinstance(k, (str, bytes, bytearray, memoryview)) else k
            for k in [public_key, *previous_keys]]
    hmac_keys = None if secrets is None else _webhook_keys(secrets)
    if signature is None or signature.strip() == "":
        raise MissingSignature(f"{SIGNATURE_HEADER} is missing")
    try:
        sig = base64.b64decode(signature.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSignature(f"{SIGNATURE_HEADER} is not standard Base64") from None
    if hmac_keys is not None:
        wh_id, ts, wh_sig = _webhook_headers(webhook_id, timestamp, webhook_signature, tolerance, now)
    data = signed_data(method, url, body)
    what = "body" if method.upper() == "POST" else "URL"
    for key in keys:
        try:
            key.verify(sig, data, padding.PKCS1v15(), hashes.SHA256())
            break
        except _CryptoInvalid:
            continue
    else:
        raise InvalidSignature(f"{SIGNATURE_HEADER} does not match the {what}")
    if hmac_keys is not None and not _webhook_matches(hmac_keys, wh_id, ts, data, wh_sig):
        raise InvalidSignature(f"no v1 signature of {WEBHOOK_SIGNATURE_HEADER} matches the {what}")
    return data


def _webhook_key(i: int, secret: str) -> bytes:
    if not secret:
        raise ConfigError(f"webhook secret {i}: empty")
    if not secret.startswith(WEBHOOK_SECRET_PREFIX):
        raise ConfigError(f"webhook secret {i}: does not start with {WEBHOOK_SECRET_PREFIX!r}")
    try:
        key = base64.b64decode(secret[len(WEBHOOK_SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"webhook secret {i}: not standard Base64 after {WEBHOOK_SECRET_PREFIX!r}") from None
    if len(key) < MIN_WEBHOOK_SECRET_BYTES:
        raise ConfigError(
            f"webhook secret {i}: holds {len(key)} bytes, at least {MIN_WEBHOOK_SECRET_BYTES} required"
        )
    return key


def _timestamp(value: str) -> int:
    # Digits only, as payhook sends them: no sign, no space, no fraction.
    if not value.isascii() or not value.isdigit():
        raise InvalidTimestamp(f"{WEBHOOK_TIMESTAMP_HEADER} is not a Unix time in decimal seconds")
    ts = int(value)
    if ts >= 1 << 63:
        raise InvalidTimestamp(f"{WEBHOOK_TIMESTAMP_HEADER} is out of range")
    return ts


def verify_webhook(
    secrets: Union[str, Iterable[str]],
    *,
    webhook_id: Optional[str],
    timestamp: Optional[str],
    signature: Optional[str],
    method: str,
    url: str,
    body: Optional[Bytes] = None,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[Callable[[], float]] = None,
) -> bytes:
    """verify_webhook checks a merchant webhook and returns the data its
    signature covers (the URL of a GET, the raw body of a POST).

    secrets is the project's secret ("whsec_...") or several: during a
    rotation hold the new and the old one, then drop the old one. webhook_id,
    timestamp and signature are the values of x-service-id,
    x-service-timestamp and x-service-signature (None when absent). The
    timestamp must be within tolerance seconds of now() (time.time by
    default), in the past or the future; one v1 entry of the signature must
    be HMAC-SHA256(key, id + "." + timestamp + "." + data) under one of the
    secrets (compared in constant time). Deduplicate on webhook_id: it is the
    same at every attempt.
    """
    keys = _webhook_keys(secrets)
    webhook_id, ts, signature = _webhook_headers(webhook_id, timestamp, signature, tolerance, now)
    data = signed_data(method, url, body)
    if _webhook_matches(keys, webhook_id, ts, data, signature):
        return data
    what = "body" if method.upper() == "POST" else "URL"
    raise InvalidSignature(f"no v1 signature of {WEBHOOK_SIGNATURE_HEADER} matches the {what}")


def _webhook_keys(secrets: Union[str, Iterable[str]]) -> list:
    if isinstance(secrets, str):
        secrets = [secrets]
    keys = [_webhook_key(i, s) for i, s in enumerate(secrets, 1)]
    if not keys:
        raise ConfigError("no webhook secret")
    return keys


def _webhook_headers(webhook_id, timestamp, signature, tolerance, now):
    """_webhook_headers checks that the three header values are present and
    the timestamp within tolerance of now(); it returns id, time, signature."""
    webhook_id = (webhook_id or "").strip()
    timestamp = (timestamp or "").strip()
    if not webhook_id:
        raise MissingSignature(f"{WEBHOOK_ID_HEADER} is missing")
    if not timestamp:
        raise MissingSignature(f"{WEBHOOK_TIMESTAMP_HEADER} is missing")
    if signature is None or signature.strip() == "":
        raise MissingSignature(f"{WEBHOOK_SIGNATURE_HEADER} is missing")
    ts = _timestamp(timestamp)
    if tolerance <= 0:
        tolerance = DEFAULT_TOLERANCE
    age = (now or time.time)() - ts
    if age > tolerance:
        raise StaleTimestamp(f"{WEBHOOK_TIMESTAMP_HEADER} is {int(age)} s old, tolerance {tolerance:g} s")
    if age < -tolerance:
        raise StaleTimestamp(f"{WEBHOOK_TIMESTAMP_HEADER} is {int(-age)} s in the future, tolerance {tolerance:g} s")
    return webhook_id, ts, signature


def _webhook_matches(keys, webhook_id: str, ts: int, data: bytes, signature: str) -> bool:
    """_webhook_matches reports whether a v1 entry of signature is
    HMAC-SHA256(key, id + "." + ts + "." + data) under one of keys
    (compared in constant time); other versions are skipped, as Standard
    Webhooks says."""
    message = webhook_id.encode("utf-8") + b"." + str(ts).encode("ascii") + b"." + data
    macs = [hmac.new(k, message, hashlib.sha256).digest() for k in keys]
    for entry in signature.split():
        version, sep, b64 = entry.partition(",")
        if not sep or version != "v1":
            continue
        try:
            got = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            continue
        if any(hmac.compare_digest(got, mac) for mac in macs):
            return True
    return False
