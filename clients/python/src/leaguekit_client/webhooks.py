"""Verifying the league's signed webhooks.

Each event is one POST whose body is the event's JSON, signed twice, in headers:

- ``Leaguekit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``
  (Stripe's scheme), keyed with ``LEAGUEKIT_WEBHOOK_SECRET`` exactly as configured:
  :func:`verify_webhook`;
- Standard Webhooks' ``webhook-id`` (the event's id), ``webhook-timestamp`` and
  ``webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>``,
  keyed with the base64-decoded key of a ``whsec_`` secret, or a plain secret's bytes:
  :func:`verify_standard_webhook` (or the ``standardwebhooks`` package).

Verify the exact bytes received (before any JSON parsing), answer 2xx to acknowledge,
and deduplicate on the event's ``id`` (``Leaguekit-Event-Id``): delivery is at least
once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Iterable
from typing import Any, Protocol

from ._errors import MalformedSignatureHeader, SignatureMismatch, StaleTimestamp
from .events import Event, parse_event_json

__all__ = [
    "SIGNATURE_HEADER",
    "WHSEC_PREFIX",
    "sign_standard_webhook",
    "sign_webhook",
    "standard_webhook_key",
    "verify_standard_webhook",
    "verify_webhook",
]

SIGNATURE_HEADER = "Leaguekit-Signature"
"""The header that carries the Stripe-style signature."""

WHSEC_PREFIX = "whsec_"
"""The prefix of a secret in Standard Webhooks' form (``whsec_`` then a base64 key)."""


def _key(secret: str | bytes) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def _mac(secret: str | bytes, timestamp: str, body: bytes) -> str:
    return hmac.new(_key(secret), timestamp.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()


def sign_webhook(secret: str | bytes, body: bytes, timestamp: int | None = None) -> str:
    """The ``Leaguekit-Signature`` value the server sends for ``body`` (for tests, or to
    relay an event)."""
    t = str(int(time.time()) if timestamp is None else timestamp)
    return f"t={t},v1={_mac(secret, t, body)}"


def verify_webhook(
    secret: str | bytes,
    signature_header: str | None,
    body: bytes,
    tolerance_seconds: float = 300,
    now: float | None = None,
) -> Event:
    """The webhook's event, once its signature holds.

    Raises :class:`MalformedSignatureHeader` (no header, no ``t``, no ``v1``),
    :class:`SignatureMismatch` (no ``v1`` matches: another secret or a changed body),
    :class:`StaleTimestamp` (``t`` further than ``tolerance_seconds`` from ``now``,
    default the current time) or :class:`MalformedEvent` (a signed body that is not an
    event). All are :class:`WebhookVerificationError`\\ s: answer them with a 400.
    """
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError("verify the raw body bytes, before any parsing")
    raw = bytes(body)
    if not signature_header:
        raise MalformedSignatureHeader(f"no {SIGNATURE_HEADER} header")
    timestamp: str | None = None
    signatures: list[str] = []
    for part in signature_header.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq:
            continue
        if key == "t":
            if timestamp is not None:
                raise MalformedSignatureHeader("more than one t in the signature header")
            timestamp = value
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not (timestamp.isascii() and timestamp.isdigit()):
        raise MalformedSignatureHeader("the signature header has no t=<unix seconds>")
    if not signatures:
        raise MalformedSignatureHeader("the signature header has no v1 signature")
    expected = _mac(secret, timestamp, raw)
    matched = False
    for candidate in signatures:
        # Every candidate is compared, in constant time, whatever matched before.
        if hmac.compare_digest(expected, candidate.lower()):
            matched = True
    if not matched:
        raise SignatureMismatch("no v1 signature matches the body and the secret")
    t = int(timestamp)
    current = time.time() if now is None else now
    if abs(current - t) > tolerance_seconds:
        raise StaleTimestamp(
            f"signed at {t}, {abs(current - t):.0f} s from now (tolerance {tolerance_seconds} s)",
            t,
            current,
        )
    return parse_event_json(raw)


class _Headers(Protocol):
    """A request's headers: a dict, Starlette's or werkzeug's headers, an
    ``http.server`` handler's ``self.headers`` (anything with ``items()``)."""

    def items(self) -> Iterable[tuple[str, Any]]: ...


def standard_webhook_key(secret: str | bytes) -> bytes:
    """The key ``webhook-signature`` is made with, from ``LEAGUEKIT_WEBHOOK_SECRET`` as
    the server has it: a ``whsec_`` secret's base64 part decoded (the standard
    alphabet, padded or not, as the server reads it), or a plain secret's bytes.

    Raises :class:`ValueError` for a ``whsec_`` secret that is not base64 (the server
    refuses to start with one).
    """
    raw = _key(secret)
    prefix = WHSEC_PREFIX.encode("ascii")
    if not raw.startswith(prefix):
        return raw
    encoded = raw[len(prefix) :]
    try:
        return base64.b64decode(encoded + b"=" * (-len(encoded) % 4), validate=True)
    except binascii.Error:
        raise ValueError("the secret starts with whsec_ but the rest is not base64") from None


def _standard_mac(key: bytes, msg_id: str, timestamp: str, body: bytes) -> bytes:
    signed = msg_id.encode("utf-8") + b"." + timestamp.encode("ascii") + b"." + body
    return hmac.new(key, signed, hashlib.sha256).digest()


def sign_standard_webhook(
    secret: str | bytes, msg_id: str, body: bytes, timestamp: int | None = None
) -> dict[str, str]:
    """The Standard Webhooks headers the server sends for event ``msg_id`` with
    ``body`` (for tests, or to relay an event): ``webhook-id``, ``webhook-timestamp``
    and ``webhook-signature``."""
    t = str(int(time.time()) if timestamp is None else timestamp)
    mac = _standard_mac(standard_webhook_key(secret), msg_id, t, body)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": t,
        "webhook-signature": "v1," + base64.b64encode(mac).decode("ascii"),
    }


