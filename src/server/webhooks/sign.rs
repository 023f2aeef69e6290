//! The webhook signatures. Every delivery carries two, over the same body, so that a
//! receiver verifies whichever it has a library for:
//!
//! | header | value | HMAC-SHA256 key | signed text |
//! |---|---|---|---|
//! | `Leaguekit-Signature` | `t=<unix seconds>,v1=<lowercase hex>` | the configured secret's bytes, exactly as given (a `whsec_` secret with its prefix) | `"<t>.<body>"` |
//! | `webhook-id` | the event's id (as `Leaguekit-Event-Id`) | | |
//! | `webhook-timestamp` | unix seconds (the same as `t`) | | |
//! | `webhook-signature` | `v1,<base64 (standard, padded)>` | a `whsec_` secret: its base64 part decoded; a plain secret: its bytes | `"<webhook-id>.<webhook-timestamp>.<body>"` |
//!
//! `Leaguekit-Signature` is Stripe's scheme (`Stripe-Signature` under another name):
//! Stripe's SDKs (`stripe.webhooks.constructEvent`, `stripe.Webhook.construct_event`)
//! verify it given that header's value and the secret string, and they too use the
//! whole string, prefix included, as the key. The three `webhook-*` headers are
//! [Standard Webhooks](https://www.standardwebhooks.com/) 1.0 (symmetric, `v1`): its
//! reference libraries verify them given the `whsec_` secret as configured, or, for a
//! plain secret, its bytes as a raw key (Python `Webhook(secret.encode())`, Node
//! `new Webhook(new TextEncoder().encode(secret), { format: "raw" })`) or the secret
//! put in the spec's form, `"whsec_" + base64(secret)`. The body is the event's exact
//! bytes, and the event ids the deliverer signs never contain a `.` (the spec asks
//! that of the id, as the signed text is split on dots).
//!
//! A receiver recomputes the HMAC, compares in constant time with each signature
//! given, and refuses a time more than its tolerance (300 s) from its own clock:
//! [`verify`] and [`verify_standard`].

use std::sync::Arc;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD as BASE64};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::config::{MIN_SECRET, WebhookConfigError};

/// The default tolerance of [`verify`] and [`verify_standard`], in seconds (also the
/// Standard Webhooks reference libraries').
pub const TOLERANCE_SECS: i64 = 300;

/// The prefix of a secret in Standard Webhooks' form: `whsec_` then the key in
/// base64.
pub const WHSEC_PREFIX: &str = "whsec_";
/// The shortest key a `whsec_` secret may hold, in bytes (the spec's 192 bits).
pub const MIN_WHSEC_KEY: usize = 24;
/// The longest key a `whsec_` secret may hold, in bytes (the spec's 512 bits).
pub const MAX_WHSEC_KEY: usize = 64;

/// How a `whsec_` secret's key is read: the standard alphabet, with or without its
/// `=` padding (as the reference libraries read it); never URL-safe base64, which the
/// Python one would silently read as another key.
const WHSEC_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The Stripe-style signature header.
pub const SIGNATURE_HEADER: &str = "Leaguekit-Signature";
/// Standard Webhooks' id header (the event's id).
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
/// Standard Webhooks' timestamp header (unix seconds).
pub const WEBHOOK_TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// Standard Webhooks' signature header (`v1,<base64>`).
pub const WEBHOOK_SIGNATURE_HEADER: &str = "webhook-signature";

/// The webhooks' signing secret (`LEAGUEKIT_WEBHOOK_SECRET`) with the key each
/// signature uses (see the module's docs). `Debug` never shows either key.
#[derive(Clone)]
pub struct Secret {
    /// `Leaguekit-Signature`'s key: the configured string's bytes.
    configured: Arc<[u8]>,
    /// `webhook-signature`'s key: a `whsec_` secret's decoded key, or `configured`.
    standard: Arc<[u8]>,
    whsec: bool,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Secret({}, {}-byte key, redacted)",
            if self.whsec { "whsec_" } else { "plain" },
            self.standard.len()
        )
    }
}

impl Secret {
    /// `value` as `LEAGUEKIT_WEBHOOK_SECRET` gives it: `whsec_` then the standard
    /// base64 (padded or not) of a key of [`MIN_WHSEC_KEY`] to [`MAX_WHSEC_KEY`] bytes
    /// (what `openssl rand -base64 32` writes, and every Standard Webhooks reference
    /// library reads alike), or else a plain secret of at least [`MIN_SECRET`] bytes.
    pub fn parse(value: &str) -> Result<Secret, WebhookConfigError> {
        let configured: Arc<[u8]> = value.as_bytes().into();
        let Some(encoded) = value.strip_prefix(WHSEC_PREFIX) else {
            if value.len() < MIN_SECRET {
                return Err(WebhookConfigError::ShortSecret(value.len()));
            }
            return Ok(Secret {
                standard: configured.clone(),
                configured,
                whsec: false,
            });
        };
        let key = WHSEC_BASE64
            .decode(encoded)
            .map_err(|_| WebhookConfigError::BadWhsec)?;
        if !(MIN_WHSEC_KEY..=MAX_WHSEC_KEY).contains(&key.len()) {
            return Err(WebhookConfigError::WhsecLength(key.len()));
        }
        Ok(Secret {
            configured,
            standard: key.into(),
            whsec: true,
        })
    }

