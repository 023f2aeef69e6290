//! Webhooks' configuration, from the environment of `leaguekit serve`.
//!
//! | variable | meaning |
//! |---|---|
//! | `LEAGUEKIT_WEBHOOK_URLS` | comma-separated http(s) URLs; unset or empty: no webhooks |
//! | `LEAGUEKIT_WEBHOOK_SECRET` | the signing secret (required with URLs): Standard Webhooks' form, `whsec_` then the standard base64 of a 24-64 byte key (`whsec_$(openssl rand -base64 32)`), or a plain secret of at least 32 bytes (`openssl rand -hex 32`); see below |
//! | `LEAGUEKIT_WEBHOOK_EVENTS` | comma-separated types to send (default: all but `player.overtaken`) |
//! | `LEAGUEKIT_WEBHOOK_ATTEMPTS` | attempts per event and URL before it becomes a dead letter (default 8, 1-100) |
//! | `LEAGUEKIT_WEBHOOK_FROM` | where a URL seen for the first time starts: `now` (default: the events logged from then on) or `start` (every event the logs still keep) |
//! | `LEAGUEKIT_WEBHOOK_DEAD_MAX` | the most dead letters kept per URL, the oldest dropped (default 10,000; 1-1,000,000) |
//! | `LEAGUEKIT_WEBHOOK_DEAD_KEEP` | how long a dead letter is kept (default 30d; 1m-3650d) |
//! | `LEAGUEKIT_WEBHOOK_BACKOFF_MS` | for tests: the first retry's delay (default 1000 ms; doubles, capped at 5 min) |
//! | `LEAGUEKIT_WEBHOOK_TIMEOUT_MS` | for tests: how long an answer may take (default 10000 ms) |
//!
//! The key of each signature ([`Secret`], and the table in `sign.rs`):
//! `Leaguekit-Signature` (Stripe's scheme) is keyed with the secret's bytes exactly as
//! configured, a `whsec_` secret with its prefix, as Stripe's SDKs do with theirs;
//! `webhook-signature` (Standard Webhooks) with the base64-decoded key of a `whsec_`
//! secret, or the bytes of a plain one. A secret that starts with `whsec_` is always
//! read as Standard Webhooks' form: one that does not decode is refused.

use std::collections::BTreeSet;
use std::time::Duration;

use super::watch::StartFrom;
use crate::events::Kind;

use super::sign::{MAX_WHSEC_KEY, MIN_WHSEC_KEY, Secret};

/// The URLs.
pub const URLS_ENV: &str = "LEAGUEKIT_WEBHOOK_URLS";
/// The secret.
pub const SECRET_ENV: &str = "LEAGUEKIT_WEBHOOK_SECRET";
/// The types sent.
pub const EVENTS_ENV: &str = "LEAGUEKIT_WEBHOOK_EVENTS";
/// Attempts before a dead letter.
pub const ATTEMPTS_ENV: &str = "LEAGUEKIT_WEBHOOK_ATTEMPTS";
/// The first retry's delay (tests).
pub const BACKOFF_ENV: &str = "LEAGUEKIT_WEBHOOK_BACKOFF_MS";
/// The most dead letters kept per URL.
pub const DEAD_MAX_ENV: &str = "LEAGUEKIT_WEBHOOK_DEAD_MAX";
/// How long a dead letter is kept.
pub const DEAD_KEEP_ENV: &str = "LEAGUEKIT_WEBHOOK_DEAD_KEEP";
/// Where a URL seen for the first time starts: `now` or `start`.
pub const FROM_ENV: &str = "LEAGUEKIT_WEBHOOK_FROM";
/// The answer timeout (tests).
pub const TIMEOUT_ENV: &str = "LEAGUEKIT_WEBHOOK_TIMEOUT_MS";

/// The shortest plain secret accepted, in bytes (a `whsec_` secret's key: 24 to 64).
pub const MIN_SECRET: usize = 32;

