//! Why a Redis URL cannot be used ([`UrlError`]) and why a connection could not be
//! opened ([`ConnectError`], classified from what redis-rs and the server reported),
//! each with what to check; no message contains the password.
//!
//! A workaround of redis-rs 1.8.1: a TLS failure is recognised by rustls's wording
//! ([`tls_hint`]). redis-rs wraps the handshake's `io::Error` (whose inner error is
//! rustls's typed `rustls::Error`) in an `Arc`, and `RedisError::source()` hands out
//! the `Arc` itself, so `downcast_ref::<std::io::Error>()` on it fails and the typed
//! error cannot be reached (`errors/redis_error.rs`: `ErrorRepr::Internal`; its
//! accessor `as_io_error` is crate-private). Reproduction: connect with `rediss://` to
//! a server whose CA is not trusted; the error's kind is `Io` and only its text says
//! `invalid peer certificate: UnknownIssuer`. Removal: when redis-rs exposes the I/O
//! error (a public `as_io_error`, or a `source()` that is the `io::Error`), match
//! `rustls::Error` and `CertificateError` instead of text.

use std::path::PathBuf;
use std::time::Duration;

use redis::{ErrorKind, RedisError};

use super::url::FORMS;
use super::*;
use crate::error::{ErrorSource, StoreError};

// ---------------------------------------------------------------------------------
// Errors while connecting

/// Why a connection to Redis could not be opened. Each message says where leaguekit
/// tried to connect, what failed and what to check; none contains the password.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URL cannot be used.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The options do not fit the URL (such as a CA file for a plaintext URL).
    #[error("{0}")]
    Options(String),
    /// A certificate, key or CA file could not be read or is not usable PEM.
    #[error("cannot use the {what} {path}: {why}")]
    TlsFile {
        /// `CA file`, `client certificate` or `client key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        why: String,
    },
    /// No trusted root certificate at all: the system store is empty or unreadable and
    /// no CA file was given.
    #[error(
        "no trusted root certificates for TLS: the system store gave none ({why}); \
         install the ca-certificates package, point SSL_CERT_FILE at a PEM bundle, \
         or pass the server's CA with RedisOptions::with_ca_file"
    )]
    NoRoots {
        /// What loading the system store reported.
        why: String,
    },
    /// The server refused the user name or password.
    #[error(
        "Redis at {target} refused to log in {who}: {source}; check the user name and password \
         in the URL (user:password@host, percent-encoded: @ is %40, : is %3A, % is %25) and \
         that the ACL user exists and is enabled (ACL LIST)"
    )]
    Auth {
        /// Where.
        target: String,
        /// `as user "x"`, `as the default user`, or `without credentials`.
        who: String,
        /// The server's answer.
        #[source]
        source: RedisError,
    },
    /// The TLS handshake failed.
    #[error("TLS handshake with Redis at {target} failed: {source}; {hint}")]
    Tls {
        /// Where.
        target: String,
        /// What to check, from what the handshake reported.
        hint: &'static str,
        /// The handshake's error.
        #[source]
        source: RedisError,
    },
    /// No server answered within the connection timeout and reconnection retries.
    #[error(
        "cannot reach Redis at {target} ({attempts} attempt(s) in {elapsed:.1?}): {source}; \
         check the host and port, that Redis is running and that the network lets you \
         through{hint}; raise RedisOptions::connection_timeout or reconnect_retries to wait \
         longer"
    )]
    Unreachable {
        /// Where.
        target: String,
        /// What else to check, from the URL's scheme (TLS or not).
        hint: &'static str,
        /// How many connection attempts were made (to the node that got furthest).
        attempts: u32,
        /// How long connecting took in all.
        elapsed: Duration,
        /// The last attempt's error.
        #[source]
        source: RedisError,
    },
    /// The server is older than leaguekit needs.
    #[error(
        "Redis at {target} is version {version}; leaguekit needs Redis 7.0 or later (or Valkey), \
         whose SET takes NX and GET together: upgrade the server"
    )]
    Version {
        /// Where.
        target: String,
        /// The version the server reported (INFO server, `redis_version`).
        version: String,
    },
    /// The server's `maxmemory-policy` evicts keys, and
    /// [`RedisOptions::allow_evicting_policy`] is off.
    #[error(
        "Redis at {target} has maxmemory-policy {policy}, which deletes keys when memory is \
         full: leaguekit would silently lose league data (the season's closed periods, \
         players' tiers, request ids, bracket counters), and nearly all its keys have an \
         expiry, so volatile-* policies evict them too. Set maxmemory-policy noeviction \
         (CONFIG SET maxmemory-policy noeviction, and in redis.conf): a full Redis then \
         refuses writes with an error and reads keep working. To run anyway, where losing \
         league data is acceptable, pass --allow-evicting-redis (LEAGUEKIT_ALLOW_EVICTING_REDIS=1) \
         or RedisOptions::with_allow_evicting_policy(true)"
    )]
    EvictingPolicy {
        /// Where (the node, on a cluster).
        target: String,
        /// The policy the server reported.
        policy: String,
    },
    /// The server answered, but not as leaguekit needs (wrong mode, missing permission).
    #[error("Redis at {target} refused the connection set-up: {source}{hint}")]
    Refused {
        /// Where.
        target: String,
        /// What to check, when something specific is known.
        hint: &'static str,
        /// The server's answer.
        #[source]
        source: RedisError,
    },
}

