"""The event stream's parser and reconnection (no server)."""

from __future__ import annotations

import asyncio
import threading
import time
import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from leaguekit_client import (
    AsyncLeagueClient,
    Event,
    LeagueClient,
    LeagueError,
    PlayerOvertaken,
    PlayerPlaced,
    RewardClaimed,
    Standings,
    StreamDisconnected,
    StreamEnded,
    StreamError,
    StreamItem,
)
from leaguekit_client._sse import SSEDecoder
from leaguekit_client._stream import stream_item
from leaguekit_client.events import stream_end


def event_json(n: int, kind: str = "player.placed", data: dict[str, object] | None = None) -> str:
    return json.dumps(
        {
            "id": f"e{n}",
            "type": kind,
            "season": "weekly-ladder",
            "period": 45,
            "at": 1767225600000 + n,
            "player": "ana",
            "tier": "bronze",
            "bracket": 1,
            "data": data or {},
        }
    )


def decode(*chunks: bytes) -> list[tuple[str, str, str | None]]:
    d = SSEDecoder()
    out = []
    for c in chunks:
        out += [(e.event, e.data, e.id) for e in d.feed(c)]
    return out


def test_line_ends_comments_and_fields() -> None:
    stream = b"\xef\xbb\xbf: keep-alive\r\nevent: a\r\nid: 1\r\ndata: x\r\ndata:y\r\n\r\n:\n\nevent:b\rdata: z\r\r"
    assert decode(stream) == [("a", "x\ny", "1"), ("b", "z", "1")]


def test_chunks_split_anywhere() -> None:
    stream = "id: 7\ndata: héllo\r\n\r\ndata: {\"a\": 1}\n\n".encode()
    whole = decode(stream)
    assert whole == [("message", "héllo", "7"), ("message", '{"a": 1}', "7")]
    for i in range(len(stream)):
        assert decode(stream[:i], stream[i:]) == whole
    assert decode(*(bytes([b]) for b in stream)) == whole


def test_an_event_without_data_is_not_dispatched_but_its_id_holds() -> None:
    d = SSEDecoder()
    assert d.feed(b"id: 9\n\nretry: 1500\nretry: x\n\n") == []
    assert d.last_event_id == "9" and d.retry_ms == 1500
    assert d.feed(b"id: a\0b\ndata: q\n\n")[0].id == "9"  # an id with NUL is ignored


