//! Bearer tokens and roles.
//!
//! Three roles: `viewer` (designers and support: reads only: the dashboard,
//! standings, metrics), `server` (game servers: reads and writes) and `admin`
//! (operators: everything, and the operator's routes: bans, adjustments,
//! re-settlements, the audit log, the staging clock, which answer 403 to the other
//! roles). A token may be configured as `NAME:TOKEN`; the name is who the audit log
//! says acted (`admin-N`, by position, when unnamed). A request carries its
//! token as `Authorization: Bearer TOKEN`; a read (`GET`/`HEAD`) may instead carry it
//! in the `leaguekit_token` cookie, which the dashboard sets for the browser session
//! (a write never accepts the cookie, so a page on another site cannot make a browser
//! write). Without a valid token only `/healthz` answers.
//!
//! A fourth role, `player`, is a game client's: a player token
//! (`player_tokens.rs`, a short-lived JWT for one player, as `Authorization: Bearer`,
//! never the cookie) may call only the reads of
//! [`PLAYER_ROUTES`] (403 `forbidden` for anything else); that the player and the
//! bracket of the path are the token's own is checked by the routes' guard
//! (`routes/own.rs`), which reads the player's placement. An expired player token is
//! 401 `token_expired`; any other token the server does not know is 401
//! `unauthorized`. When the token sent is a JWT, the message says what failed with it
//! as a player token (not yet valid, another league, a bad signature, another
//! algorithm, too long-lived, `crit`, unreadable, or player tokens off), never the
//! static token variables; only a token that is not a JWT is told about those.
//!
//! The live streams ([`STREAM_ROUTES`]) also take any role's token as
//! `?access_token=TOKEN`, since a browser's `EventSource` cannot send headers (the
//! header wins when both are sent). A URL is more exposed than a header (proxies and
//! browsers' histories keep URLs), so the docs tell to prefer the header and short-lived
//! player tokens there.
//!
//! Tokens are compared in constant time: every configured token is compared in full
//! with the candidate, whatever matches, so the time taken says nothing about how much
//! of a token was right. Tokens never reach a log: the trace layer logs method and
//! path only (never the query, which may hold `access_token`), and errors never
//! repeat a token.
//!
//! Owns: who may call what: tokens, roles, the cookie rule.
//! Must not: read or write league data, or log a token.

use std::sync::Arc;

use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use subtle::{Choice, ConstantTimeEq};

use crate::season::{ServerConfig, split_named, validate_token};

use super::error::ApiError;
use super::player_tokens::{self, PLAYER_TOKEN_SECRET_ENV, Refused};
use crate::operator::Actor;

/// The environment variable with the `server` tokens (comma-separated).
pub const SERVER_TOKENS_ENV: &str = "LEAGUEKIT_SERVER_TOKENS";
/// The environment variable with the `viewer` tokens (comma-separated).
pub const VIEWER_TOKENS_ENV: &str = "LEAGUEKIT_VIEWER_TOKENS";
/// The environment variable with the `admin` tokens (comma-separated, each `TOKEN` or
/// `NAME:TOKEN`).
pub const ADMIN_TOKENS_ENV: &str = "LEAGUEKIT_ADMIN_TOKENS";
/// The cookie the dashboard keeps its token in (reads only).
pub const COOKIE: &str = "leaguekit_token";

/// What a token allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Role {
    /// A game client's player token: its own player and bracket, reads only.
    Player,
    /// Reads only.
    Viewer,
    /// Reads and writes.
    Server,
    /// Everything, and the operator's routes.
    Admin,
}

/// Who called: the role of the token presented and its name (`NAME` of a
/// `NAME:TOKEN`, else the role and its position, such as `admin-1`). Put in each
/// authenticated request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Caller {
    /// The token's role.
    pub role: Role,
    /// The token's name.
    pub name: String,
}

/// The player of a request made with a player token (in its extensions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AsPlayer(pub(super) String);

/// The routes a player token may call (`GET` and `HEAD` only), as the router names
/// them.
pub const PLAYER_ROUTES: [&str; 7] = [
    "/v1/players/{player}",
    "/v1/players/{player}/around",
    "/v1/players/{player}/rewards",
    "/v1/players/{player}/events",
    "/v1/season",
    "/v1/tiers/{tier}/brackets/{bracket}",
    "/v1/tiers/{tier}/brackets/{bracket}/events",
];

/// A configured token's bytes and name.
#[derive(Clone)]
struct Secret(Box<[u8]>, String);