/// A connection that could not be opened, as the store reports it
/// ([`StoreError::Connect`], whose [`ErrorSource::downcast_ref`] gives this error back).
impl From<ConnectError> for StoreError {
    fn from(err: ConnectError) -> StoreError {
        StoreError::Connect(ErrorSource::new(err))
    }
}

impl ConnectError {
    /// The connection error `e` reports, when it is one ([`StoreError::Connect`]).
    pub fn of(e: &StoreError) -> Option<&ConnectError> {
        match e {
            StoreError::Connect(source) => source.downcast_ref(),
            _ => None,
        }
    }
}

/// What one failed connection attempt means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Wrong password, unknown user, or no credentials where some are needed.
    Auth,
    /// The TLS handshake failed; the hint says what to check.
    Tls(&'static str),
    /// Nothing answered (refused, timed out, name not resolved): worth another attempt.
    Unreachable,
    /// Anything else the server or redis-rs said; the hint may say what to check.
    Refused(&'static str),
}

/// Classifies a connection error. redis-rs keeps rustls's error only as text (inside an
/// `io::Error` it does not expose), so TLS failures are recognised by rustls's wording.
pub(crate) fn classify(err: &RedisError) -> Failure {
    let text = err.to_string();
    let code = err.code().unwrap_or("");
    if err.kind() == ErrorKind::AuthenticationFailed
        || matches!(code, "WRONGPASS" | "NOAUTH")
        || text.contains("WRONGPASS")
        || text.contains("NOAUTH")
        || text.contains("authentication failed")
        || text.contains("Password authentication failed")
    {
        return Failure::Auth;
    }
    if let Some(hint) = tls_hint(&text) {
        return Failure::Tls(hint);
    }
    if err.kind() == ErrorKind::InvalidClientConfig {
        return Failure::Refused("");
    }
    if text.contains("cluster support disabled") {
        return Failure::Refused(
            "; the server is not a Redis Cluster node: use redis:// or rediss:// for a single server",
        );
    }
    if code == "NOPERM" || text.contains("NOPERM") {
        return Failure::Refused(
            "; the ACL user may not run a command leaguekit needs: grant it at least \
             +@read +@write +@scripting +ping +info (and +cluster for Redis Cluster)",
        );
    }
    if code == "CLUSTERDOWN" || text.contains("CLUSTERDOWN") {
        return Failure::Refused(
            "; the cluster is down (slots unassigned or a master failed): check CLUSTER INFO",
        );
    }
    if err.is_io_error() || err.is_timeout() || err.is_connection_refusal() {
        return Failure::Unreachable;
    }
    Failure::Refused("")
}

/// What to check after a TLS failure, or `None` when `text` is no TLS error.
pub(crate) fn tls_hint(text: &str) -> Option<&'static str> {
    const UNKNOWN_CA: &str = "the server's certificate is not signed by a CA this process \
         trusts: pass the CA's PEM file with RedisOptions::with_ca_file, or point \
         SSL_CERT_FILE at it (the --redis command line honours SSL_CERT_FILE)";
    if text.contains("UnknownIssuer") || text.contains("unknown issuer") {
        return Some(UNKNOWN_CA);
    }
    if text.contains("NotValidForName") || text.contains("not valid for name") {
        return Some(
            "the server's certificate does not name the host in the URL: connect with a host \
             name or IP address that the certificate lists",
        );
    }
    if text.contains("Expired") || text.contains("NotValidYet") {
        return Some(
            "the server's certificate is expired or not yet valid: check it and the clocks",
        );
    }
    if text.contains("CertificateRequired")
        || text.contains("peer sent no certificates")
        || text.contains("alert: HandshakeFailure")
        || text.contains("BadCertificate")
        || text.contains("UnknownCA")
    {
        return Some(
            "the server refused this client: it may require a client certificate \
             (RedisOptions::with_client_cert) signed by a CA it trusts",
        );
    }
    if text.contains("corrupt message") || text.contains("InvalidContentType") {
        return Some(
            "the server does not speak TLS on this port: use redis:// for a plaintext \
             server, or the server's tls-port",
        );
    }
    if text.contains("invalid peer certificate") {
        return Some(UNKNOWN_CA);
    }
    if text.contains("received fatal alert") || text.contains("peer is incompatible") {
        return Some(
            "the server refused the handshake: check that its TLS versions and ciphers \
             include TLS 1.2 or 1.3, and whether it requires a client certificate",
        );
    }
    None
}

