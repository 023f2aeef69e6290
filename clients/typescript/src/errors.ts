import type { components } from "./schema.js";

/** The server's stable error codes (docs/http.md, "Errors"). */
export type ErrorCode = components["schemas"]["ErrorCode"];

/**
 * An answer of the server that is not a success: `status` is the HTTP status, `code`
 * and `message` come from its `{"error": {"code", "message"}}` body (`code` is
 * `"unexpected_response"` when the body is not one, such as a proxy's page).
 */
export class LeagueError extends Error {
    override readonly name: string = "LeagueError";
    readonly status: number;
    readonly code: ErrorCode | "unexpected_response";
    /** How long the server asked to wait before sending again (`retry_after_ms` or Retry-After). */
    readonly retryAfterMs: number | undefined;
    /** With `unknown` on a score update: the event time to resend it with. */
    readonly at: string | undefined;
    /** The request id the call carried, to resend it later with the same one. */
    readonly requestId: string | undefined;
    /** The route, such as `POST /v1/players/{player}/scores`. */
    readonly route: string;

    constructor(init: {
        status: number;
        code: ErrorCode | "unexpected_response";
        message: string;
        route: string;
        retryAfterMs?: number | undefined;
        at?: string | undefined;
        requestId?: string | undefined;
    }) {
        super(`${init.route}: HTTP ${init.status} ${init.code}: ${init.message}`);
        this.status = init.status;
        this.code = init.code;
        this.route = init.route;
        this.retryAfterMs = init.retryAfterMs;
        this.at = init.at;
        this.requestId = init.requestId;
    }

    /** The server's own message, without the route and status. */
    get serverMessage(): string {
        return this.message.slice(this.message.indexOf(": ", this.route.length + 2) + 2);
    }
}

/**
 * The request got no answer: the connection failed or broke (`cause` says how). For a
 * write, it may or may not have been applied: resend it with the same request id
 * (`requestId`), which the client does by itself while retries last.
 */
export class LeagueConnectionError extends Error {
    override readonly name = "LeagueConnectionError";
    readonly route: string;
    readonly requestId: string | undefined;

    constructor(route: string, cause: unknown, requestId?: string) {
        super(`${route}: no answer: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
        this.route = route;
        this.requestId = requestId;
    }
}

/** Why the server ended a live stream (`event: end`); later servers may add reasons. */
export type StreamEndReason = components["schemas"]["StreamEndReason"];

/**
 * The server ended a live stream with `event: end`: the player token it was opened
 * with expired (`reason` `"token_expired"`) or its player was banned (`"banned"`). The
 * stream's iterator throws it once the events before it are read, and does not
 * reconnect: with the same token the server would refuse (401 `token_expired`, 403
 * `banned`). After `token_expired`, open the stream again with a new player token and
 * `lastEventId` (nothing is missed). A `LeagueError` with `status` 200 and `code` the
 * reason (`"unexpected_response"` for a reason this version does not know; `reason`
 * has it as sent).
 */
export class StreamEndedError extends LeagueError {
    override readonly name: string = "StreamEndedError";
    /** The `reason` the server gave, as sent. */
    readonly reason: StreamEndReason | (string & {});
    /** The cursor of the last event read: resume after it (`lastEventId`). */
    readonly lastEventId: string | undefined;

    constructor(init: { reason: string; message: string; route: string; lastEventId: string | undefined }) {
        super({
            status: 200,
            code: init.reason === "token_expired" || init.reason === "banned" ? init.reason : "unexpected_response",
            message: init.message,
            route: init.route,
        });
        this.reason = init.reason;
        this.lastEventId = init.lastEventId;
    }
}
