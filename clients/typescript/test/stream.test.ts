// The event stream's parsing and resumption against a scripted fetch (no server).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeagueClient, StreamEndedError, type LeagueError, type StreamItem } from "../src/index.js";
import { parseEnd } from "../src/stream.js";
import { errorAnswer, fakeFetch, type Sent, type Step } from "./fake.js";

function event(id: string, type: string, data: Record<string, unknown> = {}): string {
    return JSON.stringify({ id, type, season: "weekly-ladder", period: 45, at: 1767225600000, player: "ana", tier: "bronze", bracket: 1, data });
}

/** An SSE answer whose body is sent in the given chunks, then ends (or breaks, or stays open). */
function sse(chunks: string[], end: "close" | "break" | "open" = "close", onCancel?: () => void): Response {
    const encoder = new TextEncoder();
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
        cancel() {
            onCancel?.();
        },
        async pull(controller) {
            if (i >= chunks.length && end === "open") {
                // A server that keeps the connection open: only a cancel ends it.
                await new Promise<void>(() => undefined);
            }
            const chunk = chunks[i++];
            if (chunk !== undefined) {
                controller.enqueue(encoder.encode(chunk));
            } else if (end === "close") {
                controller.close();
            } else {
                controller.error(new TypeError("terminated: other side closed"));
            }
        },
    });
    return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

function client(steps: Step[]): { league: LeagueClient; sent: Sent[] } {
    const fake = fakeFetch(steps);
    const league = new LeagueClient({ baseUrl: "http://league.test", token: "tok-0123456789abcdef", fetch: fake.fetch, sleep: async () => undefined });
    return { league, sent: fake.sent };
}

describe("playerEvents", () => {
    it("parses events split across chunks, skips keep-alives and resumes after a drop with Last-Event-ID", async () => {
        const first = `event: player.placed\nid: c-1\ndata: ${event("e1", "player.placed")}\n\n`;
        const { league, sent } = client([
            () => sse([": keep-alive\n\n", first.slice(0, 17), first.slice(17), `event: player.overtaken\nid: c-2\ndata: ${event("e2", "player.overtaken", { by: "bo", rank: 4 })}\n\n`], "break"),
            () => errorAnswer(503, "store_unreachable"),
            () => sse([`:\n\nevent: period.closed\nid: c-3\ndata: ${event("e3", "period.closed", { brackets: 3, players: 212 })}\n\n`, `event: league.renamed\nid: c-4\ndata: ${event("e4", "league.renamed", { to: "x" })}\n\n`]),
        ]);
        const reconnects: (string | undefined)[] = [];
        const seen: string[] = [];
        for await (const e of league.playerEvents("ana", { lastEventId: "c-0", onReconnect: (info) => reconnects.push(info.lastEventId) })) {
            seen.push(`${e.id}:${e.type}:${e.known}`);
            assert.equal(e.cursor, `c-${seen.length}`);
            if (e.known && e.type === "player.overtaken") {
                assert.equal(e.data.by, "bo");
            }
            if (seen.length === 4) {
                break;
            }
        }
        assert.deepEqual(seen, ["e1:player.placed:true", "e2:player.overtaken:true", "e3:period.closed:true", "e4:league.renamed:false"]);
        assert.equal(sent[0]?.url, "http://league.test/v1/players/ana/events");
        assert.equal(sent[0]?.headers["last-event-id"], "c-0");
        assert.equal(sent[0]?.headers["accept"], "text/event-stream");
        assert.equal(sent[1]?.headers["last-event-id"], "c-2", "the reconnection resumes after the last event read");
        assert.equal(sent[2]?.headers["last-event-id"], "c-2", "a retried reconnection too");
        assert.deepEqual(reconnects, ["c-2"]);
    });

    it("ends when its signal aborts", async () => {
        const controller = new AbortController();
        const { league } = client([
            () => sse([`id: c-1\ndata: ${event("e1", "player.placed")}\n\n`, ": keep-alive\n\n", ": keep-alive\n\n"], "close"),
            () => {
                controller.abort();
                throw new DOMException("aborted", "AbortError");
            },
        ]);
        const seen: string[] = [];
        for await (const e of league.playerEvents("ana", { signal: controller.signal })) {
            seen.push(e.id);
        }
        assert.deepEqual(seen, ["e1"]);
    });
});

