// A game server's use of leaguekit through a client generated from /openapi.json:
// types by openapi-typescript (generated/api.ts, made by tests/contract/run), requests
// by openapi-fetch. It must type-check with `tsc --strict` as it is, and every answer it
// reads is checked against what the league says it does.
//
// Environment: LEAGUEKIT_CONTRACT_URL (the server, e.g. http://127.0.0.1:8080) and
// LEAGUEKIT_CONTRACT_TOKEN (a server token). The season is config/season.toml's: no
// cohorts, `join = "on_first_score"`, profile fields `name` and `avatar`.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.ts";

type Schemas = components["schemas"];

const url = process.env["LEAGUEKIT_CONTRACT_URL"];
const token = process.env["LEAGUEKIT_CONTRACT_TOKEN"];
if (url === undefined || token === undefined) {
    throw new Error("set LEAGUEKIT_CONTRACT_URL and LEAGUEKIT_CONTRACT_TOKEN");
}
const client = createClient<paths>({
    baseUrl: url,
    headers: { Authorization: `Bearer ${token}` },
});

let checks = 0;
function check(condition: boolean, what: string): void {
    if (!condition) {
        throw new Error(`check failed: ${what}`);
    }
    checks += 1;
}

// The answer's data, or a failure naming the status and the error body.
function ok<T, E>(answer: { data?: T; error?: E; response: Response }, what: string): T {
    if (answer.data === undefined) {
        throw new Error(`${what}: HTTP ${answer.response.status} ${JSON.stringify(answer.error)}`);
    }
    return answer.data;
}

function isTime(value: string): boolean {
    return !Number.isNaN(Date.parse(value));
}

const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const ana = `ts-ana-${run}`;
const bo = `ts-bo-${run}`;
const cy = `ts-cy é/${run}`; // a path segment that must be percent-encoded

// The season.
const season: Schemas["SeasonOut"] = ok(await client.GET("/v1/season"), "season");
check(season.name === "weekly-ladder", "the season's name");
check(season.join === "on_first_score", "the season's join policy");
check(season.profile_fields.includes("name") && season.profile_fields.includes("avatar"), "profile fields");
const firstTier = season.tiers[0];
if (firstTier === undefined) {
    throw new Error("the season has no tiers");
}
const health = ok(await client.GET("/healthz"), "healthz");
check(health.status === "ok", "healthz is ok");

// A join without a body, then again with one: the same placement, `last` and
// `pending_rewards` only on the answer that placed the player.
const joined: Schemas["PlacementOut"] = ok(
    await client.POST("/v1/players/{player}/join", { params: { path: { player: ana } } }),
    "join without a body",
);
check(joined.player === ana && joined.tier === firstTier.name, "a new player joins the first tier");
check(joined.last === null, "a new player has no last period");
check(Array.isArray(joined.pending_rewards) && joined.pending_rewards.length === 0, "no pending rewards");
check(joined.cohort === undefined || joined.cohort === null, "no cohort in a season without cohorts");
const again = ok(
    await client.POST("/v1/players/{player}/join", {
        params: { path: { player: ana } },
        body: { at: new Date(Date.now() - 1000).toISOString() },
    }),
    "join with a body",
);
check(again.bracket === joined.bracket && again.period === joined.period, "joining again keeps the bracket");
check(again.last === null && again.pending_rewards === null, "a later join carries null last and rewards");