/// The tokens a server accepts. `Debug` shows only how many there are.
#[derive(Clone, Default)]
pub struct Tokens {
    server: Vec<Secret>,
    viewer: Vec<Secret>,
    admin: Vec<Secret>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tokens {{ server: {} redacted, viewer: {} redacted, admin: {} redacted }}",
            self.server.len(),
            self.viewer.len(),
            self.admin.len()
        )
    }
}

/// A token that cannot be used, and where it came from (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token {index} of {source_name}: {why}")]
#[non_exhaustive]
pub struct TokenError {
    /// `LEAGUEKIT_SERVER_TOKENS`, `LEAGUEKIT_VIEWER_TOKENS` or the code's own list.
    pub source_name: String,
    /// 1-based position in its list.
    pub index: usize,
    /// What is wrong and how to fix it.
    pub why: String,
}

impl Tokens {
    /// Tokens given directly (for embedding and tests); each is checked with
    /// [`validate_token`].
    pub fn new<I, J>(server: I, viewer: J) -> Result<Tokens, TokenError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
        J: IntoIterator,
        J::Item: AsRef<str>,
    {
        Ok(Tokens {
            server: secrets("server tokens", "server", server)?,
            viewer: secrets("viewer tokens", "viewer", viewer)?,
            admin: Vec::new(),
        })
    }

    /// These tokens and the `admin` tokens `admin` (each `TOKEN` or `NAME:TOKEN`).
    pub fn with_admin<I>(mut self, admin: I) -> Result<Tokens, TokenError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.admin = secrets("admin tokens", "admin", admin)?;
        Ok(self)
    }

    /// The tokens of `leaguekit serve`: `LEAGUEKIT_SERVER_TOKENS`,
    /// `LEAGUEKIT_VIEWER_TOKENS` and `LEAGUEKIT_ADMIN_TOKENS` (comma-separated; when
    /// set and not empty they replace the config's), else the config's `[server]`
    /// lists.
    pub fn from_env(config: &ServerConfig) -> Result<Tokens, TokenError> {
        let list =
            |var: &str, role: &str, fallback: &[String]| -> Result<Vec<Secret>, TokenError> {
                match std::env::var(var) {
                    Ok(v) if !v.trim().is_empty() => secrets(
                        var,
                        role,
                        v.split(',').map(str::trim).filter(|t| !t.is_empty()),
                    ),
                    _ => secrets(var, role, fallback),
                }
            };
        Ok(Tokens {
            server: list(SERVER_TOKENS_ENV, "server", &config.server_tokens)?,
            viewer: list(VIEWER_TOKENS_ENV, "viewer", &config.viewer_tokens)?,
            admin: list(ADMIN_TOKENS_ENV, "admin", &config.admin_tokens)?,
        })
    }

    /// True when no token is configured (then nothing but `/healthz` could answer).
    pub fn is_empty(&self) -> bool {
        self.server.is_empty() && self.viewer.is_empty() && self.admin.is_empty()
    }

    /// The role of `candidate`, comparing it with every configured token in full.
    pub fn role(&self, candidate: &[u8]) -> Option<Role> {
        self.caller(candidate).map(|c| c.role)
    }

    /// The role and name of `candidate`, comparing it with every configured token in
    /// full (the time taken does not depend on which token matched, if any).
    pub fn caller(&self, candidate: &[u8]) -> Option<Caller> {
        let mut found: Option<(Role, &str)> = None;
        for (role, list) in [
            (Role::Viewer, &self.viewer),
            (Role::Server, &self.server),
            (Role::Admin, &self.admin),
        ] {
            for s in list {
                // Every token is compared in full; the highest role wins.
                if bool::from(same(&s.0, candidate)) {
                    found = Some((role, &s.1));
                }
            }
        }
        found.map(|(role, name)| Caller {
            role,
            name: name.to_owned(),
        })
    }
}

fn secrets<I>(source: &str, role: &str, tokens: I) -> Result<Vec<Secret>, TokenError>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.as_ref();
            validate_token(t).map_err(|why| TokenError {
                source_name: source.to_owned(),
                index: i + 1,
                why,
            })?;
            let (name, token) = split_named(t);
            let name = name.map_or_else(|| format!("{role}-{}", i + 1), str::to_owned);
            Ok(Secret(token.as_bytes().into(), name))
        })
        .collect()
}