/// How webhooks are delivered.
#[derive(Clone)]
#[non_exhaustive]
pub struct WebhookConfig {
    /// Where each event is POSTed, in order.
    pub urls: Vec<String>,
    /// The signing secret, with the key of each signature.
    pub secret: Secret,
    /// The types sent; others are passed over.
    pub events: BTreeSet<String>,
    /// Attempts per event and URL before it becomes a dead letter.
    pub attempts: u32,
    /// The first retry's delay; each next one doubles, up to [`WebhookConfig::max_backoff`].
    pub backoff: Duration,
    /// The longest delay between two attempts (5 min).
    pub max_backoff: Duration,
    /// How long an answer may take (10 s).
    pub timeout: Duration,
    /// Where a URL seen for the first time starts (`LEAGUEKIT_WEBHOOK_FROM`).
    pub from: StartFrom,
    /// The most dead letters kept per URL (`LEAGUEKIT_WEBHOOK_DEAD_MAX`, 10,000): the
    /// oldest go.
    pub dead_max: u64,
    /// How long a dead letter is kept (`LEAGUEKIT_WEBHOOK_DEAD_KEEP`, 30 days).
    pub dead_keep: Duration,
}

impl std::fmt::Debug for WebhookConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookConfig")
            .field("urls", &self.urls)
            .field("secret", &self.secret)
            .field("events", &self.events)
            .field("attempts", &self.attempts)
            .field("backoff", &self.backoff)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why the webhooks' configuration is refused (`leaguekit serve` does not start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookConfigError {
    /// A URL is not an absolute http(s) URL.
    #[error(
        "LEAGUEKIT_WEBHOOK_URLS: {0:?} is not an http:// or https:// URL (write comma-separated \
         URLs, e.g. https://game.example/leaguekit-hook)"
    )]
    BadUrl(String),
    /// URLs without a secret.
    #[error(
        "LEAGUEKIT_WEBHOOK_URLS is set but LEAGUEKIT_WEBHOOK_SECRET is not: set the secret the \
         receivers verify the signature headers with, either Standard Webhooks' form (make one \
         with `whsec_$(openssl rand -base64 32)`) or a plain secret of at least 32 bytes (make \
         one with `openssl rand -hex 32`)"
    )]
    NoSecret,
    /// A plain secret is too short.
    #[error(
        "LEAGUEKIT_WEBHOOK_SECRET is {0} bytes, too short: use at least 32 bytes (make one with \
         `openssl rand -hex 32`), or Standard Webhooks' form (make one with \
         `whsec_$(openssl rand -base64 32)`)"
    )]
    ShortSecret(usize),
    /// A secret that starts with `whsec_` but whose rest is not standard base64
    /// (the secret itself is never shown).
    #[error(
        "LEAGUEKIT_WEBHOOK_SECRET starts with whsec_ but the rest is not base64 (the standard \
         alphabet A-Z a-z 0-9 + / with = padding; not URL-safe base64, no spaces or newlines): \
         a whsec_ secret is Standard Webhooks' form, whsec_ then the key in base64 \
         (make one with `whsec_$(openssl rand -base64 32)`); a plain secret of at least 32 \
         bytes must not start with whsec_"
    )]
    BadWhsec,
    /// A `whsec_` secret whose key is shorter or longer than Standard Webhooks allows.
    #[error(
        "LEAGUEKIT_WEBHOOK_SECRET's whsec_ key is {0} bytes once base64-decoded; Standard \
         Webhooks wants {MIN_WHSEC_KEY} to {MAX_WHSEC_KEY} bytes (make one with \
         `whsec_$(openssl rand -base64 32)`)"
    )]
    WhsecLength(usize),
    /// An event type that does not exist.
    #[error("LEAGUEKIT_WEBHOOK_EVENTS: unknown event type {0:?}; the types are {1}")]
    UnknownType(String, String),
    /// A number that is not one, or out of range.
    #[error("{0}: {1:?} is not a whole number in {2}")]
    BadNumber(&'static str, String, &'static str),
    /// `LEAGUEKIT_WEBHOOK_FROM` is neither `now` nor `start`.
    #[error(
        "LEAGUEKIT_WEBHOOK_FROM: {0:?} is neither \"now\" (a URL seen for the first time gets \
         the events logged from then on; the default) nor \"start\" (it gets every event the \
         logs still keep)"
    )]
    BadFrom(String),
    /// `LEAGUEKIT_WEBHOOK_DEAD_KEEP` is not a duration from a minute to ten years.
    #[error(
        "LEAGUEKIT_WEBHOOK_DEAD_KEEP: {0:?} is not a duration from 1m to 3650d (write e.g. \
         \"30d\" or \"12h\")"
    )]
    BadDeadKeep(String),
    /// Webhooks for a season without an event log.
    #[error(
        "LEAGUEKIT_WEBHOOK_URLS is set but season {0:?} keeps no event log: add an [events] \
         section to the season file (e.g. `[events]` with `keep = \"7d\"`, docs/season.md) or \
         unset LEAGUEKIT_WEBHOOK_URLS"
    )]
    NoEventLog(String),
}

