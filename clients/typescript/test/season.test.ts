// A season played end to end against `leaguekit serve` on a staging clock: joins,
// scores with request ids and a resend, standings, the rollover, rewards and claims,
// and every other route once.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeagueClient, LeagueError, newRequestId } from "../src/index.js";
import { admin, baseUrl, rollOver, run, server, tokens, viewer } from "./env.js";

function code(status: number, expected: string) {
    return (error: unknown): boolean => {
        assert.ok(error instanceof LeagueError, String(error));
        assert.equal(error.status, status, error.message);
        assert.equal(error.code, expected, error.message);
        return true;
    };
}

const ana = `ts-ana-${run}`;
const bo = `ts-bo-${run}`;
const cy = `ts-cy é/${run}`; // a path segment that must be percent-encoded
const dee = `ts-dee-${run}`;

describe("a season, end to end", () => {
    it("plays a period, rolls over on the staging clock, grants and claims rewards", async () => {
        assert.deepEqual(await server.healthz(), { status: "ok" });
        const season = await viewer.season();
        const bronze = season.tiers[0]?.name;
        assert.equal(bronze, "bronze");
        const clock = await admin.clock();
        assert.equal(clock.travel, true, "the test season has a staging clock");

        // Joins.
        const joined = await server.join(ana);
        assert.equal(joined.tier, "bronze");
        assert.equal(joined.last, null);
        assert.deepEqual(joined.pending_rewards, []);
        const period = joined.period;
        const bracket = joined.bracket;

        // A score with a request id, resent: applied once.
        const requestId = `match-1-${run}`;
        const first = await server.submit(ana, { value: 120, request_id: requestId });
        assert.equal(first.applied, true);
        assert.equal(first.score, 120);
        const resent = await server.submit(ana, { value: 120, request_id: requestId });
        assert.equal(resent.applied, false, "the resend changes nothing");
        assert.equal(resent.score, 120);
        // An answer lost on the way back: the client resends with the same request id
        // (its own), and the server answers the resend applied: false.
        let calls = 0;
        const lossy = new LeagueClient({
            baseUrl,
            token: tokens.server,
            retries: { baseDelayMs: 10 },
            fetch: async (input, init) => {
                calls += 1;
                const answer = await fetch(input, init);
                if (calls === 1) {
                    await answer.arrayBuffer();
                    throw new TypeError("the connection broke before the answer arrived");
                }
                return answer;
            },
        });
        const retried = await lossy.submit(ana, { value: 7 });
        assert.equal(calls, 2);
        assert.equal(retried.applied, false, "the retry was recognised by its request id");
        assert.equal(retried.score, 127, "the update counted once");
        await admin.adjust(ana, { by: -7, reason: `undo the lossy test ${run}` });
        const adjustedBack = await viewer.player(ana);
        assert.equal(adjustedBack.score, 120);

        // Without an id the client makes one; a first score places the player.
        const boFirst = await server.submit(bo, { value: 80 });
        assert.equal(boFirst.applied, true);
        assert.equal(boFirst.bracket, bracket);

        // A batch: one answer per item, the request id of each kept.
        const batch = await server.batch([
            { player: cy, value: 50 },
            { player: ana, value: 10, request_id: `match-2-${run}` },
            { player: "", value: 5 },
        ]);
        assert.deepEqual(batch.map((r) => r.status), ["applied", "applied", "refused"]);
        assert.equal(batch[1]?.request.request_id, `match-2-${run}`);
        assert.ok((batch[0]?.request.request_id.length ?? 0) > 0);
        const refused = batch[2];
        assert.ok(refused !== undefined && refused.status === "refused" && refused.error.code === "invalid_player");
        const again = await server.batch([batch[0]?.request ?? assert.fail()]);
        assert.equal(again[0]?.status, "duplicate", "a batch item resent with its id is a duplicate");

        // Profiles.
        await server.putProfile(ana, { name: "Ana", avatar: "a.png" });
        const patched = await server.patchProfile(ana, { avatar: null });
        assert.deepEqual(patched.profile, { name: "Ana" });
        assert.deepEqual((await viewer.profile(ana)).profile, { name: "Ana" });

        // Reads.
        const standings = await viewer.standings("bronze", bracket, { limit: 100 });
        const ours = standings.entries.filter((e) => [ana, bo, cy].includes(e.player)).map((e) => [e.player, e.score]);
        assert.deepEqual(ours, [[ana, 130], [bo, 80], [cy, 50]]);
        assert.deepEqual(standings.entries.find((e) => e.player === ana)?.profile, { name: "Ana" });
        const player = await viewer.player(ana);
        assert.equal(player.score, 130);
        assert.equal(player.period, period);
        const around = await viewer.around(bo, { radius: 1 });
        assert.ok(around.entries.some((e) => e.player === bo));
        const top = await viewer.top("bronze", { limit: 1000 });
        assert.ok(top.entries.some((e) => e.player === ana && e.score === 130));
        const counts = await viewer.counts();
        assert.ok((counts.tiers.find((t) => t.tier === "bronze")?.players ?? 0) >= 3);
        assert.match(await viewer.metrics(), /leaguekit_http_requests_total/);
        assert.ok("paths" in (await viewer.openapi()));

        // Errors come back typed, with the server's code.
        await assert.rejects(server.submit(ana, { value: -1_000_000 }), code(400, "score_out_of_range"));
        await assert.rejects(viewer.around(`nobody-${run}`), code(404, "not_placed"));
        await assert.rejects(viewer.submit(ana, { value: 1 }), code(403, "forbidden"));
        await assert.rejects(server.standings("tin", 1), code(404, "unknown_tier"));

        // A player token reads its own player only.
        const minted = await server.mintToken(ana, { ttl: 600 });
        assert.equal(minted.player, ana);
        const game = new LeagueClient({ baseUrl, token: minted.token });
        assert.equal((await game.player(ana)).score, 130);
        await assert.rejects(game.player(bo), code(403, "forbidden"));

        // The operator's routes.
        const adjusted = await admin.adjust(bo, { by: 5, reason: `bonus ${run}` });
        assert.deepEqual([adjusted.before, adjusted.after], [80, 85]);
        const set = await admin.adjust(bo, { set: 85, reason: `confirm ${run}` });
        assert.equal(set.after, 85);
        await server.submit(dee, { value: 1 });
        const banned = await admin.ban(dee, { reason: `test ban ${run}` });
        assert.equal(banned.player, dee);
        assert.ok((await admin.bans()).bans.some((b) => b.player === dee));
        await assert.rejects(server.submit(dee, { value: 1 }), code(403, "banned"));
        await admin.unban(dee, { reason: `appeal ${run}` });
        assert.ok(!(await admin.bans()).bans.some((b) => b.player === dee));
        const audit = await admin.audit({ player: dee });
        assert.deepEqual(audit.entries.map((e) => e.action).sort(), ["ban", "unban"]);

        // An export before the close.
        await assert.rejects(async () => {
            for await (const _ of viewer.export(period)) {
                // nothing
            }
        }, code(409, "period_open"));

        // The rollover, by the staging clock and the scheduler.
        const closed = await rollOver(`close ${period} (${run})`);
        assert.equal(closed, period);
        const after = await viewer.player(ana);
        assert.equal(after.last?.period, period);
        assert.equal(after.last?.rank, 1);
        assert.equal(after.last?.outcome, "promoted");
        assert.equal(after.last?.next_tier, "silver");

        const exported = [];
        for await (const line of viewer.export(period)) {
            exported.push(line);
        }
        assert.deepEqual(
            exported.filter((l) => [ana, bo, cy].includes(l.player)).map((l) => [l.player, l.rank, l.outcome]),
            [[ana, 1, "promoted"], [bo, 2, "promoted"], [cy, 3, "promoted"]],
        );

        // Rewards, and a claim with a request id: resent, the same grants.
        const source = `${period}/bronze/${bracket}`;
        assert.deepEqual((await server.rewards(ana)).rewards, [{ source, grant: "gems:100" }]);
        const claimId = newRequestId();
        const claimed = await server.claim(ana, { request_id: claimId });
        assert.deepEqual(claimed.granted, [{ source, grant: "gems:100" }]);
        const claimedAgain = await server.claim(ana, { request_id: claimId });
        assert.deepEqual(claimedAgain.granted, claimed.granted, "a resent claim answers the same grants");
        assert.deepEqual((await server.rewards(ana)).rewards, []);
        const boClaim = await server.claim(bo);
        assert.deepEqual(boClaim.granted, [{ source, grant: "gems:20" }]);

        // Re-settling the closed bracket without cy; sent again, it changes nothing.
        const resettled = await admin.resettle(period, "bronze", bracket, { exclude: [cy], reason: `ticket ${run}` });
        assert.equal(resettled.version, 1);
        assert.deepEqual(resettled.excluded, [cy]);
        const resettledAgain = await admin.resettle(period, "bronze", bracket, { exclude: [cy], reason: `ticket ${run}` });
        assert.equal(resettledAgain.changed, false);

        // The next period: ana plays in silver.
        const next = await server.submit(ana, { value: 1 });
        assert.equal(next.period, period + 1);
        assert.equal(next.tier, "silver");
        assert.equal(next.last?.outcome, "promoted");
    });
});