class Streams:
    """Answers stream requests with the next body; records Last-Event-ID."""

    def __init__(self, *bodies: bytes | httpx.Response) -> None:
        self.bodies = list(bodies)
        self.last_ids: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.last_ids.append(request.headers.get("last-event-id"))
        if not self.bodies:
            raise httpx.ConnectError("gone")
        body = self.bodies.pop(0)
        if isinstance(body, httpx.Response):
            return body

        def chunks() -> Iterator[bytes]:
            # Half an event at a time, then the connection drops.
            yield body[: len(body) // 2]
            yield body[len(body) // 2 :]

        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=chunks()
        )


def sse(event: str, data: str, id: str | None = None) -> bytes:
    return (f"event: {event}\n" + (f"id: {id}\n" if id else "") + f"data: {data}\n\n").encode()


def test_the_stream_reconnects_with_last_event_id_and_types_events() -> None:
    first = (
        b": keep-alive\n\n"
        + sse("player.placed", event_json(1), "c1")
        + sse("player.overtaken", event_json(2, "player.overtaken", {"by": "bo", "rank": 4}), "c2")
        + sse("standings", json.dumps({"period": 45, "tier": "bronze", "bracket": 1, "players": 1, "entries": []}))
        + b"event: player.placed\nid: c3\ndata: {\"id\": \"e3\""  # cut mid-event
    )
    second = (
        sse("reward.claimed", event_json(3, "reward.claimed", {"rewards": [{"source": "44/bronze/1", "grant": "gems:1"}]}), "c3")
        + sse("error", json.dumps({"error": {"code": "store_unavailable", "message": "down"}}))
        + sse("future.thing", event_json(4, "future.thing", {"x": 1}), "c4")
    )
    streams = Streams(first, second)
    sleeps: list[float] = []
    with LeagueClient("http://league.test", "t", transport=httpx.MockTransport(streams), sleep=sleeps.append) as c:
        stream = c.player_events("ana", max_reconnects=2)
        items = [next(stream) for _ in range(6)]
        assert stream.last_event_id == "c4"
        with pytest.raises(StreamDisconnected) as e:
            next(stream)
        assert e.value.last_event_id == "c4"
    assert isinstance(items[0], PlayerPlaced) and items[0].cursor == "c1"
    assert isinstance(items[1], PlayerOvertaken) and (items[1].by, items[1].rank) == ("bo", 4)
    assert isinstance(items[2], Standings) and items[2].standings["players"] == 1
    assert isinstance(items[3], RewardClaimed) and items[3].rewards[0].grant == "gems:1"
    assert isinstance(items[4], StreamError) and items[4].error.code == "store_unavailable"
    assert type(items[5]) is Event and items[5].type == "future.thing" and items[5].data == {"x": 1}
    # The cut event's id is not taken: it is resent after the reconnection.
    assert streams.last_ids == [None, "c2", "c4", "c4"]


def test_a_forbidden_stream_raises_at_once() -> None:
    streams = Streams(httpx.Response(403, json={"error": {"code": "forbidden", "message": "no"}}))
    with LeagueClient("http://league.test", "t", transport=httpx.MockTransport(streams)) as c:
        with pytest.raises(LeagueError) as e:
            next(c.bracket_events("bronze", 1, period=44, last_event_id="c9"))
    assert e.value.code == "forbidden" and streams.last_ids == ["c9"]


def test_the_async_stream_resumes_the_same_way() -> None:
    bodies = [
        sse("player.placed", event_json(1), "c1") + b"id: c2\ndata: {\"cut",
        sse("period.closed", event_json(2, "period.closed", {"brackets": 1, "players": 2}), "c2"),
    ]
    last_ids: list[str | None] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        last_ids.append(request.headers.get("last-event-id"))
        body = bodies.pop(0)

        async def chunks() -> AsyncIterator[bytes]:
            yield body

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())

    async def noop(_: float) -> None:
        pass

    async def main() -> list[Event]:
        async with AsyncLeagueClient(
            "http://league.test", "t", transport=httpx.MockTransport(handler), sleep=noop
        ) as c:
            out: list[Event] = []
            async with c.player_events("ana") as stream:
                async for item in stream:
                    assert isinstance(item, Event)
                    out.append(item)
                    if len(out) == 2:
                        break
            return out

    events = asyncio.run(main())
    assert [e.cursor for e in events] == ["c1", "c2"]
    assert last_ids == [None, "c1"]


class Hanging(httpx.SyncByteStream):
    """A stream body that sends one event, then waits until the response is closed."""

    def __init__(self, first: bytes) -> None:
        self.first = first
        self.released = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        self.released.wait(30)

    def close(self) -> None:
        self.released.set()


def test_a_stream_closed_from_another_thread_ends_its_iteration() -> None:
    requests: list[httpx.Request] = []
    body = Hanging(sse("player.placed", event_json(1), "c1"))

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    with LeagueClient("http://league.test", "t", transport=httpx.MockTransport(handler)) as c:
        stream = c.player_events("ana")
        got: list[object] = []
        ended = threading.Event()

        def read() -> None:
            for item in stream:  # blocks after the first event
                got.append(item)
            ended.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(got) == 1 and not ended.is_set()
        stream.close()  # not "generator already executing"
        assert ended.wait(5), "the reading thread's iteration did not end"
        stream.close()  # twice is fine
        with pytest.raises(StopIteration):
            next(stream)
    assert stream.closed and stream.last_event_id == "c1"
    assert len(requests) == 1  # closed, not reconnected