impl WebhookConfig {
    /// From the process's environment: `None` without URLs.
    pub fn from_env() -> Result<Option<WebhookConfig>, WebhookConfigError> {
        WebhookConfig::from_lookup(|k| std::env::var(k).ok())
    }

    /// From variables looked up by `get` (as [`WebhookConfig::from_env`]).
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<WebhookConfig>, WebhookConfigError> {
        let urls: Vec<String> = get(URLS_ENV)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned)
            .collect();
        if urls.is_empty() {
            return Ok(None);
        }
        for u in &urls {
            let ok = reqwest::Url::parse(u).is_ok_and(|p| {
                matches!(p.scheme(), "http" | "https")
                    && p.host_str().is_some_and(|h| !h.is_empty())
            });
            if !ok {
                return Err(WebhookConfigError::BadUrl(u.clone()));
            }
        }
        let secret = match get(SECRET_ENV) {
            Some(s) if !s.is_empty() => Secret::parse(&s)?,
            _ => return Err(WebhookConfigError::NoSecret),
        };
        let events: BTreeSet<String> = match get(EVENTS_ENV).filter(|e| !e.trim().is_empty()) {
            None => Kind::ALL
                .into_iter()
                .filter(|k| *k != Kind::Overtaken)
                .map(|k| k.name().to_owned())
                .collect(),
            Some(list) => {
                let mut set = BTreeSet::new();
                for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    if Kind::parse(t).is_none() {
                        let known: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                        return Err(WebhookConfigError::UnknownType(
                            t.to_owned(),
                            known.join(", "),
                        ));
                    }
                    set.insert(t.to_owned());
                }
                set
            }
        };
        let number =
            |name: &'static str, default: u64, min: u64, max: u64, range: &'static str| match get(
                name,
            )
            .filter(|v| !v.trim().is_empty())
            {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .ok_or(WebhookConfigError::BadNumber(name, v, range)),
            };
        let from = match get(FROM_ENV).as_deref().map(str::trim) {
            None | Some("") | Some("now") => StartFrom::Now,
            Some("start") => StartFrom::Start,
            Some(other) => return Err(WebhookConfigError::BadFrom(other.to_owned())),
        };
        let attempts = number(ATTEMPTS_ENV, 8, 1, 100, "1..=100")?;
        let dead_max = number(DEAD_MAX_ENV, 10_000, 1, 1_000_000, "1..=1000000")?;
        let dead_keep = match get(DEAD_KEEP_ENV).filter(|v| !v.trim().is_empty()) {
            None => Duration::from_secs(30 * 86_400),
            Some(v) => crate::season::parse_duration(v.trim())
                .ok()
                .filter(|d| {
                    *d >= Duration::from_secs(60) && *d <= Duration::from_secs(3650 * 86_400)
                })
                .ok_or(WebhookConfigError::BadDeadKeep(v))?,
        };
        let backoff = number(BACKOFF_ENV, 1000, 1, 300_000, "1..=300000")?;
        let timeout = number(TIMEOUT_ENV, 10_000, 1, 600_000, "1..=600000")?;
        Ok(Some(WebhookConfig {
            urls,
            secret,
            events,
            attempts: u32::try_from(attempts).unwrap_or(8),
            backoff: Duration::from_millis(backoff),
            max_backoff: Duration::from_secs(300),
            timeout: Duration::from_millis(timeout),
            from,
            dead_max,
            dead_keep,
        }))
    }

    /// Whether events of type `kind` are sent.
    pub fn sends(&self, kind: &str) -> bool {
        self.events.contains(kind)
    }

    /// The delay before attempt `attempt + 1` after `attempt` failures (1-based):
    /// `backoff × 2^(attempt-1)`, capped, then jittered by `jitter` in [0, 1) down to
    /// half of it at most.
    pub fn delay(&self, attempt: u32, jitter: f64) -> Duration {
        let base = self
            .backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20))
            .min(self.max_backoff);
        base.mul_f64(1.0 - 0.5 * jitter.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Option<WebhookConfig>, WebhookConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        WebhookConfig::from_lookup(|k| map.get(k).cloned())
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn urls_secret_and_types_are_checked() {
        assert!(config(&[]).unwrap().is_none());
        assert_eq!(
            config(&[(URLS_ENV, "ftp://x")]).unwrap_err(),
            WebhookConfigError::BadUrl("ftp://x".into())
        );
        assert_eq!(
            config(&[(URLS_ENV, "http://x/h")]).unwrap_err(),
            WebhookConfigError::NoSecret
        );
        assert_eq!(
            config(&[(URLS_ENV, "http://x/h"), (SECRET_ENV, "short")]).unwrap_err(),
            WebhookConfigError::ShortSecret(5)
        );
        let c = config(&[(URLS_ENV, "http://x/h, https://y/h"), (SECRET_ENV, SECRET)])
            .unwrap()
            .unwrap();
        assert_eq!(c.urls, ["http://x/h", "https://y/h"]);
        assert_eq!(c.secret.signature_key(), SECRET.as_bytes());
        assert_eq!(c.secret.standard_key(), SECRET.as_bytes());
        assert!(!format!("{c:?}").contains(SECRET), "{c:?}");
        assert!(c.sends("player.placed") && !c.sends("player.overtaken"));
        assert_eq!((c.attempts, c.timeout), (8, Duration::from_secs(10)));
        let err = config(&[
            (URLS_ENV, "http://x/h"),
            (SECRET_ENV, SECRET),
            (EVENTS_ENV, "player.placed,player.exploded"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("player.exploded"), "{err}");
        let c = config(&[
            (URLS_ENV, "http://x/h"),
            (SECRET_ENV, SECRET),
            (EVENTS_ENV, "player.overtaken"),
            (ATTEMPTS_ENV, "3"),
        ])
        .unwrap()
        .unwrap();
        assert!(c.sends("player.overtaken") && !c.sends("player.placed"));
        assert_eq!(c.attempts, 3);
        assert!(
            config(&[
                (URLS_ENV, "http://x/h"),
                (SECRET_ENV, SECRET),
                (ATTEMPTS_ENV, "0")
            ])
            .is_err()
        );
    }

    #[test]
    fn a_whsec_secret_is_base64_of_24_to_64_bytes() {
        // 32 random bytes, as `openssl rand -base64 32` writes them.
        let whsec = "whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpxrH1lP0eUmuM=";
        let c = config(&[(URLS_ENV, "http://x/h"), (SECRET_ENV, whsec)])
            .unwrap()
            .unwrap();
        assert!(c.secret.is_whsec());
        assert_eq!(c.secret.signature_key(), whsec.as_bytes());
        assert_eq!(c.secret.standard_key().len(), 32);
        assert!(!format!("{c:?}").contains("x0zJ8RCl"), "{c:?}");
        let refused =
            |secret: &str| config(&[(URLS_ENV, "http://x/h"), (SECRET_ENV, secret)]).unwrap_err();
        // URL-safe base64.
        let err = refused("whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpx-H1lP0eUmuM=");
        assert_eq!(err, WebhookConfigError::BadWhsec);
        let text = err.to_string();
        assert!(
            text.contains("LEAGUEKIT_WEBHOOK_SECRET")
                && text.contains("whsec_$(openssl rand -base64 32)")
                && !text.contains("x0zJ8RCl"),
            "{text}"
        );
        // 16 bytes: long enough as a plain secret's text, too short a key.
        let err = refused("whsec_AAAAAAAAAAAAAAAAAAAAAA==");
        assert_eq!(err, WebhookConfigError::WhsecLength(16));
        assert!(err.to_string().contains("24 to 64 bytes"), "{err}");
    }

    #[test]
    fn backoff_doubles_is_capped_and_jittered_down_to_half() {
        let c = config(&[(URLS_ENV, "http://x/h"), (SECRET_ENV, SECRET)])
            .unwrap()
            .unwrap();
        assert_eq!(c.delay(1, 0.0), Duration::from_secs(1));
        assert_eq!(c.delay(2, 0.0), Duration::from_secs(2));
        assert_eq!(c.delay(4, 0.0), Duration::from_secs(8));
        assert_eq!(c.delay(12, 0.0), Duration::from_secs(300));
        assert_eq!(c.delay(40, 0.0), Duration::from_secs(300));
        assert_eq!(c.delay(1, 0.999_999).as_millis(), 500);
    }
}
