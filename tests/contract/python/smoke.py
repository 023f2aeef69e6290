"""A game server's use of leaguekit through a client generated from /openapi.json.

tests/contract/run generates the package `leaguekit_client` with openapi-python-client
(httpx and attrs), puts it on PYTHONPATH, type-checks this script with `mypy --strict`
and runs it. Every answer it reads is checked against what the league says it does.

Environment: LEAGUEKIT_CONTRACT_URL (the server, e.g. http://127.0.0.1:8080) and
LEAGUEKIT_CONTRACT_TOKEN (a server token). The season is config/season.toml's: no
cohorts, `join = "on_first_score"`, profile fields `name` and `avatar`.
"""

from __future__ import annotations

import datetime
import os
import random
import time
from typing import TypeVar

from leaguekit_client import AuthenticatedClient
from leaguekit_client.api.periods import periods as periods_api
from leaguekit_client.api.players import (
    around as around_api,
    claim as claim_api,
    join as join_api,
    patch_profile as patch_profile_api,
    player as player_api,
    profile as profile_api,
    rewards as rewards_api,
    set_profile as set_profile_api,
)
from leaguekit_client.api.scores import batch as batch_api, submit as submit_api
from leaguekit_client.api.standings import (
    counts as counts_api,
    season as season_api,
    standings as standings_api,
    top as top_api,
)
from leaguekit_client.api.system import healthz as healthz_api
from leaguekit_client.models import (
    BatchItemDone,
    BatchItemFailed,
    BatchItemIn,
    ClaimIn,
    ClaimOut,
    CountsOut,
    DoneStatus,
    ErrorBody,
    ErrorCode,
    FailedStatus,
    HealthOut,
    HealthStatus,
    JoinIn,
    JoinPolicy,
    PatchProfileBody,
    PeriodOut,
    PeriodsOut,
    PlacementOut,
    PlayerOut,
    ProfileOut,
    RewardsOut,
    SeasonOut,
    SetProfileBody,
    StandingsOut,
    SubmissionOut,
    SubmitIn,
    TopOut,
)
from leaguekit_client.types import Unset

T = TypeVar("T")

CHECKS = 0


def check(condition: bool, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(f"check failed: {what}")
    CHECKS += 1


def ok(answer: object, kind: type[T], what: str) -> T:
    """The answer as `kind`, or a failure naming what came instead (an ErrorBody, None)."""
    if not isinstance(answer, kind):
        raise AssertionError(f"{what}: expected {kind.__name__}, got {answer!r}")
    return answer


def absent(value: object) -> bool:
    return value is None or isinstance(value, Unset)


url = os.environ["LEAGUEKIT_CONTRACT_URL"]
token = os.environ["LEAGUEKIT_CONTRACT_TOKEN"]
client = AuthenticatedClient(base_url=url, token=token, raise_on_unexpected_status=True)

run = f"{int(time.time() * 1000):x}{random.randrange(1 << 24):x}"
ana = f"py-ana-{run}"
bo = f"py-bo-{run}"
cy = f"py-cy é/{run}"  # a path segment that must be percent-encoded
a_second_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)

