// When and how long to wait before sending a request again.

/** How the client retries (all optional). */
export interface RetryOptions {
    /** Retries after the first attempt (default 3; 0 turns retries off). */
    max?: number;
    /** The first backoff's ceiling, doubled at each retry (default 200 ms). */
    baseDelayMs?: number;
    /** The largest backoff (default 5 s). */
    maxDelayMs?: number;
    /**
     * The longest Retry-After the client waits for (default 30 s): an answer asking for
     * more is not retried but thrown, with `retryAfterMs` set.
     */
    maxRetryAfterMs?: number;
}

export interface RetryPolicy {
    max: number;
    baseDelayMs: number;
    maxDelayMs: number;
    maxRetryAfterMs: number;
}

export function retryPolicy(options: number | RetryOptions | undefined): RetryPolicy {
    const given: RetryOptions = typeof options === "number" ? { max: options } : (options ?? {});
    const policy = {
        max: given.max ?? 3,
        baseDelayMs: given.baseDelayMs ?? 200,
        maxDelayMs: given.maxDelayMs ?? 5000,
        maxRetryAfterMs: given.maxRetryAfterMs ?? 30_000,
    };
    for (const [key, value] of Object.entries(policy)) {
        if (!Number.isFinite(value) || value < 0) {
            throw new RangeError(`retries.${key} must be a finite number >= 0, not ${value}`);
        }
    }
    policy.max = Math.floor(policy.max);
    return policy;
}

/** Exponential backoff with full jitter: a random wait in [0, min(max, base * 2^retry)). */
export function backoff(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
    return Math.floor(random() * ceiling);
}

/**
 * The wait a server asked for: the body's `retry_after_ms` if there is one, else the
 * Retry-After header (seconds, or an HTTP date).
 */
export function retryAfterMs(headers: Headers, bodyMs: unknown, now: number = Date.now()): number | undefined {
    if (typeof bodyMs === "number" && Number.isFinite(bodyMs) && bodyMs >= 0) {
        return bodyMs;
    }
    const header = headers.get("retry-after");
    if (header === null || header.trim() === "") {
        return undefined;
    }
    if (/^\s*\d+\s*$/.test(header)) {
        return Number(header) * 1000;
    }
    const date = Date.parse(header);
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Error codes that promise nothing was written: any request so answered may be sent again. */
export const NOTHING_WRITTEN = new Set<string>([
    "not_started",
    "still_closing",
    "rate_limited",
    "store_unreachable",
    "body_timeout",
]);

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
        if (signal?.aborted) {
            reject(signal.reason);
            return;
        }
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        const onAbort = (): void => {
            clearTimeout(timer);
            reject(signal?.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}
