"""A server-sent events decoder, as the WHATWG HTML standard parses an event stream.

Lines end with CR LF, LF or CR (a CR at the end of one chunk and an LF at the start of
the next are one line end); a line starting with ``:`` is a comment (the server's
keep-alive); ``field: value`` loses one space after the colon; ``data`` lines join with
LF; a blank line dispatches the event, unless it had no data; ``id`` sets the last event
id (kept for the next events, and the one to resume from once its event is
dispatched) unless it holds NUL; ``retry`` takes ASCII digits only.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["ServerSentEvent", "SSEDecoder"]


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str
    id: str | None
    """The last event id when the event was dispatched (it carries over)."""
    has_id: bool
    """Whether this event's own lines set an id."""


class SSEDecoder:
    """Feed bytes as they arrive; take the complete events."""

    def __init__(self, last_event_id: str | None = None) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._after_cr = False
        self._first = True
        self.last_event_id = last_event_id
        """The id to resume from: the last one set by an event that was dispatched (an
        id read in an event cut off before its blank line does not count)."""
        self._id_buffer = last_event_id
        self.retry_ms: int | None = None
        """The reconnection time the stream asked for (``retry:``), if any."""
        self._reset()

    def _reset(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._has_data = False
        self._own_id = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        text = self._utf8.decode(chunk)
        if self._first and text:
            self._first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        self._after_cr = False
        out: list[ServerSentEvent] = []
        buf = self._buf + text
        start = 0
        i = 0
        n = len(buf)
        while i < n:
            c = buf[i]
            if c == "\r" or c == "\n":
                event = self._line(buf[start:i])
                if event is not None:
                    out.append(event)
                if c == "\r":
                    if i + 1 < n:
                        if buf[i + 1] == "\n":
                            i += 1
                    else:
                        self._after_cr = True
                start = i + 1
            i += 1
        self._buf = buf[start:]
        return out

    def _line(self, line: str) -> ServerSentEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "id":
            if "\0" not in value:
                self._id_buffer = value
                self._own_id = True
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry_ms = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        self.last_event_id = self._id_buffer
        if not self._has_data:
            # No data: nothing is dispatched (the id it set is kept all the same).
            self._reset()
            return None
        event = ServerSentEvent(
            self._event or "message",
            "\n".join(self._data),
            self.last_event_id,
            self._own_id,
        )
        self._reset()
        return event
