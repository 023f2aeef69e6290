// Sending one request: URL, headers, the retry loop and the error body.
import { LeagueConnectionError, LeagueError } from "./errors.js";
import { NOTHING_WRITTEN, backoff, retryAfterMs, sleep, type RetryPolicy } from "./retry.js";

/**
 * How safe a request is to send twice:
 * - `read`: a GET;
 * - `keyed`: a write carrying a request id (the server answers a resend like the first);
 * - `idempotent`: a write the server documents as safe to send again (a join, a
 *   profile write, a re-settlement);
 * - `unsafe`: anything else (an adjustment by a delta, a ban, a clock move, a token).
 * Only the first three are resent after a network error or a 5xx; every request is
 * resent after an answer that promises nothing was written (`NOTHING_WRITTEN`).
 */
export type Safety = "read" | "keyed" | "idempotent" | "unsafe";

export type QueryValue = string | number | boolean | null | undefined;

export interface Call {
    method: "GET" | "POST" | "PUT" | "PATCH";
    /** The route's template, such as `/v1/players/{player}`. */
    route: string;
    path?: Record<string, string | number>;
    query?: Record<string, QueryValue> | undefined;
    /** JSON body; sent as it is at each attempt (a retry may change it: `beforeRetry`). */
    body?: unknown;
    safety: Safety;
    requestId?: string | undefined;
    accept?: string;
    headers?: Record<string, string>;
    /** Called with the error before each retry that follows an answer. */
    beforeRetry?: (error: LeagueError) => void;
}

export interface Transport {
    baseUrl: string;
    token: () => string | Promise<string>;
    fetch: typeof fetch;
    policy: RetryPolicy;
    sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
    random: () => number;
}

export function buildUrl(baseUrl: string, call: Pick<Call, "route" | "path" | "query">): string {
    const path = call.route.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const value = call.path?.[name];
        if (value === undefined) {
            throw new TypeError(`${call.route}: no value for {${name}}`);
        }
        return encodeURIComponent(String(value));
    });
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(call.query ?? {})) {
        if (value !== undefined && value !== null) {
            search.set(key, String(value));
        }
    }
    const query = search.toString();
    return `${baseUrl.replace(/\/+$/, "")}${path}${query === "" ? "" : `?${query}`}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The error an answer that is not a success stands for. */
export async function errorOf(response: Response, route: string, requestId?: string): Promise<LeagueError> {
    const text = await response.text().catch(() => "");
    let detail: Record<string, unknown> | undefined;
    try {
        const body: unknown = JSON.parse(text);
        if (isObject(body) && isObject(body["error"])) {
            detail = body["error"];
        }
    } catch {
        // not JSON: a proxy's page, a truncated body
    }
    const code = detail?.["code"];
    const message = detail?.["message"];
    if (detail === undefined || typeof code !== "string" || typeof message !== "string") {
        return new LeagueError({
            status: response.status,
            code: "unexpected_response",
            message: text.slice(0, 200) || response.statusText || "no body",
            route,
            retryAfterMs: retryAfterMs(response.headers, undefined),
            requestId,
        });
    }
    const at = detail["at"];
    return new LeagueError({
        status: response.status,
        code: code as LeagueError["code"],
        message,
        route,
        retryAfterMs: retryAfterMs(response.headers, detail["retry_after_ms"]),
        at: typeof at === "string" ? at : undefined,
        requestId,
    });
}

function retryable(error: LeagueError, safety: Safety): boolean {
    if (NOTHING_WRITTEN.has(error.code)) {
        return true;
    }
    return error.status >= 500 && safety !== "unsafe";
}

/**
 * Sends `call` and answers its successful response, retrying as the policy and the
 * call's safety allow; throws `LeagueError` (an answer) or `LeagueConnectionError`
 * (none) otherwise.
 */
export async function send(t: Transport, call: Call, signal?: AbortSignal): Promise<Response> {
    const label = `${call.method} ${call.route}`;
    for (let attempt = 0; ; attempt += 1) {
        const headers: Record<string, string> = {
            Accept: call.accept ?? "application/json",
            Authorization: `Bearer ${await t.token()}`,
            ...call.headers,
        };
        const init: RequestInit = { method: call.method, headers };
        if (call.body !== undefined) {
            headers["Content-Type"] = "application/json";
            init.body = JSON.stringify(call.body);
        }
        if (signal !== undefined) {
            init.signal = signal;
        }
        let response: Response;
        try {
            response = await t.fetch(buildUrl(t.baseUrl, call), init);
        } catch (cause) {
            if (signal?.aborted) {
                throw signal.reason;
            }
            const error = new LeagueConnectionError(label, cause, call.requestId);
            if (attempt >= t.policy.max || call.safety === "unsafe") {
                throw error;
            }
            await t.sleep(backoff(t.policy, attempt, t.random), signal);
            continue;
        }
        if (response.ok) {
            return response;
        }
        const error = await errorOf(response, label, call.requestId);
        if (attempt >= t.policy.max || !retryable(error, call.safety)) {
            throw error;
        }
        let wait: number;
        if (error.retryAfterMs !== undefined) {
            if (error.retryAfterMs > t.policy.maxRetryAfterMs) {
                throw error;
            }
            // A little jitter so that the clients a boundary turned away do not return at once.
            wait = error.retryAfterMs + Math.floor(t.random() * t.policy.baseDelayMs);
        } else {
            wait = backoff(t.policy, attempt, t.random);
        }
        call.beforeRetry?.(error);
        await t.sleep(wait, signal);
    }
}

/** Sends `call` and parses its JSON answer. */
export async function json<T>(t: Transport, call: Call, signal?: AbortSignal): Promise<T> {
    const response = await send(t, call, signal);
    return (await response.json()) as T;
}

export { sleep };
