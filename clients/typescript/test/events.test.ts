// Live events against `leaguekit serve`: a player's stream followed across a rollover,
// dropped and resumed from its cursor (compared with a stream that never dropped),
// and a signed webhook received by a local receiver that fails its first delivery.
// Run by `clients/typescript/run --events` (`npm run test:events`), which sets
// LEAGUEKIT_WEBHOOK_URLS and LEAGUEKIT_WEBHOOK_SECRET on the server.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { after, before, describe, it } from "node:test";
import { LeagueClient, verifyWebhook, type LeagueEvent, type StreamedEvent } from "../src/index.js";
import { baseUrl, rollOver, run, server } from "./env.js";

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
});

describe("webhooks", () => {
    interface Delivery {
        headers: IncomingMessage["headers"];
        body: Buffer;
        answered: number;
    }
    const deliveries: Delivery[] = [];
    const receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            // The first delivery fails: the server must send it again.
            const answered = deliveries.length === 0 ? 500 : 204;
            deliveries.push({ headers: req.headers, body: Buffer.concat(chunks), answered });
            res.writeHead(answered).end();
        });
    });
    before(async () => {
        assert.ok(Number.isInteger(hookPort) && hookSecret !== "", "run with clients/typescript/run --events");
        await new Promise<void>((resolve) => receiver.listen(hookPort, "127.0.0.1", resolve));
    });
    after(() => {
        receiver.close();
    });

    it("receives a signed event, verifies it, and gets a failed delivery again", async () => {
        const cy = `hook-cy-${run}`;
        await server.submit(cy, { value: 3 });
        const mine = (): Delivery[] =>
            deliveries.filter((d) => {
                const event = JSON.parse(d.body.toString("utf8")) as LeagueEvent;
                return event.player === cy && event.type === "player.placed";
            });
        await until("the webhook of cy's placement", () => mine().some((d) => d.answered === 204), 60_000);
        for (const delivery of deliveries) {
            assert.equal(delivery.headers["content-type"], "application/json");
            const event = verifyWebhook({
                secret: hookSecret,
                signature: delivery.headers["leaguekit-signature"],
                body: delivery.body,
            });
            assert.equal(delivery.headers["leaguekit-event-id"], event.id);
            assert.equal(delivery.headers["leaguekit-event-type"], event.type);
        }
        const failed = deliveries[0];
        assert.ok(failed !== undefined);
        const failedId = failed.headers["leaguekit-event-id"];
        assert.ok(
            deliveries.some((d, i) => i > 0 && d.headers["leaguekit-event-id"] === failedId),
            "the delivery answered 500 was sent again with the same event id",
        );
        assert.throws(() =>
            verifyWebhook({ secret: `${hookSecret}x`, signature: failed.headers["leaguekit-signature"], body: failed.body }),
        );
    });
});
