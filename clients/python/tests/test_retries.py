"""Request ids and retries, against an httpx.MockTransport (no server)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from leaguekit_client import AsyncLeagueClient, LeagueClient, LeagueError, Retries

SUBMITTED = {
    "player": "ana",
    "period": 45,
    "tier": "bronze",
    "bracket": 1,
    "score": 120,
    "rank": 1,
    "applied": True,
    "last": None,
    "pending_rewards": None,
}


def error(status: int, code: str, headers: dict[str, str] | None = None, **extra: object) -> httpx.Response:
    return httpx.Response(
        status, json={"error": {"code": code, "message": code, **extra}}, headers=headers
    )


class Script:
    """Answers each request with the next of ``answers``; records the requests."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def bodies(self) -> list[dict[str, object]]:
        return [json.loads(r.content) for r in self.requests]


def client(script: Script, sleeps: list[float], retries: int | Retries = 3) -> LeagueClient:
    return LeagueClient(
        "http://league.test",
        "server-token",
        retries=retries,
        transport=httpx.MockTransport(script),
        sleep=sleeps.append,
    )


def test_a_submit_is_resent_with_the_same_generated_request_id() -> None:
    script = Script(
        httpx.ConnectError("refused"),
        httpx.ReadError("connection reset"),
        error(503, "store_unavailable"),
        httpx.Response(200, json=SUBMITTED),
    )
    sleeps: list[float] = []
    with client(script, sleeps) as c:
        assert c.submit("ana", 120)["score"] == 120
    bodies = script.bodies()
    assert len(bodies) == 4
    ids = {b["request_id"] for b in bodies}
    assert len(ids) == 1 and isinstance(bodies[0]["request_id"], str)
    assert all(b["value"] == 120 for b in bodies)
    assert script.requests[0].headers["authorization"] == "Bearer server-token"
    # Exponential backoff with jitter: each wait within [ceiling/2, ceiling].
    assert len(sleeps) == 3
    for attempt, slept in enumerate(sleeps):
        ceiling = min(8.0, 0.25 * 2**attempt)
        assert ceiling / 2 <= slept <= ceiling


def test_a_given_request_id_is_kept_and_two_calls_get_two_ids() -> None:
    script = Script(error(500, "internal"), *(httpx.Response(200, json=SUBMITTED) for _ in range(2)))
    with client(script, []) as c:
        c.submit("ana", 1, request_id="match-17")
        c.submit("ana", 1)
    ids = [b["request_id"] for b in script.bodies()]
    assert ids[:2] == ["match-17", "match-17"]
    assert ids[2] != "match-17"


def test_retry_after_is_honoured_for_not_started_and_rate_limited() -> None:
    script = Script(
        error(409, "not_started", headers={"Retry-After": "2"}, retry_after_ms=1500),
        error(429, "rate_limited", headers={"Retry-After": "3"}),
        httpx.Response(200, json=SUBMITTED),
    )
    sleeps: list[float] = []
    with client(script, sleeps) as c:
        c.submit("ana", 5)
    assert 1.5 <= sleeps[0] < 1.8  # retry_after_ms wins: it is exact
    assert 3.0 <= sleeps[1] < 3.3


def test_an_unknown_answer_pins_the_event_time_for_the_resend() -> None:
    at = "2026-01-05T12:00:00Z"
    script = Script(error(503, "unknown", at=at), httpx.Response(200, json={**SUBMITTED, "applied": False}))
    with client(script, []) as c:
        assert c.submit("ana", 5)["applied"] is False
    first, second = script.bodies()
    assert "at" not in first and second["at"] == at
    assert first["request_id"] == second["request_id"]


def test_retries_are_bounded() -> None:
    script = Script(*(error(503, "store_unavailable") for _ in range(3)))
    sleeps: list[float] = []
    with client(script, sleeps, retries=2) as c, pytest.raises(LeagueError) as e:
        c.player("ana")
    assert (e.value.status, e.value.code) == (503, "store_unavailable")
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_a_wait_longer_than_allowed_is_not_slept() -> None:
    script = Script(error(409, "still_closing", headers={"Retry-After": "600"}))
    sleeps: list[float] = []
    with client(script, sleeps) as c, pytest.raises(LeagueError) as e:
        c.submit("ana", 1)
    assert e.value.code == "still_closing" and e.value.retry_after == 600
    assert sleeps == []


def test_client_errors_are_not_retried_and_are_typed() -> None:
    script = Script(error(409, "period_closed"))
    with client(script, []) as c, pytest.raises(LeagueError) as e:
        c.submit("ana", 1)
    assert (e.value.status, e.value.code, e.value.message) == (409, "period_closed", "period_closed")
    assert len(script.requests) == 1


def test_a_write_without_request_id_is_not_resent_after_it_may_have_arrived() -> None:
    for failure in (error(503, "unknown"), httpx.ReadError("reset")):
        script = Script(failure, httpx.Response(200, json={}))
        with client(script, []) as c, pytest.raises((LeagueError, httpx.ReadError)):
            c.join("ana")
        assert len(script.requests) == 1


