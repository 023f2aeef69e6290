// Retries and request ids against a scripted fetch (no server).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeagueClient, LeagueConnectionError, LeagueError } from "../src/index.js";
import { backoff, retryAfterMs, retryPolicy } from "../src/retry.js";
import { errorAnswer, fakeFetch, jsonAnswer, recordingSleep, type Step } from "./fake.js";

const placed = {
    player: "ana",
    period: 45,
    tier: "bronze",
    bracket: 1,
    score: 120,
    rank: 1,
    applied: true,
    last: null,
    pending_rewards: null,
};

function client(steps: Step[], retries?: number) {
    const fake = fakeFetch(steps);
    const timer = recordingSleep();
    const league = new LeagueClient({
        baseUrl: "http://league.test/base/",
        token: "server-token-0123456789",
        fetch: fake.fetch,
        sleep: timer.sleep,
        random: () => 0.5,
        ...(retries === undefined ? {} : { retries }),
    });
    return { league, sent: fake.sent, waits: timer.waits };
}

function thrown<T extends Error>(kind: new (...args: never[]) => T, check: (error: T) => void) {
    return (error: unknown): boolean => {
        assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
        check(error);
        return true;
    };
}

describe("request ids", () => {
    it("a submit without one gets a UUID, the same on every retry, and the `at` an `unknown` named", async () => {
        const at = "2026-01-07T10:00:00Z";
        const { league, sent } = client([
            () => errorAnswer(503, "unknown", { at }),
            () => {
                throw new TypeError("fetch failed");
            },
            () => jsonAnswer(200, placed),
        ]);
        const answer = await league.submit("ana", { value: 120 });
        assert.equal(answer.applied, true);
        assert.equal(sent.length, 3);
        const ids = sent.map((s) => (s.body as { request_id: string }).request_id);
        assert.match(ids[0] ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.deepEqual(new Set(ids).size, 1, "one request id for every attempt");
        assert.equal((sent[0]?.body as { at?: string }).at, undefined, "the first attempt lets the server stamp it");
        assert.equal((sent[1]?.body as { at?: string }).at, at, "a resend after `unknown` carries its `at`");
        assert.equal((sent[2]?.body as { at?: string }).at, at);
        assert.equal(sent[0]?.url, "http://league.test/base/v1/players/ana/scores");
        assert.equal(sent[0]?.headers["authorization"], "Bearer server-token-0123456789");
        assert.equal(sent[0]?.headers["content-type"], "application/json");
    });

    it("a given request id and `at` are kept", async () => {
        const { league, sent } = client([() => errorAnswer(503, "unknown", { at: "2026-01-08T00:00:00Z" }), () => jsonAnswer(200, placed)]);
        await league.submit("a b/é", { value: 1, request_id: "match-17", at: "2026-01-07T00:00:00Z" });
        for (const s of sent) {
            assert.deepEqual(s.body, { value: 1, request_id: "match-17", at: "2026-01-07T00:00:00Z" });
        }
        assert.equal(sent[0]?.url, "http://league.test/base/v1/players/a%20b%2F%C3%A9/scores");
    });

    it("a claim gets a request id, kept across retries; the final error names it", async () => {
        const { league, sent } = client(
            [() => errorAnswer(503, "unknown"), () => errorAnswer(503, "store_unavailable"), () => errorAnswer(503, "unknown")],
            2,
        );
        await assert.rejects(
            league.claim("ana"),
            thrown(LeagueError, (error) => {
                assert.equal(error.status, 503);
                assert.equal(error.code, "unknown");
                assert.equal(error.route, "POST /v1/players/{player}/rewards:claim");
                assert.equal(error.requestId, (sent[0]?.body as { request_id: string }).request_id);
            }),
        );
        assert.equal(sent.length, 3, "bounded: one attempt and two retries");
        assert.equal(new Set(sent.map((s) => (s.body as { request_id: string }).request_id)).size, 1);
    });

    it("a batch fills in the missing ids and answers each item with the item sent", async () => {
        const { league, sent } = client([
            () => errorAnswer(502, "unexpected_response"),
            (s) => {
                const items = s.body as { player: string }[];
                return jsonAnswer(
                    200,
                    items.map((item) => ({ status: "applied", ...placed, player: item.player })),
                );
            },
        ]);
        const results = await league.batch([
            { player: "ana", value: 5, request_id: "m1-ana" },
            { player: "bo", value: 7 },
        ]);
        assert.equal(sent.length, 2);
        assert.deepEqual(sent[0]?.body, sent[1]?.body, "the resend is the same batch");
        assert.equal(results[0]?.request.request_id, "m1-ana");
        assert.equal(results[1]?.request.request_id, (sent[0]?.body as { request_id: string }[])[1]?.request_id);
        assert.equal(results[1]?.status, "applied");
    });
});

describe("retries", () => {
    it("a GET is retried after network errors and 5xx, with growing jittered backoff", async () => {
        const { league, sent, waits } = client([
            () => {
                throw new TypeError("socket hang up");
            },
            () => errorAnswer(500, "internal"),
            () => new Response("<html>bad gateway</html>", { status: 502 }),
            () => jsonAnswer(200, { player: "ana", period: 45, tier: "bronze", bracket: 1, rank: 1, score: 3, last: null }),
        ]);
        const player = await league.player("ana", { period: 45 });
        assert.equal(player.score, 3);
        assert.equal(sent.length, 4);
        assert.equal(sent[3]?.url, "http://league.test/base/v1/players/ana?period=45");
        assert.deepEqual(waits, [100, 200, 400], "half of 200, 400, 800 ms (random 0.5)");
    });

    it("429, not_started and still_closing wait what the server says, even for a write without an id", async () => {
        const { league, sent, waits } = client([
            () => errorAnswer(429, "rate_limited", { retry_after_ms: 1500 }, { "Retry-After": "2" }),
            () => errorAnswer(409, "not_started", {}, { "Retry-After": "1" }),
            () => errorAnswer(409, "still_closing", { retry_after_ms: 250 }),
            () => jsonAnswer(200, { player: "ana", period: 45, tier: "bronze", bracket: 1, before: 5, after: 3 }),
        ]);
        await league.adjust("ana", { by: -2, reason: "replayed match" });
        assert.equal(sent.length, 4);
        assert.deepEqual(waits, [1500 + 100, 1000 + 100, 250 + 100], "retry_after_ms, else Retry-After, plus jitter");
    });

    it("a write without a request id is never resent after a 5xx or a network error", async () => {
        const first = client([() => errorAnswer(503, "unknown")]);
        await assert.rejects(first.league.adjust("ana", { by: 5, reason: "bonus" }), thrown(LeagueError, (e) => assert.equal(e.code, "unknown")));
        assert.equal(first.sent.length, 1);

        const second = client([
            () => {
                throw new TypeError("connection reset");
            },
        ]);
        await assert.rejects(
            second.league.ban("ana", { reason: "aimbot" }),
            thrown(LeagueConnectionError, (e) => assert.match(e.message, /connection reset/)),
        );
        assert.equal(second.sent.length, 1);

        const third = client([() => errorAnswer(500, "internal")]);
        await assert.rejects(third.league.moveClock({ advance: "1d" }), LeagueError);
        assert.equal(third.sent.length, 1);
    });

    it("dead letters: listed with a GET that is retried; a replay is never resent", async () => {
        const letter = { id: "p45/bronze/b3@1-0", url: "https://game.test/hook", event: "{}", attempts: 8, error: "HTTP 500", at: "2026-01-01T00:00:00Z", replay: false };
        const listed = client([() => errorAnswer(503, "store_unavailable"), () => jsonAnswer(200, { dead: [letter], next: null })]);
        const page = await listed.league.deadLetters();
        assert.deepEqual(page.dead, [letter]);
        assert.equal(page.next, null);
        assert.deepEqual(listed.sent.map((s) => [s.method, new URL(s.url).pathname]), [
            ["GET", "/base/v1/webhooks/dead"],
            ["GET", "/base/v1/webhooks/dead"],
        ]);

        // Paged: `limit` and `after` (the `next` of the page before) in the query.
        const paged = client([
            () => jsonAnswer(200, { dead: [letter], next: "cursor-1" }),
            () => jsonAnswer(200, { dead: [], next: null }),
        ]);
        const first = await paged.league.deadLetters({ limit: 1 });
        assert.equal(first.next, "cursor-1");
        const second = await paged.league.deadLetters({ limit: 1, after: first.next ?? undefined });
        assert.deepEqual([second.dead, second.next], [[], null]);
        assert.deepEqual(
            paged.sent.map((s) => new URL(s.url).search),
            ["?limit=1", "?limit=1&after=cursor-1"],
        );

        const replayed = client([() => jsonAnswer(200, { marked: 1, dead: [{ ...letter, replay: true }] })]);
        const answer = await replayed.league.replayDeadLetters({ ids: [letter.id], reason: "receiver fixed" });
        assert.equal(answer.marked, 1);
        assert.equal(replayed.sent[0]?.method, "POST");
        assert.equal(new URL(replayed.sent[0]?.url ?? "").pathname, "/base/v1/webhooks/dead:replay");
        assert.deepEqual(replayed.sent[0]?.body, { ids: [letter.id], reason: "receiver fixed" });

        const failed = client([() => errorAnswer(500, "internal")]);
        await assert.rejects(failed.league.replayDeadLetters({ all: true, reason: "again" }), LeagueError);
        assert.equal(failed.sent.length, 1);
    });

    it("4xx answers are thrown at once with the server's code and message", async () => {
        const { league, sent } = client([() => errorAnswer(400, "score_out_of_range")]);
        await assert.rejects(
            league.submit("ana", { value: -5 }),
            thrown(LeagueError, (e) => {
                assert.equal(e.status, 400);
                assert.equal(e.code, "score_out_of_range");
                assert.equal(e.serverMessage, "score_out_of_range (test)");
            }),
        );
        assert.equal(sent.length, 1);
    });

    it("a Retry-After longer than the client waits is thrown, not retried early", async () => {
        const { league, sent } = client([() => errorAnswer(503, "store_unreachable", {}, { "Retry-After": "120" })]);
        await assert.rejects(
            league.season(),
            thrown(LeagueError, (e) => assert.equal(e.retryAfterMs, 120_000)),
        );
        assert.equal(sent.length, 1);
    });

    it("retries: 0 sends once; a body that is not an error body is `unexpected_response`", async () => {
        const { league, sent } = client([() => new Response("upstream down", { status: 503 })], 0);
        await assert.rejects(
            league.counts(),
            thrown(LeagueError, (e) => {
                assert.equal(e.code, "unexpected_response");
                assert.equal(e.status, 503);
            }),
        );
        assert.equal(sent.length, 1);
    });

    it("an abort stops the waits and the retries", async () => {
        const fake = fakeFetch([() => errorAnswer(503, "store_unavailable"), () => jsonAnswer(200, {})]);
        const controller = new AbortController();
        const league = new LeagueClient({ baseUrl: "http://league.test", token: "t-0123456789abcdef", fetch: fake.fetch, retries: { baseDelayMs: 60_000, maxDelayMs: 60_000 }, random: () => 0.99 });
        const call = league.bans({ signal: controller.signal });
        setTimeout(() => controller.abort(new Error("stopped")), 20);
        await assert.rejects(call, /stopped/);
        assert.equal(fake.sent.length, 1);
    });

    it("the backoff doubles to its ceiling; Retry-After reads seconds and dates", () => {
        const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1000 });
        assert.deepEqual([0, 1, 2, 3, 4, 5].map((n) => backoff(policy, n, () => 0.999999)), [99, 199, 399, 799, 999, 999]);
        assert.equal(retryAfterMs(new Headers({ "Retry-After": "3" }), undefined), 3000);
        assert.equal(retryAfterMs(new Headers({ "Retry-After": "Wed, 21 Oct 2015 07:28:05 GMT" }), undefined, Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")), 5000);
        assert.equal(retryAfterMs(new Headers({ "Retry-After": "3" }), 1234), 1234);
        assert.equal(retryAfterMs(new Headers(), undefined), undefined);
        assert.throws(() => retryPolicy({ max: -1 }), RangeError);
    });

    it("a token function is asked before every attempt", async () => {
        let n = 0;
        const fake = fakeFetch([() => errorAnswer(503, "timeout"), () => jsonAnswer(200, { status: "ok" })]);
        const league = new LeagueClient({ baseUrl: "http://league.test", token: async () => `player-token-${++n}`, fetch: fake.fetch, sleep: async () => undefined });
        await league.healthz();
        assert.deepEqual(fake.sent.map((s) => s.headers["authorization"]), ["Bearer player-token-1", "Bearer player-token-2"]);
    });
});
