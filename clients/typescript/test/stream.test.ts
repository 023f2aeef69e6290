// The event stream's parsing and resumption against a scripted fetch (no server).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeagueClient, type LeagueError, type StreamItem } from "../src/index.js";
import { errorAnswer, fakeFetch, type Sent, type Step } from "./fake.js";

function event(id: string, type: string, data: Record<string, unknown> = {}): string {
    return JSON.stringify({ id, type, season: "weekly-ladder", period: 45, at: 1767225600000, player: "ana", tier: "bronze", bracket: 1, data });
}

/** An SSE answer whose body is sent in the given chunks, then ends (or breaks). */
function sse(chunks: string[], end: "close" | "break" = "close"): Response {
    const encoder = new TextEncoder();
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
        pull(controller) {
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
