// verifyWebhook against signatures computed here with node:crypto, as the server's
// scheme says: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import { WebhookVerificationError, signWebhook, verifyWebhook, type WebhookErrorReason } from "../src/index.js";

const secret = "whsec-test-0123456789abcdef0123456789abcdef";
const now = Date.parse("2026-01-07T12:00:00Z");
const t = Math.floor(now / 1000);
const body = JSON.stringify({
    id: "45-000017",
    type: "player.promoted",
    season: "weekly-ladder",
    period: 45,
    at: now,
    player: "ana",
    tier: "bronze",
    bracket: 3,
    data: { rank: 2, score: 310, next_tier: "silver" },
    added_later: { anything: true },
});

function sign(key: string, timestamp: number, raw: string): string {
    return createHmac("sha256", key).update(`${timestamp}.${raw}`).digest("hex");
}

function refused(reason: WebhookErrorReason) {
    return (error: unknown): boolean => {
        assert.ok(error instanceof WebhookVerificationError, String(error));
        assert.equal(error.reason, reason, error.message);
        return true;
    };
}

describe("verifyWebhook", () => {
    it("accepts a good signature and answers the event, unknown fields kept", () => {
        const event = verifyWebhook({ secret, signature: `t=${t},v1=${sign(secret, t, body)}`, body, now });
        assert.equal(event.id, "45-000017");
        assert.equal(event.known, true);
        if (event.known && event.type === "player.promoted") {
            assert.equal(event.data.next_tier, "silver");
        } else {
            assert.fail("a known player.promoted");
        }
        assert.deepEqual((event as unknown as Record<string, unknown>)["added_later"], { anything: true });
    });

    it("accepts raw bytes, one of several v1 values, a time within the tolerance, and signWebhook's header", () => {
        const bytes = new TextEncoder().encode(body);
        const header = `t=${t},v1=${"0".repeat(64)},v1=${sign(secret, t, body)}`;
        assert.equal(verifyWebhook({ secret, signature: header, body: bytes, now: now + 299_000 }).type, "player.promoted");
        assert.equal(verifyWebhook({ secret, signature: signWebhook(secret, body, t), body, now }).id, "45-000017");
        assert.equal(verifyWebhook({ secret, signature: `t=${t},v1=${sign(secret, t, body)}`, body, now: now + 3_600_000, toleranceSeconds: 7200 }).id, "45-000017");
    });

    it("passes an unknown event type through", () => {
        const raw = JSON.stringify({ id: "x1", type: "league.renamed", season: "s", period: 1, at: now, player: null, tier: null, bracket: null, data: { to: "new" } });
        const event = verifyWebhook({ secret, signature: `t=${t},v1=${sign(secret, t, raw)}`, body: raw, now });
        assert.equal(event.known, false);
        assert.equal(event.type, "league.renamed");
        assert.deepEqual(event.data, { to: "new" });
    });

    it("refuses a tampered body", () => {
        const tampered = body.replace('"score":310', '"score":9310');
        assert.throws(() => verifyWebhook({ secret, signature: `t=${t},v1=${sign(secret, t, body)}`, body: tampered, now }), refused("bad_signature"));
    });

    it("refuses the wrong secret", () => {
        const other = `${secret}-other`;
        assert.throws(() => verifyWebhook({ secret, signature: `t=${t},v1=${sign(other, t, body)}`, body, now }), refused("bad_signature"));
    });

    it("refuses a signature whose t was changed", () => {
        assert.throws(() => verifyWebhook({ secret, signature: `t=${t + 1},v1=${sign(secret, t, body)}`, body, now }), refused("bad_signature"));
    });

    it("refuses a stale or future t", () => {
        const old = t - 301;
        assert.throws(() => verifyWebhook({ secret, signature: `t=${old},v1=${sign(secret, old, body)}`, body, now }), refused("stale_timestamp"));
        const ahead = t + 301;
        assert.throws(() => verifyWebhook({ secret, signature: `t=${ahead},v1=${sign(secret, ahead, body)}`, body, now }), refused("stale_timestamp"));
        assert.throws(() => verifyWebhook({ secret, signature: `t=${t},v1=${sign(secret, t, body)}`, body, now: now + 61_000, toleranceSeconds: 60 }), refused("stale_timestamp"));
    });

    it("refuses malformed headers", () => {
        const v1 = sign(secret, t, body);
        for (const header of ["", undefined, null, `v1=${v1}`, `t=${t}`, `t=abc,v1=${v1}`, `t=${t};v1=${v1}`, `t=${t},t=${t},v1=${v1}`, "garbage"]) {
            assert.throws(() => verifyWebhook({ secret, signature: header, body, now }), refused("malformed_header"), String(header));
        }
        // A v1 that is not 64 hex digits never matches.
        assert.throws(() => verifyWebhook({ secret, signature: `t=${t},v1=${v1.slice(2)}`, body, now }), refused("bad_signature"));
    });

    it("refuses a signed body that is not an event", () => {
        const raw = '{"hello": "world"}';
        assert.throws(() => verifyWebhook({ secret, signature: `t=${t},v1=${sign(secret, t, raw)}`, body: raw, now }), refused("malformed_body"));
    });
});
