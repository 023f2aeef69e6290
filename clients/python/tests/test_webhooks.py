"""verify_webhook and verify_standard_webhook against known vectors (no server), and
the Standard Webhooks reference library (``standardwebhooks``) against our signing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import pytest
import standardwebhooks

from leaguekit_client import (
    MalformedEvent,
    MalformedSignatureHeader,
    PlayerPromoted,
    SignatureMismatch,
    StaleTimestamp,
    WebhookVerificationError,
    sign_standard_webhook,
    sign_webhook,
    standard_webhook_key,
    verify_standard_webhook,
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
# A secret in Standard Webhooks' form: 32 bytes, as `openssl rand -base64 32` writes them.
WHSEC = "whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpxrH1lP0eUmuM="


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


# Standard Webhooks: the reference library's own known answer
# (standard-webhooks/libraries/python/tests/test_webhooks.py, test_sign_function).
KNOWN_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
KNOWN_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
KNOWN_T = 1614265330
KNOWN_BODY = b'{"test": 2432232314}'
KNOWN_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
EVENT_ID = "p45/bronze/b3@1767225600000-0"


def test_the_standard_reference_known_answer() -> None:
    headers = sign_standard_webhook(KNOWN_SECRET, KNOWN_ID, KNOWN_BODY, KNOWN_T)
    assert headers == {
        "webhook-id": KNOWN_ID,
        "webhook-timestamp": str(KNOWN_T),
        "webhook-signature": KNOWN_SIGNATURE,
    }
    assert standard_webhook_key(KNOWN_SECRET) == base64.b64decode(KNOWN_SECRET[6:])
    # The body is no event: the signature holds, the event does not.
    with pytest.raises(MalformedEvent):
        verify_standard_webhook(KNOWN_SECRET, headers, KNOWN_BODY, now=KNOWN_T)


def test_a_standard_signature_gives_the_event_and_the_reference_library_agrees() -> None:
    now = int(time.time())
    for secret in (WHSEC, SECRET):
        headers = sign_standard_webhook(secret, EVENT_ID, BODY, now)
        event = verify_standard_webhook(secret, headers, BODY, now=now + 10)
        assert isinstance(event, PlayerPromoted) and event.id == "45-7"
        # Any case, any mapping with items(), one of several signatures.
        upper = {k.upper(): v for k, v in headers.items()}
        upper["WEBHOOK-SIGNATURE"] = f"v1a,abc v1,{'A' * 44} v2,x {headers['webhook-signature']}"
        assert verify_standard_webhook(secret, upper, BODY, now=now).id == "45-7"
        # The reference library: a whsec_ secret as it is, a plain one as bytes.
        reference = standardwebhooks.Webhook(secret if secret.startswith("whsec_") else secret.encode())
        assert reference.verify(BODY, headers)["id"] == "45-7"
    # A plain secret in the spec's form is the same key.
    as_whsec = "whsec_" + base64.b64encode(SECRET.encode()).decode()
    headers = sign_standard_webhook(SECRET, EVENT_ID, BODY, now)
    assert verify_standard_webhook(as_whsec, headers, BODY, now=now).id == "45-7"
    assert standardwebhooks.Webhook(as_whsec).verify(BODY, headers)["id"] == "45-7"


def test_a_standard_signature_covers_the_id_the_time_and_the_body() -> None:
    headers = sign_standard_webhook(WHSEC, EVENT_ID, BODY, T)
    for changed, body in (
        ({"webhook-id": "p45/bronze/b3@1767225600000-1"}, BODY),
        ({"webhook-timestamp": str(T + 1)}, BODY),
        ({}, BODY.replace(b"310", b"999")),
        ({"webhook-signature": headers["webhook-signature"].replace("v1,", "v2,")}, BODY),
        ({"webhook-signature": "v1,not base64!"}, BODY),
    ):
        with pytest.raises(SignatureMismatch):
            verify_standard_webhook(WHSEC, {**headers, **changed}, body, now=T)
    with pytest.raises(SignatureMismatch):
        verify_standard_webhook("whsec_" + "A" * 32, headers, BODY, now=T)
    with pytest.raises(StaleTimestamp):
        verify_standard_webhook(WHSEC, headers, BODY, now=T + 301)
    with pytest.raises(StaleTimestamp):
        verify_standard_webhook(WHSEC, headers, BODY, now=T - 301)
    assert verify_standard_webhook(WHSEC, headers, BODY, now=T + 300).id == "45-7"
    for name in headers:
        missing = {k: v for k, v in headers.items() if k != name}
        with pytest.raises(MalformedSignatureHeader):
            verify_standard_webhook(WHSEC, missing, BODY, now=T)
    with pytest.raises(MalformedSignatureHeader):
        verify_standard_webhook(WHSEC, {**headers, "webhook-timestamp": "-1"}, BODY, now=T)
    with pytest.raises(ValueError):
        verify_standard_webhook("whsec_not base64!", headers, BODY, now=T)
    # Unpadded base64 is the same key, as on the server.
    assert standard_webhook_key(WHSEC.rstrip("=")) == standard_webhook_key(WHSEC)
    assert len(standard_webhook_key(WHSEC)) == 32
