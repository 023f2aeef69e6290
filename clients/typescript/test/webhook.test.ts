// verifyWebhook against signatures computed here with node:crypto, as the server's
// scheme says: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>; and
// verifyStandardWebhook against the Standard Webhooks reference library's own known
// answer and the library itself (`standardwebhooks`) checking our signatures.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import {
    WebhookVerificationError,
    signStandardWebhook,
    signWebhook,
    standardWebhookKey,
    verifyStandardWebhook,
    verifyWebhook,
    type WebhookErrorReason,
} from "../src/index.js";

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

// The reference libraries' own known answer (standard-webhooks' tests, `test_sign_function`).
const known = {
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
    t: 1614265330,
    body: '{"test": 2432232314}',
    signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
// 32 bytes in Standard Webhooks' form, as `openssl rand -base64 32` writes them.
const whsec = "whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpxrH1lP0eUmuM=";
const eventId = "p45/bronze/b3@1767225600000-0";

describe("verifyStandardWebhook", () => {
    it("makes the reference libraries' known answer", () => {
        assert.deepEqual(signStandardWebhook(known.secret, known.id, known.body, known.t), {
            "webhook-id": known.id,
            "webhook-timestamp": String(known.t),
            "webhook-signature": known.signature,
        });
        assert.equal(standardWebhookKey(known.secret).length, 24);
        assert.equal(new Webhook(known.secret).sign(known.id, new Date(known.t * 1000), known.body), known.signature);
    });

    it("answers the event, and the reference library agrees, for a whsec_ and a plain secret", () => {
        const nowSecs = Math.floor(Date.now() / 1000);
        for (const key of [whsec, secret]) {
            const headers = signStandardWebhook(key, eventId, body, nowSecs);
            assert.equal(verifyStandardWebhook({ secret: key, headers, body }).id, "45-000017");
            // Names in any case, a fetch-like Headers, raw bytes, one of several signatures.
            const upper = { "WEBHOOK-ID": eventId, "Webhook-Timestamp": String(nowSecs), "webhook-signature": `v1a,abc v1,${"A".repeat(44)} v2,x ${headers["webhook-signature"]}` };
            assert.equal(verifyStandardWebhook({ secret: key, headers: upper, body: new TextEncoder().encode(body) }).id, "45-000017");
            const map = new Map(Object.entries(headers));
            assert.equal(verifyStandardWebhook({ secret: key, headers: { get: (n: string) => map.get(n) ?? null }, body }).id, "45-000017");
            // The reference library: a whsec_ secret as it is, a plain one as its bytes, raw.
            const reference = key.startsWith("whsec_") ? new Webhook(key) : new Webhook(new TextEncoder().encode(key), { format: "raw" });
            assert.deepEqual(reference.verify(body, { ...headers }), JSON.parse(body));
        }
        // A plain secret in the spec's form is the same key.
        const asWhsec = `whsec_${Buffer.from(secret).toString("base64")}`;
        const headers = signStandardWebhook(secret, eventId, body, nowSecs);
        assert.equal(verifyStandardWebhook({ secret: asWhsec, headers, body }).id, "45-000017");
        assert.deepEqual(new Webhook(asWhsec).verify(body, { ...headers }), JSON.parse(body));
        // Unpadded base64 is the same key, as on the server.
        assert.deepEqual(standardWebhookKey(whsec.replace(/=+$/, "")), standardWebhookKey(whsec));
    });

    it("refuses a changed id, time or body, another key, a stale time and missing headers", () => {
        const headers = signStandardWebhook(whsec, eventId, body, t);
        const changed: [Record<string, string>, string][] = [
            [{ "webhook-id": "p45/bronze/b3@1767225600000-1" }, body],
            [{ "webhook-timestamp": String(t + 1) }, body],
            [{}, body.replace('"score":310', '"score":9310')],
            [{ "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,") }, body],
            [{ "webhook-signature": "v1,not base64!" }, body],
        ];
        for (const [change, raw] of changed) {
            assert.throws(() => verifyStandardWebhook({ secret: whsec, headers: { ...headers, ...change }, body: raw, now }), refused("bad_signature"), JSON.stringify(change));
        }
        assert.throws(() => verifyStandardWebhook({ secret: `whsec_${"A".repeat(32)}`, headers, body, now }), refused("bad_signature"));
        assert.throws(() => verifyStandardWebhook({ secret: whsec, headers, body, now: now + 301_000 }), refused("stale_timestamp"));
        assert.throws(() => verifyStandardWebhook({ secret: whsec, headers, body, now: now - 301_000 }), refused("stale_timestamp"));
        assert.equal(verifyStandardWebhook({ secret: whsec, headers, body, now: now + 300_000 }).id, "45-000017");
        for (const name of Object.keys(headers)) {
            const missing = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));
            assert.throws(() => verifyStandardWebhook({ secret: whsec, headers: missing, body, now }), refused("malformed_header"), name);
        }
        assert.throws(() => verifyStandardWebhook({ secret: whsec, headers: { ...headers, "webhook-timestamp": "-1" }, body, now }), refused("malformed_header"));
        assert.throws(() => verifyStandardWebhook({ secret: "whsec_not base64!", headers, body, now }), /not base64/);
    });
});
