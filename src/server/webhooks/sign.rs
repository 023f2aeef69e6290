//! The webhook signature: `Leaguekit-Signature: t=<unix seconds>,v1=<hex>` where hex
//! is the lowercase hex HMAC-SHA256, keyed with the secret, of `"<t>.<body>"` (the
//! body's exact bytes). A receiver recomputes it, compares in constant time with each
//! `v1`, and refuses a `t` more than its tolerance (300 s) from its own clock.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The default tolerance of [`verify`], in seconds.
pub const TOLERANCE_SECS: i64 = 300;

fn mac(secret: &[u8], t: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    m.update(t.to_string().as_bytes());
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

/// The `Leaguekit-Signature` header of `body` sent at `t` (unix seconds).
pub fn signature(secret: &[u8], t: i64, body: &[u8]) -> String {
    format!(
        "t={t},v1={}",
        hex(&mac(secret, t, body).finalize().into_bytes())
    )
}

/// Whether `header` signs `body` with `secret`, at a time within `tolerance_secs` of
/// `now` (unix seconds): what a receiver does.
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
    if (now - t).abs() > tolerance_secs {
        return false;
    }
    sigs.iter().any(|s| {
        let Some(bytes) = unhex(s) else { return false };
        mac(secret, t, body).verify_slice(&bytes).is_ok()
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
        // RFC 4231 test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?").
        let m = {
            let mut m = <Hmac<Sha256> as Mac>::new_from_slice(b"Jefe").unwrap();
            m.update(b"what do ya want for nothing?");
            hex(&m.finalize().into_bytes())
        };
        assert_eq!(
            m,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
