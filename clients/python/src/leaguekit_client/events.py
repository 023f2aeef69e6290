"""League events: the same JSON object in a webhook body and a stream's ``data:`` line.

``parse_event`` turns the JSON into one of the classes below by its ``type``; a type
this version does not know (or a known one whose ``data`` lacks a field) stays a plain
:class:`Event`, with everything in ``data`` and ``raw``, so a newer server never breaks
an older client. Match on the classes::

    match event:
        case PlayerPromoted(player=p, next_tier=t):
            notify(p, f"promoted to {t}")
        case RewardGranted(player=p, grant=g):
            ...
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ._errors import LeagueError, MalformedEvent
from .models import ErrorBody, StandingsOut

__all__ = [
    "Event",
    "PlayerPlaced",
    "PlayerOvertaken",
    "BracketClosed",
    "OutcomeEvent",
    "PlayerPromoted",
    "PlayerDemoted",
    "PlayerStayed",
    "Reward",
    "RewardGranted",
    "RewardClaimed",
    "PeriodClosed",
    "ScoreAdjusted",
    "PlayerResettled",
    "Standings",
    "StreamEnded",
    "StreamError",
    "StreamItem",
    "parse_event",
    "parse_event_json",
]


@dataclass(frozen=True, kw_only=True)
class Event:
    """An event of the league's log; the base of the typed events, and what an unknown
    type is parsed as."""

    id: str
    """Unique in the league: deduplicate on it (webhooks are delivered at least once)."""
    type: str
    season: str
    period: int
    at: int
    """Unix milliseconds, by the league clock."""
    player: str | None
    tier: str | None
    bracket: int | None
    data: Mapping[str, Any]
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    """The whole JSON object, unknown fields included."""
    cursor: str | None = None
    """The stream's ``id:`` for this event (resume from it); None in a webhook."""

    @property
    def at_datetime(self) -> datetime:
        """``at`` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.at / 1000.0, tz=UTC)


@dataclass(frozen=True, kw_only=True)
class PlayerPlaced(Event):
    """``player.placed``: the player was placed in ``tier``/``bracket``."""


@dataclass(frozen=True, kw_only=True)
class PlayerOvertaken(Event):
    """``player.overtaken``: ``by`` passed ``player``, whose new rank is ``rank``."""

    by: str
    rank: int


@dataclass(frozen=True, kw_only=True)
class BracketClosed(Event):
    """``bracket.closed``."""

    players: int
    active: int


@dataclass(frozen=True, kw_only=True)
class OutcomeEvent(Event):
    """A player's outcome at a close: promoted, demoted or stayed."""

    rank: int
    score: int
    next_tier: str


@dataclass(frozen=True, kw_only=True)
class PlayerPromoted(OutcomeEvent):
    """``player.promoted``."""


@dataclass(frozen=True, kw_only=True)
class PlayerDemoted(OutcomeEvent):
    """``player.demoted``."""


@dataclass(frozen=True, kw_only=True)
class PlayerStayed(OutcomeEvent):
    """``player.stayed``."""


@dataclass(frozen=True)
class Reward:
    """A reward: where it came from (``period/tier/bracket``) and the season's grant."""

    source: str
    grant: str


@dataclass(frozen=True, kw_only=True)
class RewardGranted(Event):
    """``reward.granted``."""

    source: str
    grant: str


@dataclass(frozen=True, kw_only=True)
class RewardClaimed(Event):
    """``reward.claimed``."""

    rewards: tuple[Reward, ...]


@dataclass(frozen=True, kw_only=True)
class PeriodClosed(Event):
    """``period.closed``."""

    brackets: int
    players: int


@dataclass(frozen=True, kw_only=True)
class ScoreAdjusted(Event):
    """``score.adjusted``: an operator's correction."""

    before: int
    after: int


@dataclass(frozen=True, kw_only=True)
class PlayerResettled(Event):
    """``player.resettled``: a closed bracket was settled again."""

    version: int
    rank: int
    outcome: str
    next_tier: str | None


@dataclass(frozen=True)
class Standings:
    """A bracket stream's ``standings`` snapshot (it has no cursor)."""

    standings: StandingsOut


@dataclass(frozen=True)
class StreamError:
    """A stream's ``error`` event: the server could not read the standings this time;
    the stream goes on."""

    error: LeagueError


