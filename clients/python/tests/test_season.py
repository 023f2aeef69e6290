"""A season played end to end against the `leaguekit serve` of clients/python/run."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta

import pytest

from leaguekit_client import LeagueClient, LeagueError

from .conftest import Server


def rfc3339(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def parse_time(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def roll_over(ops: LeagueClient, game: LeagueClient) -> int:
    """Moves the staging clock past the running period's close and waits until the
    scheduler closed it; answers the closed period."""
    current = game.periods()["current"]
    assert current is not None
    period = current["id"]
    target = parse_time(current["closes_at"]) + timedelta(seconds=2)
    ops.move_clock(set=rfc3339(target), reason="python client tests: close the period")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        closed = game.periods()["closed_through"]
        if closed is not None and closed >= period:
            return period
        time.sleep(0.2)
    raise AssertionError(f"period {period} was not closed within 60 s")


def test_a_season_end_to_end(server: Server, game: LeagueClient, ops: LeagueClient) -> None:
    run = uuid.uuid4().hex[:8]
    ana, bo = f"ana-{run}", f"bo-{run}"

    assert game.healthz()["status"] == "ok"
    season = game.season()
    assert season["tiers"][0]["name"] == "bronze"

    placed = game.join(ana)
    period, tier, bracket = placed["period"], placed["tier"], placed["bracket"]
    assert tier == "bronze" and placed["last"] is None and placed["pending_rewards"] == []
    assert game.join(ana)["bracket"] == bracket  # joining again: the same bracket

    # A score with a request id, and its resend (a game server's retry after a timeout).
    request_id = f"match-17-{run}"
    first = game.submit(ana, 1_000_000, request_id=request_id)
    assert (first["applied"], first["score"], first["rank"]) == (True, 1_000_000, 1)
    again = game.submit(ana, 1_000_000, request_id=request_id)
    assert (again["applied"], again["score"]) == (False, 1_000_000)
    # Without one the client makes one: two calls are two updates.
    game.submit(bo, 40)
    assert game.submit(bo, 40)["score"] == 80

    results = game.batch(
        [{"player": bo, "value": 1, "request_id": f"b-{run}"}, {"player": "", "value": 5}]
    )
    assert results[0]["status"] == "applied"
    assert results[1]["status"] == "refused" and results[1]["error"]["code"] == "invalid_player"

    standings = game.standings(tier, bracket, limit=100)
    names = [e["player"] for e in standings["entries"]]
    assert names.index(ana) < names.index(bo)
    me = game.player(ana)
    assert (me["period"], me["tier"], me["bracket"], me["rank"], me["score"]) == (
        period, tier, bracket, 1, 1_000_000,
    )
    assert any(e["player"] == ana for e in game.around(ana, radius=2)["entries"])
    assert any(e["player"] == ana for e in game.top(tier, limit=10)["entries"])
    assert any(t["tier"] == tier for t in game.counts()["tiers"])

    game.set_profile(ana, {"name": "Ana"})
    assert game.patch_profile(ana, {"avatar": "a.png"})["profile"] == {"name": "Ana", "avatar": "a.png"}
    assert game.set_profile(ana, {"name": "Ana B"})["profile"] == {"name": "Ana B"}
    assert game.profile(ana)["profile"] == {"name": "Ana B"}
    assert game.mint_token(ana, ttl=120)["player"] == ana

    # Operators: an adjustment, a ban and its lifting, all audited.
    adjusted = ops.adjust(bo, by=-1, reason="python client tests: replayed match")
    assert (adjusted["before"], adjusted["after"]) == (81, 80)
    cheat = f"cheat-{run}"
    game.submit(cheat, 5)
    ops.ban(cheat, reason="python client tests")
    assert any(b["player"] == cheat for b in ops.bans()["bans"])
    with pytest.raises(LeagueError) as banned:
        game.submit(cheat, 5)
    assert (banned.value.status, banned.value.code) == (403, "banned")
    assert ops.unban(cheat, reason="appeal")["lifted"] is not None
    assert {"adjust", "ban", "unban"} <= {e["action"] for e in ops.audit(limit=1000)["entries"]}
    with pytest.raises(LeagueError) as forbidden:
        game.bans()
    assert forbidden.value.code == "forbidden"

    # The rollover, through the staging clock and the scheduler.
    assert ops.clock()["travel"] is True
    closed = roll_over(ops, game)
    assert closed == period
    assert any(r["period"] == period for r in game.periods()["closed"])
    last = game.player(ana).get("last")
    assert last is not None and (last["period"], last["outcome"]) == (period, "promoted")
    mine = [line for line in game.export(period) if line["player"] == ana]
    assert [(m["rank"], m["outcome"], m["next_tier"]) for m in mine] == [(1, "promoted", "silver")]

    rewards = game.rewards(ana)["rewards"]
    source = f"{period}/{tier}/{bracket}"
    assert {"source": source, "grant": "gems:100"} in rewards
    claim_id = f"claim-{run}"
    granted = game.claim(ana, request_id=claim_id)["granted"]
    assert {"source": source, "grant": "gems:100"} in granted
    assert game.claim(ana, request_id=claim_id)["granted"] == granted  # idempotent
    assert game.rewards(ana)["rewards"] == []

    # A re-settlement of the closed bracket without bo; sent again it changes nothing.
    report = ops.resettle(period, tier, bracket, exclude=[bo], reason="python client tests")
    assert report["excluded"] == [bo] and report["changed"] is True
    assert ops.resettle(period, tier, bracket, exclude=[bo], reason="python client tests")["changed"] is False

    # The next period: a join places ana in silver.
    assert game.join(ana)["tier"] == "silver"


def test_a_viewer_reads_but_does_not_write(server: Server) -> None:
    with LeagueClient(server.url, server.viewer_token) as viewer:
        assert "leaguekit_http_requests_total" in viewer.metrics()
        with pytest.raises(LeagueError) as e:
            viewer.join(f"v-{uuid.uuid4().hex[:8]}")
        assert (e.value.status, e.value.code) == (403, "forbidden")


def test_a_bad_token_is_unauthorized(server: Server) -> None:
    with LeagueClient(server.url, "not-a-token-of-this-server") as c, pytest.raises(LeagueError) as e:
        c.season()
    assert (e.value.status, e.value.code) == (401, "unauthorized")