/// `as user "x"` / `as the default user` / `without credentials`, for messages.
pub(crate) fn who(url: &RedisUrl) -> String {
    match (url.username(), url.has_password()) {
        (Some(user), _) => format!("as user {user:?}"),
        (None, true) => "as the default user".to_owned(),
        (None, false) => "without credentials (the server needs a user name and password: \
             user:password@host in the URL)"
            .to_owned(),
    }
}

pub(crate) fn connect_error(
    url: &RedisUrl,
    target: String,
    err: RedisError,
    attempts: u32,
    elapsed: Duration,
) -> ConnectError {
    match classify(&err) {
        Failure::Auth => ConnectError::Auth {
            target,
            who: who(url),
            source: err,
        },
        Failure::Tls(hint) => ConnectError::Tls {
            target,
            hint,
            source: err,
        },
        Failure::Unreachable => ConnectError::Unreachable {
            target,
            hint: if !url.scheme().is_tls() {
                "; a server that only speaks TLS needs rediss:// (it closes plaintext \
                 connections)"
            } else if err.is_timeout() {
                "; a TLS handshake that gets no answer usually means the port speaks \
                 plaintext: use redis://"
            } else {
                ""
            },
            attempts,
            elapsed,
            source: err,
        },
        Failure::Refused(hint) => ConnectError::Refused {
            target,
            hint,
            source: err,
        },
    }
}

