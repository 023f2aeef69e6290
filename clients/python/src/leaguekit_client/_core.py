"""What the sync and async clients share: the retry policy, the calls (one per
endpoint: method, path, body, whether a resend is safe) and reading answers."""

from __future__ import annotations

import email.utils
import json
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast
from urllib.parse import quote

import httpx

from ._errors import LeagueError
from .models import (
    AdjustIn,
    AdjustOut,
    AuditOut,
    BanIn,
    BanOut,
    BansOut,
    BatchItemIn,
    BatchItemOut,
    ClaimIn,
    ClaimOut,
    ClockIn,
    ClockOut,
    CountsOut,
    DeadLettersOut,
    ExportLine,
    HealthOut,
    JoinIn,
    PeriodsOut,
    PlacementOut,
    PlayerOut,
    ProfileOut,
    ReplayIn,
    ReplayOut,
    ResettleIn,
    ResettleOut,
    RewardsOut,
    SeasonOut,
    StandingsOut,
    SubmissionOut,
    SubmitIn,
    TokenIn,
    TokenOut,
    TopOut,
    UnbanIn,
    UnbanOut,
)

__version__ = "0.1.0"
USER_AGENT = f"leaguekit-client-python/{__version__}"

T = TypeVar("T")
Params = dict[str, str | int]

# 409s that mean "the league is at a period boundary: send it again after Retry-After".
RETRY_CODES_409 = frozenset({"not_started", "still_closing"})


def new_request_id() -> str:
    """A fresh request id (a random UUID): what the client uses when given none."""
    return str(uuid.uuid4())


@dataclass(frozen=True)
class Retries:
    """When and how often a request is sent again.

    A request is resent only when that is safe: a GET, a request that carries a request
    id (a score, a batch, a claim: the same id each time), or any request that never
    reached the league (a refused connection, 503 ``store_unreachable``). It is resent
    after a transport error, a 5xx, a 408, a 429 or a 409 ``not_started`` /
    ``still_closing``, at most ``max_retries`` times; the wait is the server's
    ``Retry-After`` (or ``retry_after_ms``) when it gave one, else an exponential backoff
    from ``backoff`` seconds, doubling up to ``max_backoff``, with jitter. A server
    that asks for a longer wait than ``max_retry_after`` gets its error raised at once.
    """

    max_retries: int = 3
    backoff: float = 0.25
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``; None: do not retry."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            return retry_after + self.rng.uniform(0.0, min(0.25, retry_after / 10.0 + 0.01))
        ceiling = min(self.max_backoff, self.backoff * (2.0**attempt))
        return ceiling / 2.0 + self.rng.uniform(0.0, ceiling / 2.0)


def as_retries(retries: int | Retries) -> Retries:
    if isinstance(retries, Retries):
        return retries
    if retries < 0:
        raise ValueError("retries must be 0 or more")
    return Retries(max_retries=retries)


def seg(value: str | int) -> str:
    """One path segment, percent-encoded (a player id may hold any character)."""
    return quote(str(value), safe="")


def _json(resp: httpx.Response) -> Any:
    return resp.json()


