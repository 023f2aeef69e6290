// Following a server-sent event stream: parse with eventsource-parser, skip
// keep-alives, reconnect after a drop with Last-Event-ID so that nothing is missed,
// and stop at the server's `event: end`.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { LeagueError, StreamEndedError } from "./errors.js";
import { parseEvent, type StreamItem } from "./events.js";
import { backoff } from "./retry.js";
import { send, type QueryValue, type Transport } from "./transport.js";

export interface StreamOptions {
    /** Resume after this event id (the last one read before): nothing after it is missed. */
    lastEventId?: string;
    /** Ends the stream (the iterator returns). */
    signal?: AbortSignal;
    /**
     * An `event: error` the server sent in the stream (it could not read the standings
     * once); the stream goes on. Default: ignored.
     */
    onError?: (error: LeagueError) => void;
    /** Told before each reconnection, with the id it resumes from. */
    onReconnect?: (info: { lastEventId: string | undefined; cause: unknown }) => void;
}

export interface BracketStreamOptions extends StreamOptions {
    /** A closed period's bracket (default: the running period). */
    period?: number;
    cohort?: string;
    /** How many entries each standings snapshot carries. */
    limit?: number;
}

interface Target {
    route: string;
    path: Record<string, string | number>;
    query?: Record<string, QueryValue>;
}

/** A connection that lasted this long was healthy: the next drop reconnects at once. */
const HEALTHY_MS = 30_000;

/** The server's `event: end`: why it ended the stream. */
export interface StreamEnd {
    reason: string;
    message: string;
}

interface Queued {
    item: StreamItem | StreamEnd | undefined;
    id: string | undefined;
}

/** The data of an `event: end` (`{"reason", "message"}`), read leniently. */
export function parseEnd(data: string): StreamEnd {
    let body: unknown;
    try {
        body = JSON.parse(data);
    } catch {
        body = undefined;
    }
    const fields = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    const reason = fields["reason"];
    const message = fields["message"];
    return {
        reason: typeof reason === "string" && reason !== "" ? reason : "unknown",
        message: typeof message === "string" ? message : data,
    };
}

function toItem(
    message: EventSourceMessage,
    route: string,
    onError: StreamOptions["onError"],
): StreamItem | StreamEnd | undefined {
    if (message.event === "end") {
        return parseEnd(message.data);
    }
    if (message.event === "standings") {
        return { kind: "standings", standings: JSON.parse(message.data) as never };
    }
    if (message.event === "error") {
        const body = JSON.parse(message.data) as { error?: { code?: unknown; message?: unknown } };
        onError?.(
            new LeagueError({
                status: 200,
                code: typeof body.error?.code === "string" ? (body.error.code as LeagueError["code"]) : "unexpected_response",
                message: typeof body.error?.message === "string" ? body.error.message : message.data,
                route,
            }),
        );
        return undefined;
    }
    if (message.data === "") {
        return undefined;
    }
    const cursor = message.id === undefined || message.id === "" ? undefined : message.id;
    return { kind: "event", event: { ...parseEvent(message.data), cursor } };
}

export async function* follow(t: Transport, target: Target, options: StreamOptions): AsyncGenerator<StreamItem> {
    const label = `GET ${target.route}`;
    let lastId = options.lastEventId;
    let quickDrops = 0;
    let serverRetryMs: number | undefined;
    const outer = options.signal;
    for (;;) {
        if (outer?.aborted) {
            return;
        }
        const controller = new AbortController();
        const onAbort = (): void => controller.abort(outer?.reason);
        outer?.addEventListener("abort", onAbort, { once: true });
        const opened = Date.now();
        let cause: unknown = "the server ended the stream";
        let delivered = false;
        let ended: StreamEnd | undefined;
        try {
            let response: Response;
            try {
                response = await send(
                    t,
                    {
                        method: "GET",
                        ...target,
                        safety: "read",
                        accept: "text/event-stream",
                        headers: lastId === undefined ? {} : { "Last-Event-ID": lastId },
                    },
                    controller.signal,
                );
            } catch (error) {
                if (outer?.aborted) {
                    return;
                }
                throw error;
            }
            if (response.body === null) {
                throw new LeagueError({
                    status: response.status,
                    code: "unexpected_response",
                    message: "the stream's answer has no body",
                    route: label,
                });
            }
            const queue: Queued[] = [];
            let endQueued = false;
            const parser = createParser({
                onEvent: (message) => {
                    // Nothing after the server's end is read (not even parsed).
                    if (!endQueued) {
                        const item = toItem(message, label, options.onError);
                        endQueued = item !== undefined && !("kind" in item);
                        queue.push({ item, id: message.id });
                    }
                },
                onRetry: (ms) => {
                    serverRetryMs = ms;
                },
                // Comments (`:` lines) are keep-alives: nothing to do.
            });
            const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
            try {
                read: for (;;) {
                    const { value, done } = await reader.read();
                    if (done) {
                        break;
                    }
                    parser.feed(value);
                    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
                        if (next.id !== undefined && next.id !== "") {
                            lastId = next.id;
                        }
                        if (next.item === undefined) {
                            continue;
                        }
                        if (!("kind" in next.item)) {
                            // The server's last word: what follows it is not read.
                            ended = next.item;
                            break read;
                        }
                        delivered = true;
                        yield next.item;
                    }
                }
            } catch (error) {
                if (outer?.aborted) {
                    return;
                }
                cause = error;
            } finally {
                controller.abort();
                await reader.cancel().catch(() => undefined);
            }
        } finally {
            outer?.removeEventListener("abort", onAbort);
        }
        if (outer?.aborted) {
            return;
        }
        if (ended !== undefined) {
            // Not a drop: the server would refuse the same token again. Say why.
            throw new StreamEndedError({ ...ended, route: label, lastEventId: lastId });
        }
        quickDrops = delivered || Date.now() - opened >= HEALTHY_MS ? 0 : quickDrops + 1;
        options.onReconnect?.({ lastEventId: lastId, cause });
        const wait = serverRetryMs ?? (quickDrops === 0 ? 0 : backoff(t.policy, quickDrops, t.random));
        try {
            await t.sleep(wait, outer);
        } catch {
            return;
        }
    }
}
