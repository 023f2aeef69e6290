//! Player tokens: short-lived JWTs a game server mints for one player's client, so
//! that the client never holds a server token.
//!
//! A player token is a standard JWT signed with HS256 and the secret of
//! `LEAGUEKIT_PLAYER_TOKEN_SECRET` (at least 32 bytes), with the claims `sub` (the
//! player id), `exp` and `iat` (unix seconds) and `aud` = `leaguekit:<season name>`,
//! so that a token of one league is refused by another. `leaguekit serve` mints them
//! (`POST /v1/players/{player}/token`), and a game server may mint them in its own code
//! with any JWT library. Only HS256 is accepted (never `none`), `sub`, `exp` and `aud`
//! are required, `exp` and `nbf` (when present) are allowed [`LEEWAY_SECS`] of clock
//! difference, and a header with `crit` is refused (this server understands no
//! critical extension, RFC 7515 §4.1.11).
//!
//! Every token, minted here or by a game server with the shared secret, is refused
//! when it lives longer than the server's maximum (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`,
//! default [`MAX_TTL_SECS`]): its lifetime is `exp − iat`, and whatever its `iat`
//! says, `exp` may not be further than the maximum (and the leeway) from now. So a
//! token that leaks is usable for a bounded time, however it was made.
//!
//! Owns: the secret, the claims, minting and checking a player token, and why a
//! token is refused (each reason with its own message).
//! Must not: read league data, or log a token or the secret.

use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// The environment variable with the secret player tokens are signed with.
pub const PLAYER_TOKEN_SECRET_ENV: &str = "LEAGUEKIT_PLAYER_TOKEN_SECRET";
/// The environment variable with the longest lifetime of a player token, in seconds
/// (default [`MAX_TTL_SECS`], at most [`MAX_TTL_CEILING_SECS`]).
pub const PLAYER_TOKEN_MAX_TTL_ENV: &str = "LEAGUEKIT_PLAYER_TOKEN_MAX_TTL";
/// The shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;
/// A minted token's lifetime when none is asked for, in seconds.
pub const DEFAULT_TTL_SECS: u64 = 900;
/// The shortest lifetime that may be asked for, in seconds.
pub const MIN_TTL_SECS: u64 = 60;
/// The longest lifetime of a player token by default, in seconds (a day): the most a
/// mint may ask for, and the longest a token made anywhere may live
/// (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL` changes it).
pub const MAX_TTL_SECS: u64 = 86_400;
/// The highest `LEAGUEKIT_PLAYER_TOKEN_MAX_TTL` accepted, in seconds (a week).
pub const MAX_TTL_CEILING_SECS: u64 = 7 * 86_400;
/// How long after its `exp` (or before its `nbf`) a token is still accepted, for
/// clocks that differ.
pub const LEEWAY_SECS: u64 = 5;

/// The secret player tokens are signed with, and the longest lifetime a token may
/// have. `Debug` never shows the secret.
#[derive(Clone)]
pub struct PlayerSecret {
    key: Arc<[u8]>,
    max_ttl: u64,
}

impl std::fmt::Debug for PlayerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PlayerSecret({} bytes, redacted; max_ttl: {} s)",
            self.key.len(),
            self.max_ttl
        )
    }
}

/// A player token setting that cannot be used: a secret too short (the secret itself
/// is never shown), or a maximum lifetime out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The secret is shorter than [`MIN_SECRET_BYTES`].
    #[error(
        "{PLAYER_TOKEN_SECRET_ENV} is {len} bytes long; player tokens need a secret of at \
         least {MIN_SECRET_BYTES} bytes: make one with `openssl rand -hex 32`, or unset the \
         variable to turn player tokens off"
    )]
    TooShort {
        /// The secret's length in bytes.
        len: usize,
    },
    /// The maximum lifetime is not a whole number of seconds within
    /// [`MIN_TTL_SECS`]..=[`MAX_TTL_CEILING_SECS`].
    #[error(
        "{PLAYER_TOKEN_MAX_TTL_ENV} is {value:?}; it must be a whole number of seconds from \
         {MIN_TTL_SECS} to {MAX_TTL_CEILING_SECS} (a week), such as 3600; unset it for the \
         default, {MAX_TTL_SECS} (a day)"
    )]
    MaxTtl {
        /// The value given (as text; it is not a secret).
        value: String,
    },
}

