// Verifying a webhook. Each delivery is signed twice over the same raw body:
// - `Leaguekit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` (Stripe's scheme), the
//   HMAC keyed with the secret exactly as configured, over "<t>.<raw body>":
//   verifyWebhook;
// - Standard Webhooks' `webhook-id` (the event's id), `webhook-timestamp` and
//   `webhook-signature: v1,<base64 HMAC-SHA256>` over "<id>.<timestamp>.<raw body>",
//   keyed with a `whsec_` secret's base64-decoded key, or a plain secret's bytes:
//   verifyStandardWebhook (or the `standardwebhooks` package).
import { createHmac, timingSafeEqual } from "node:crypto";
import { parseEvent, type LeagueEvent } from "./events.js";

export type WebhookErrorReason = "malformed_header" | "bad_signature" | "stale_timestamp" | "malformed_body";

/** A webhook that must not be trusted; answer it 400 (`reason` says why). */
export class WebhookVerificationError extends Error {
    override readonly name = "WebhookVerificationError";
    readonly reason: WebhookErrorReason;

    constructor(reason: WebhookErrorReason, message: string) {
        super(message);
        this.reason = reason;
    }
}

export interface VerifyWebhookOptions {
    /** LEAGUEKIT_WEBHOOK_SECRET, as the server has it. */
    secret: string | Uint8Array;
    /** The `Leaguekit-Signature` header. */
    signature: string | string[] | null | undefined;
    /** The raw body, exactly as received (not re-serialized JSON). */
    body: string | Uint8Array;
    /** How far the signature's time may be from now (default 300 s). */
    toleranceSeconds?: number;
    /** Now, in unix milliseconds (default Date.now()). */
    now?: number;
}

/** The header's value for `body` signed at `timestamp` (unix seconds): for tests and tools. */
export function signWebhook(secret: string | Uint8Array, body: string | Uint8Array, timestamp: number): string {
    return `t=${timestamp},v1=${hmacHex(secret, String(timestamp), body)}`;
}

