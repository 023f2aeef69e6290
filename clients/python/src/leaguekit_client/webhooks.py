"""Verifying the league's signed webhooks.

Each event is one POST whose body is the event's JSON, signed in the header
``Leaguekit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``.
Verify the exact bytes received (before any JSON parsing), answer 2xx to acknowledge,
and deduplicate on the event's ``id`` (``Leaguekit-Event-Id``): delivery is at least
once.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from ._errors import MalformedSignatureHeader, SignatureMismatch, StaleTimestamp
from .events import Event, parse_event_json

__all__ = ["SIGNATURE_HEADER", "verify_webhook", "sign_webhook"]

SIGNATURE_HEADER = "Leaguekit-Signature"
"""The header that carries the signature."""


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