@dataclass(frozen=True)
class StreamEnded:
    """A stream's ``end`` event: the server ended the stream, and this is its last item
    (the iteration stops after it, the connection closed, and it is not reconnected).

    ``reason`` is ``"token_expired"`` (the player token the stream was opened with
    expired: open it again with a new token and the stream's ``last_event_id``, and
    nothing is missed) or ``"banned"`` (the player was banned; the message says until
    when, and the stream is refused while the ban holds); a later server may give other
    reasons. ``message`` is for people."""

    reason: str
    message: str


StreamItem = Event | Standings | StreamError | StreamEnded
"""What an event stream yields."""


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None else _str(v)


def _typed(kind: str, d: Mapping[str, Any], base: dict[str, Any]) -> Event | None:
    """The typed event of ``kind``, or None when ``kind`` is unknown."""
    match kind:
        case "player.placed":
            return PlayerPlaced(**base)
        case "player.overtaken":
            return PlayerOvertaken(**base, by=_str(d["by"]), rank=_int(d["rank"]))
        case "bracket.closed":
            return BracketClosed(**base, players=_int(d["players"]), active=_int(d["active"]))
        case "player.promoted" | "player.demoted" | "player.stayed":
            cls = {
                "player.promoted": PlayerPromoted,
                "player.demoted": PlayerDemoted,
                "player.stayed": PlayerStayed,
            }[kind]
            return cls(
                **base,
                rank=_int(d["rank"]),
                score=_int(d["score"]),
                next_tier=_str(d["next_tier"]),
            )
        case "reward.granted":
            return RewardGranted(**base, source=_str(d["source"]), grant=_str(d["grant"]))
        case "reward.claimed":
            items = d["rewards"]
            if not isinstance(items, list):
                raise TypeError
            rewards = tuple(Reward(_str(r["source"]), _str(r["grant"])) for r in items)
            return RewardClaimed(**base, rewards=rewards)
        case "period.closed":
            return PeriodClosed(**base, brackets=_int(d["brackets"]), players=_int(d["players"]))
        case "score.adjusted":
            return ScoreAdjusted(**base, before=_int(d["before"]), after=_int(d["after"]))
        case "player.resettled":
            return PlayerResettled(
                **base,
                version=_int(d["version"]),
                rank=_int(d["rank"]),
                outcome=_str(d["outcome"]),
                next_tier=_opt_str(d.get("next_tier")),
            )
    return None


def parse_event(obj: Any, *, cursor: str | None = None) -> Event:
    """An event from its decoded JSON object (see the module's doc)."""
    if not isinstance(obj, Mapping):
        raise MalformedEvent("an event is a JSON object")
    try:
        data = obj.get("data")
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise TypeError
        bracket = obj.get("bracket")
        base: dict[str, Any] = {
            "id": _str(obj["id"]),
            "type": _str(obj["type"]),
            "season": _str(obj.get("season", "")),
            "period": _int(obj.get("period", 0)),
            "at": _int(obj.get("at", 0)),
            "player": _opt_str(obj.get("player")),
            "tier": _opt_str(obj.get("tier")),
            "bracket": None if bracket is None else _int(bracket),
            "data": data,
            "raw": obj,
            "cursor": cursor,
        }
    except (KeyError, TypeError) as e:
        raise MalformedEvent(f"not an event: {json.dumps(obj)[:200]}") from e
    try:
        typed = _typed(base["type"], data, base)
    except (KeyError, TypeError):
        typed = None  # a known type with data this version cannot read: pass it through
    return typed if typed is not None else Event(**base)


def parse_event_json(text: str | bytes, *, cursor: str | None = None) -> Event:
    """An event from its JSON text."""
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise MalformedEvent(f"an event's body is not JSON: {e}") from e
    return parse_event(obj, cursor=cursor)


def stream_end(data: str) -> StreamEnded:
    """A stream's ``event: end`` (``{"reason", "message"}``) as a :class:`StreamEnded`;
    data that is not that object still ends the stream (reason ``"unknown"``)."""
    try:
        body: Any = json.loads(data)
    except ValueError:
        body = None
    fields: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    reason = fields.get("reason")
    message = fields.get("message")
    return StreamEnded(
        reason if isinstance(reason, str) and reason else "unknown",
        message if isinstance(message, str) else data,
    )


def stream_error(data: str) -> StreamError:
    """A stream's ``event: error`` as a :class:`StreamError`."""
    try:
        body: ErrorBody | str = json.loads(data)
    except ValueError:
        body = data
    return StreamError(LeagueError.from_body(200, body))