def test_a_request_that_never_arrived_is_resent_whatever_it_is() -> None:
    placed = {"player": "ana", "period": 45, "tier": "bronze", "bracket": 1}
    script = Script(
        httpx.ConnectError("refused"),
        error(503, "store_unreachable", headers={"Retry-After": "1"}),
        httpx.Response(200, json=placed),
    )
    sleeps: list[float] = []
    with client(script, sleeps) as c:
        assert c.join("ana")["bracket"] == 1
    assert len(script.requests) == 3 and sleeps[1] >= 1.0


def test_a_batch_gives_each_item_an_id_and_resends_the_same() -> None:
    script = Script(httpx.ReadTimeout("slow"), httpx.Response(200, json=[]))
    with client(script, []) as c:
        c.batch([{"player": "ana", "value": 1}, {"player": "bo", "value": 2, "request_id": "m-bo"}])
    first, second = (json.loads(r.content) for r in script.requests)
    assert first == second
    assert first[1]["request_id"] == "m-bo" and first[0]["request_id"]


def test_a_claim_gets_a_request_id_kept_across_retries() -> None:
    script = Script(error(502, "bad_gateway"), httpx.Response(200, json={"player": "ana", "granted": []}))
    with client(script, []) as c:
        c.claim("ana")
    ids = [b["request_id"] for b in script.bodies()]
    assert len(ids) == 2 and ids[0] == ids[1]


def test_a_non_json_error_is_still_typed() -> None:
    script = Script(httpx.Response(404, text="not here"))
    with client(script, []) as c, pytest.raises(LeagueError) as e:
        c.season()
    assert (e.value.status, e.value.code) == (404, "unexpected_response")


def test_path_segments_are_escaped() -> None:
    script = Script(httpx.Response(200, json={}))
    with client(script, []) as c:
        c.player("a/b c?")
    assert script.requests[0].url.raw_path == b"/v1/players/a%2Fb%20c%3F"


def test_the_async_client_resends_the_same_request_id() -> None:
    script = Script(error(503, "store_unavailable"), httpx.Response(200, json=SUBMITTED))
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def main() -> None:
        async with AsyncLeagueClient(
            "http://league.test", "t", transport=httpx.MockTransport(script), sleep=sleep
        ) as c:
            assert (await c.submit("ana", 120))["applied"] is True

    asyncio.run(main())
    ids = [b["request_id"] for b in script.bodies()]
    assert len(ids) == 2 and ids[0] == ids[1] and len(sleeps) == 1


def test_dead_letters_are_listed_with_retries_and_a_replay_is_never_resent() -> None:
    letter_id = "p45/bronze/b3@1-0"
    letter = {
        "id": letter_id,
        "url": "https://game.test/hook",
        "event": "{}",
        "attempts": 8,
        "error": "HTTP 500",
        "at": "2026-01-01T00:00:00Z",
        "replay": False,
    }
    script = Script(error(503, "store_unavailable"), httpx.Response(200, json={"dead": [letter], "next": None}))
    sleeps: list[float] = []
    with client(script, sleeps) as c:
        page = c.dead_letters()
        assert page["dead"] == [letter] and page["next"] is None
    assert [(r.method, r.url.path) for r in script.requests] == [("GET", "/v1/webhooks/dead")] * 2

    # Paged: `limit`, and `after` the `next` of the page before.
    script = Script(
        httpx.Response(200, json={"dead": [letter], "next": "cursor-1"}),
        httpx.Response(200, json={"dead": [], "next": None}),
    )
    with client(script, sleeps) as c:
        first = c.dead_letters(limit=1)
        assert first["next"] == "cursor-1"
        assert c.dead_letters(limit=1, after=first["next"]) == {"dead": [], "next": None}
    assert [r.url.query for r in script.requests] == [b"limit=1", b"limit=1&after=cursor-1"]

    script = Script(
        httpx.Response(200, json={"marked": 1, "dead": [{**letter, "replay": True}]}),
        error(500, "internal"),
    )
    with client(script, sleeps) as c:
        assert c.replay_dead_letters(ids=[letter_id], reason="receiver fixed")["marked"] == 1
        with pytest.raises(LeagueError):
            c.replay_dead_letters(all=True, reason="again")
        with pytest.raises(ValueError):
            c.replay_dead_letters(reason="neither")
        with pytest.raises(ValueError):
            c.replay_dead_letters(ids=["x"], all=True, reason="both")
    assert [r.url.path for r in script.requests] == ["/v1/webhooks/dead:replay"] * 2
    assert script.bodies() == [
        {"ids": [letter_id], "reason": "receiver fixed"},
        {"all": True, "reason": "again"},
    ]

    async def replay() -> int:
        s = Script(httpx.Response(200, json={"marked": 0, "dead": []}))
        async with AsyncLeagueClient(
            "http://league.test", "t", transport=httpx.MockTransport(s)
        ) as a:
            out = await a.replay_dead_letters(all=True, reason="async")
            assert out["marked"] == 0
        return len(s.requests)

    assert asyncio.run(replay()) == 1