impl PlayerSecret {
    /// A secret of at least [`MIN_SECRET_BYTES`] bytes, with the default maximum
    /// lifetime ([`MAX_TTL_SECS`]).
    pub fn new(secret: impl AsRef<[u8]>) -> Result<PlayerSecret, SecretError> {
        let secret = secret.as_ref();
        if secret.len() < MIN_SECRET_BYTES {
            return Err(SecretError::TooShort { len: secret.len() });
        }
        Ok(PlayerSecret {
            key: secret.into(),
            max_ttl: MAX_TTL_SECS,
        })
    }

    /// This secret with another maximum lifetime, in seconds: a mint may ask for at
    /// most `secs`, and any token that lives longer (`exp − iat`, or `exp − now`) is
    /// refused. From [`MIN_TTL_SECS`] to [`MAX_TTL_CEILING_SECS`].
    pub fn with_max_ttl(mut self, secs: u64) -> Result<PlayerSecret, SecretError> {
        if !(MIN_TTL_SECS..=MAX_TTL_CEILING_SECS).contains(&secs) {
            return Err(SecretError::MaxTtl {
                value: secs.to_string(),
            });
        }
        self.max_ttl = secs;
        Ok(self)
    }

    /// The longest lifetime of a player token, in seconds.
    pub fn max_ttl(&self) -> u64 {
        self.max_ttl
    }

    /// The secret of `LEAGUEKIT_PLAYER_TOKEN_SECRET`, or `None` when it is unset or
    /// empty (player tokens are then off), with the maximum lifetime of
    /// `LEAGUEKIT_PLAYER_TOKEN_MAX_TTL` (whole seconds; default [`MAX_TTL_SECS`]). A
    /// bad maximum is an error even without a secret, so that a typo never waits for
    /// the day player tokens are turned on.
    pub fn from_env() -> Result<Option<PlayerSecret>, SecretError> {
        let max_ttl = match std::env::var_os(PLAYER_TOKEN_MAX_TTL_ENV) {
            Some(v) if !v.is_empty() => Some(parse_max_ttl(&v.to_string_lossy())?),
            _ => None,
        };
        let secret = match std::env::var_os(PLAYER_TOKEN_SECRET_ENV) {
            Some(v) if !v.is_empty() => PlayerSecret::new(v.as_encoded_bytes())?,
            _ => return Ok(None),
        };
        match max_ttl {
            Some(secs) => secret.with_max_ttl(secs).map(Some),
            None => Ok(Some(secret)),
        }
    }
}

/// `LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`'s value: whole seconds within range.
fn parse_max_ttl(text: &str) -> Result<u64, SecretError> {
    let bad = || SecretError::MaxTtl {
        // At most 40 characters of it: enough to see the mistake.
        value: text.chars().take(40).collect(),
    };
    let secs: u64 = text.trim().parse().map_err(|_| bad())?;
    if (MIN_TTL_SECS..=MAX_TTL_CEILING_SECS).contains(&secs) {
        Ok(secs)
    } else {
        Err(bad())
    }
}

/// The claims of a player token.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    aud: String,
    exp: u64,
    iat: u64,
}