/// A Redis URL that cannot be used. The message says what is wrong and how to write
/// it; it never contains the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Nothing was given.
    #[error("the Redis URL is empty; use {FORMS}")]
    Empty,
    /// No `scheme://` at the start.
    #[error("the Redis URL does not start with a scheme such as redis://; use {FORMS}")]
    MissingScheme,
    /// A scheme leaguekit does not know.
    #[error("unknown Redis URL scheme {scheme:?}; use {FORMS}")]
    UnknownScheme {
        /// The scheme as written.
        scheme: String,
    },
    /// No host after the scheme (and the credentials).
    #[error("the Redis URL has no host; use {FORMS}")]
    MissingHost,
    /// An empty entry in the host list (such as `a:1,,b:2`).
    #[error("host {position} of the Redis URL is empty; separate hosts with single commas")]
    EmptyHost {
        /// The 1-based position of the entry.
        position: usize,
    },
    /// A host that is not a host name or an IP address.
    #[error("invalid host {host:?} in the Redis URL: {why}")]
    BadHost {
        /// The host as written.
        host: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A host redis-rs refuses to connect to (such as a wildcard address, 0.0.0.0).
    #[error(
        "cannot connect to host {host:?} of the Redis URL: {why}; name the server's own address"
    )]
    Unusable {
        /// The host as written.
        host: String,
        /// What redis-rs said.
        why: String,
    },
    /// A port that is not a number in 1..=65535.
    #[error(
        "invalid port {port:?} for host {host:?} in the Redis URL; use a number from 1 to 65535"
    )]
    BadPort {
        /// The host the port belongs to.
        host: String,
        /// The port as written.
        port: String,
    },
    /// Several hosts in a single-server URL.
    #[error(
        "a {scheme}:// URL names one server, but several hosts were given; \
         for a Redis Cluster use {scheme}+cluster://host:port,host:port"
    )]
    SeveralHosts {
        /// The single-server scheme that was used.
        scheme: Scheme,
    },
    /// A database path that is not `/N`.
    #[error("invalid database {path:?} in the Redis URL; write /N with N a number, such as /0")]
    BadDatabase {
        /// The path as written.
        path: String,
    },
    /// A database other than 0 in a cluster URL.
    #[error("Redis Cluster has only database 0, but the URL asks for /{db}; remove it")]
    ClusterDatabase {
        /// The database asked for.
        db: i64,
    },
    /// `user@host`: a user name without a password.
    #[error(
        "the Redis URL has a user name but no password; write user:password@host \
         (or :password@host for the default user)"
    )]
    UserWithoutPassword,
    /// A `%` not followed by two hex digits.
    #[error(
        "the {part} in the Redis URL has a '%' that is not followed by two hex digits; write a literal % as %25"
    )]
    BadEscape {
        /// Which part (`user name`, `password`, `socket path`).
        part: &'static str,
    },
    /// Percent-decoding gave bytes that are not UTF-8.
    #[error("the {part} in the Redis URL is not UTF-8 once percent-decoded")]
    NotUtf8 {
        /// Which part.
        part: &'static str,
    },
    /// A `?name=value` parameter leaguekit does not know.
    #[error("unknown parameter {name:?} in the Redis URL; known parameters: {known}")]
    UnknownParameter {
        /// The parameter's name.
        name: String,
        /// The parameters this form accepts.
        known: &'static str,
    },
    /// A parameter with a value that cannot be used.
    #[error("invalid value for {name:?} in the Redis URL: {why}")]
    BadParameter {
        /// The parameter's name.
        name: String,
        /// What to write instead.
        why: &'static str,
    },
    /// A `#fragment`, such as redis-rs's `#insecure`.
    #[error(
        "the Redis URL has a #fragment; leaguekit supports none (it always verifies TLS \
         certificates: trust a private CA with RedisOptions::with_ca_file or SSL_CERT_FILE). \
         If the # is part of the password, write it as %23"
    )]
    Fragment,
    /// A unix URL without an absolute socket path.
    #[error("a unix:// Redis URL needs an absolute socket path, such as unix:///run/redis.sock")]
    BadSocket,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn errors_are_classified() {
        let auth: RedisError = (
            ErrorKind::AuthenticationFailed,
            "Password authentication failed",
        )
            .into();
        assert_eq!(classify(&auth), Failure::Auth);
        let refused: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into();
        assert_eq!(classify(&refused), Failure::Unreachable);
        let tls: RedisError = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "invalid peer certificate: UnknownIssuer",
        )
        .into();
        assert!(matches!(classify(&tls), Failure::Tls(h) if h.contains("with_ca_file")));
        let plain: RedisError = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "received corrupt message of type InvalidContentType",
        )
        .into();
        assert!(matches!(classify(&plain), Failure::Tls(h) if h.contains("redis://")));
    }
}