def verify_standard_webhook(
    secret: str | bytes,
    headers: _Headers,
    body: bytes,
    tolerance_seconds: float = 300,
    now: float | None = None,
) -> Event:
    """The webhook's event, once its Standard Webhooks signature holds: the request's
    ``headers`` (any case; anything with ``items()``) ``webhook-id``,
    ``webhook-timestamp`` and ``webhook-signature`` (space-separated ``v1,<base64>``
    signatures; other versions are passed over), over the raw ``body``, with
    ``secret`` as ``LEAGUEKIT_WEBHOOK_SECRET`` has it (``whsec_...`` or plain; see
    :func:`standard_webhook_key`).

    Raises :class:`MalformedSignatureHeader` (a header missing, or a timestamp that is
    not unix seconds), :class:`SignatureMismatch`, :class:`StaleTimestamp` or
    :class:`MalformedEvent`, as :func:`verify_webhook` does.
    """
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError("verify the raw body bytes, before any parsing")
    raw = bytes(body)
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}

    def header(name: str) -> str:
        value = lowered.get(name)
        if not value:
            raise MalformedSignatureHeader(f"no {name} header")
        return value

    msg_id = header("webhook-id")
    timestamp = header("webhook-timestamp")
    signatures = header("webhook-signature")
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise MalformedSignatureHeader("webhook-timestamp is not unix seconds")
    t = int(timestamp)
    expected = _standard_mac(standard_webhook_key(secret), msg_id, str(t), raw)
    matched = False
    for versioned in signatures.split(" "):
        version, comma, value = versioned.partition(",")
        if not comma or version != "v1":
            continue
        try:
            candidate = base64.b64decode(value, validate=True)
        except binascii.Error:
            continue
        # Every candidate is compared, in constant time, whatever matched before.
        if hmac.compare_digest(expected, candidate):
            matched = True
    if not matched:
        raise SignatureMismatch("no v1 webhook-signature matches the body and the secret")
    current = time.time() if now is None else now
    if abs(current - t) > tolerance_seconds:
        raise StaleTimestamp(
            f"signed at {t}, {abs(current - t):.0f} s from now (tolerance {tolerance_seconds} s)",
            t,
            current,
        )
    return parse_event_json(raw)