// Score updates with request ids, and a resend.
const first: Schemas["SubmissionOut"] = ok(
    await client.POST("/v1/players/{player}/scores", {
        params: { path: { player: ana } },
        body: { value: 120, request_id: `${run}-1` },
    }),
    "submit",
);
check(first.applied && first.score === 120 && first.rank !== undefined && first.rank !== null && first.rank >= 1, "a score is applied and ranked");
check(first.bracket === joined.bracket && first.period === joined.period, "the score lands in the joined bracket");
const resent = ok(
    await client.POST("/v1/players/{player}/scores", {
        params: { path: { player: ana } },
        body: { value: 120, request_id: `${run}-1` },
    }),
    "resend",
);
check(!resent.applied && resent.score === 120, "a resent request id applies nothing and answers the first score");
const unranked = ok(
    await client.POST("/v1/players/{player}/scores", {
        params: { path: { player: ana } },
        body: { value: 5, request_id: `${run}-2`, rank: false },
    }),
    "submit without rank",
);
check(unranked.applied && unranked.score === 125 && (unranked.rank === undefined || unranked.rank === null), "rank: false leaves the rank out");
// A first score places a player (join = "on_first_score") and says so.
const placed = ok(
    await client.POST("/v1/players/{player}/scores", {
        params: { path: { player: bo } },
        body: { value: 40, at: new Date(Date.now() - 1000).toISOString() },
    }),
    "first score",
);
check(placed.applied && placed.last === null && Array.isArray(placed.pending_rewards), "a first score carries the placement's last and rewards");
// An error answer is typed too.
const refused = await client.POST("/v1/players/{player}/scores", {
    params: { path: { player: ana } },
    body: { value: season.max_score + 1 },
});
check(refused.response.status === 400 && refused.error?.error.code === "score_out_of_range", "a value above max_score is refused");

// A batch: one result per item, in order, discriminated by `status`.
const batch: Schemas["BatchItemOut"][] = ok(
    await client.POST("/v1/scores:batch", {
        body: [
            { player: ana, value: 10, request_id: `${run}-3` },
            { player: cy, value: 7, request_id: `${run}-4` },
            { player: ana, value: 10, request_id: `${run}-3` },
            { player: bo, value: season.max_score + 1 },
        ],
    }),
    "batch",
);
check(batch.length === 4, "a batch answers every item");
const [b0, b1, b2, b3] = batch;
if (b0 === undefined || b1 === undefined || b2 === undefined || b3 === undefined) {
    throw new Error("a batch answered fewer items");
}
check(b0.status === "applied" && b0.score === 135, "batch item 1 applied");
check(b1.status === "applied" && b1.player === cy && b1.score === 7 && (b1.last ?? null) === null && Array.isArray(b1.pending_rewards), "batch item 2 placed a new player");
check(b2.status === "duplicate" && !b2.applied && b2.score === 135, "batch item 3 is a duplicate");
check(b3.status === "refused" && b3.error.code === "score_out_of_range" && b3.error.message.length > 0, "batch item 4 refused");

// The player, the bracket's standings, around, the tier's top and the counts.
const player: Schemas["PlayerOut"] = ok(
    await client.GET("/v1/players/{player}", { params: { path: { player: ana } } }),
    "player",
);
check(player.score === 135 && player.bracket === joined.bracket && player.tier === joined.tier, "the player's score and bracket");
// config/season.toml declares no cohorts: no `cohort` query, and none in the answers.
const standings: Schemas["StandingsOut"] = ok(
    await client.GET("/v1/tiers/{tier}/brackets/{bracket}", {
        params: { path: { tier: joined.tier, bracket: joined.bracket }, query: { period: joined.period, limit: 100 } },
    }),
    "standings",
);
check(standings.tier === joined.tier && standings.bracket === joined.bracket && standings.period === joined.period, "standings of the joined bracket");
const mine = standings.entries.find((entry) => entry.player === ana);
check(mine !== undefined && mine.score === 135 && mine.rank === player.rank, "the player in the standings");
check(standings.entries.every((entry, i, all) => i === 0 || (all[i - 1]?.score ?? 0) >= entry.score), "standings by score");
const around: Schemas["StandingsOut"] = ok(
    await client.GET("/v1/players/{player}/around", { params: { path: { player: ana }, query: { radius: 2 } } }),
    "around",
);
check(around.entries.some((entry) => entry.player === ana) && around.entries.length <= 5, "around the player");
const top: Schemas["TopOut"] = ok(
    await client.GET("/v1/tiers/{tier}/top", { params: { path: { tier: joined.tier }, query: { limit: 10 } } }),
    "top",
);
check(top.tier === joined.tier && !top.frozen && top.entries.length <= 10 && top.brackets >= 1, "the tier's top");
check(top.entries.every((entry, i) => entry.rank === i + 1 || (top.entries[i - 1]?.score ?? -1) === entry.score), "top in rank order");
const counts: Schemas["CountsOut"] = ok(await client.GET("/v1/counts"), "counts");
const tierCount = counts.tiers.find((tier) => tier.tier === joined.tier);
check(counts.period === joined.period && tierCount !== undefined && tierCount.players >= 3 && tierCount.brackets >= 1, "the counts");