class AsyncHanging(httpx.AsyncByteStream):
    def __init__(self, first: bytes) -> None:
        self.first = first
        self.released = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        await self.released.wait()

    async def aclose(self) -> None:
        self.released.set()


def test_an_async_stream_closed_from_another_task_ends_its_iteration() -> None:
    requests: list[httpx.Request] = []

    async def main() -> list[object]:
        body = AsyncHanging(sse("player.placed", event_json(1), "c1"))

        async def handler(request: httpx.Request) -> httpx.Response:
            requests.append(request)
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

        async with AsyncLeagueClient(
            "http://league.test", "t", transport=httpx.MockTransport(handler)
        ) as c:
            stream = c.player_events("ana")
            got: list[object] = []

            async def read() -> None:
                async for item in stream:
                    got.append(item)

            reader = asyncio.create_task(read())
            while not got:
                await asyncio.sleep(0.01)
            await stream.aclose()  # not "asynchronous generator is already running"
            await asyncio.wait_for(reader, 5)
            assert stream.closed
            return got

    got = asyncio.run(main())
    assert len(got) == 1 and len(requests) == 1


def test_an_end_event_is_read_as_stream_ended() -> None:
    d = SSEDecoder()
    (msg,) = d.feed(b'event: end\ndata: {"reason": "banned", "message": "banned until 2026-02-01"}\n\n')
    assert stream_item(msg) == StreamEnded("banned", "banned until 2026-02-01")
    assert msg.id is None  # no id: the cursor stays the last event's
    # Data that is not the expected object still ends the stream.
    assert stream_end("gone") == StreamEnded("unknown", "gone")
    assert stream_end('{"reason": 7}') == StreamEnded("unknown", '{"reason": 7}')
    assert stream_end('{"reason": "maintenance", "message": "m", "x": 1}') == StreamEnded("maintenance", "m")


def test_an_end_event_is_the_last_item_and_closes_the_connection() -> None:
    requests: list[httpx.Request] = []
    body = Hanging(
        sse("player.placed", event_json(1), "c1")
        + sse("end", json.dumps({"reason": "token_expired", "message": "the token expired"}))
        + sse("player.placed", event_json(2), "c2")  # after the end: never read
    )

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    with LeagueClient("http://league.test", "t", transport=httpx.MockTransport(handler)) as c:
        with c.player_events("ana") as stream:
            items = list(stream)  # ends by itself: the body would otherwise hang
            assert body.released.is_set(), "the connection is closed"
            with pytest.raises(StopIteration):
                next(stream)
    assert isinstance(items[0], PlayerPlaced) and items[0].cursor == "c1"
    assert items[1:] == [StreamEnded("token_expired", "the token expired")]
    assert stream.ended == StreamEnded("token_expired", "the token expired")
    assert stream.last_event_id == "c1"
    assert len(requests) == 1  # ended, not reconnected


def test_an_async_stream_ends_at_its_end_event() -> None:
    requests: list[httpx.Request] = []

    async def main() -> tuple[list[StreamItem], AsyncHanging, StreamEnded | None]:
        body = AsyncHanging(
            sse("standings", json.dumps({"period": 45, "tier": "bronze", "bracket": 1, "players": 0, "entries": []}))
            + sse("end", json.dumps({"reason": "banned", "message": "banned"}))
        )

        async def handler(request: httpx.Request) -> httpx.Response:
            requests.append(request)
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

        async with AsyncLeagueClient(
            "http://league.test", "t", transport=httpx.MockTransport(handler)
        ) as c:
            async with c.bracket_events("bronze", 1) as stream:
                got = [item async for item in stream]
            return got, body, stream.ended

    got, body, ended = asyncio.run(asyncio.wait_for(main(), 5))
    assert isinstance(got[0], Standings)
    assert got[1:] == [StreamEnded("banned", "banned")] and ended == got[1]
    assert body.released.is_set() and len(requests) == 1
