// Verifying a webhook: `Leaguekit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>`,
// the HMAC keyed with the shared secret over "<t>.<raw body>".
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