with client:
    # The season.
    season = ok(season_api.sync(client=client), SeasonOut, "season")
    check(season.name == "weekly-ladder", "the season's name")
    check(season.join == JoinPolicy.ON_FIRST_SCORE, "the season's join policy")
    check({"name", "avatar"} <= set(season.profile_fields), "profile fields")
    first_tier = season.tiers[0].name
    health = ok(healthz_api.sync(client=client), HealthOut, "healthz")
    check(health.status == HealthStatus.OK, "healthz is ok")

    # A join without a body, then again with one.
    joined = ok(join_api.sync(ana, client=client), PlacementOut, "join without a body")
    check(joined.player == ana and joined.tier == first_tier, "a new player joins the first tier")
    check(joined.last is None, "a new player has no last period")
    check(joined.pending_rewards == [], "no pending rewards")
    check(absent(joined.cohort), "no cohort in a season without cohorts")
    again = ok(
        join_api.sync(ana, client=client, body=JoinIn(at=a_second_ago)),
        PlacementOut,
        "join with a body",
    )
    check(again.bracket == joined.bracket and again.period == joined.period, "joining again keeps the bracket")
    check(again.last is None and again.pending_rewards is None, "a later join carries null last and rewards")

    # Score updates with request ids, and a resend.
    first = ok(
        submit_api.sync(ana, client=client, body=SubmitIn(value=120, request_id=f"{run}-1")),
        SubmissionOut,
        "submit",
    )
    check(
        first.applied and first.score == 120 and isinstance(first.rank, int) and first.rank >= 1,
        "a score is applied and ranked",
    )
    check(first.bracket == joined.bracket and first.period == joined.period, "the score lands in the joined bracket")
    resent = ok(
        submit_api.sync(ana, client=client, body=SubmitIn(value=120, request_id=f"{run}-1")),
        SubmissionOut,
        "resend",
    )
    check(not resent.applied and resent.score == 120, "a resent request id applies nothing")
    unranked = ok(
        submit_api.sync(ana, client=client, body=SubmitIn(value=5, request_id=f"{run}-2", rank=False)),
        SubmissionOut,
        "submit without rank",
    )
    check(unranked.applied and unranked.score == 125 and absent(unranked.rank), "rank: false leaves the rank out")
    placed = ok(
        submit_api.sync(bo, client=client, body=SubmitIn(value=40, at=a_second_ago)),
        SubmissionOut,
        "first score",
    )
    check(
        placed.applied and placed.last is None and isinstance(placed.pending_rewards, list),
        "a first score carries the placement's last and rewards",
    )
    refused = submit_api.sync_detailed(ana, client=client, body=SubmitIn(value=season.max_score + 1))
    refusal = ok(refused.parsed, ErrorBody, "a value above max_score")
    check(
        refused.status_code == 400 and refusal.error.code == ErrorCode.SCORE_OUT_OF_RANGE,
        "a value above max_score is refused",
    )

    # A batch: one result per item, in order, by `status`.
    batch = ok(
        batch_api.sync(
            client=client,
            body=[
                BatchItemIn(player=ana, value=10, request_id=f"{run}-3"),
                BatchItemIn(player=cy, value=7, request_id=f"{run}-4"),
                BatchItemIn(player=ana, value=10, request_id=f"{run}-3"),
                BatchItemIn(player=bo, value=season.max_score + 1),
            ],
        ),
        list,
        "batch",
    )
    check(len(batch) == 4, "a batch answers every item")
    b0 = ok(batch[0], BatchItemDone, "batch item 1")
    b1 = ok(batch[1], BatchItemDone, "batch item 2")
    b2 = ok(batch[2], BatchItemDone, "batch item 3")
    b3 = ok(batch[3], BatchItemFailed, "batch item 4")
    check(b0.status == DoneStatus.APPLIED and b0.score == 135, "batch item 1 applied")
    check(
        b1.status == DoneStatus.APPLIED
        and b1.player == cy
        and b1.score == 7
        and absent(b1.last)
        and isinstance(b1.pending_rewards, list),
        "batch item 2 placed a new player",
    )
    check(b2.status == DoneStatus.DUPLICATE and not b2.applied and b2.score == 135, "batch item 3 is a duplicate")
    check(
        b3.status == FailedStatus.REFUSED and b3.error.code == ErrorCode.SCORE_OUT_OF_RANGE and b3.error.message != "",
        "batch item 4 refused",
    )

    # The player, the bracket's standings, around, the tier's top and the counts.
    player = ok(player_api.sync(ana, client=client), PlayerOut, "player")
    check(
        player.score == 135 and player.bracket == joined.bracket and player.tier == joined.tier,
        "the player's score and bracket",
    )
    # config/season.toml declares no cohorts: no `cohort` query, and none in the answers.
    standings = ok(
        standings_api.sync(joined.tier, joined.bracket, client=client, period=joined.period, limit=100),
        StandingsOut,
        "standings",
    )
    check(
        (standings.tier, standings.bracket, standings.period) == (joined.tier, joined.bracket, joined.period),
        "standings of the joined bracket",
    )
    mine = [entry for entry in standings.entries if entry.player == ana]
    check(len(mine) == 1 and mine[0].score == 135 and mine[0].rank == player.rank, "the player in the standings")
    scores = [entry.score for entry in standings.entries]
    check(scores == sorted(scores, reverse=True), "standings by score")
    around = ok(around_api.sync(ana, client=client, radius=2), StandingsOut, "around")
    check(any(entry.player == ana for entry in around.entries) and len(around.entries) <= 5, "around the player")
    top = ok(top_api.sync(joined.tier, client=client, limit=10), TopOut, "top")
    check(
        top.tier == joined.tier and not top.frozen and len(top.entries) <= 10 and top.brackets >= 1,
        "the tier's top",
    )
    top_scores = [entry.score for entry in top.entries]
    check(top_scores == sorted(top_scores, reverse=True), "top in rank order")
    counts = ok(counts_api.sync(client=client), CountsOut, "counts")
    tier_counts = [tier for tier in counts.tiers if tier.tier == joined.tier]
    check(
        counts.period == joined.period and len(tier_counts) == 1 and tier_counts[0].players >= 3,
        "the counts",
    )

    # A profile: PUT replaces, PATCH merges (None removes a field).
    put = ok(
        set_profile_api.sync(ana, client=client, body=SetProfileBody.from_dict({"name": "Ana", "avatar": "fox"})),
        ProfileOut,
        "put profile",
    )
    check(put.profile.to_dict() == {"name": "Ana", "avatar": "fox"}, "PUT sets the profile")
    patch = PatchProfileBody()
    patch["name"] = "Ana B"
    patch["avatar"] = None
    patched = ok(patch_profile_api.sync(ana, client=client, body=patch), ProfileOut, "patch profile")
    check(patched.profile.to_dict() == {"name": "Ana B"}, "PATCH merges and removes")
    replace = SetProfileBody()
    replace["avatar"] = "owl"
    replaced = ok(set_profile_api.sync(ana, client=client, body=replace), ProfileOut, "put profile again")
    check(replaced.profile.to_dict() == {"avatar": "owl"}, "PUT replaces the whole profile")
    read = ok(profile_api.sync(ana, client=client), ProfileOut, "profile")
    check(read.player == ana and read.profile["avatar"] == "owl", "the profile reads back")
    with_profile = ok(
        standings_api.sync(joined.tier, joined.bracket, client=client, limit=100),
        StandingsOut,
        "standings with the profile",
    )
    check(
        [entry.profile.to_dict() for entry in with_profile.entries if entry.player == ana] == [{"avatar": "owl"}],
        "standings carry the profile",
    )

    # Rewards and claims (nothing to grant before a period closes).
    rewards = ok(rewards_api.sync(ana, client=client), RewardsOut, "rewards")
    check(rewards.player == ana and all(reward.grant != "" for reward in rewards.rewards), "the rewards")
    claimed = ok(claim_api.sync(ana, client=client), ClaimOut, "claim without a body")
    check(claimed.player == ana and len(claimed.granted) == len(rewards.rewards), "a claim grants the pending rewards")
    claimed_again = ok(
        claim_api.sync(ana, client=client, body=ClaimIn(request_id=f"{run}-claim")),
        ClaimOut,
        "claim with a request id",
    )
    check(claimed_again.granted == [], "nothing is left to claim")

    # The league's time.
    periods = ok(periods_api.sync(client=client, limit=3), PeriodsOut, "periods")
    check(periods.season == season.name and periods.now.tzinfo is not None, "the periods' season and clock")
    current = ok(periods.current, PeriodOut, "the current period")
    check(current.id == joined.period, "the current period's id")
    check(current.start < current.end <= current.closes_at, "the current period's times")
    check(
        len(periods.closed) <= 3 and all(report.period <= periods.closed_through for report in periods.closed),
        "closed periods",
    )

print(f"python client: {CHECKS} checks passed")
