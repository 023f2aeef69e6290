// LeagueClient: one method per route of `leaguekit serve`, typed by the generated
// schema (src/schema.ts), with request ids and retries.
import { LeagueError } from "./errors.js";
import type { StreamItem, StreamedEvent } from "./events.js";
import { retryPolicy, sleep, type RetryOptions } from "./retry.js";
import type { components, operations } from "./schema.js";
import { follow, type BracketStreamOptions, type StreamOptions } from "./stream.js";
import { json, send, type Call, type Transport } from "./transport.js";

export type Schemas = components["schemas"];

/** A route's successful JSON answer. */
export type Answer<K extends keyof operations> = operations[K]["responses"] extends {
    200: { content: { "application/json": infer R } };
}
    ? R
    : never;

/** A route's query parameters. */
export type Query<K extends keyof operations> = operations[K]["parameters"] extends { query?: infer Q }
    ? Exclude<Q, undefined>
    : never;

export interface CallOptions {
    /** Aborts the call, its retries and their waits. */
    signal?: AbortSignal;
}

export interface ClientOptions {
    /** The server, such as `http://127.0.0.1:8080` (a path prefix is kept). */
    baseUrl: string;
    /**
     * A server, viewer, admin or player token; or a function answering one, called
     * before every request (to refresh a player token before it expires).
     */
    token: string | (() => string | Promise<string>);
    /** The fetch to use (default: the global one). */
    fetch?: typeof fetch;
    /** Retries after the first attempt (a number), or the whole policy; default 3. */
    retries?: number | RetryOptions;
    /** Waits between retries (default: a timer); tests give their own. */
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
    /** The jitter's random source in [0, 1) (default Math.random). */
    random?: () => number;
}

/** A batch item's answer, with the item as it was sent (its request id filled in). */
export type BatchResult = Schemas["BatchItemOut"] & {
    readonly request: Schemas["BatchItemIn"] & { request_id: string };
};

/** A new request id: a random UUID. */
export function newRequestId(): string {
    return globalThis.crypto.randomUUID();
}

function given(id: string | null | undefined): id is string {
    return typeof id === "string" && id !== "";
}

export class LeagueClient {
    readonly #t: Transport;

