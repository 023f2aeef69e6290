//! Player tokens: short-lived JWTs a game server mints for one player's client, so
//! that the client never holds a server token.
//!
//! A player token is a standard JWT signed with HS256 and the secret of
//! `LEAGUEKIT_PLAYER_TOKEN_SECRET` (at least 32 bytes), with the claims `sub` (the
//! player id), `exp` and `iat` (unix seconds) and `aud` = `leaguekit:<season name>`,
//! so that a token of one league is refused by another. `leaguekit serve` mints them
//! (`POST /v1/players/{player}/token`), and a game server may mint them in its own code
//! with any JWT library. Only HS256 is accepted (never `none`), `sub`, `exp` and `aud`
//! are required, and `exp` is allowed [`LEEWAY_SECS`] of clock difference.
//!
//! Owns: the secret, the claims, minting and checking a player token.
//! Must not: read league data, or log a token or the secret.

use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// The environment variable with the secret player tokens are signed with.
pub const PLAYER_TOKEN_SECRET_ENV: &str = "LEAGUEKIT_PLAYER_TOKEN_SECRET";
/// The shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;
/// A minted token's lifetime when none is asked for, in seconds.
pub const DEFAULT_TTL_SECS: u64 = 900;
/// The shortest lifetime that may be asked for, in seconds.
pub const MIN_TTL_SECS: u64 = 60;
/// The longest lifetime that may be asked for, in seconds (a day).
pub const MAX_TTL_SECS: u64 = 86_400;
/// How long after its `exp` a token is still accepted, for clocks that differ.
pub const LEEWAY_SECS: u64 = 5;

/// The secret player tokens are signed with. `Debug` never shows it.
#[derive(Clone)]
pub struct PlayerSecret(Arc<[u8]>);

impl std::fmt::Debug for PlayerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlayerSecret({} bytes, redacted)", self.0.len())
    }
}

/// A secret too short to sign player tokens with (the secret itself is never shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{PLAYER_TOKEN_SECRET_ENV} is {len} bytes long; player tokens need a secret of at \
     least {MIN_SECRET_BYTES} bytes: make one with `openssl rand -hex 32`, or unset the \
     variable to turn player tokens off"
)]
#[non_exhaustive]
pub struct SecretError {
    /// The secret's length in bytes.
    pub len: usize,
}

impl PlayerSecret {
    /// A secret of at least [`MIN_SECRET_BYTES`] bytes.
    pub fn new(secret: impl AsRef<[u8]>) -> Result<PlayerSecret, SecretError> {
        let secret = secret.as_ref();
        if secret.len() < MIN_SECRET_BYTES {
            return Err(SecretError { len: secret.len() });
        }
        Ok(PlayerSecret(secret.into()))
    }

    /// The secret of `LEAGUEKIT_PLAYER_TOKEN_SECRET`, or `None` when it is unset or
    /// empty (player tokens are then off).
    pub fn from_env() -> Result<Option<PlayerSecret>, SecretError> {
        match std::env::var_os(PLAYER_TOKEN_SECRET_ENV) {
            Some(v) if !v.is_empty() => PlayerSecret::new(v.as_encoded_bytes()).map(Some),
            _ => Ok(None),
        }
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

/// What a refused player token was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// Well signed, for this league, but past its `exp`.
    Expired,
    /// Not a player token of this league: garbled, signed with another secret or
    /// algorithm, for another audience, or without a required claim.
    Invalid,
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
        PlayerKeys {
            encoding: EncodingKey::from_secret(&secret.0),
            decoding: DecodingKey::from_secret(&secret.0),
            validation,
            audience,
        }
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
        #[derive(Deserialize)]
        struct Subject {
            sub: String,
        }
        match jsonwebtoken::decode::<Subject>(token, &self.decoding, &self.validation) {
            Ok(data) => Ok(data.claims.sub),
            // The signature and algorithm are checked before `exp`: only a token of
            // this league can be "expired".
            Err(e) if matches!(e.kind(), ErrorKind::ExpiredSignature) => Err(Refused::Expired),
            Err(_) => Err(Refused::Invalid),
        }
    }
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

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    #[test]
    fn mint_then_check() {
        let keys = PlayerKeys::new(&PlayerSecret::new(SECRET).expect("long"), "s1");
        let m = keys.mint("ana", 900, unix_now());
        assert_eq!(keys.check(m.token.as_bytes()), Ok("ana".to_owned()));
        let old = keys.mint("ana", 60, unix_now() - 600);
        assert_eq!(keys.check(old.token.as_bytes()), Err(Refused::Expired));
        let other = PlayerKeys::new(&PlayerSecret::new(SECRET).expect("long"), "s2");
        assert_eq!(other.check(m.token.as_bytes()), Err(Refused::Invalid));
        assert_eq!(keys.check(b"not.a.jwt"), Err(Refused::Invalid));
        let forged = PlayerKeys::new(&PlayerSecret::new([b'x'; 32]).expect("long"), "s1");
        let f = forged.mint("ana", 900, unix_now());
        assert_eq!(keys.check(f.token.as_bytes()), Err(Refused::Invalid));
    }

    #[test]
    fn short_secrets_are_refused_without_echo() {
        let e = PlayerSecret::new(b"short-secret").expect_err("short");
        assert_eq!(e.len, 12);
        assert!(!e.to_string().contains("short-secret"), "{e}");
        let s = PlayerSecret::new(SECRET).expect("long");
        assert!(!format!("{s:?}").contains("0123"));
    }
}
