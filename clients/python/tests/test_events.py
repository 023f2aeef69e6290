"""The event log seen from a game server: the player stream across a rollover, resumed
after a disconnect, a signed webhook to a local receiver, and a delivery given up (a
dead letter) listed and replayed. Every delivery received is verified three ways:
Leaguekit-Signature (verify_webhook), and Standard Webhooks' headers with
verify_standard_webhook and with the reference library, ``standardwebhooks``.

Marked `events`: run with `clients/python/run --events`, which also sets
LEAGUEKIT_WEBHOOK_URLS and LEAGUEKIT_WEBHOOK_SECRET on the server, with two attempts
per delivery 200 ms apart.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import standardwebhooks

from leaguekit_client import (
    Event,
    EventStream,
    LeagueClient,
    LeagueError,
    OutcomeEvent,
    PeriodClosed,
    PlayerPlaced,
    RewardGranted,
    StreamEnded,
    StreamItem,
    parse_event_json,
    verify_standard_webhook,
    verify_webhook,
)
from leaguekit_client.models import DeadLetterOut

from .conftest import Server
from .test_season import roll_over

pytestmark = pytest.mark.events


Items = queue.Queue[StreamItem | BaseException | None]
"""What a stream read in a thread gave: its items, then None when the iteration ended,
or the exception that ended it."""


def collect(stream: EventStream) -> Items:
    """Reads the stream in a thread, so the test waits with a deadline."""
    q: Items = queue.Queue()

    def read() -> None:
        try:
            for item in stream:
                q.put(item)
            q.put(None)
        except BaseException as e:  # handed to the test
            q.put(e)

    threading.Thread(target=read, daemon=True).start()
    return q


def events_until(
    q: Items,
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
        if item is None:
            break
        if isinstance(item, Event):
            out.append(item)
            if done(item):
                return out
    raise AssertionError(f"the stream did not get there within {seconds} s; got {[e.type for e in out]}")


def ended(q: Items, seconds: float = 5) -> None:
    """The thread's iteration ends (within ``seconds``), without an error."""
    deadline = time.monotonic() + seconds
    while True:
        item = q.get(timeout=max(0.0, deadline - time.monotonic()))
        if item is None:
            return
        if isinstance(item, BaseException):
            raise item


def test_a_player_stream_across_a_rollover_resumed_after_a_disconnect(
    server: Server, game: LeagueClient, ops: LeagueClient
) -> None:
    ana = f"ana-{uuid.uuid4().hex[:8]}"
    game.submit(ana, 500)
    token = game.mint_token(ana)["token"]

    with LeagueClient(server.url, token) as client:
        first = client.player_events(ana)
        reading = collect(first)
        seen = events_until(reading, lambda e: isinstance(e, PlayerPlaced))
        cursor = first.last_event_id
        assert cursor is not None and seen[-1].cursor == cursor and seen[-1].player == ana
        # The game's client goes away: closed from this thread while the reading thread
        # waits for the next event, which ends that iteration at once.
        first.close()
        ended(reading)
        assert first.closed and first.last_event_id == cursor

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
    assert len({e.id for e in everything}) == len(everything)  # nothing twice
    assert cursor not in [e.cursor for e in after]
    outcomes = [e for e in after if isinstance(e, OutcomeEvent)]
    assert len(outcomes) == 1 and outcomes[0].period == period and outcomes[0].player == ana
    assert any(isinstance(e, RewardGranted) and e.player == ana for e in after)


def test_a_banned_players_stream_ends_with_the_reason(
    server: Server, game: LeagueClient, ops: LeagueClient
) -> None:
    eve = f"eve-{uuid.uuid4().hex[:8]}"
    game.submit(eve, 5)
    token = game.mint_token(eve)["token"]

    with LeagueClient(server.url, token) as client:
        stream = client.player_events(eve)
        reading = collect(stream)
        seen = events_until(reading, lambda e: isinstance(e, PlayerPlaced))
        ops.ban(eve, reason="stream end test")
        # The server ends the stream: its last item says why, then the iteration ends.
        last = reading.get(timeout=10)
        assert isinstance(last, StreamEnded), last
        assert last.reason == "banned" and eve in last.message
        ended(reading)
        assert stream.ended == last and stream.last_event_id == seen[-1].cursor

        # While the ban holds: no stream with the player's token, and no new token.
        with pytest.raises(LeagueError) as e:
            next(client.player_events(eve))
        assert (e.value.status, e.value.code) == (403, "banned")
    with pytest.raises(LeagueError) as e:
        game.mint_token(eve)
    assert (e.value.status, e.value.code) == (403, "banned")
    ops.unban(eve, reason="stream end test")


Delivery = tuple[dict[str, str], bytes]


DOWN_FOR: set[str] = set()
"""Players whose events the receiver answers 500 (the others get 204)."""