    /// The key of `Leaguekit-Signature`: the configured secret's bytes, as given.
    pub fn signature_key(&self) -> &[u8] {
        &self.configured
    }

    /// The key of `webhook-signature`: a `whsec_` secret's decoded key, or a plain
    /// secret's bytes.
    pub fn standard_key(&self) -> &[u8] {
        &self.standard
    }

    /// Whether the secret was given in Standard Webhooks' `whsec_` form.
    pub fn is_whsec(&self) -> bool {
        self.whsec
    }
}

fn hmac(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!())
}

fn mac(secret: &[u8], t: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut m = hmac(secret);
    m.update(t.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m
}

fn standard_mac(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
    let mut m = hmac(key);
    m.update(id.as_bytes());
    m.update(b".");
    m.update(timestamp.as_bytes());
    m.update(b".");
    m.update(body);
    m
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

/// Every signature header of one delivery of event `id` with `body`, sent at
/// `unix_secs`: `Leaguekit-Signature`, `webhook-id`, `webhook-timestamp` and
/// `webhook-signature`, in that order (names as the constants above).
pub fn headers(
    secret: &Secret,
    id: &str,
    unix_secs: i64,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    let timestamp = unix_secs.to_string();
    let standard = standard_signature(secret.standard_key(), id, &timestamp, body);
    vec![
        (
            SIGNATURE_HEADER,
            signature(secret.signature_key(), unix_secs, body),
        ),
        (WEBHOOK_ID_HEADER, id.to_owned()),
        (WEBHOOK_TIMESTAMP_HEADER, timestamp),
        (WEBHOOK_SIGNATURE_HEADER, standard),
    ]
}

/// The `Leaguekit-Signature` header of `body` sent at `t` (unix seconds), keyed with
/// `secret` ([`Secret::signature_key`]).
pub fn signature(secret: &[u8], t: i64, body: &[u8]) -> String {
    format!(
        "t={t},v1={}",
        hex(&mac(secret, t, body).finalize().into_bytes())
    )
}

fn standard_signature(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> String {
    let m = standard_mac(key, id, timestamp, body)
        .finalize()
        .into_bytes();
    format!("v1,{}", BASE64.encode(m))
}

fn within(t: i64, now: i64, tolerance_secs: i64) -> bool {
    u64::try_from(tolerance_secs).is_ok_and(|tolerance| now.abs_diff(t) <= tolerance)
}

/// Whether `header` (`Leaguekit-Signature`) signs `body` with `secret`
/// ([`Secret::signature_key`]), at a time within `tolerance_secs` of `now` (unix
/// seconds): what a receiver does.
pub fn verify(secret: &[u8], header: &str, body: &[u8], now: i64, tolerance_secs: i64) -> bool {
    let mut t = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => sigs.push(v),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    if !within(t, now, tolerance_secs) {
        return false;
    }
    sigs.iter().any(|s| {
        let Some(bytes) = unhex(s) else { return false };
        mac(secret, t, body).verify_slice(&bytes).is_ok()
    })
}

/// Whether the Standard Webhooks headers `webhook-id` (`id`), `webhook-timestamp`
/// (`timestamp`) and `webhook-signature` (`signatures`) sign `body` with `secret`
/// ([`Secret::standard_key`]), at a time within `tolerance_secs` of `now` (unix
/// seconds): what a receiver does, as the reference libraries do. Each of the
/// space-separated `v1,<base64>` signatures is compared in constant time; other
/// versions (`v1a`, a later `v2`) are passed over; the timestamp must be a whole
/// number of seconds written without sign or leading zeros.
pub fn verify_standard(
    secret: &Secret,
    id: &str,
    timestamp: &str,
    signatures: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
) -> bool {
    if id.is_empty() || !timestamp.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Some(t) = timestamp
        .parse::<i64>()
        .ok()
        .filter(|t| t.to_string() == timestamp)
    else {
        return false;
    };
    if !within(t, now, tolerance_secs) {
        return false;
    }
    signatures
        .split(' ')
        .filter_map(|s| s.split_once(','))
        .filter(|(version, _)| *version == "v1")
        .any(|(_, sig)| {
            let Ok(bytes) = BASE64.decode(sig) else {
                return false;
            };
            standard_mac(secret.standard_key(), id, timestamp, body)
                .verify_slice(&bytes)
                .is_ok()
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_the_time_and_the_exact_body() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let body = br#"{"id":"p1@1-0","type":"player.placed"}"#;
        let h = signature(secret, 1_767_225_600, body);
        assert!(h.starts_with("t=1767225600,v1="), "{h}");
        assert_eq!(h.len(), "t=1767225600,v1=".len() + 64);
        assert!(verify(secret, &h, body, 1_767_225_600, 300));
        assert!(verify(secret, &h, body, 1_767_225_900, 300));
        assert!(!verify(secret, &h, body, 1_767_225_901, 300));
        assert!(!verify(
            b"another secret, 32 bytes long...",
            &h,
            body,
            1_767_225_600,
            300
        ));
        assert!(!verify(secret, &h, b"{}", 1_767_225_600, 300));
        assert!(!verify(secret, "v1=00", body, 1_767_225_600, 300));
        // Times at the ends of i64 are refused, not overflowed.
        assert!(!verify(
            secret,
            &format!("t={},v1=00", i64::MIN),
            body,
            i64::MAX,
            300
        ));
        // RFC 4231 test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?").
        let m = {
            let mut m = hmac(b"Jefe");
            m.update(b"what do ya want for nothing?");
            hex(&m.finalize().into_bytes())
        };
        assert_eq!(
            m,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    /// The Standard Webhooks reference libraries' own known answer
    /// (libraries/python/tests/test_webhooks.py, `test_sign_function`, and the same
    /// vector in the other languages' tests).
    const KNOWN_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const KNOWN_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const KNOWN_T: i64 = 1_614_265_330;
    const KNOWN_BODY: &str = r#"{"test": 2432232314}"#;
    const KNOWN_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn the_reference_librarys_known_answer() {
        let secret = Secret::parse(KNOWN_SECRET).unwrap();
        assert!(secret.is_whsec());
        assert_eq!(secret.standard_key().len(), 24);
        assert_eq!(secret.signature_key(), KNOWN_SECRET.as_bytes());
        let h = headers(&secret, KNOWN_ID, KNOWN_T, KNOWN_BODY.as_bytes());
        let names: Vec<&str> = h.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "Leaguekit-Signature",
                "webhook-id",
                "webhook-timestamp",
                "webhook-signature"
            ]
        );
        assert_eq!(h[1].1, KNOWN_ID);
        assert_eq!(h[2].1, "1614265330");
        assert_eq!(h[3].1, KNOWN_SIGNATURE);
        // Leaguekit-Signature is keyed with the whole string, prefix included.
        assert_eq!(
            h[0].1,
            signature(KNOWN_SECRET.as_bytes(), KNOWN_T, KNOWN_BODY.as_bytes())
        );
        assert!(verify(
            KNOWN_SECRET.as_bytes(),
            &h[0].1,
            KNOWN_BODY.as_bytes(),
            KNOWN_T,
            300
        ));
        let ok = |sigs: &str, now: i64| {
            verify_standard(
                &secret,
                KNOWN_ID,
                "1614265330",
                sigs,
                KNOWN_BODY.as_bytes(),
                now,
                TOLERANCE_SECS,
            )
        };
        assert!(ok(KNOWN_SIGNATURE, KNOWN_T));
        assert!(ok(KNOWN_SIGNATURE, KNOWN_T + 300));
        assert!(ok(KNOWN_SIGNATURE, KNOWN_T - 300));
        assert!(!ok(KNOWN_SIGNATURE, KNOWN_T + 301));
        assert!(!ok(KNOWN_SIGNATURE, KNOWN_T - 301));
        // The reference tests' invalid signature: the last base64 digit changed.
        assert!(!ok(
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=",
            KNOWN_T
        ));
        // One of several, other versions and garbage passed over.
        assert!(ok(
            &format!(
                "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= \
                 v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v1a,xx garbage v1,%%% \
                 {KNOWN_SIGNATURE}"
            ),
            KNOWN_T
        ));
        assert!(!ok(&KNOWN_SIGNATURE.replace("v1,", "v2,"), KNOWN_T));
        assert!(!ok("", KNOWN_T));
    }

    #[test]
    fn a_standard_signature_covers_the_id_the_timestamp_and_the_body() {
        let secret = Secret::parse(KNOWN_SECRET).unwrap();
        let body = KNOWN_BODY.as_bytes();
        let sig = &headers(&secret, KNOWN_ID, KNOWN_T, body)[3].1;
        let check = |id: &str, ts: &str, body: &[u8]| {
            verify_standard(&secret, id, ts, sig, body, KNOWN_T, TOLERANCE_SECS)
        };
        assert!(check(KNOWN_ID, "1614265330", body));
        assert!(!check("msg_other", "1614265330", body));
        assert!(!check(KNOWN_ID, "1614265331", body));
        assert!(!check(KNOWN_ID, "1614265330", br#"{"test": 2432232315}"#));
        // The timestamp as the reference libraries write it, nothing else.
        for ts in [
            "01614265330",
            "+1614265330",
            "1614265330.0",
            "",
            "-1",
            " 1614265330",
        ] {
            assert!(!check(KNOWN_ID, ts, body), "{ts:?}");
        }
        assert!(!check("", "1614265330", body));
        // Another key.
        let other = Secret::parse("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
        assert!(!verify_standard(
            &other,
            KNOWN_ID,
            "1614265330",
            sig,
            body,
            KNOWN_T,
            TOLERANCE_SECS
        ));
    }

    #[test]
    fn a_plain_secret_keys_both_signatures_with_its_bytes() {
        let plain = "0123456789abcdef0123456789abcdef";
        let secret = Secret::parse(plain).unwrap();
        assert!(!secret.is_whsec());
        assert_eq!(secret.signature_key(), plain.as_bytes());
        assert_eq!(secret.standard_key(), plain.as_bytes());
        let id = "p45/bronze/b3@1767225600000-0";
        let body = br#"{"id":"p45/bronze/b3@1767225600000-0","type":"player.placed"}"#;
        let h = headers(&secret, id, 1_767_225_601, body);
        // Computed here from the spec: base64(HMAC-SHA256(key, "<id>.<t>.<body>")).
        let mut m = hmac(plain.as_bytes());
        m.update(format!("{id}.1767225601.").as_bytes());
        m.update(body);
        let expected = format!("v1,{}", BASE64.encode(m.finalize().into_bytes()));
        assert_eq!(h[3].1, expected);
        assert_eq!(h[0].1, signature(plain.as_bytes(), 1_767_225_601, body));
        assert!(verify_standard(
            &secret,
            id,
            "1767225601",
            &h[3].1,
            body,
            1_767_225_601,
            TOLERANCE_SECS
        ));
        // The same key in the spec's form verifies the same signature.
        let as_whsec = Secret::parse(&format!("whsec_{}", BASE64.encode(plain))).unwrap();
        assert_eq!(as_whsec.standard_key(), plain.as_bytes());
        assert!(verify_standard(
            &as_whsec,
            id,
            "1767225601",
            &h[3].1,
            body,
            1_767_225_601,
            TOLERANCE_SECS
        ));
    }

    #[test]
    fn secrets_are_checked_and_never_shown() {
        assert_eq!(
            Secret::parse("short").unwrap_err(),
            WebhookConfigError::ShortSecret(5)
        );
        // Not base64, URL-safe base64, a length no encoder writes, non-canonical last
        // bits, or with a space or a newline: refused.
        for bad in [
            "whsec_not base64 at all, not even close!!",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw-_-_",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwA",
            "whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpxrH1lP0eUmuN=",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n",
            "whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw",
            "whsec_",
        ] {
            let err = Secret::parse(bad).unwrap_err();
            assert!(
                matches!(
                    err,
                    WebhookConfigError::BadWhsec | WebhookConfigError::WhsecLength(0)
                ),
                "{bad:?}: {err:?}"
            );
        }
        // 18 and 65 bytes: outside the spec's 24 to 64.
        assert_eq!(
            Secret::parse(&format!("whsec_{}", BASE64.encode([7u8; 18]))).unwrap_err(),
            WebhookConfigError::WhsecLength(18)
        );
        assert_eq!(
            Secret::parse(&format!("whsec_{}", BASE64.encode([7u8; 65]))).unwrap_err(),
            WebhookConfigError::WhsecLength(65)
        );
        for n in [24, 32, 64] {
            let s = Secret::parse(&format!("whsec_{}", BASE64.encode(vec![7u8; n]))).unwrap();
            assert_eq!(s.standard_key(), vec![7u8; n]);
        }
        // Padding is optional, as in the reference libraries.
        let padded = Secret::parse("whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpxrH1lP0eUmuM=").unwrap();
        let unpadded = Secret::parse("whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpxrH1lP0eUmuM").unwrap();
        assert_eq!(padded.standard_key(), unpadded.standard_key());
        assert_eq!(padded.standard_key().len(), 32);
        let s = Secret::parse(KNOWN_SECRET).unwrap();
        let shown = format!("{s:?}");
        assert_eq!(shown, "Secret(whsec_, 24-byte key, redacted)");
        let err = Secret::parse("whsec_secret-bytes-that-must-not-show!!").unwrap_err();
        assert!(!err.to_string().contains("secret-bytes"), "{err}");
    }
}
