"""Turning a stream's server-sent events into league events."""

from __future__ import annotations

import json
from typing import cast

from ._errors import MalformedEvent
from ._sse import ServerSentEvent
from .events import Standings, StreamItem, parse_event_json, stream_end, stream_error
from .models import StandingsOut

STREAM_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}


def stream_item(msg: ServerSentEvent) -> StreamItem | None:
    """The item of one event; None for one this version cannot read (skipped)."""
    if msg.event == "standings":
        try:
            return Standings(cast(StandingsOut, json.loads(msg.data)))
        except ValueError:
            return None
    if msg.event == "error":
        return stream_error(msg.data)
    if msg.event == "end":
        return stream_end(msg.data)
    try:
        return parse_event_json(msg.data, cursor=msg.id if msg.has_id else None)
    except MalformedEvent:
        return None


def is_event_stream(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == "text/event-stream"
