"""verify_webhook against known vectors (no server)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from leaguekit_client import (
    MalformedEvent,
    MalformedSignatureHeader,
    PlayerPromoted,
    SignatureMismatch,
    StaleTimestamp,
    WebhookVerificationError,
    sign_webhook,
    verify_webhook,
)

SECRET = "whsec-0123456789abcdef0123456789abcdef"
T = 1767225600
BODY = json.dumps(
    {
        "id": "45-7",
        "type": "player.promoted",
        "season": "weekly-ladder",
        "period": 45,
        "at": 1767225600000,
        "player": "ana",
        "tier": "bronze",
        "bracket": 3,
        "data": {"rank": 2, "score": 310, "next_tier": "silver"},
        "later": "a field this version does not know",
    },
    separators=(",", ":"),
).encode()
# Computed independently of the package: HMAC-SHA256(secret, "<t>.<body>") as hex.
GOOD = hmac.new(SECRET.encode(), f"{T}.".encode() + BODY, hashlib.sha256).hexdigest()
HEADER = f"t={T},v1={GOOD}"


def test_a_good_signature_gives_the_typed_event() -> None:
    event = verify_webhook(SECRET, HEADER, BODY, now=T + 10)
    assert isinstance(event, PlayerPromoted)
    assert (event.id, event.player, event.rank, event.score, event.next_tier) == (
        "45-7",
        "ana",
        2,
        310,
        "silver",
    )
    assert event.raw["later"] == "a field this version does not know"
    assert sign_webhook(SECRET, BODY, T) == HEADER


def test_a_known_answer_vector() -> None:
    # A fixed vector another implementation (the server's, a Node receiver) can check.
    body = b'{"id":"1","type":"period.closed","season":"s","period":1,"at":0,"player":null,"tier":null,"bracket":null,"data":{"brackets":1,"players":2}}'
    header = sign_webhook("k" * 32, body, 1700000000)
    expected = hmac.new(b"k" * 32, b"1700000000." + body, hashlib.sha256).hexdigest()
    assert header == f"t=1700000000,v1={expected}"
    assert verify_webhook(b"k" * 32, header, body, now=1700000000).type == "period.closed"


def test_one_of_several_v1_and_spaces_and_other_schemes() -> None:
    header = f"t={T}, v0=abc, v1={'0' * 64}, v1={GOOD}"
    assert verify_webhook(SECRET, header, BODY, now=T).id == "45-7"


def test_a_tampered_body_is_refused() -> None:
    with pytest.raises(SignatureMismatch):
        verify_webhook(SECRET, HEADER, BODY.replace(b"310", b"999"), now=T)


def test_another_secret_is_refused() -> None:
    with pytest.raises(SignatureMismatch):
        verify_webhook("another-secret-0123456789abcdef0123", HEADER, BODY, now=T)


def test_a_stale_or_future_timestamp_is_refused() -> None:
    with pytest.raises(StaleTimestamp):
        verify_webhook(SECRET, HEADER, BODY, now=T + 301)
    with pytest.raises(StaleTimestamp):
        verify_webhook(SECRET, HEADER, BODY, now=T - 301)
    assert verify_webhook(SECRET, HEADER, BODY, now=T + 300).id == "45-7"
    assert verify_webhook(SECRET, HEADER, BODY, tolerance_seconds=3600, now=T + 3000).id == "45-7"


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        f"v1={GOOD}",
        f"t={T}",
        f"t=soon,v1={GOOD}",
        f"t=-{T},v1={GOOD}",
        f"t={T},t={T},v1={GOOD}",
        "garbage",
    ],
)
def test_a_malformed_header_is_refused(header: str | None) -> None:
    with pytest.raises(MalformedSignatureHeader):
        verify_webhook(SECRET, header, BODY, now=T)


def test_a_signed_body_that_is_no_event_is_refused() -> None:
    body = b"[1, 2]"
    with pytest.raises(MalformedEvent):
        verify_webhook(SECRET, sign_webhook(SECRET, body, T), body, now=T)
    assert issubclass(MalformedEvent, WebhookVerificationError)
