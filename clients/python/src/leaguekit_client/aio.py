"""The asyncio client: :class:`AsyncLeagueClient` (the same methods, awaited)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TypeVar

import httpx

from . import _core as core
from ._core import Retries
from ._errors import LeagueError, StreamDisconnected
from ._sse import SSEDecoder
from ._stream import STREAM_HEADERS, is_event_stream, stream_item
from .events import StreamEnded, StreamItem
from .models import (
    AdjustOut,
    AuditOut,
    BanOut,
    BansOut,
    BatchItemIn,
    BatchItemOut,
    ClaimOut,
    ClockOut,
    CountsOut,
    DeadLettersOut,
    ExportLine,
    HealthOut,
    PeriodsOut,
    PlacementOut,
    PlayerOut,
    ProfileOut,
    ReplayOut,
    ResettleOut,
    RewardsOut,
    SeasonOut,
    StandingsOut,
    SubmissionOut,
    TokenOut,
    TopOut,
    UnbanOut,
)

__all__ = ["AsyncLeagueClient", "AsyncEventStream"]

T = TypeVar("T")


class AsyncLeagueClient:
    """The asyncio twin of :class:`~leaguekit_client.LeagueClient` (docs/http.md).

    Each method is one endpoint and answers its JSON as the generated TypedDict of
    :mod:`leaguekit_client.models`; an error answer raises :class:`LeagueError`.
    Scores, batches and claims carry a request id (a fresh UUID when you give none),
    and every resend of one call sends the same id. See :class:`Retries` for when a
    call is resent. Use it as an async context manager, or await :meth:`aclose`.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        retries: int | Retries = 3,
        timeout: float | httpx.Timeout = 15.0,
        stream_read_timeout: float = 45.0,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.retries = core.as_retries(retries)
        self._sleep = sleep
        self._stream_read_timeout = stream_read_timeout
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={
                "Authorization": f"Bearer {token}",
                "User-Agent": core.USER_AGENT,
                **(headers or {}),
            },
            timeout=timeout,
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncLeagueClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self, call: core.Call[T]) -> T:
        attempt = 0
        while True:
            err: LeagueError | None = None
            try:
                resp = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.body if call.has_body else None,
                )
            except httpx.TransportError as e:
                # A refused connection never reached the server: any call may be resent.
                if not (isinstance(e, httpx.ConnectError) or core.may_retry(call, None)):
                    raise
                delay = self.retries.delay(attempt, None)
                if delay is None:
                    raise
            else:
                if resp.is_success:
                    return call.parse(resp)
                err = core.error_of(resp)
                delay = self.retries.delay(attempt, err.retry_after)
                if delay is None or not core.may_retry(call, err):
                    raise err
                call.next_body(err)
            attempt += 1
            await self._sleep(delay)

    # System.

    async def healthz(self) -> HealthOut:
        """``GET /healthz``: ``{"status": "ok"}`` (no token needed)."""
        return await self._run(core.healthz())

    async def metrics(self) -> str:
        """``GET /metrics``: the Prometheus text (a viewer token)."""
        return await self._run(core.metrics())

    # Players and scores.

    async def join(self, player: str, *, at: str | None = None, cohort: str | None = None) -> PlacementOut:
        """``POST /v1/players/{player}/join``: places the player (again: the same bracket)."""
        return await self._run(core.join(player, at, cohort))

    async def submit(
        self,
        player: str,
        value: int,
        *,
        request_id: str | None = None,
        at: str | None = None,
        cohort: str | None = None,
        rank: bool | None = None,
    ) -> SubmissionOut:
        """``POST /v1/players/{player}/scores``. ``request_id`` (a fresh UUID when None)
        makes the update idempotent: a resend answers ``applied: False``."""
        return await self._run(core.submit(player, value, request_id, at, cohort, rank))

    async def batch(self, items: Sequence[BatchItemIn]) -> list[BatchItemOut]:
        """``POST /v1/scores:batch``: one result per item, in order (items without a
        ``request_id`` get a fresh one)."""
        return await self._run(core.batch(items))

    async def player(self, player: str, *, period: int | None = None) -> PlayerOut:
        """``GET /v1/players/{player}``."""
        return await self._run(core.player(player, period))

    async def around(
        self, player: str, *, radius: int | None = None, period: int | None = None
    ) -> StandingsOut:
        """``GET /v1/players/{player}/around``."""
        return await self._run(core.around(player, radius, period))

    async def profile(self, player: str) -> ProfileOut:
        """``GET /v1/players/{player}/profile``."""
        return await self._run(core.profile(player))

    async def set_profile(self, player: str, fields: Mapping[str, str]) -> ProfileOut:
        """``PUT /v1/players/{player}/profile``: the profile becomes exactly ``fields``."""
        return await self._run(core.set_profile(player, fields))

    async def patch_profile(self, player: str, fields: Mapping[str, str | None]) -> ProfileOut:
        """``PATCH /v1/players/{player}/profile``: sets the named fields (None removes one)."""
        return await self._run(core.patch_profile(player, fields))

    async def rewards(self, player: str) -> RewardsOut:
        """``GET /v1/players/{player}/rewards``: the unclaimed rewards."""
        return await self._run(core.rewards(player))

    async def claim(self, player: str, *, request_id: str | None = None) -> ClaimOut:
        """``POST /v1/players/{player}/rewards:claim``; a repeat with the same
        ``request_id`` answers the same grants."""
        return await self._run(core.claim(player, request_id))

    async def mint_token(self, player: str, *, ttl: int | None = None) -> TokenOut:
        """``POST /v1/players/{player}/token``: a player token for the game's client."""
        return await self._run(core.mint_token(player, ttl))

    # Standings.

    async def standings(
        self,
        tier: str,
        bracket: int,
        *,
        period: int | None = None,
        offset: int | None = None,
        limit: int | None = None,
        cohort: str | None = None,
    ) -> StandingsOut:
        """``GET /v1/tiers/{tier}/brackets/{bracket}``."""
        return await self._run(core.standings(tier, bracket, period, offset, limit, cohort))

    async def top(
        self,
        tier: str,
        *,
        period: int | None = None,
        limit: int | None = None,
        cohort: str | None = None,
    ) -> TopOut:
        """``GET /v1/tiers/{tier}/top``."""
        return await self._run(core.top(tier, period, limit, cohort))

    async def counts(self, *, period: int | None = None, cohort: str | None = None) -> CountsOut:
        """``GET /v1/counts``."""
        return await self._run(core.counts(period, cohort))

    async def season(self) -> SeasonOut:
        """``GET /v1/season``."""
        return await self._run(core.season())

    # Periods and time.

    async def periods(self, *, limit: int | None = None) -> PeriodsOut:
        """``GET /v1/periods``: the current period, the next boundary, closed reports."""
        return await self._run(core.periods(limit))

    async def export(self, period: int) -> list[ExportLine]:
        """``GET /v1/periods/{period}/export``: a closed period's lines."""
        return await self._run(core.export(period))

    async def clock(self) -> ClockOut:
        """``GET /v1/clock`` (admin token)."""
        return await self._run(core.clock())

    async def move_clock(
        self, *, advance: str | None = None, set: str | None = None, reason: str | None = None
    ) -> ClockOut:
        """``POST /v1/clock``: moves a staging league's clock forward (admin token)."""
        return await self._run(core.move_clock(advance, set, reason))

    # Operators (admin token).

    async def audit(
        self, *, player: str | None = None, since: str | None = None, limit: int | None = None
    ) -> AuditOut:
        """``GET /v1/audit``."""
        return await self._run(core.audit(player, since, limit))

    async def bans(self) -> BansOut:
        """``GET /v1/bans``."""
        return await self._run(core.bans())

    async def ban(self, player: str, *, reason: str, until: str | None = None) -> BanOut:
        """``POST /v1/players/{player}/ban``."""
        return await self._run(core.ban(player, reason, until))

    async def unban(self, player: str, *, reason: str | None = None) -> UnbanOut:
        """``POST /v1/players/{player}/unban``."""
        return await self._run(core.unban(player, reason))

    async def adjust(
        self, player: str, *, reason: str, by: int | None = None, set: int | None = None
    ) -> AdjustOut:
        """``POST /v1/players/{player}/adjust``: by or to a score (exactly one)."""
        return await self._run(core.adjust(player, by, set, reason))

    async def resettle(
        self, period: int, tier: str, bracket: int, *, exclude: Sequence[str], reason: str
    ) -> ResettleOut:
        """``POST /v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle``."""
        return await self._run(core.resettle(period, tier, bracket, exclude, reason))

    async def dead_letters(
        self, *, limit: int | None = None, after: str | None = None
    ) -> DeadLettersOut:
        """``GET /v1/webhooks/dead``: webhook deliveries given up after every attempt, a
        page at a time, oldest first: at most ``limit`` (1-1000, default 100), after
        ``after`` (the ``next`` of the page before). ``next`` is None on the last page."""
        return await self._run(core.dead_letters(limit, after))

    async def replay_dead_letters(
        self, *, reason: str, ids: Sequence[str] | None = None, all: bool = False
    ) -> ReplayOut:
        """``POST /v1/webhooks/dead:replay``: marks the dead letters of ``ids`` (event
        ids), or ``all=True`` of them, to be sent again within about 5 s (audited)."""
        return await self._run(core.replay_dead_letters(ids, all, reason))

    # Streams.

    def player_events(
        self, player: str, last_event_id: str | None = None, *, max_reconnects: int = 10
    ) -> AsyncEventStream:
        """``GET /v1/players/{player}/events``: the player's events, across periods,
        resumed after ``last_event_id`` (a cursor from an earlier stream)."""
        return AsyncEventStream(
            self, core.player_events_path(player), {}, last_event_id, max_reconnects
        )

    def bracket_events(
        self,
        tier: str,
        bracket: int,
        period: int | None = None,
        last_event_id: str | None = None,
        *,
        cohort: str | None = None,
        limit: int | None = None,
        max_reconnects: int = 10,
    ) -> AsyncEventStream:
        """``GET /v1/tiers/{tier}/brackets/{bracket}/events``: the bracket's events and
        its ``standings`` snapshots (``limit`` entries each)."""
        params: core.Params = {}
        if period is not None:
            params["period"] = period
        if cohort is not None:
            params["cohort"] = cohort
        if limit is not None:
            params["limit"] = limit
        return AsyncEventStream(
            self, core.bracket_events_path(tier, bracket), params, last_event_id, max_reconnects
        )