/// Constant-time equality of a secret and a candidate: the time depends on the
/// secret's length and the candidate's, never on their contents.
fn same(secret: &[u8], candidate: &[u8]) -> Choice {
    let mut equal = (secret.len() as u64).ct_eq(&(candidate.len() as u64));
    for (i, s) in secret.iter().enumerate() {
        let c = candidate.get(i).copied().unwrap_or(0);
        equal &= s.ct_eq(&c);
    }
    equal
}

/// The bearer token of the `Authorization` header.
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let v = headers.get(header::AUTHORIZATION)?.as_bytes();
    let scheme = v.get(..7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| v.get(7..))
        .flatten()
        .map(<[u8]>::trim_ascii)
}

/// The token of a request: the bearer token, or for reads the dashboard's cookie.
fn presented<'a>(method: &Method, headers: &'a HeaderMap) -> Option<&'a [u8]> {
    if headers.contains_key(header::AUTHORIZATION) {
        return bearer(headers);
    }
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|v| v.as_bytes().split(|b| *b == b';'))
        .map(<[u8]>::trim_ascii)
        .find_map(|pair| {
            pair.strip_prefix(COOKIE.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
        })
}

/// Whether the method writes.
fn writes(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The paths that answer without a token.
fn public(path: &str) -> bool {
    path == "/healthz"
}

/// The middleware: checks the token and the role, and records the role in the
/// request's extensions. A browser asking for the dashboard without a token gets the
/// sign-in page (with status 401); everything else gets a JSON error.
pub(super) async fn require<S: crate::Store>(
    State(app): State<Arc<super::App<S>>>,
    mut request: Request,
    next: Next,
) -> Response {
    if public(request.uri().path()) {
        return next.run(request).await;
    }
    // The token: the `Authorization` header; else, on a live stream, `?access_token=`
    // (a browser's EventSource cannot send headers); else, for a read, the cookie.
    let in_query = if request.headers().contains_key(header::AUTHORIZATION) {
        None
    } else {
        access_token(&request)
    };
    let token: Option<Vec<u8>> = match &in_query {
        Some(t) => Some(t.as_bytes().to_vec()),
        None => presented(request.method(), request.headers()).map(<[u8]>::to_vec),
    };
    let mut caller = token.as_deref().and_then(|t| app.tokens.caller(t));
    // A player token: as a bearer token or in the query, never the cookie.
    let player_token = match &in_query {
        Some(t) => Some(t.as_bytes().to_vec()),
        None => bearer(request.headers()).map(<[u8]>::to_vec),
    };
    if caller.is_none()
        && let Some(token) = player_token.as_deref()
    {
        match app.players.as_ref().map(|keys| keys.check(token)) {
            Some(Ok(player)) => {
                if !player_may_call(&request) {
                    return ApiError::player_forbidden().into_response();
                }
                request.extensions_mut().insert(AsPlayer(player.clone()));
                caller = Some(Caller {
                    role: Role::Player,
                    name: player,
                });
            }
            Some(Err(Refused::Expired)) => return ApiError::token_expired().into_response(),
            // Not a JWT: perhaps a mistyped static token; the general 401 below.
            Some(Err(Refused::NotJwt)) => {}
            Some(Err(why)) => return bad_player_token(why.to_string()).into_response(),
            None if player_tokens::looks_like_jwt(token) => {
                return bad_player_token(format!(
                    "this is a player token (a JWT), but player tokens are off on this \
                     server: it has no {PLAYER_TOKEN_SECRET_ENV}; ask its operator to set it \
                     (the same secret as the game server that minted the token)"
                ))
                .into_response();
            }
            None => {}
        }
    }
    let Some(caller) = caller else {
        if wants_page(&request) {
            let mut page = (
                axum::http::StatusCode::UNAUTHORIZED,
                Html(super::dashboard::SIGN_IN),
            )
                .into_response();
            page.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            return page;
        }
        let had_token = request.headers().contains_key(header::AUTHORIZATION) || in_query.is_some();
        if !had_token && token.as_deref().is_some_and(player_tokens::looks_like_jwt) {
            return bad_player_token(
                "a player token is never accepted in the dashboard's cookie: send it as \
                 \"Authorization: Bearer TOKEN\" (or ?access_token= on a live stream)"
                    .to_owned(),
            )
            .into_response();
        }
        return ApiError::unauthorized(had_token).into_response();
    };
    if writes(request.method()) && caller.role < Role::Server {
        return ApiError::forbidden().into_response();
    }
    request.extensions_mut().insert(caller.role);
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// 401 `unauthorized` for a JWT refused as a player token: `why` says what failed.
fn bad_player_token(why: String) -> ApiError {
    ApiError::new(axum::http::StatusCode::UNAUTHORIZED, "unauthorized", why)
}

/// The live streams, which also take their token as `?access_token=`.
pub const STREAM_ROUTES: [&str; 2] = [
    "/v1/players/{player}/events",
    "/v1/tiers/{tier}/brackets/{bracket}/events",
];

/// The `access_token` query parameter of a read of a live stream ([`STREAM_ROUTES`]).
fn access_token(request: &Request) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Query {
        access_token: Option<String>,
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD)
        || !request
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|p| STREAM_ROUTES.contains(&p.as_str()))
    {
        return None;
    }
    axum::extract::Query::<Query>::try_from_uri(request.uri())
        .ok()
        .and_then(|q| q.0.access_token)
        .filter(|t| !t.is_empty())
}

