//! The `[server]` section of the season file: settings of `leaguekit serve` (listen
//! address, API tokens, body limit, request and idle timeouts). Part of the season
//! file's validation (see `parse.rs`).
//!
//! Owns: the section's shape and its checks, and what a usable API token looks like
//! ([`validate_token`]). Must not: read the environment, open sockets or know about
//! HTTP: `leaguekit serve` (`crate::server`) does that with what is read here.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;

use super::parse::{Src, parse_duration};

/// `[server]`: settings of `leaguekit serve`, the HTTP/JSON API.
///
/// Every key is optional. `LEAGUEKIT_SERVER_TOKENS` and `LEAGUEKIT_VIEWER_TOKENS`
/// (comma-separated), when set, replace the tokens given here; `--listen` replaces
/// `listen`. The `Debug` output never shows a token, only how many there are.
#[derive(Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The address to listen on (default `127.0.0.1:8080`).
    pub listen: Option<SocketAddr>,
    /// Bearer tokens of role `server`: reads and writes.
    pub server_tokens: Vec<String>,
    /// Bearer tokens of role `viewer`: reads only (dashboard, standings, metrics).
    pub viewer_tokens: Vec<String>,
    /// Bearer tokens of role `admin`: everything, and the operator's routes (bans,
    /// adjustments, re-settlements, the audit log, the staging clock). Write
    /// `NAME:TOKEN` to name the token in the audit log.
    pub admin_tokens: Vec<String>,
    /// The largest request body accepted, in bytes (default 256 KiB; 1 KiB to 64 MiB).
    pub body_limit: Option<usize>,
    /// How long a request may take before it is answered 503 (default 10 s; 1 s to
    /// 10 min).
    pub request_timeout: Option<Duration>,
    /// How long a connection may take to send a whole request head, idle or slow,
    /// before it is closed (default 120 s; 1 s to 1 h).
    pub idle_timeout: Option<Duration>,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("listen", &self.listen)
            .field(
                "server_tokens",
                &format_args!("[{} redacted]", self.server_tokens.len()),
            )
            .field(
                "viewer_tokens",
                &format_args!("[{} redacted]", self.viewer_tokens.len()),
            )
            .field(
                "admin_tokens",
                &format_args!("[{} redacted]", self.admin_tokens.len()),
            )
            .field("body_limit", &self.body_limit)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// Shortest token `leaguekit serve` accepts, in bytes.
pub const MIN_TOKEN_LEN: usize = 16;
/// Longest token `leaguekit serve` accepts, in bytes.
pub const MAX_TOKEN_LEN: usize = 256;

/// Checks an API token: 16-256 characters from `A-Z a-z 0-9 . _ ~ + / = -` (what
/// `openssl rand -base64 32` or `-hex 32` prints), so it fits an `Authorization`
/// header and a cookie unchanged. The error says what is wrong without the token.
pub fn validate_token(token: &str) -> Result<(), String> {
    let (name, token) = split_named(token);
    if let Some(name) = name {
        let ok = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
        if name.is_empty() || name.len() > 64 || !name.chars().all(ok) {
            return Err(
                "a token's name (before ':') must have 1-64 characters from A-Z a-z 0-9 . _ -"
                    .to_owned(),
            );
        }
    }
    const RULE: &str = "use 16-256 characters from A-Z a-z 0-9 . _ ~ + / = - \
                        (for example the output of `openssl rand -hex 32`)";
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "a token of {} characters is too short to be secret; {RULE}",
            token.chars().count()
        ));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(format!(
            "a token of {} characters is too long; {RULE}",
            token.chars().count()
        ));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || "._~+/=-".contains(c);
    if let Some(bad) = token.chars().find(|c| !ok(*c)) {
        let shown = if bad.is_control() || bad.is_whitespace() {
            format!("{bad:?}")
        } else {
            format!("'{bad}'")
        };
        return Err(format!(
            "a token contains {shown}, which is not allowed; {RULE}"
        ));
    }
    Ok(())
}