class AsyncEventStream(AsyncIterator[StreamItem]):
    """The asyncio twin of :class:`~leaguekit_client.EventStream`: ``async for`` it;
    ``await stream.aclose()`` (or ``async with``) drops the connection, also from
    another task while one is waiting in the iteration: that iteration then ends
    (``StopAsyncIteration``) instead of reconnecting. A server's ``end`` is its last
    item, a :class:`~leaguekit_client.events.StreamEnded`, as in the sync stream."""

    def __init__(
        self,
        client: AsyncLeagueClient,
        path: str,
        params: core.Params,
        last_event_id: str | None,
        max_reconnects: int,
    ) -> None:
        self._client = client
        self._path = path
        self._params = params
        self.last_event_id = last_event_id
        self.ended: StreamEnded | None = None
        """The server's ``end`` event, once the stream yielded it (its last item)."""
        self._max_reconnects = max_reconnects
        self._gen = self._items()
        self._closed = asyncio.Event()
        self._resp: httpx.Response | None = None

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> StreamItem:
        return await self._gen.__anext__()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def aclose(self) -> None:
        """Drops the connection and ends the iteration; safe from any task."""
        self._closed.set()
        resp, self._resp = self._resp, None
        if resp is not None:
            await _interrupt(resp)
        try:
            await self._gen.aclose()
        except RuntimeError:
            # Another task is inside the generator ("already running"): the
            # connection is shut down under it, and it returns on seeing `closed`.
            pass

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _items(self) -> AsyncGenerator[StreamItem, None]:
        c = self._client
        failures = 0
        retry_ms: int | None = None
        while not self._closed.is_set():
            headers = dict(STREAM_HEADERS)
            if self.last_event_id is not None:
                headers["Last-Event-ID"] = self.last_event_id
            timeout = httpx.Timeout(15.0, read=c._stream_read_timeout)
            retry_after: float | None = None
            ended: StreamEnded | None = None
            try:
                async with c._http.stream(
                    "GET", self._path, params=self._params, headers=headers, timeout=timeout
                ) as resp:
                    if self._closed.is_set():
                        return
                    self._resp = resp
                    if not resp.is_success:
                        await resp.aread()
                        err = core.error_of(resp)
                        if not (err.status >= 500 or err.status in (408, 429)):
                            raise err
                        retry_after = err.retry_after
                    elif not is_event_stream(resp.headers.get("content-type")):
                        await resp.aread()
                        raise LeagueError(
                            resp.status_code,
                            "unexpected_response",
                            f"not an event stream: {resp.headers.get('content-type')}",
                        )
                    else:
                        decoder = SSEDecoder(self.last_event_id)
                        async for chunk in resp.aiter_bytes():
                            for msg in decoder.feed(chunk):
                                item = stream_item(msg)
                                if msg.has_id:
                                    self.last_event_id = msg.id
                                if isinstance(item, StreamEnded):
                                    # The server's last word: nothing after it is read.
                                    ended = item
                                    break
                                if item is not None:
                                    failures = 0
                                    yield item
                            if ended is not None:
                                break
                            self.last_event_id = decoder.last_event_id
                            retry_ms = decoder.retry_ms
            except Exception as e:
                # A read cut by aclose() ends in a transport error, or in another
                # error of the closed response: either way the stream is over.
                if self._closed.is_set():
                    return
                if not isinstance(e, httpx.TransportError):
                    raise
            finally:
                self._resp = None
            if ended is not None:
                # Not a drop: the server would refuse the same token. The connection is
                # closed (the `with` above); the end is the last item.
                self.ended = ended
                yield ended
                return
            if self._closed.is_set():
                return
            failures += 1
            if failures > self._max_reconnects:
                raise StreamDisconnected(
                    f"{self._path}: disconnected {failures} times in a row", self.last_event_id
                )
            if retry_after is None and retry_ms is not None:
                retry_after = retry_ms / 1000.0
            delay = Retries(
                max_retries=self._max_reconnects,
                backoff=c.retries.backoff,
                max_backoff=c.retries.max_backoff,
                max_retry_after=float("inf"),
            ).delay(failures - 1, retry_after)
            delay = delay if delay is not None else c.retries.max_backoff
            if c._sleep is asyncio.sleep:
                try:  # an aclose() cuts the wait short
                    await asyncio.wait_for(self._closed.wait(), delay)
                except TimeoutError:
                    pass
            else:
                await c._sleep(delay)


async def _interrupt(resp: httpx.Response) -> None:
    """Wakes a task waiting to read ``resp``: shutting its socket down ends the read
    (the reading task then closes the response itself). A transport that exposes no
    socket (a mock) gets its response closed here."""
    stream = resp.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
            return
        except OSError:
            pass  # already gone
    try:
        await resp.aclose()
    except Exception:
        pass  # the reading task may be closing it too; it is going away either way