/// Why a player token is refused. Its message says what failed and what to do, and
/// never names the static token variables (the caller sent a JWT, not one of those).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Refused {
    /// Not a JWT at all (perhaps a mistyped static token): the caller is told about
    /// tokens in general.
    #[error("the token is not a JWT")]
    NotJwt,
    /// Well signed, for this league, but past its `exp`.
    #[error(
        "the player token has expired (its exp is past, by more than {LEEWAY_SECS} s); ask \
         the game server for a new one"
    )]
    Expired,
    /// Well signed, but its `nbf` is still ahead.
    #[error(
        "the player token is not valid yet: its nbf is more than {LEEWAY_SECS} s ahead of \
         the server's clock; use it from then on, or check the clock of whatever minted it"
    )]
    NotYetValid,
    /// Well signed, but made for another league (or without `aud`).
    #[error(
        "the player token is for another league: its aud must be {expected:?} (\
         \"leaguekit:\" and this season's name)"
    )]
    WrongAudience {
        /// The `aud` this server accepts.
        expected: String,
    },
    /// The signature does not verify with this server's secret.
    #[error(
        "the player token's signature does not verify: it was signed with another secret \
         than this server's {PLAYER_TOKEN_SECRET_ENV}, or changed since it was signed"
    )]
    BadSignature,
    /// Signed with another algorithm than HS256 (`none` included).
    #[error(
        "the player token's header says alg {alg:?}; only HS256 is accepted (never \
         \"none\"): sign it with HS256 and the server's {PLAYER_TOKEN_SECRET_ENV}"
    )]
    WrongAlgorithm {
        /// The header's `alg`, as sent (at most 16 characters of it).
        alg: String,
    },
    /// Its header has `crit`: this server understands no critical extension.
    #[error(
        "the player token's header has crit (critical extensions), which this server \
         does not understand, so it refuses the token (RFC 7515, section 4.1.11): mint \
         it without crit"
    )]
    UnknownCrit,
    /// Well signed, but it lives longer than the server allows.
    #[error(
        "the player token lives {lifetime} s ({how}), more than the {max} s this server \
         accepts ({PLAYER_TOKEN_MAX_TTL_ENV}): mint tokens that expire at most {max} s \
         after they are issued"
    )]
    TooLongLived {
        /// Its lifetime, in seconds.
        lifetime: u64,
        /// How it was measured: `exp - iat` or `exp - now`.
        how: &'static str,
        /// The longest lifetime accepted, in seconds.
        max: u64,
    },
    /// A JWT, but not one this server can read (a claim missing or of the wrong type,
    /// or the token cut or garbled).
    #[error(
        "the player token cannot be read: {why}; a player token is an HS256 JWT with sub, \
         exp and aud (docs/http.md, \"Player tokens\")"
    )]
    Malformed {
        /// What is wrong.
        why: String,
    },
}

/// A minted token.
#[derive(Debug)]
pub(super) struct Minted {
    pub(super) token: String,
    pub(super) expires_at: u64,
}

/// The keys of one league's player tokens.
pub(super) struct PlayerKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    audience: String,
    max_ttl: u64,
}

impl std::fmt::Debug for PlayerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlayerKeys {{ audience: {:?} }}", self.audience)
    }
}

