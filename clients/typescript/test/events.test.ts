// Live events against `leaguekit serve`: a player's stream followed across a rollover,
// dropped and resumed from its cursor (compared with a stream that never dropped),
// a signed webhook received by a local receiver that fails its first delivery, and a
// delivery given up (a dead letter), listed and replayed.
// Every delivery received is verified three ways, as it arrives: Leaguekit-Signature
// (verifyWebhook), and Standard Webhooks' headers with verifyStandardWebhook and with
// the reference library (`standardwebhooks`).
// Run by `clients/typescript/run --events` (`npm run test:events`), which sets
// LEAGUEKIT_WEBHOOK_URLS and LEAGUEKIT_WEBHOOK_SECRET (a whsec_ one) on the server, and
// 2 attempts per delivery (LEAGUEKIT_WEBHOOK_ATTEMPTS) 200 ms apart
// (LEAGUEKIT_WEBHOOK_BACKOFF_MS).
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { after, before, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import {
    LeagueClient,
    LeagueError,
    StreamEndedError,
    verifyStandardWebhook,
    verifyWebhook,
    type LeagueEvent,
    type Schemas,
    type StreamedEvent,
} from "../src/index.js";
import { admin, baseUrl, rollOver, run, server } from "./env.js";

const hookPort = Number(process.env["LEAGUEKIT_TEST_WEBHOOK_PORT"]);
const hookSecret = process.env["LEAGUEKIT_TEST_WEBHOOK_SECRET"] ?? "";

/** Collects the events of a stream in the background until stopped. */
function collect(stream: AsyncGenerator<StreamedEvent>): { events: StreamedEvent[]; done: Promise<void> } {
    const events: StreamedEvent[] = [];
    const done = (async () => {
        for await (const event of stream) {
            events.push(event);
        }
    })();
    return { events, done };
}

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok()) {
        if (Date.now() > deadline) {
            throw new Error(`timed out waiting for ${what}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

function ofType(events: LeagueEvent[], type: string): LeagueEvent[] {
    return events.filter((e) => e.type === type);
}

describe("a player's stream", () => {
    it("follows the player across a rollover; a dropped stream resumed from its cursor misses nothing", async () => {
        const ana = `ev-ana-${run}`;
        const steady = new AbortController();
        const whole = collect(server.playerEvents(ana, { signal: steady.signal }));
        const first = new AbortController();
        const before = collect(server.playerEvents(ana, { signal: first.signal }));

        const placed = await server.submit(ana, { value: 40 });
        await until("player.placed on both streams", () =>
            ofType(whole.events, "player.placed").length > 0 && ofType(before.events, "player.placed").length > 0,
        );
        const seenPlaced = ofType(before.events, "player.placed")[0];
        assert.equal(seenPlaced?.player, ana);
        assert.equal(seenPlaced?.period, placed.period);
        assert.equal(seenPlaced?.tier, placed.tier);
        assert.equal(seenPlaced?.bracket, placed.bracket);

        // The drop: everything after it happens while this reader is away.
        first.abort();
        await before.done;
        const cursor = before.events.at(-1)?.cursor;
        assert.ok(cursor !== undefined, "stream events carry a cursor");

        const closed = await rollOver(`events test ${run}`);
        assert.equal(closed, placed.period);
        await until("the rollover's events on the steady stream", () =>
            ofType(whole.events, "player.promoted").length > 0 && ofType(whole.events, "reward.granted").length > 0,
        );
        await server.claim(ana);
        await until("reward.claimed on the steady stream", () => ofType(whole.events, "reward.claimed").length > 0);

        const resumedStop = new AbortController();
        const resumed = collect(server.playerEvents(ana, { lastEventId: cursor, signal: resumedStop.signal }));
        await until("the resumed stream to catch up", () => resumed.events.length >= whole.events.length - before.events.length);
        // A little longer: nothing else may arrive (no duplicates).
        await new Promise((resolve) => setTimeout(resolve, 500));
        resumedStop.abort();
        steady.abort();
        await Promise.all([resumed.done, whole.done]);

        const ids = (events: LeagueEvent[]) => events.map((e) => e.id);
        assert.deepEqual([...ids(before.events), ...ids(resumed.events)], ids(whole.events), "the dropped and resumed stream saw exactly the steady one's events");
        const promoted = ofType(whole.events, "player.promoted")[0];
        assert.equal(promoted?.period, closed);
        assert.ok(promoted?.known && promoted.type === "player.promoted" && promoted.data.next_tier === "silver");
        const granted = ofType(whole.events, "reward.granted")[0];
        assert.ok(granted?.known && granted.type === "reward.granted" && granted.data.grant === "gems:100");
        assert.ok(ofType(whole.events, "period.closed").some((e) => e.period === closed));
        assert.equal(new Set(ids(whole.events)).size, whole.events.length, "event ids are unique");
    });

    it("a player token reads its own stream only", async () => {
        const bo = `ev-bo-${run}`;
        await server.submit(bo, { value: 1 });
        const minted = await server.mintToken(bo);
        const game = new LeagueClient({ baseUrl, token: minted.token, retries: 0 });
        const stop = new AbortController();
        for await (const event of game.playerEvents(bo, { signal: stop.signal })) {
            assert.equal(event.player, bo);
            break;
        }
        await assert.rejects(async () => {
            for await (const _ of game.playerEvents(`ev-ana-${run}`)) {
                // never
            }
        }, /forbidden/);
    });

    it("ends with event: end when its player is banned, and is then refused", async () => {
        const eve = `ev-eve-${run}`;
        await server.submit(eve, { value: 2 });
        const minted = await server.mintToken(eve);
        const game = new LeagueClient({ baseUrl, token: minted.token, retries: 0 });
        const seen: StreamedEvent[] = [];
        const ended = (async () => {
            try {
                for await (const event of game.playerEvents(eve)) {
                    seen.push(event);
                }
            } catch (error) {
                return error;
            }
            return undefined;
        })();
        await until("eve's placement on her stream", () => seen.length > 0);
        await admin.ban(eve, { reason: `stream end test ${run}` });
        const error = await ended;
        assert.ok(error instanceof StreamEndedError, `expected StreamEndedError, got ${String(error)}`);
        assert.equal(error.reason, "banned");
        assert.equal(error.code, "banned");
        assert.equal(error.lastEventId, seen.at(-1)?.cursor);
        // While the ban holds: no stream with her token, and no new token.
        await assert.rejects(async () => {
            for await (const _ of game.playerEvents(eve)) {
                // never
            }
        }, (e: unknown) => e instanceof LeagueError && e.status === 403 && e.code === "banned");
        await assert.rejects(server.mintToken(eve), (e: unknown) => e instanceof LeagueError && e.status === 403 && e.code === "banned");
        await admin.unban(eve, { reason: `stream end test ${run}` });
    });
});

describe("webhooks", () => {
    interface Delivery {
        headers: IncomingMessage["headers"];
        body: Buffer;
        event: LeagueEvent;
        answered: number;
        /** What did not hold when it arrived (empty: each of its signatures did). */
        problems: string[];
    }
    /** Checks a delivery's signatures, as it arrives, each way a receiver may. */
    function check(headers: IncomingMessage["headers"], body: Buffer): string[] {
        const problems: string[] = [];
        const attempt = (what: string, verify: () => string | undefined) => {
            try {
                const id = verify();
                if (id !== headers["leaguekit-event-id"]) {
                    problems.push(`${what}: id ${String(id)} is not Leaguekit-Event-Id ${String(headers["leaguekit-event-id"])}`);
                }
            } catch (error) {
                problems.push(`${what}: ${String(error)}`);
            }
        };
        attempt("verifyWebhook", () => verifyWebhook({ secret: hookSecret, signature: headers["leaguekit-signature"], body }).id);
        attempt("verifyStandardWebhook", () => verifyStandardWebhook({ secret: hookSecret, headers, body }).id);
        attempt("standardwebhooks", () => {
            // The reference library: a whsec_ secret as it is, a plain one as its bytes.
            const reference = hookSecret.startsWith("whsec_")
                ? new Webhook(hookSecret)
                : new Webhook(new TextEncoder().encode(hookSecret), { format: "raw" });
            const plain: Record<string, string> = {};
            for (const [name, value] of Object.entries(headers)) {
                if (typeof value === "string") {
                    plain[name] = value;
                }
            }
            return (reference.verify(body, plain) as { id?: string }).id;
        });
        attempt("webhook-id", () => headers["webhook-id"] as string | undefined);
        const t = /^t=(\d+),/.exec(String(headers["leaguekit-signature"]))?.[1];
        if (t === undefined || t !== headers["webhook-timestamp"]) {
            problems.push(`webhook-timestamp ${String(headers["webhook-timestamp"])} is not Leaguekit-Signature's t ${String(t)}`);
        }
        return problems;
    }
    const deliveries: Delivery[] = [];
    /** Says which deliveries the receiver answers 500 (every other one gets 204). */
    let fails: (event: LeagueEvent, earlier: Delivery[]) => boolean = () => false;
    const receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            const body = Buffer.concat(chunks);
            const event = JSON.parse(body.toString("utf8")) as LeagueEvent;
            const answered = fails(event, deliveries) ? 500 : 204;
            deliveries.push({ headers: req.headers, body, event, answered, problems: check(req.headers, body) });
            res.writeHead(answered).end();
        });
    });
    const placedOf = (player: string) => (d: Delivery) => d.event.player === player && d.event.type === "player.placed";
    before(async () => {
        assert.ok(Number.isInteger(hookPort) && hookSecret !== "", "run with clients/typescript/run --events");
        await new Promise<void>((resolve) => receiver.listen(hookPort, "127.0.0.1", resolve));
    });
    after(() => {
        receiver.close();
        // Every delivery received, by either test, was signed both ways.
        assert.ok(deliveries.length > 0, "no webhook received");
        const bad = deliveries.filter((d) => d.problems.length > 0).map((d) => [d.headers["leaguekit-event-id"], d.problems]);
        assert.deepEqual(bad, [], "deliveries whose signatures did not hold");
    });

    it("receives a signed event, verifies it, and gets a failed delivery again", async () => {
        const cy = `hook-cy-${run}`;
        // The first delivery of cy's placement fails: the server must send it again.
        fails = (event, earlier) =>
            event.player === cy && event.type === "player.placed" && !earlier.some(placedOf(cy));
        await server.submit(cy, { value: 3 });
        await until("the webhook of cy's placement, sent again", () =>
            deliveries.some((d) => placedOf(cy)(d) && d.answered === 204), 60_000);
        for (const delivery of deliveries) {
            assert.equal(delivery.headers["content-type"], "application/json");
            const event = verifyWebhook({
                secret: hookSecret,
                signature: delivery.headers["leaguekit-signature"],
                body: delivery.body,
            });
            assert.equal(delivery.headers["leaguekit-event-id"], event.id);
            assert.deepEqual(delivery.problems, [], "verified three ways when it arrived");
            assert.equal(verifyStandardWebhook({ secret: hookSecret, headers: delivery.headers, body: delivery.body }).id, event.id);
            assert.equal(delivery.headers["leaguekit-event-type"], event.type);
        }
        const mine = deliveries.filter(placedOf(cy));
        assert.deepEqual(mine.map((d) => d.answered), [500, 204], "the delivery answered 500 was sent again, once");
        assert.equal(mine[0]?.headers["leaguekit-event-id"], mine[1]?.headers["leaguekit-event-id"]);
        assert.equal(mine[0]?.event.id, mine[1]?.headers["leaguekit-event-id"]);
        const failed = mine[0];
        assert.ok(failed !== undefined);
        assert.throws(() =>
            verifyWebhook({ secret: `${hookSecret}x`, signature: failed.headers["leaguekit-signature"], body: failed.body }),
        );
        // The run's secret is a whsec_ one: Leaguekit-Signature is keyed with the whole
        // string, webhook-signature with its decoded key, and not the other way round.
        assert.ok(hookSecret.startsWith("whsec_"), "clients/typescript/run sets a whsec_ secret");
        const stripped = Buffer.from(hookSecret.slice("whsec_".length), "base64");
        assert.throws(() => verifyWebhook({ secret: stripped, signature: failed.headers["leaguekit-signature"], body: failed.body }));
        assert.throws(() =>
            new Webhook(hookSecret, { format: "raw" }).verify(failed.body, { ...(failed.headers as Record<string, string>) }),
        );
    });

    it("lists an event given up as a dead letter, and replays it", async () => {
        const di = `hook-di-${run}`;
        let down = true;
        fails = (event) => down && event.player === di;
        await server.submit(di, { value: 5 });
        // Every attempt fails (the run allows 2): the placement becomes a dead letter.
        let letter: Schemas["DeadLetterOut"] | undefined;
        const deadline = Date.now() + 60_000;
        while (letter === undefined) {
            const listed = await admin.deadLetters();
            letter = listed.dead.find((l) => {
                const event = JSON.parse(l.event) as LeagueEvent;
                return event.player === di && event.type === "player.placed";
            });
            assert.ok(Date.now() < deadline, `no dead letter for ${di}'s placement within 60 s`);
            if (letter === undefined) {
                await new Promise((resolve) => setTimeout(resolve, 200));
            }
        }
        // Listed a page at a time too: every page within its limit, the letter on one.
        const paged: string[] = [];
        let after: string | null = null;
        for (let pages = 0; ; pages += 1) {
            assert.ok(pages < 1000, "the pages of dead letters never end");
            const page: Schemas["DeadLettersOut"] = await admin.deadLetters(after === null ? { limit: 1 } : { limit: 1, after });
            assert.ok(page.dead.length <= 1);
            paged.push(...page.dead.map((l) => `${l.id} ${l.url}`));
            if (page.next === null) {
                break;
            }
            after = page.next;
        }
        assert.ok(paged.includes(`${letter.id} ${letter.url}`), "the letter is on a page");
        assert.equal(new Set(paged).size, paged.length, "no letter is on two pages");
        assert.equal(letter.url, `http://127.0.0.1:${hookPort}/hooks/league`);
        assert.equal(letter.attempts, 2);
        assert.match(letter.error, /500/);
        assert.equal(letter.replay, false);
        const tries = deliveries.filter(placedOf(di));
        assert.equal(tries.length, 2);
        assert.ok(tries.every((d) => d.answered === 500 && d.headers["leaguekit-event-id"] === letter?.id));

        // The receiver is fixed; an operator replays the letter.
        down = false;
        await assert.rejects(admin.replayDeadLetters({ reason: "nothing said" }), /bad_request/);
        await assert.rejects(server.replayDeadLetters({ ids: [letter.id], reason: "not an admin" }), /forbidden/);
        const replayed = await admin.replayDeadLetters({ ids: [letter.id], reason: "receiver fixed" });
        assert.equal(replayed.marked, 1);
        assert.deepEqual(replayed.dead.map((l) => [l.id, l.replay]), [[letter.id, true]]);
        const id = letter.id;
        await until("the replayed letter's delivery", () => deliveries.some((d) => placedOf(di)(d) && d.answered === 204), 30_000);
        const again = deliveries.filter(placedOf(di)).at(-1);
        assert.ok(again !== undefined);
        assert.equal(again.headers["leaguekit-event-id"], id);
        assert.equal(verifyWebhook({ secret: hookSecret, signature: again.headers["leaguekit-signature"], body: again.body }).id, id);
        assert.deepEqual(again.problems, [], "the replayed letter verified three ways");
        // Acknowledged: it leaves the list.
        const gone = Date.now() + 30_000;
        while ((await admin.deadLetters()).dead.some((l) => l.id === id && l.url === letter?.url)) {
            assert.ok(Date.now() < gone, "the replayed letter is still listed 30 s after its delivery");
            await new Promise((resolve) => setTimeout(resolve, 200));
        }
    });
});
