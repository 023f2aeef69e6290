"""The event log seen from a game server: the player stream across a rollover, resumed
after a disconnect, and a signed webhook to a local receiver.

Marked `events`: run with `clients/python/run --events`, which also sets
LEAGUEKIT_WEBHOOK_URLS and LEAGUEKIT_WEBHOOK_SECRET on the server.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from leaguekit_client import (
    Event,
    EventStream,
    LeagueClient,
    OutcomeEvent,
    PeriodClosed,
    PlayerPlaced,
    RewardGranted,
    StreamItem,
    verify_webhook,
)

from .conftest import Server
from .test_season import roll_over

pytestmark = pytest.mark.events


def collect(stream: EventStream) -> queue.Queue[StreamItem | BaseException]:
    """Reads the stream in a thread, so the test waits with a deadline."""
    q: queue.Queue[StreamItem | BaseException] = queue.Queue()

    def read() -> None:
        try:
            for item in stream:
                q.put(item)
        except BaseException as e:  # handed to the test
            q.put(e)

    threading.Thread(target=read, daemon=True).start()
    return q


def events_until(
    q: queue.Queue[StreamItem | BaseException],
    done: Callable[[Event], bool],
    seconds: float = 60,
) -> list[Event]:
    """The stream's events up to the first that is ``done``."""
    out: list[Event] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            item = q.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Event):
            out.append(item)
            if done(item):
                return out
    raise AssertionError(f"the stream did not get there within {seconds} s; got {[e.type for e in out]}")


def test_a_player_stream_across_a_rollover_resumed_after_a_disconnect(
    server: Server, game: LeagueClient, ops: LeagueClient
) -> None:
    ana = f"ana-{uuid.uuid4().hex[:8]}"
    game.submit(ana, 500)
    token = game.mint_token(ana)["token"]

    with LeagueClient(server.url, token) as client:
        first = client.player_events(ana)
        seen = events_until(collect(first), lambda e: isinstance(e, PlayerPlaced))
        cursor = first.last_event_id
        assert cursor is not None and seen[-1].cursor == cursor and seen[-1].player == ana
        first.close()  # the game's client goes away

        # While it is away, the period closes.
        period = roll_over(ops, game)

        def closed(e: Event) -> bool:
            return isinstance(e, PeriodClosed) and e.period == period

        resumed = client.player_events(ana, last_event_id=cursor)
        after = events_until(collect(resumed), closed)
        resumed.close()

        # From the start, the whole log: exactly what the two streams saw, in order.
        whole = client.player_events(ana)
        everything = events_until(collect(whole), closed)
        whole.close()

    assert [e.id for e in everything] == [e.id for e in seen] + [e.id for e in after]
    assert cursor not in [e.cursor for e in after]
    outcomes = [e for e in after if isinstance(e, OutcomeEvent)]
    assert len(outcomes) == 1 and outcomes[0].period == period and outcomes[0].player == ana
    assert any(isinstance(e, RewardGranted) and e.player == ana for e in after)


class Receiver(BaseHTTPRequestHandler):
    received: queue.Queue[tuple[dict[str, str], bytes]] = queue.Queue()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.put(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[queue.Queue[tuple[dict[str, str], bytes]]]:
    port = int(os.environ.get("LEAGUEKIT_TEST_WEBHOOK_PORT", "0"))
    if not port:
        pytest.fail("LEAGUEKIT_TEST_WEBHOOK_PORT is not set: run clients/python/run --events")
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield Receiver.received
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_signed_webhook_reaches_a_receiver(
    server: Server, game: LeagueClient, receiver: queue.Queue[tuple[dict[str, str], bytes]]
) -> None:
    bo = f"bo-{uuid.uuid4().hex[:8]}"
    game.join(bo)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            headers, body = receiver.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        event = verify_webhook(server.webhook_secret, headers.get("leaguekit-signature"), body)
        assert headers["leaguekit-event-id"] == event.id
        assert headers["leaguekit-event-type"] == event.type
        assert headers["content-type"].startswith("application/json")
        if isinstance(event, PlayerPlaced) and event.player == bo:
            return
    raise AssertionError(f"no player.placed webhook for {bo} within 60 s")