def verified(server: Server, headers: dict[str, str], body: bytes) -> Event:
    """The delivery's event, once each of its signatures holds: ``Leaguekit-Signature``
    with verify_webhook, the Standard Webhooks headers with verify_standard_webhook and
    with the reference library, ``standardwebhooks`` (given a whsec_ secret as it is,
    a plain one as its bytes, as docs/http.md says)."""
    secret = server.webhook_secret
    event = verify_webhook(secret, headers.get("leaguekit-signature"), body)
    assert verify_standard_webhook(secret, headers, body).id == event.id
    reference = standardwebhooks.Webhook(secret if secret.startswith("whsec_") else secret.encode())
    assert reference.verify(body, headers) == json.loads(body)
    assert headers["webhook-id"] == headers["leaguekit-event-id"] == event.id
    t = headers["leaguekit-signature"].split(",")[0]
    assert t == f"t={headers['webhook-timestamp']}", headers
    return event


class Receiver(BaseHTTPRequestHandler):
    received: queue.Queue[Delivery] = queue.Queue()
    every: list[Delivery] = []
    """Every POST received, which the fixture verifies once the test is over."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        delivery = ({k.lower(): v for k, v in self.headers.items()}, body)
        self.every.append(delivery)
        self.received.put(delivery)
        down = parse_event_json(body).player in DOWN_FOR
        self.send_response(500 if down else 204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver(server: Server) -> Iterator[queue.Queue[Delivery]]:
    port = int(os.environ.get("LEAGUEKIT_TEST_WEBHOOK_PORT", "0"))
    if not port:
        pytest.fail("LEAGUEKIT_TEST_WEBHOOK_PORT is not set: run clients/python/run --events")
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    Receiver.every.clear()
    try:
        yield Receiver.received
    finally:
        DOWN_FOR.clear()
        httpd.shutdown()
        httpd.server_close()
    # Every delivery this test received, taken by the test or not, is signed both ways.
    assert Receiver.every, "no webhook received"
    for headers, body in Receiver.every:
        verified(server, headers, body)


def test_a_signed_webhook_reaches_a_receiver(
    server: Server, game: LeagueClient, receiver: queue.Queue[Delivery]
) -> None:
    bo = f"bo-{uuid.uuid4().hex[:8]}"
    game.join(bo)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            headers, body = receiver.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        event = verified(server, headers, body)
        assert headers["leaguekit-event-id"] == event.id
        assert headers["leaguekit-event-type"] == event.type
        assert headers["content-type"].startswith("application/json")
        if isinstance(event, PlayerPlaced) and event.player == bo:
            return
    raise AssertionError(f"no player.placed webhook for {bo} within 60 s")


def test_a_dead_letter_is_listed_and_replayed(
    server: Server, game: LeagueClient, ops: LeagueClient, receiver: queue.Queue[Delivery]
) -> None:
    di = f"di-{uuid.uuid4().hex[:8]}"
    DOWN_FOR.add(di)
    game.join(di)

    # Both attempts fail: the placement becomes a dead letter.
    deadline = time.monotonic() + 60
    letters: list[DeadLetterOut] = []
    while not letters:
        assert time.monotonic() < deadline, f"no dead letter for {di} within 60 s"
        letters = [
            letter
            for letter in ops.dead_letters()["dead"]
            if parse_event_json(letter["event"]).player == di
        ]
        if not letters:
            time.sleep(0.2)
    (letter,) = letters
    # Listed a page at a time too: each page within its limit, the letter on one.
    paged: list[tuple[str, str]] = []
    after: str | None = None
    for _ in range(1000):
        page = ops.dead_letters(limit=1, after=after)
        assert len(page["dead"]) <= 1
        paged += [(d["id"], d["url"]) for d in page["dead"]]
        after = page["next"]
        if after is None:
            break
    assert after is None, "the pages of dead letters never end"
    assert (letter["id"], letter["url"]) in paged and len(set(paged)) == len(paged)
    placed = parse_event_json(letter["event"])
    assert isinstance(placed, PlayerPlaced) and placed.id == letter["id"]
    assert letter["url"] == os.environ["LEAGUEKIT_WEBHOOK_URLS"]
    assert letter["attempts"] == 2 and "500" in letter["error"] and not letter["replay"]

    with pytest.raises(ValueError):  # checked before anything is sent
        ops.replay_dead_letters(reason="neither ids nor all")
    with pytest.raises(LeagueError) as e:
        ops.replay_dead_letters(ids=["p1/bronze/b1@0-0"], reason="no such letter")
    assert e.value.code == "bad_request"
    with pytest.raises(LeagueError) as e:
        game.replay_dead_letters(ids=[letter["id"]], reason="a game server may not")
    assert e.value.code == "forbidden"

    # The receiver is fixed; the operator replays the letter.
    DOWN_FOR.discard(di)
    replayed = ops.replay_dead_letters(ids=[letter["id"]], reason="receiver fixed")
    assert replayed["marked"] == 1
    assert [(d["id"], d["replay"]) for d in replayed["dead"]] == [(letter["id"], True)]
    tries: list[str] = []
    deadline = time.monotonic() + 30
    while len(tries) < 3:
        try:
            headers, body = receiver.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"the replayed letter was not delivered; got {tries}") from None
        event = verified(server, headers, body)
        assert headers["leaguekit-event-id"] == event.id
        if event.player == di:
            tries.append(event.id)
    # Twice given up, then once replayed: the same event each time.
    assert tries == [letter["id"]] * 3
    deadline = time.monotonic() + 30
    while any(d["id"] == letter["id"] for d in ops.dead_letters()["dead"]):
        assert time.monotonic() < deadline, "the replayed letter is still listed"
        time.sleep(0.2)