impl PlayerKeys {
    /// The keys of the season named `season`.
    pub(super) fn new(secret: &PlayerSecret, season: &str) -> PlayerKeys {
        let audience = audience(season);
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[&audience]);
        validation.set_required_spec_claims(&["exp", "sub", "aud"]);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        PlayerKeys {
            encoding: EncodingKey::from_secret(&secret.key),
            decoding: DecodingKey::from_secret(&secret.key),
            validation,
            audience,
            max_ttl: secret.max_ttl,
        }
    }

    /// The longest lifetime of a token, in seconds (the most a mint may ask for).
    pub(super) fn max_ttl(&self) -> u64 {
        self.max_ttl
    }

    /// A token for `player` valid for `ttl` seconds from `now` (unix seconds).
    pub(super) fn mint(&self, player: &str, ttl: u64, now: u64) -> Minted {
        let claims = Claims {
            sub: player.to_owned(),
            aud: self.audience.clone(),
            exp: now.saturating_add(ttl),
            iat: now,
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .unwrap_or_else(|e| unreachable!("HS256 signs any claims: {e}"));
        Minted {
            token,
            expires_at: claims.exp,
        }
    }

    /// The player of `token`, or why it is refused.
    pub(super) fn check(&self, token: &[u8]) -> Result<String, Refused> {
        self.check_at(token, unix_now())
    }

    /// [`PlayerKeys::check`] with the lifetime measured at `now` (unix seconds; `exp`
    /// and `nbf` are checked against the system clock).
    fn check_at(&self, token: &[u8], now: u64) -> Result<String, Refused> {
        let header = jwt_header(token).ok_or(Refused::NotJwt)?;
        // The header first: the algorithm (a token of `alg: none` has no signature to
        // check) and `crit`, which the JWT library does not look at.
        match header.get("alg") {
            Some(serde_json::Value::String(alg)) if alg == "HS256" => {}
            other => {
                let alg = match other {
                    Some(serde_json::Value::String(a)) => a.chars().take(16).collect(),
                    Some(v) => v.to_string().chars().take(16).collect(),
                    None => "(none given)".to_owned(),
                };
                return Err(Refused::WrongAlgorithm { alg });
            }
        }
        if header.contains_key("crit") {
            return Err(Refused::UnknownCrit);
        }
        // The signature, then `exp`, `nbf`, `aud` and the required claims.
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &self.decoding,
            &self.validation,
        )
        .map_err(|e| self.refusal(e.kind()))?;
        // The library checked that `sub` is a string and `exp` a number.
        let claims = data.claims;
        let (Some(sub), Some(exp)) = (
            claims.get("sub").and_then(serde_json::Value::as_str),
            claims.get("exp").and_then(numeric_date),
        ) else {
            return Err(Refused::Malformed {
                why: "sub must be a string and exp unix seconds".to_owned(),
            });
        };
        let iat = match claims.get("iat") {
            None => None,
            Some(v) => Some(numeric_date(v).ok_or_else(|| Refused::Malformed {
                why: "the claim iat must be unix seconds".to_owned(),
            })?),
        };
        // The lifetime: `exp - iat` as the token says; and whatever `iat` says
        // (absent, or in the future), `exp` no further from now than the maximum.
        let left = exp.saturating_sub(now);
        if let Some(iat) = iat
            && exp.saturating_sub(iat) > self.max_ttl
        {
            return Err(Refused::TooLongLived {
                lifetime: exp.saturating_sub(iat),
                how: "exp - iat",
                max: self.max_ttl,
            });
        }
        if left > self.max_ttl.saturating_add(LEEWAY_SECS) {
            return Err(Refused::TooLongLived {
                lifetime: left,
                how: "exp - now",
                max: self.max_ttl,
            });
        }
        Ok(sub.to_owned())
    }

    /// Why the JWT library refused a token whose header is an HS256 JWT's.
    fn refusal(&self, kind: &ErrorKind) -> Refused {
        match kind {
            // The signature and algorithm are checked before the claims: only a token
            // signed with this server's secret gets past this.
            ErrorKind::InvalidSignature => Refused::BadSignature,
            ErrorKind::ExpiredSignature => Refused::Expired,
            ErrorKind::ImmatureSignature => Refused::NotYetValid,
            ErrorKind::InvalidAudience => Refused::WrongAudience {
                expected: self.audience.clone(),
            },
            ErrorKind::MissingRequiredClaim(c) if c == "aud" => Refused::WrongAudience {
                expected: self.audience.clone(),
            },
            ErrorKind::MissingRequiredClaim(c) => Refused::Malformed {
                why: format!("the claim {c} is missing (or not of its type)"),
            },
            ErrorKind::InvalidClaimFormat(c) => Refused::Malformed {
                why: format!("the claim {c} must be whole unix seconds"),
            },
            ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => Refused::WrongAlgorithm {
                alg: "(not HS256)".to_owned(),
            },
            _ => Refused::Malformed {
                why: "it is cut, garbled or not base64url JSON".to_owned(),
            },
        }
    }
}

/// A JWT NumericDate (RFC 7519: unix seconds, possibly with a fraction) as whole
/// seconds, rounded as the JWT library rounds `exp` and `nbf`.
fn numeric_date(v: &serde_json::Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    // `u64::MAX as f64` rounds up to 2^64, which no u64 reaches: strictly below it.
    (f.is_finite() && f >= 0.0 && f < u64::MAX as f64).then(|| f.round() as u64)
}