/// Whether a player token may call this route at all (a read of [`PLAYER_ROUTES`]).
fn player_may_call(request: &Request) -> bool {
    matches!(*request.method(), Method::GET | Method::HEAD)
        && request
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|p| PLAYER_ROUTES.contains(&p.as_str()))
}

/// The extractor of the operator's routes: the caller holds an `admin` token (else
/// 403), and is the [`Actor`] the audit log names.
#[derive(Debug, Clone)]
pub(super) struct Admin(pub(super) Actor);

impl<St: Send + Sync> FromRequestParts<St> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, Self::Rejection> {
        match parts.extensions.get::<Caller>() {
            Some(c) if c.role == Role::Admin => Actor::new(c.name.clone())
                .map(Admin)
                .map_err(|_| ApiError::forbidden()),
            _ => Err(ApiError::admin_only()),
        }
    }
}

/// A browser navigating to the dashboard (not a script calling the API).
fn wants_page(request: &Request) -> bool {
    let path = request.uri().path();
    (path == "/" || path == "/index.html")
        && request.method() == Method::GET
        && request
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = "server-token-0123456789";
    const V: &str = "viewer-token-0123456789";

    #[test]
    fn roles_by_token() {
        let t = Tokens::new([S], [V]).expect("valid");
        assert_eq!(t.role(S.as_bytes()), Some(Role::Server));
        assert_eq!(t.role(V.as_bytes()), Some(Role::Viewer));
        assert_eq!(t.role(b"server-token-012345678"), None);
        assert_eq!(t.role(b"server-token-01234567890"), None);
        assert_eq!(t.role(b""), None);
        assert!(!format!("{t:?}").contains("token-0"));
        let a = "admin-token-0123456789";
        let t = t
            .with_admin([format!("alice:{a}"), a.to_owned()])
            .expect("valid");
        let c = t.caller(a.as_bytes()).expect("admin");
        assert_eq!(c.role, Role::Admin);
        // Both entries hold the same token; the later one's name is kept.
        assert_eq!(c.name, "admin-2");
        let t = Tokens::new([S], [V])
            .and_then(|t| t.with_admin([format!("alice:{a}")]))
            .expect("valid");
        assert_eq!(t.caller(a.as_bytes()).map(|c| c.name), Some("alice".into()));
        assert_eq!(
            t.caller(S.as_bytes()).map(|c| c.name),
            Some("server-1".into())
        );
        assert_eq!(t.caller(b"alice:admin-token-0123456789"), None);
        assert!(
            Tokens::new([S], [V])
                .and_then(|t| t.with_admin(["bad name:0123456789abcdef"]))
                .is_err()
        );
    }

    #[test]
    fn bad_tokens_are_refused_without_echo() {
        let e = Tokens::new(["short"], [V]).expect_err("too short");
        assert_eq!(e.index, 1);
        assert!(!e.to_string().contains("short,"), "{e}");
        let e = Tokens::new([S], [V, "has a space in it 0123"]).expect_err("space");
        assert_eq!((e.index, e.source_name.as_str()), (2, "viewer tokens"));
        assert!(!e.to_string().contains("has a space"), "{e}");
    }

    #[test]
    fn bearer_and_cookie() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; leaguekit_token=xyz"),
        );
        assert_eq!(presented(&Method::GET, &h), Some(&b"xyz"[..]));
        assert_eq!(presented(&Method::POST, &h), None, "no cookie for writes");
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer  abc "),
        );
        assert_eq!(presented(&Method::POST, &h), Some(&b"abc"[..]));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(presented(&Method::GET, &h), None);
    }
}