@dataclass
class Call(Generic[T]):
    """One request to the league and how to read its answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Params | None = None
    body: Any = None
    has_body: bool = False
    safe_to_resend: bool = False
    """A GET, or a request that carries a request id."""
    pin_at: bool = False
    """A score: resent after ``unknown`` with the ``at`` the answer names."""

    def next_body(self, err: LeagueError) -> None:
        """Updates the body for a resend after ``err``."""
        if (
            self.pin_at
            and err.code == "unknown"
            and err.at is not None
            and isinstance(self.body, dict)
            and self.body.get("at") is None
        ):
            self.body = {**self.body, "at": err.at}


def retry_after_header(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_of(resp: httpx.Response) -> LeagueError:
    """The :class:`LeagueError` of a non-2xx answer (its body must have been read)."""
    try:
        body: Any = resp.json()
    except (ValueError, UnicodeDecodeError):
        body = resp.text
    return LeagueError.from_body(
        resp.status_code, body, retry_after_header=retry_after_header(resp)
    )


def may_retry(call: Call[Any], err: LeagueError | None) -> bool:
    """Whether ``call`` may be resent after ``err`` (None: a transport error after the
    request may have been sent)."""
    if err is None:
        return call.safe_to_resend
    if err.code == "store_unreachable":
        return True  # the request never reached the store: any call may be resent
    if not call.safe_to_resend:
        return False
    s = err.status
    return s >= 500 or s in (408, 429) or (s == 409 and err.code in RETRY_CODES_409)


def _opt(params: Params, name: str, value: str | int | None) -> None:
    if value is not None:
        params[name] = value


def _ndjson(resp: httpx.Response) -> list[ExportLine]:
    return [cast(ExportLine, json.loads(line)) for line in resp.text.splitlines() if line.strip()]


def _text(resp: httpx.Response) -> str:
    return resp.text


def _compact(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


# One function per endpoint (docs/http.md), in the order of the document's paths.


def healthz() -> Call[HealthOut]:
    return Call("GET", "/healthz", _json, safe_to_resend=True)


def metrics() -> Call[str]:
    return Call("GET", "/metrics", _text, safe_to_resend=True)


def audit(player: str | None, since: str | None, limit: int | None) -> Call[AuditOut]:
    p: Params = {}
    _opt(p, "player", player)
    _opt(p, "since", since)
    _opt(p, "limit", limit)
    return Call("GET", "/v1/audit", _json, params=p, safe_to_resend=True)


def bans() -> Call[BansOut]:
    return Call("GET", "/v1/bans", _json, safe_to_resend=True)


def clock() -> Call[ClockOut]:
    return Call("GET", "/v1/clock", _json, safe_to_resend=True)


def move_clock(advance: str | None, set: str | None, reason: str | None) -> Call[ClockOut]:
    if (advance is None) == (set is None):
        raise ValueError("give exactly one of advance and set")
    body: ClockIn = cast(ClockIn, _compact({"advance": advance, "set": set, "reason": reason}))
    return Call("POST", "/v1/clock", _json, body=body, has_body=True)


def counts(period: int | None, cohort: str | None) -> Call[CountsOut]:
    p: Params = {}
    _opt(p, "period", period)
    _opt(p, "cohort", cohort)
    return Call("GET", "/v1/counts", _json, params=p, safe_to_resend=True)


def periods(limit: int | None) -> Call[PeriodsOut]:
    p: Params = {}
    _opt(p, "limit", limit)
    return Call("GET", "/v1/periods", _json, params=p, safe_to_resend=True)


def export(period: int) -> Call[list[ExportLine]]:
    return Call("GET", f"/v1/periods/{seg(period)}/export", _ndjson, safe_to_resend=True)


def resettle(
    period: int, tier: str, bracket: int, exclude: Sequence[str], reason: str
) -> Call[ResettleOut]:
    body: ResettleIn = {"exclude": list(exclude), "reason": reason}
    path = f"/v1/periods/{seg(period)}/tiers/{seg(tier)}/brackets/{seg(bracket)}/resettle"
    # Sent again with the same exclusions it changes nothing (docs/operators.md).
    return Call("POST", path, _json, body=body, has_body=True, safe_to_resend=True)


def player(player: str, period: int | None) -> Call[PlayerOut]:
    p: Params = {}
    _opt(p, "period", period)
    return Call("GET", f"/v1/players/{seg(player)}", _json, params=p, safe_to_resend=True)


def adjust(player: str, by: int | None, set: int | None, reason: str) -> Call[AdjustOut]:
    if (by is None) == (set is None):
        raise ValueError("give exactly one of by and set")
    body: AdjustIn = cast(AdjustIn, _compact({"by": by, "set": set, "reason": reason}))
    return Call("POST", f"/v1/players/{seg(player)}/adjust", _json, body=body, has_body=True)


def around(player: str, radius: int | None, period: int | None) -> Call[StandingsOut]:
    p: Params = {}
    _opt(p, "radius", radius)
    _opt(p, "period", period)
    path = f"/v1/players/{seg(player)}/around"
    return Call("GET", path, _json, params=p, safe_to_resend=True)


def ban(player: str, reason: str, until: str | None) -> Call[BanOut]:
    body: BanIn = cast(BanIn, _compact({"reason": reason, "until": until}))
    return Call("POST", f"/v1/players/{seg(player)}/ban", _json, body=body, has_body=True)


def join(player: str, at: str | None, cohort: str | None) -> Call[PlacementOut]:
    body: JoinIn = cast(JoinIn, _compact({"at": at, "cohort": cohort}))
    return Call("POST", f"/v1/players/{seg(player)}/join", _json, body=body, has_body=True)


def profile(player: str) -> Call[ProfileOut]:
    return Call("GET", f"/v1/players/{seg(player)}/profile", _json, safe_to_resend=True)


def set_profile(player: str, fields: Mapping[str, str]) -> Call[ProfileOut]:
    path = f"/v1/players/{seg(player)}/profile"
    return Call("PUT", path, _json, body=dict(fields), has_body=True)


def patch_profile(player: str, fields: Mapping[str, str | None]) -> Call[ProfileOut]:
    path = f"/v1/players/{seg(player)}/profile"
    return Call("PATCH", path, _json, body=dict(fields), has_body=True)


def rewards(player: str) -> Call[RewardsOut]:
    return Call("GET", f"/v1/players/{seg(player)}/rewards", _json, safe_to_resend=True)


def claim(player: str, request_id: str | None) -> Call[ClaimOut]:
    body: ClaimIn = {"request_id": request_id or new_request_id()}
    path = f"/v1/players/{seg(player)}/rewards:claim"
    return Call("POST", path, _json, body=body, has_body=True, safe_to_resend=True)


def submit(
    player: str,
    value: int,
    request_id: str | None,
    at: str | None,
    cohort: str | None,
    rank: bool | None,
) -> Call[SubmissionOut]:
    body: SubmitIn = cast(
        SubmitIn,
        _compact(
            {
                "value": value,
                "request_id": request_id or new_request_id(),
                "at": at,
                "cohort": cohort,
                "rank": rank,
            }
        ),
    )
    path = f"/v1/players/{seg(player)}/scores"
    return Call(
        "POST", path, _json, body=body, has_body=True, safe_to_resend=True, pin_at=True
    )


def mint_token(player: str, ttl: int | None) -> Call[TokenOut]:
    body: TokenIn = cast(TokenIn, _compact({"ttl": ttl}))
    path = f"/v1/players/{seg(player)}/token"
    # A new token each time: a resend mints another, which is harmless.
    return Call("POST", path, _json, body=body, has_body=True, safe_to_resend=True)


def unban(player: str, reason: str | None) -> Call[UnbanOut]:
    body: UnbanIn = cast(UnbanIn, _compact({"reason": reason}))
    return Call("POST", f"/v1/players/{seg(player)}/unban", _json, body=body, has_body=True)


def batch(items: Sequence[BatchItemIn]) -> Call[list[BatchItemOut]]:
    body: list[BatchItemIn] = []
    for item in items:
        it = dict(item)
        if it.get("request_id") is None:
            it["request_id"] = new_request_id()
        body.append(cast(BatchItemIn, it))
    return Call("POST", "/v1/scores:batch", _json, body=body, has_body=True, safe_to_resend=True)


def season() -> Call[SeasonOut]:
    return Call("GET", "/v1/season", _json, safe_to_resend=True)


def _bracket_params(
    period: int | None, offset: int | None, limit: int | None, cohort: str | None
) -> Params:
    p: Params = {}
    _opt(p, "period", period)
    _opt(p, "offset", offset)
    _opt(p, "limit", limit)
    _opt(p, "cohort", cohort)
    return p


def standings(
    tier: str,
    bracket: int,
    period: int | None,
    offset: int | None,
    limit: int | None,
    cohort: str | None,
) -> Call[StandingsOut]:
    path = f"/v1/tiers/{seg(tier)}/brackets/{seg(bracket)}"
    p = _bracket_params(period, offset, limit, cohort)
    return Call("GET", path, _json, params=p, safe_to_resend=True)


def top(tier: str, period: int | None, limit: int | None, cohort: str | None) -> Call[TopOut]:
    p = _bracket_params(period, None, limit, cohort)
    return Call("GET", f"/v1/tiers/{seg(tier)}/top", _json, params=p, safe_to_resend=True)


def player_events_path(player: str) -> str:
    return f"/v1/players/{seg(player)}/events"


def bracket_events_path(tier: str, bracket: int) -> str:
    return f"/v1/tiers/{seg(tier)}/brackets/{seg(bracket)}/events"


def dead_letters(limit: int | None, after: str | None) -> Call[DeadLettersOut]:
    p: Params = {}
    _opt(p, "limit", limit)
    _opt(p, "after", after)
    return Call("GET", "/v1/webhooks/dead", _json, params=p, safe_to_resend=True)


def replay_dead_letters(ids: Sequence[str] | None, all: bool, reason: str) -> Call[ReplayOut]:
    if (ids is None) == (not all):
        raise ValueError("give exactly one of ids and all=True")
    if ids is not None and not ids:
        raise ValueError("ids is empty: give the event ids to replay")
    body: ReplayIn = {"reason": reason}
    if ids is not None:
        body["ids"] = list(ids)
    else:
        body["all"] = True
    return Call("POST", "/v1/webhooks/dead:replay", _json, body=body, has_body=True)