function hmacHex(secret: string | Uint8Array, timestamp: string, body: string | Uint8Array): string {
    return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/**
 * Checks a webhook's signature and age and answers its event; throws
 * `WebhookVerificationError` (malformed header, bad signature, stale timestamp,
 * malformed body) otherwise. Deduplicate accepted events by `event.id`: delivery is
 * at least once.
 */
export function verifyWebhook(options: VerifyWebhookOptions): LeagueEvent {
    const tolerance = options.toleranceSeconds ?? 300;
    const header = Array.isArray(options.signature) ? options.signature.join(",") : options.signature;
    if (typeof header !== "string" || header.trim() === "") {
        throw new WebhookVerificationError("malformed_header", "no Leaguekit-Signature header");
    }
    let timestamp: string | undefined;
    const signatures: string[] = [];
    for (const part of header.split(",")) {
        const eq = part.indexOf("=");
        if (eq < 0) {
            throw new WebhookVerificationError("malformed_header", `a signature part without "=": ${JSON.stringify(part)}`);
        }
        const key = part.slice(0, eq).trim();
        const value = part.slice(eq + 1).trim();
        if (key === "t") {
            if (timestamp !== undefined) {
                throw new WebhookVerificationError("malformed_header", "more than one t= in the signature");
            }
            timestamp = value;
        } else if (key === "v1") {
            signatures.push(value);
        }
        // Other schemes (a later v2) are skipped.
    }
    if (timestamp === undefined || !/^\d{1,15}$/.test(timestamp)) {
        throw new WebhookVerificationError("malformed_header", "the signature has no t=<unix seconds>");
    }
    if (signatures.length === 0) {
        throw new WebhookVerificationError("malformed_header", "the signature has no v1=");
    }
    const expected = Buffer.from(hmacHex(options.secret, timestamp, options.body), "hex");
    const matches = signatures.some((candidate) => {
        if (!/^[0-9a-fA-F]{64}$/.test(candidate)) {
            return false;
        }
        return timingSafeEqual(expected, Buffer.from(candidate, "hex"));
    });
    if (!matches) {
        throw new WebhookVerificationError("bad_signature", "the signature does not match the body and the secret");
    }
    const now = options.now ?? Date.now();
    const age = Math.abs(now / 1000 - Number(timestamp));
    if (age > tolerance) {
        throw new WebhookVerificationError(
            "stale_timestamp",
            `the signature's time is ${Math.round(age)} s from now (tolerance ${tolerance} s)`,
        );
    }
    const text = typeof options.body === "string" ? options.body : new TextDecoder().decode(options.body);
    try {
        return parseEvent(text);
    } catch (error) {
        throw new WebhookVerificationError("malformed_body", (error as Error).message);
    }
}

/** The prefix of a secret in Standard Webhooks' form: `whsec_` then the key in base64. */
export const WHSEC_PREFIX = "whsec_";

/**
 * The key `webhook-signature` is made with, from LEAGUEKIT_WEBHOOK_SECRET as the server
 * has it: a `whsec_` secret's base64 part decoded (the standard alphabet, padded or
 * not, as the server reads it), or a plain secret's UTF-8 bytes. Throws an `Error` for
 * a `whsec_` secret that is not base64 (the server refuses to start with one).
 */
export function standardWebhookKey(secret: string | Uint8Array): Uint8Array {
    const text = typeof secret === "string" ? secret : new TextDecoder().decode(secret);
    if (!text.startsWith(WHSEC_PREFIX)) {
        return typeof secret === "string" ? new TextEncoder().encode(secret) : secret;
    }
    const encoded = text.slice(WHSEC_PREFIX.length);
    const bare = encoded.replace(/={1,2}$/, "");
    const padded = encoded.length !== bare.length;
    if (!/^[A-Za-z0-9+/]*$/.test(bare) || bare.length % 4 === 1 || (padded && encoded.length % 4 !== 0)) {
        throw new Error("the secret starts with whsec_ but the rest is not base64");
    }
    return new Uint8Array(Buffer.from(bare, "base64"));
}

/** The Standard Webhooks headers of one delivery (a type, so that it is also a `WebhookHeaders`). */
export type StandardWebhookHeaders = {
    "webhook-id": string;
    "webhook-timestamp": string;
    "webhook-signature": string;
};

function standardMac(key: Uint8Array, id: string, timestamp: string, body: string | Uint8Array): Buffer {
    return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The Standard Webhooks headers the server sends for event `id` with `body` at `timestamp` (unix seconds): for tests and tools. */
export function signStandardWebhook(
    secret: string | Uint8Array,
    id: string,
    body: string | Uint8Array,
    timestamp: number,
): StandardWebhookHeaders {
    const t = String(timestamp);
    const mac = standardMac(standardWebhookKey(secret), id, t, body);
    return { "webhook-id": id, "webhook-timestamp": t, "webhook-signature": `v1,${mac.toString("base64")}` };
}

/** A request's headers: Node's `req.headers`, a fetch `Headers`, or a plain record (names in any case). */
export type WebhookHeaders =
    | { get(name: string): string | null }
    | Record<string, string | string[] | undefined>;

export interface VerifyStandardWebhookOptions {
    /** LEAGUEKIT_WEBHOOK_SECRET, as the server has it: `whsec_...` or a plain secret. */
    secret: string | Uint8Array;
    /** The request's headers, with `webhook-id`, `webhook-timestamp` and `webhook-signature`. */
    headers: WebhookHeaders;
    /** The raw body, exactly as received (not re-serialized JSON). */
    body: string | Uint8Array;
    /** How far `webhook-timestamp` may be from now (default 300 s). */
    toleranceSeconds?: number;
    /** Now, in unix milliseconds (default Date.now()). */
    now?: number;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
    const get = (headers as { get?: unknown }).get;
    if (typeof get === "function") {
        const value: unknown = get.call(headers, name);
        return typeof value === "string" ? value : undefined;
    }
    for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
        if (key.toLowerCase() === name) {
            return Array.isArray(value) ? value.join(" ") : value;
        }
    }
    return undefined;
}

/**
 * Checks a webhook's Standard Webhooks signature (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`: space-separated `v1,<base64>` signatures, each compared in
 * constant time; other versions are passed over) and age, and answers its event;
 * throws `WebhookVerificationError` (malformed header, bad signature, stale timestamp,
 * malformed body) as `verifyWebhook` does.
 */
export function verifyStandardWebhook(options: VerifyStandardWebhookOptions): LeagueEvent {
    const tolerance = options.toleranceSeconds ?? 300;
    const need = (name: string): string => {
        const value = headerOf(options.headers, name);
        if (value === undefined || value.trim() === "") {
            throw new WebhookVerificationError("malformed_header", `no ${name} header`);
        }
        return value;
    };
    const id = need("webhook-id");
    const timestamp = need("webhook-timestamp");
    const signatures = need("webhook-signature");
    if (!/^\d{1,15}$/.test(timestamp)) {
        throw new WebhookVerificationError("malformed_header", "webhook-timestamp is not unix seconds");
    }
    const t = Number(timestamp);
    const expected = standardMac(standardWebhookKey(options.secret), id, String(t), options.body);
    let matches = false;
    for (const versioned of signatures.split(" ")) {
        const comma = versioned.indexOf(",");
        if (comma < 0 || versioned.slice(0, comma) !== "v1") {
            continue;
        }
        const candidate = versioned.slice(comma + 1);
        if (!/^[A-Za-z0-9+/]+={0,2}$/.test(candidate)) {
            continue;
        }
        const bytes = Buffer.from(candidate, "base64");
        // Every candidate is compared, in constant time, whatever matched before.
        if (bytes.length === expected.length && timingSafeEqual(bytes, expected)) {
            matches = true;
        }
    }
    if (!matches) {
        throw new WebhookVerificationError("bad_signature", "no v1 webhook-signature matches the body and the secret");
    }
    const now = options.now ?? Date.now();
    const age = Math.abs(now / 1000 - t);
    if (age > tolerance) {
        throw new WebhookVerificationError(
            "stale_timestamp",
            `webhook-timestamp is ${Math.round(age)} s from now (tolerance ${tolerance} s)`,
        );
    }
    const text = typeof options.body === "string" ? options.body : new TextDecoder().decode(options.body);
    try {
        return parseEvent(text);
    } catch (error) {
        throw new WebhookVerificationError("malformed_body", (error as Error).message);
    }
}