/// A configured token as `(name, token)`: `NAME:TOKEN` names it (a token never holds
/// ':'), a bare token has no name.
pub fn split_named(entry: &str) -> (Option<&str>, &str) {
    match entry.split_once(':') {
        Some((name, token)) => (Some(name), token),
        None => (None, entry),
    }
}

/// `[server]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    listen: Option<Spanned<String>>,
    server_tokens: Option<Vec<Spanned<String>>>,
    viewer_tokens: Option<Vec<Spanned<String>>>,
    admin_tokens: Option<Vec<Spanned<String>>>,
    body_limit: Option<Spanned<i64>>,
    request_timeout: Option<Spanned<String>>,
    idle_timeout: Option<Spanned<String>>,
}

/// `[server]`, or the defaults when the section is absent.
pub(super) fn parse(src: &Src<'_>, raw: Option<&RawServer>) -> Result<ServerConfig, ConfigError> {
    raw.map_or(Ok(ServerConfig::default()), |r| src.server(r))
}

impl Src<'_> {
    fn server(&self, raw: &RawServer) -> Result<ServerConfig, ConfigError> {
        let mut s = ServerConfig::default();
        if let Some(v) = &raw.listen {
            let text = v.get_ref().trim();
            s.listen = Some(text.parse().map_err(|_| {
                self.at(
                    v.span(),
                    format!(
                        "server.listen = {text:?} is not an address; write IP:PORT, such as \
                         \"127.0.0.1:8080\" (this machine only) or \"0.0.0.0:8080\" (every \
                         interface)"
                    ),
                )
            })?);
        }
        for (key, raw_list, out) in [
            (
                "server.server_tokens",
                &raw.server_tokens,
                &mut s.server_tokens,
            ),
            (
                "server.viewer_tokens",
                &raw.viewer_tokens,
                &mut s.viewer_tokens,
            ),
            (
                "server.admin_tokens",
                &raw.admin_tokens,
                &mut s.admin_tokens,
            ),
        ] {
            for t in raw_list.iter().flatten() {
                validate_token(t.get_ref())
                    .map_err(|m| self.at(t.span(), format!("{key}: {m}")))?;
                out.push(t.get_ref().clone());
            }
        }
        if let Some(v) = &raw.body_limit {
            let bytes = self.int_in(v, "server.body_limit", 1024, 64 << 20)?;
            s.body_limit = usize::try_from(bytes).ok();
        }
        for (key, raw_value, out, most) in [
            (
                "server.request_timeout",
                &raw.request_timeout,
                &mut s.request_timeout,
                Duration::from_secs(600),
            ),
            (
                "server.idle_timeout",
                &raw.idle_timeout,
                &mut s.idle_timeout,
                Duration::from_secs(3600),
            ),
        ] {
            if let Some(v) = raw_value {
                *out = Some(
                    parse_duration(v.get_ref(), Duration::from_secs(1), most)
                        .map_err(|m| self.at(v.span(), format!("{key}: {m}")))?,
                );
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_without_echo() {
        assert!(validate_token("0123456789abcdef").is_ok());
        assert!(validate_token("a/b+c=d~e.f_g-h0123").is_ok());
        let short = validate_token("0123456789abcde").expect_err("15 bytes");
        assert!(short.contains("too short"), "{short}");
        let long = validate_token(&"a".repeat(257)).expect_err("257 bytes");
        assert!(long.contains("too long"), "{long}");
        let spaced = validate_token("secret token with spaces").expect_err("space");
        assert!(spaced.contains("' '"), "{spaced}");
        assert!(!spaced.contains("secret"), "{spaced}");
        let tab = validate_token("0123456789\tabcdef").expect_err("tab");
        assert!(tab.contains("'\\t'"), "{tab}");
    }

    #[test]
    fn debug_hides_tokens() {
        let c = ServerConfig {
            server_tokens: vec!["server-secret-0123456789".into()],
            viewer_tokens: vec!["viewer-secret-0123456789".into(), "x".repeat(16)],
            ..ServerConfig::default()
        };
        let shown = format!("{c:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(
            shown.contains("[1 redacted]") && shown.contains("[2 redacted]"),
            "{shown}"
        );
    }
}
