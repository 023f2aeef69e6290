"""The errors this package raises."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "LeagueError",
    "StreamDisconnected",
    "WebhookVerificationError",
    "MalformedSignatureHeader",
    "SignatureMismatch",
    "StaleTimestamp",
    "MalformedEvent",
]


class LeagueError(Exception):
    """An error answer of `leaguekit serve`: its HTTP status and its error body.

    ``code`` is the server's stable code (docs/http.md, "Errors"), such as
    ``period_closed`` or ``unknown``; ``message`` is for people. A response that had no
    error body of the server's shape gets the code ``unexpected_response``.
    """

    status: int
    code: str
    message: str
    retry_after: float | None
    """Seconds to wait before sending the same request again, when the server said."""
    at: str | None
    """For ``unknown`` on a score update: the event time the update carried (RFC 3339)."""
    body: Any
    """The parsed error body (or the raw text when it was not JSON)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retry_after: float | None = None,
        at: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.at = at
        self.body = body

    @classmethod
    def from_body(
        cls, status: int, body: Any, *, retry_after_header: float | None = None
    ) -> LeagueError:
        """Builds the error from a decoded error body ``{"error": {"code", "message"}}``."""
        detail = body.get("error") if isinstance(body, Mapping) else None
        if not isinstance(detail, Mapping) or not isinstance(detail.get("code"), str):
            text = body if isinstance(body, str) else repr(body)
            return cls(
                status,
                "unexpected_response",
                f"HTTP {status} without an error body: {text[:200]}",
                retry_after=retry_after_header,
                body=body,
            )
        message = detail.get("message")
        retry_after = retry_after_header
        retry_ms = detail.get("retry_after_ms")
        if isinstance(retry_ms, int) and not isinstance(retry_ms, bool) and retry_ms >= 0:
            retry_after = retry_ms / 1000.0
        at = detail.get("at")
        return cls(
            status,
            detail["code"],
            message if isinstance(message, str) else "",
            retry_after=retry_after,
            at=at if isinstance(at, str) else None,
            body=body,
        )


class StreamDisconnected(Exception):
    """An event stream lost its connection more times in a row than it may reconnect.

    ``last_event_id`` is the cursor of the last event received: open the stream again
    with it and nothing after it is missed.
    """

    def __init__(self, message: str, last_event_id: str | None) -> None:
        super().__init__(message)
        self.last_event_id = last_event_id


class WebhookVerificationError(Exception):
    """A webhook that must not be trusted; the subclasses say why."""


class MalformedSignatureHeader(WebhookVerificationError):
    """The ``Leaguekit-Signature`` header is missing or not ``t=<unix seconds>,v1=<hex>``
    (or, for a Standard Webhooks check, a ``webhook-*`` header is missing or malformed)."""


class SignatureMismatch(WebhookVerificationError):
    """No ``v1`` signature matches the body: another secret, or a changed body (or id,
    or timestamp)."""


class StaleTimestamp(WebhookVerificationError):
    """The signature's timestamp is further from now than the tolerance (a replay?)."""

    def __init__(self, message: str, timestamp: int, now: float) -> None:
        super().__init__(message)
        self.timestamp = timestamp
        self.now = now


class MalformedEvent(WebhookVerificationError, ValueError):
    """A body (or stream data) that is not an event's JSON object."""