/// The header of `token` if it is shaped as a JWT: three base64url parts separated
/// by dots, the first a JSON object. `None` for anything else (a static token).
fn jwt_header(token: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    use base64::Engine;
    let mut parts = token.split(|b| *b == b'.');
    let (Some(head), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let head = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .ok()?;
    match serde_json::from_slice(&head).ok()? {
        serde_json::Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Whether `token` is shaped as a JWT (whatever it says), so that its refusal names
/// player tokens, never the static token variables.
pub(super) fn looks_like_jwt(token: &[u8]) -> bool {
    jwt_header(token).is_some()
}

/// The `aud` claim of a season's player tokens.
pub fn audience(season: &str) -> String {
    format!("leaguekit:{season}")
}

/// Now, in unix seconds.
pub(super) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn keys(season: &str) -> PlayerKeys {
        PlayerKeys::new(&PlayerSecret::new(SECRET).expect("long"), season)
    }

    /// A token signed with `secret`, with this header and these claims.
    fn signed(secret: &[u8], header: &serde_json::Value, claims: &serde_json::Value) -> String {
        use hmac::Mac;
        let part = |v: &serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        let message = format!("{}.{}", part(header), part(claims));
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).expect("any length");
        mac.update(message.as_bytes());
        let sig =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{message}.{sig}")
    }

    fn hs256() -> serde_json::Value {
        serde_json::json!({"alg": "HS256", "typ": "JWT"})
    }

    #[test]
    fn mint_then_check() {
        let keys = keys("s1");
        let m = keys.mint("ana", 900, unix_now());
        assert_eq!(keys.check(m.token.as_bytes()), Ok("ana".to_owned()));
        let old = keys.mint("ana", 60, unix_now() - 600);
        assert_eq!(keys.check(old.token.as_bytes()), Err(Refused::Expired));
        let other = PlayerKeys::new(&PlayerSecret::new(SECRET).expect("long"), "s2");
        assert_eq!(
            other.check(m.token.as_bytes()),
            Err(Refused::WrongAudience {
                expected: "leaguekit:s2".to_owned()
            })
        );
        assert_eq!(keys.check(b"not.a.jwt"), Err(Refused::NotJwt));
        assert_eq!(keys.check(b"static-token-0123456789"), Err(Refused::NotJwt));
        let forged = PlayerKeys::new(&PlayerSecret::new([b'x'; 32]).expect("long"), "s1");
        let f = forged.mint("ana", 900, unix_now());
        assert_eq!(keys.check(f.token.as_bytes()), Err(Refused::BadSignature));
    }

    #[test]
    fn nbf_crit_alg_and_lifetime_are_checked() {
        let keys = keys("s1");
        let now = unix_now();
        let claims = |extra: serde_json::Value| {
            let mut c = serde_json::json!({"sub": "ana", "aud": "leaguekit:s1", "exp": now + 600});
            for (k, v) in extra.as_object().expect("object") {
                c[k] = v.clone();
            }
            c
        };
        let check = |header: &serde_json::Value, c: &serde_json::Value| {
            keys.check_at(signed(SECRET, header, c).as_bytes(), now)
        };
        assert_eq!(
            check(&hs256(), &claims(serde_json::json!({}))),
            Ok("ana".to_owned())
        );
        // nbf: within the leeway, fine; beyond it, not yet valid.
        let nbf = |at: u64| claims(serde_json::json!({"nbf": at}));
        assert_eq!(check(&hs256(), &nbf(now + 3)), Ok("ana".to_owned()));
        assert_eq!(check(&hs256(), &nbf(now + 60)), Err(Refused::NotYetValid));
        // crit, whatever it lists.
        let crit = serde_json::json!({"alg": "HS256", "typ": "JWT", "crit": ["exp"]});
        assert_eq!(
            check(&crit, &claims(serde_json::json!({}))),
            Err(Refused::UnknownCrit)
        );
        // Another algorithm, or none.
        let none = serde_json::json!({"alg": "none"});
        assert_eq!(
            check(&none, &claims(serde_json::json!({}))),
            Err(Refused::WrongAlgorithm {
                alg: "none".to_owned()
            })
        );
        // Lifetime: exp - iat, or exp - now.
        let day = MAX_TTL_SECS;
        let life = |iat: Option<u64>, exp: u64| {
            let mut c = claims(serde_json::json!({"exp": exp}));
            if let Some(iat) = iat {
                c["iat"] = iat.into();
            }
            check(&hs256(), &c)
        };
        assert_eq!(life(Some(now), now + day), Ok("ana".to_owned()));
        assert!(matches!(
            life(Some(now), now + day + 1),
            Err(Refused::TooLongLived { lifetime, how: "exp - iat", max }) if lifetime == day + 1 && max == day
        ));
        assert!(matches!(
            life(None, now + 30 * day),
            Err(Refused::TooLongLived {
                how: "exp - now",
                ..
            })
        ));
        assert_eq!(life(None, now + day), Ok("ana".to_owned()));
        // An iat in the future does not stretch the life.
        let y3000 = 32_503_680_000;
        assert!(matches!(
            life(Some(y3000 - 60), y3000),
            Err(Refused::TooLongLived {
                how: "exp - now",
                ..
            })
        ));
        assert!(matches!(
            life(Some(now), u64::MAX),
            Err(Refused::TooLongLived { .. })
        ));
        // Claims of the wrong type.
        assert!(matches!(
            check(&hs256(), &claims(serde_json::json!({"iat": "yesterday"}))),
            Err(Refused::Malformed { .. })
        ));
        assert!(matches!(
            check(&hs256(), &claims(serde_json::json!({"iat": -5}))),
            Err(Refused::Malformed { .. })
        ));
        // A NumericDate may have a fraction (RFC 7519).
        let fraction = (now + 600) as f64 + 0.25;
        assert_eq!(
            check(
                &hs256(),
                &claims(serde_json::json!({"exp": fraction, "iat": now as f64}))
            ),
            Ok("ana".to_owned())
        );
        // A shorter maximum.
        let short = PlayerKeys::new(
            &PlayerSecret::new(SECRET)
                .expect("long")
                .with_max_ttl(120)
                .expect("in range"),
            "s1",
        );
        let t = signed(SECRET, &hs256(), &claims(serde_json::json!({"iat": now})));
        assert!(matches!(
            short.check_at(t.as_bytes(), now),
            Err(Refused::TooLongLived {
                lifetime: 600,
                max: 120,
                ..
            })
        ));
    }

    #[test]
    fn refusals_say_what_failed_and_never_name_the_static_tokens() {
        for r in [
            Refused::Expired,
            Refused::NotYetValid,
            Refused::WrongAudience {
                expected: "leaguekit:s1".to_owned(),
            },
            Refused::BadSignature,
            Refused::WrongAlgorithm {
                alg: "none".to_owned(),
            },
            Refused::UnknownCrit,
            Refused::TooLongLived {
                lifetime: 99,
                how: "exp - iat",
                max: 60,
            },
            Refused::Malformed {
                why: "x".to_owned(),
            },
        ] {
            let m = r.to_string();
            assert!(
                !m.contains("SERVER_TOKENS") && !m.contains("VIEWER_TOKENS"),
                "{m}"
            );
        }
    }

    #[test]
    fn short_secrets_and_bad_maximums_are_refused_without_echo() {
        let e = PlayerSecret::new(b"short-secret").expect_err("short");
        assert_eq!(e, SecretError::TooShort { len: 12 });
        assert!(!e.to_string().contains("short-secret"), "{e}");
        let s = PlayerSecret::new(SECRET).expect("long");
        assert!(!format!("{s:?}").contains("0123"));
        assert_eq!(s.max_ttl(), MAX_TTL_SECS);
        for bad in [
            "",
            "abc",
            "-5",
            "59",
            "604801",
            "1.5",
            "99999999999999999999999",
        ] {
            let e = parse_max_ttl(bad).expect_err(bad);
            assert!(e.to_string().contains(PLAYER_TOKEN_MAX_TTL_ENV), "{e}");
        }
        assert_eq!(parse_max_ttl(" 3600 "), Ok(3600));
        assert_eq!(parse_max_ttl("604800"), Ok(MAX_TTL_CEILING_SECS));
        assert!(s.clone().with_max_ttl(59).is_err());
        assert_eq!(s.with_max_ttl(60).map(|s| s.max_ttl()), Ok(60));
    }
}