// A profile: PUT replaces, PATCH merges (null removes a field).
const put: Schemas["ProfileOut"] = ok(
    await client.PUT("/v1/players/{player}/profile", {
        params: { path: { player: ana } },
        body: { name: "Ana", avatar: "fox" },
    }),
    "put profile",
);
check(put.profile["name"] === "Ana" && put.profile["avatar"] === "fox", "PUT sets the profile");
const patched = ok(
    await client.PATCH("/v1/players/{player}/profile", {
        params: { path: { player: ana } },
        body: { name: "Ana B", avatar: null },
    }),
    "patch profile",
);
check(patched.profile["name"] === "Ana B" && !("avatar" in patched.profile), "PATCH merges and removes");
const replaced = ok(
    await client.PUT("/v1/players/{player}/profile", { params: { path: { player: ana } }, body: { avatar: "owl" } }),
    "put profile again",
);
check(replaced.profile["avatar"] === "owl" && !("name" in replaced.profile), "PUT replaces the whole profile");
const read = ok(await client.GET("/v1/players/{player}/profile", { params: { path: { player: ana } } }), "profile");
check(read.player === ana && read.profile["avatar"] === "owl", "the profile reads back");
const withProfile = ok(
    await client.GET("/v1/tiers/{tier}/brackets/{bracket}", {
        params: { path: { tier: joined.tier, bracket: joined.bracket }, query: { limit: 100 } },
    }),
    "standings with the profile",
);
check(withProfile.entries.find((entry) => entry.player === ana)?.profile["avatar"] === "owl", "standings carry the profile");

// Rewards and claims (nothing to grant before a period closes).
const rewards: Schemas["RewardsOut"] = ok(
    await client.GET("/v1/players/{player}/rewards", { params: { path: { player: ana } } }),
    "rewards",
);
check(rewards.player === ana && rewards.rewards.every((reward) => reward.grant.length > 0), "the rewards");
const claimed: Schemas["ClaimOut"] = ok(
    await client.POST("/v1/players/{player}/rewards:claim", { params: { path: { player: ana } } }),
    "claim without a body",
);
check(claimed.player === ana && claimed.granted.length === rewards.rewards.length, "a claim grants the pending rewards");
const claimedAgain = ok(
    await client.POST("/v1/players/{player}/rewards:claim", {
        params: { path: { player: ana } },
        body: { request_id: `${run}-claim` },
    }),
    "claim with a request id",
);
check(claimedAgain.granted.length === 0, "nothing is left to claim");

// The league's time.
const periods: Schemas["PeriodsOut"] = ok(await client.GET("/v1/periods", { params: { query: { limit: 3 } } }), "periods");
check(periods.season === season.name && isTime(periods.now), "the periods' season and clock");
const current = periods.current;
check(current !== undefined && current !== null && current.id === joined.period, "the current period");
if (current !== undefined && current !== null) {
    check(isTime(current.start) && isTime(current.end) && Date.parse(current.closes_at) >= Date.parse(current.end), "the current period's times");
}
check(periods.closed.length <= 3 && periods.closed.every((report) => report.period <= periods.closed_through), "closed periods");

console.log(`typescript client: ${checks} checks passed`);