describe("the end of a stream", () => {
    it("stops at event: end, closes the connection and throws StreamEndedError with the reason and the cursor", async () => {
        let cancelled = false;
        const { league, sent } = client([
            () =>
                sse(
                    [
                        `event: player.placed\nid: c-1\ndata: ${event("e1", "player.placed")}\n\n`,
                        // In the same chunk as the end: neither is read (the second would not parse).
                        `event: end\ndata: {"reason":"token_expired","message":"the player token expired"}\n\n` +
                            `event: player.placed\nid: c-2\ndata: ${event("e2", "player.placed")}\n\n` +
                            "event: player.placed\nid: c-3\ndata: not json\n\n",
                        `event: player.placed\nid: c-4\ndata: ${event("e4", "player.placed")}\n\n`,
                    ],
                    "open",
                    () => {
                        cancelled = true;
                    },
                ),
        ]);
        const seen: string[] = [];
        const reconnects: unknown[] = [];
        await assert.rejects(
            async () => {
                for await (const e of league.playerEvents("ana", { onReconnect: (info) => reconnects.push(info) })) {
                    seen.push(e.id);
                }
            },
            (error: unknown) => {
                assert.ok(error instanceof StreamEndedError, String(error));
                assert.equal(error.reason, "token_expired");
                assert.equal(error.code, "token_expired");
                assert.equal(error.status, 200);
                assert.equal(error.lastEventId, "c-1");
                assert.equal(error.serverMessage, "the player token expired");
                return true;
            },
        );
        assert.deepEqual(seen, ["e1"], "nothing after the end is read");
        assert.equal(sent.length, 1, "an ended stream is not reconnected");
        assert.deepEqual(reconnects, []);
        assert.ok(cancelled, "the connection is closed");
    });

    it("ends a bracket stream too, and keeps a reason it does not know", async () => {
        const { league, sent } = client([
            () => sse([`event: end\ndata: {"reason":"banned","message":"player \\"ana\\" is banned"}\n\n`], "open"),
            () => sse([`event: end\ndata: {"reason":"maintenance","message":"back soon"}\n\n`], "open"),
        ]);
        await assert.rejects(async () => {
            for await (const _ of league.bracketEvents("bronze", 1)) {
                // nothing before the end
            }
        }, (error: unknown) => error instanceof StreamEndedError && error.reason === "banned" && error.code === "banned" && error.lastEventId === undefined);
        await assert.rejects(async () => {
            for await (const _ of league.bracketEvents("bronze", 1, { lastEventId: "c-7" })) {
                // nothing before the end
            }
        }, (error: unknown) => error instanceof StreamEndedError && error.reason === "maintenance" && error.code === "unexpected_response" && error.lastEventId === "c-7");
        assert.equal(sent.length, 2);
    });

    it("reads an end whose data is not the expected JSON", () => {
        assert.deepEqual(parseEnd('{"reason":"banned","message":"m","extra":1}'), { reason: "banned", message: "m" });
        assert.deepEqual(parseEnd("gone"), { reason: "unknown", message: "gone" });
        assert.deepEqual(parseEnd('{"reason":7}'), { reason: "unknown", message: '{"reason":7}' });
    });
});

describe("bracketEvents", () => {
    it("surfaces standings snapshots as their own kind, errors to onError, and keeps the query", async () => {
        const standings = { period: 45, tier: "bronze", bracket: 2, players: 1, entries: [{ rank: 1, player: "ana", score: 3, profile: {} }] };
        const { league, sent } = client([
            () => sse([
                `event: standings\ndata: ${JSON.stringify(standings)}\n\n`,
                `event: error\ndata: {"error":{"code":"store_unavailable","message":"try later"}}\n\n`,
                `event: bracket.closed\nid: c-9\ndata: ${event("e9", "bracket.closed", { players: 97, active: 90 })}\n\n`,
            ]),
        ]);
        const errors: LeagueError[] = [];
        const items: StreamItem[] = [];
        for await (const item of league.bracketEvents("bronze", 2, { period: 45, onError: (e) => errors.push(e) })) {
            items.push(item);
            if (items.length === 2) {
                break;
            }
        }
        assert.equal(sent[0]?.url, "http://league.test/v1/tiers/bronze/brackets/2/events?period=45");
        assert.equal(items[0]?.kind, "standings");
        if (items[0]?.kind === "standings") {
            assert.equal(items[0].standings.entries[0]?.player, "ana");
        }
        assert.equal(items[1]?.kind === "event" && items[1].event.type, "bracket.closed");
        assert.equal(errors[0]?.code, "store_unavailable");
    });

    it("a stream that cannot connect throws the server's error once retries are spent", async () => {
        const { league, sent } = client([() => errorAnswer(403, "forbidden")]);
        await assert.rejects(async () => {
            for await (const _ of league.bracketEvents("bronze", 1)) {
                // never
            }
        }, /forbidden/);
        assert.equal(sent.length, 1);
    });
});