    constructor(options: ClientOptions) {
        if (typeof options.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
            throw new TypeError(`baseUrl must be an http(s) URL, not ${JSON.stringify(options.baseUrl)}`);
        }
        const token = options.token;
        if (typeof token === "string" && token === "") {
            throw new TypeError("token must not be empty");
        }
        const fetchImpl = options.fetch ?? globalThis.fetch;
        if (typeof fetchImpl !== "function") {
            throw new TypeError("no fetch: give options.fetch (Node 20 and browsers have one)");
        }
        this.#t = {
            baseUrl: options.baseUrl,
            token: typeof token === "function" ? token : () => token,
            // Called as a plain function: a browser's fetch refuses another `this`.
            fetch: (input, init) => fetchImpl(input, init),
            policy: retryPolicy(options.retries),
            sleep: options.sleep ?? sleep,
            random: options.random ?? Math.random,
        };
    }

    #json<K extends keyof operations>(call: Call, options?: CallOptions): Promise<Answer<K>> {
        return json<Answer<K>>(this.#t, call, options?.signal);
    }

    // --- Health and the document ---

    /** `GET /healthz`: `{"status": "ok"}`, or `degraded` while Redis refuses writes. */
    healthz(options?: CallOptions): Promise<Answer<"healthz">> {
        return this.#json<"healthz">({ method: "GET", route: "/healthz", safety: "read" }, options);
    }

    /** `GET /metrics`: the Prometheus text (viewer token). */
    async metrics(options?: CallOptions): Promise<string> {
        const call: Call = { method: "GET", route: "/metrics", safety: "read", accept: "text/plain" };
        return (await send(this.#t, call, options?.signal)).text();
    }

    /** `GET /openapi.json`: the OpenAPI document this client's types were generated from. */
    openapi(options?: CallOptions): Promise<Record<string, unknown>> {
        return json(this.#t, { method: "GET", route: "/openapi.json", safety: "read" }, options?.signal);
    }

    // --- Players: joins, scores, profiles, rewards ---

    /** `POST /v1/players/{player}/join`. Safe to send again: the same bracket answers. */
    join(player: string, body?: Schemas["JoinIn"], options?: CallOptions): Promise<Answer<"join">> {
        return this.#json<"join">(
            { method: "POST", route: "/v1/players/{player}/join", path: { player }, body, safety: "idempotent" },
            options,
        );
    }

    /**
     * `POST /v1/players/{player}/scores`. Without `request_id` the client makes one, and
     * every retry sends the same id; after a 503 `unknown` it also sends the `at` the
     * server named, so a resend lands in the same period. An error thrown at the end
     * carries both (`requestId`, `at`) for a resend of your own.
     */
    submit(player: string, body: Schemas["SubmitIn"], options?: CallOptions): Promise<Answer<"submit">> {
        const sent: Schemas["SubmitIn"] = { ...body };
        if (!given(sent.request_id)) {
            sent.request_id = newRequestId();
        }
        return this.#json<"submit">(
            {
                method: "POST",
                route: "/v1/players/{player}/scores",
                path: { player },
                body: sent,
                safety: "keyed",
                requestId: sent.request_id,
                beforeRetry: (error) => adoptAt(sent, error),
            },
            options,
        );
    }

    /**
     * `POST /v1/scores:batch`: one answer per item, in order, each with the item as sent
     * (`request`: items without a request id get one, so an item answered `unknown` can
     * be sent again as `{...r.request, at: r.error.at}`).
     */
    async batch(items: Schemas["BatchItemIn"][], options?: CallOptions): Promise<BatchResult[]> {
        const sent = items.map((item) => ({
            ...item,
            request_id: given(item.request_id) ? item.request_id : newRequestId(),
        }));
        const answer = await this.#json<"batch">(
            { method: "POST", route: "/v1/scores:batch", body: sent, safety: "keyed" },
            options,
        );
        return answer.map((result, i) => {
            const request = sent[i];
            if (request === undefined) {
                throw new LeagueError({
                    status: 200,
                    code: "unexpected_response",
                    message: `the batch answered ${answer.length} results for ${sent.length} items`,
                    route: "POST /v1/scores:batch",
                });
            }
            return { ...result, request };
        });
    }

    /** `GET /v1/players/{player}`: placement, rank, score and the last closed period. */
    player(player: string, query?: Query<"player">, options?: CallOptions): Promise<Answer<"player">> {
        return this.#json<"player">(
            { method: "GET", route: "/v1/players/{player}", path: { player }, query, safety: "read" },
            options,
        );
    }

    /** `GET /v1/players/{player}/around`: the standings around the player (404 `not_placed`). */
    around(player: string, query?: Query<"around">, options?: CallOptions): Promise<Answer<"around">> {
        return this.#json<"around">(
            { method: "GET", route: "/v1/players/{player}/around", path: { player }, query, safety: "read" },
            options,
        );
    }

    /** `GET /v1/players/{player}/profile`. */
    profile(player: string, options?: CallOptions): Promise<Answer<"profile">> {
        return this.#json<"profile">(
            { method: "GET", route: "/v1/players/{player}/profile", path: { player }, safety: "read" },
            options,
        );
    }

    /** `PUT /v1/players/{player}/profile`: the profile becomes exactly these fields. */
    putProfile(player: string, fields: Record<string, string>, options?: CallOptions): Promise<Answer<"set_profile">> {
        return this.#json<"set_profile">(
            {
                method: "PUT",
                route: "/v1/players/{player}/profile",
                path: { player },
                body: fields,
                safety: "idempotent",
            },
            options,
        );
    }

    /** `PATCH /v1/players/{player}/profile`: a string sets a field, `null` removes it. */
    patchProfile(
        player: string,
        fields: Record<string, string | null>,
        options?: CallOptions,
    ): Promise<Answer<"patch_profile">> {
        return this.#json<"patch_profile">(
            {
                method: "PATCH",
                route: "/v1/players/{player}/profile",
                path: { player },
                body: fields,
                safety: "idempotent",
            },
            options,
        );
    }

    /** `GET /v1/players/{player}/rewards`: the unclaimed rewards. */
    rewards(player: string, options?: CallOptions): Promise<Answer<"rewards">> {
        return this.#json<"rewards">(
            { method: "GET", route: "/v1/players/{player}/rewards", path: { player }, safety: "read" },
            options,
        );
    }

    /**
     * `POST /v1/players/{player}/rewards:claim`. Without `request_id` the client makes
     * one, and every retry sends it: a resend answers the same grants.
     */
    claim(player: string, body?: Schemas["ClaimIn"], options?: CallOptions): Promise<Answer<"claim">> {
        const sent: Schemas["ClaimIn"] = { ...body };
        if (!given(sent.request_id)) {
            sent.request_id = newRequestId();
        }
        return this.#json<"claim">(
            {
                method: "POST",
                route: "/v1/players/{player}/rewards:claim",
                path: { player },
                body: sent,
                safety: "keyed",
                requestId: sent.request_id,
            },
            options,
        );
    }

    /**
     * `POST /v1/players/{player}/token`: a player token for a game client (a server or
     * admin token mints it). It writes nothing, so a resend only mints another.
     */
    mintToken(player: string, body?: Schemas["TokenIn"], options?: CallOptions): Promise<Answer<"mint">> {
        return this.#json<"mint">(
            { method: "POST", route: "/v1/players/{player}/token", path: { player }, body: body ?? {}, safety: "idempotent" },
            options,
        );
    }

    // --- Standings and the season ---

    /** `GET /v1/tiers/{tier}/brackets/{bracket}`: a bracket's standings with profiles. */
    standings(
        tier: string,
        bracket: number,
        query?: Query<"standings">,
        options?: CallOptions,
    ): Promise<Answer<"standings">> {
        return this.#json<"standings">(
            {
                method: "GET",
                route: "/v1/tiers/{tier}/brackets/{bracket}",
                path: { tier, bracket },
                query,
                safety: "read",
            },
            options,
        );
    }

    /** `GET /v1/tiers/{tier}/top`: the best of a tier across its brackets. */
    top(tier: string, query?: Query<"top">, options?: CallOptions): Promise<Answer<"top">> {
        return this.#json<"top">(
            { method: "GET", route: "/v1/tiers/{tier}/top", path: { tier }, query, safety: "read" },
            options,
        );
    }

    /** `GET /v1/counts`: players and brackets per tier. */
    counts(query?: Query<"counts">, options?: CallOptions): Promise<Answer<"counts">> {
        return this.#json<"counts">({ method: "GET", route: "/v1/counts", query, safety: "read" }, options);
    }

    /** `GET /v1/season`: the rules: tiers, quotas, zones, rewards. */
    season(options?: CallOptions): Promise<Answer<"season">> {
        return this.#json<"season">({ method: "GET", route: "/v1/season", safety: "read" }, options);
    }

    /** `GET /v1/periods`: the current period, the next boundary, closed periods' reports. */
    periods(query?: Query<"periods">, options?: CallOptions): Promise<Answer<"periods">> {
        return this.#json<"periods">({ method: "GET", route: "/v1/periods", query, safety: "read" }, options);
    }

    /**
     * `GET /v1/periods/{period}/export`: a closed period's outcomes, one line each,
     * read as they arrive (the request is retried until the answer starts).
     */
    async *export(period: number, options?: CallOptions): AsyncGenerator<Schemas["ExportLine"]> {
        const call: Call = {
            method: "GET",
            route: "/v1/periods/{period}/export",
            path: { period },
            safety: "read",
            accept: "application/x-ndjson",
        };
        const response = await send(this.#t, call, options?.signal);
        if (response.body === null) {
            return;
        }
        const decoder = new TextDecoder();
        let pending = "";
        // A reader rather than `for await` on the body: not every browser iterates streams.
        const reader = response.body.getReader();
        try {
            for (;;) {
                const { value, done } = await reader.read();
                if (done) {
                    break;
                }
                pending += decoder.decode(value, { stream: true });
                let newline: number;
                while ((newline = pending.indexOf("\n")) >= 0) {
                    const line = pending.slice(0, newline).trim();
                    pending = pending.slice(newline + 1);
                    if (line !== "") {
                        yield JSON.parse(line) as Schemas["ExportLine"];
                    }
                }
            }
        } finally {
            await reader.cancel().catch(() => undefined);
        }
        pending += decoder.decode();
        if (pending.trim() !== "") {
            yield JSON.parse(pending) as Schemas["ExportLine"];
        }
    }

    // --- The staging clock and the operator's routes (admin token) ---

    /** `GET /v1/clock`: the league clock's now and offset. */
    clock(options?: CallOptions): Promise<Answer<"clock">> {
        return this.#json<"clock">({ method: "GET", route: "/v1/clock", safety: "read" }, options);
    }

    /** `POST /v1/clock`: moves a staging clock forward (`advance` or `set`). Never resent. */
    moveClock(body: Schemas["ClockIn"], options?: CallOptions): Promise<Answer<"move_clock">> {
        return this.#json<"move_clock">({ method: "POST", route: "/v1/clock", body, safety: "unsafe" }, options);
    }

    /** `GET /v1/audit`: the operators' actions. */
    audit(query?: Query<"audit">, options?: CallOptions): Promise<Answer<"audit">> {
        return this.#json<"audit">({ method: "GET", route: "/v1/audit", query, safety: "read" }, options);
    }

    /** `GET /v1/bans`: the bans that hold now. */
    bans(options?: CallOptions): Promise<Answer<"bans">> {
        return this.#json<"bans">({ method: "GET", route: "/v1/bans", safety: "read" }, options);
    }

    /** `POST /v1/players/{player}/ban`. Never resent (each is audited). */
    ban(player: string, body: Schemas["BanIn"], options?: CallOptions): Promise<Answer<"ban">> {
        return this.#json<"ban">(
            { method: "POST", route: "/v1/players/{player}/ban", path: { player }, body, safety: "unsafe" },
            options,
        );
    }

    /** `POST /v1/players/{player}/unban`. Never resent. */
    unban(player: string, body?: Schemas["UnbanIn"], options?: CallOptions): Promise<Answer<"unban">> {
        return this.#json<"unban">(
            { method: "POST", route: "/v1/players/{player}/unban", path: { player }, body: body ?? {}, safety: "unsafe" },
            options,
        );
    }

    /**
     * `POST /v1/players/{player}/adjust`: `set` a score (resent on failure: setting twice
     * is setting once) or change it `by` a delta (never resent).
     */
    adjust(player: string, body: Schemas["AdjustIn"], options?: CallOptions): Promise<Answer<"adjust">> {
        const safety = body.set !== undefined && body.set !== null && (body.by ?? null) === null ? "idempotent" : "unsafe";
        return this.#json<"adjust">(
            { method: "POST", route: "/v1/players/{player}/adjust", path: { player }, body, safety },
            options,
        );
    }

    /**
     * `POST /v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle`: re-settles a
     * closed bracket without the excluded players. Sent again, it changes nothing.
     */
    resettle(
        period: number,
        tier: string,
        bracket: number,
        body: Schemas["ResettleIn"],
        options?: CallOptions,
    ): Promise<Answer<"resettle">> {
        return this.#json<"resettle">(
            {
                method: "POST",
                route: "/v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle",
                path: { period, tier, bracket },
                body,
                safety: "idempotent",
            },
            options,
        );
    }

    /**
     * `GET /v1/webhooks/dead`: webhook deliveries given up after every attempt, per URL,
     * oldest first, a page at a time: `limit` letters (1-1000, default 100) from after
     * `after` (the `next` of the page before); `next` is null on the last page.
     */
    deadLetters(query?: Query<"dead">, options?: CallOptions): Promise<Answer<"dead">> {
        return this.#json<"dead">({ method: "GET", route: "/v1/webhooks/dead", query, safety: "read" }, options);
    }

    /**
     * `POST /v1/webhooks/dead:replay`: marks dead letters (`ids`, event ids, or
     * `all: true`) to be sent again within about 5 s, with a `reason` (audited).
     * Never resent.
     */
    replayDeadLetters(body: Schemas["ReplayIn"], options?: CallOptions): Promise<Answer<"replay">> {
        return this.#json<"replay">(
            { method: "POST", route: "/v1/webhooks/dead:replay", body, safety: "unsafe" },
            options,
        );
    }

    // --- Live events ---

    /**
     * `GET /v1/players/{player}/events`: the player's events as they happen, across
     * periods. Reconnects after a drop with the last event's cursor, so none is missed;
     * `lastEventId` resumes a stream read before (an event's `cursor`). Stop it with
     * `signal` or `break`. When the server ends the stream (`event: end`: the player
     * token expired, or the player was banned) it throws `StreamEndedError`, with the
     * reason and the cursor to resume from.
     */
    playerEvents(player: string, options?: StreamOptions): AsyncGenerator<StreamedEvent> {
        return onlyEvents(
            follow(this.#t, { route: "/v1/players/{player}/events", path: { player } }, options ?? {}),
        );
    }

    /**
     * `GET /v1/tiers/{tier}/brackets/{bracket}/events`: the bracket's events and
     * `standings` snapshots (`kind: "standings"`) as they happen, resumed and ended
     * like `playerEvents`.
     */
    bracketEvents(tier: string, bracket: number, options?: BracketStreamOptions): AsyncGenerator<StreamItem> {
        const query = { period: options?.period, cohort: options?.cohort, limit: options?.limit };
        return follow(
            this.#t,
            { route: "/v1/tiers/{tier}/brackets/{bracket}/events", path: { tier, bracket }, query },
            options ?? {},
        );
    }
}

/** After a 503 `unknown`, a score update is resent with the event time the server named. */
function adoptAt(body: Schemas["SubmitIn"], error: LeagueError): void {
    if (error.code === "unknown" && error.at !== undefined && (body.at ?? null) === null) {
        body.at = error.at;
    }
}

async function* onlyEvents(items: AsyncGenerator<StreamItem>): AsyncGenerator<StreamedEvent> {
    try {
        for await (const item of items) {
            if (item.kind === "event") {
                yield item.event;
            }
        }
    } finally {
        await items.return(undefined);
    }
}
