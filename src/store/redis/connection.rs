//! How leaguekit reaches Redis: URLs, TLS, and the connection that commands run on.
//!
//! This module owns everything between a URL string and a connection that can run
//! commands, scripts and pipelines; [`crate::redis_store`] only decides what to send
//! and when a failed command may be sent again.
//!
//! - [`RedisUrl`] parses the URL forms (`redis://`, `rediss://`, `redis+cluster://`,
//!   `rediss+cluster://`, and unix sockets). redis-rs parses neither cluster URLs nor
//!   host lists, so the parsing is ours; a bad URL is a [`UrlError`] that says what is
//!   wrong and never repeats the password.
//! - TLS uses redis-rs's rustls backend. The trusted roots are the system's (read by
//!   `rustls-native-certs`, which honours `SSL_CERT_FILE` and `SSL_CERT_DIR` as
//!   OpenSSL does) plus an optional CA file for a private CA; a client certificate
//!   and key give mutual TLS. A rustls crypto provider (ring) is installed once, before
//!   the first connection, because redis-rs 1.x brings none of its own.
//! - [`RedisConnection`] is a single node's [`ConnectionManager`] or a Redis Cluster
//!   [`ClusterConnection`], behind redis-rs's own [`redis::aio::ConnectionLike`], so
//!   script invocations, commands and pipelines run on either unchanged.
//! - Connecting first checks each node with one plain connection and a PING, so that
//!   a wrong password, a refused certificate or a server in the wrong mode is a
//!   [`ConnectError`] on the first answer rather than after the connection manager's
//!   reconnection loop; only an unreachable server is tried again.

use std::fmt;
use std::future::Future;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Once;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures::stream::{FuturesUnordered, StreamExt};
use percent_encoding::percent_decode_str;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{
    AsyncConnectionConfig, ClientTlsConfig, Cmd, ConnectionAddr, ConnectionInfo, ErrorKind,
    IntoConnectionInfo, Pipeline, ProtocolVersion, RedisConnectionInfo, RedisError, RedisFuture,
    TlsCertificates, Value,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::store::redis::RedisOptions;

/// The port a URL without one means (Redis's own default).
pub const DEFAULT_PORT: u16 = 6379;

/// The URL forms, for error messages.
const FORMS: &str = "redis://[user:password@]host[:port][/db], \
     rediss://[user:password@]host[:port][/db] (TLS), \
     redis+cluster://[user:password@]host:port,host:port,... (Redis Cluster), \
     rediss+cluster://[user:password@]host:port,... (Redis Cluster over TLS), \
     or unix:///path/to/redis.sock";

// ---------------------------------------------------------------------------------
// URLs

/// The kind of deployment a [`RedisUrl`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scheme {
    /// `redis://`: one server, plaintext.
    Redis,
    /// `rediss://`: one server over TLS.
    Rediss,
    /// `redis+cluster://`: a Redis Cluster, plaintext; the hosts are seed nodes.
    RedisCluster,
    /// `rediss+cluster://`: a Redis Cluster over TLS.
    RedissCluster,
    /// `unix://` or `redis+unix://`: one server on a unix socket.
    Unix,
}

impl Scheme {
    /// Whether connections use TLS.
    pub fn is_tls(self) -> bool {
        matches!(self, Scheme::Rediss | Scheme::RedissCluster)
    }

    /// Whether the URL names a Redis Cluster.
    pub fn is_cluster(self) -> bool {
        matches!(self, Scheme::RedisCluster | Scheme::RedissCluster)
    }

    /// The scheme as written in a URL (`unix` for both unix forms).
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Redis => "redis",
            Scheme::Rediss => "rediss",
            Scheme::RedisCluster => "redis+cluster",
            Scheme::RedissCluster => "rediss+cluster",
            Scheme::Unix => "unix",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `host:port` of a URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct NodeAddr {
    /// A host name or an IP address (IPv6 without its brackets).
    pub host: String,
    /// The TCP port.
    pub port: u16,
}

impl NodeAddr {
    /// A node address.
    pub fn new(host: impl Into<String>, port: u16) -> NodeAddr {
        NodeAddr {
            host: host.into(),
            port,
        }
    }
}

impl fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// A parsed Redis URL: where the server or cluster is, and how to log in.
///
/// ```
/// use leaguekit::connection::{RedisUrl, Scheme};
///
/// let url: RedisUrl = "rediss+cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2:7000"
///     .parse()
///     .unwrap();
/// assert_eq!(url.scheme(), Scheme::RedissCluster);
/// assert_eq!(url.nodes().len(), 2);
/// assert_eq!(url.username(), Some("app"));
/// assert!(url.has_password());
/// // Neither Display nor Debug shows the password.
/// assert_eq!(url.to_string(), "rediss+cluster://app:***@10.0.0.1:7000,10.0.0.2:7000/");
/// ```
///
/// The forms:
///
/// - `redis://[user:password@]host[:port][/db]`: one server (port 6379 by default,
///   database 0 by default);
/// - `rediss://...`: the same over TLS;
/// - `redis+cluster://[user:password@]host:port,host:port,...`: a Redis Cluster; the
///   hosts are seeds (one reachable seed is enough) and there is no database;
/// - `rediss+cluster://...`: a Redis Cluster over TLS;
/// - `unix:///path/to/socket[?db=N&user=U&pass=P]` (or `redis+unix://`).
///
/// `user:password@` logs in as an ACL user; `:password@` as the default user. Both are
/// percent-decoded, so a password with `@`, `:`, `/` or `%` is written `%40`, `%3A`,
/// `%2F`, `%25` (an unescaped `@` or `/` in the password also works: the credentials
/// end at the last `@`). `?protocol=resp3` selects RESP3.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisUrl {
    scheme: Scheme,
    nodes: Vec<NodeAddr>,
    socket: Option<PathBuf>,
    username: Option<String>,
    password: Option<String>,
    db: i64,
    resp3: bool,
}

impl RedisUrl {
    /// Parses `input`; see the type's documentation for the forms.
    pub fn parse(input: &str) -> Result<RedisUrl, UrlError> {
        let input = input.trim();
        if input.is_empty() {
            return Err(UrlError::Empty);
        }
        let Some((scheme_text, rest)) = input.split_once("://") else {
            return Err(UrlError::MissingScheme);
        };
        // Only a well-formed scheme is repeated in an error: text before "://" that
        // is not one could be anything, a password included.
        let well_formed = !scheme_text.is_empty()
            && scheme_text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !well_formed {
            return Err(UrlError::MissingScheme);
        }
        let scheme = match scheme_text.to_ascii_lowercase().as_str() {
            "redis" => Scheme::Redis,
            "rediss" => Scheme::Rediss,
            "redis+cluster" => Scheme::RedisCluster,
            "rediss+cluster" => Scheme::RedissCluster,
            "unix" | "redis+unix" => return parse_unix(rest),
            _ => {
                return Err(UrlError::UnknownScheme {
                    scheme: scheme_text.to_owned(),
                });
            }
        };
        // The credentials end at the last '@': a password may hold an unescaped '@',
        // '/', '?' or '#', and none of that may end up in a host, a path or an error.
        let (userinfo, rest) = match rest.rfind('@') {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (username, password) = match userinfo {
            None => (None, None),
            Some(info) => parse_userinfo(info)?,
        };
        if rest.contains('#') {
            return Err(UrlError::Fragment);
        }
        let (before_query, query) = match rest.split_once('?') {
            Some((before, query)) => (before, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = match before_query.find('/') {
            Some(slash) => (&before_query[..slash], &before_query[slash..]),
            None => (before_query, ""),
        };
        if authority.is_empty() {
            return Err(UrlError::MissingHost);
        }
        let nodes = authority
            .split(',')
            .enumerate()
            .map(|(i, text)| parse_node(text, i + 1))
            .collect::<Result<Vec<_>, _>>()?;
        if !scheme.is_cluster() && nodes.len() > 1 {
            return Err(UrlError::SeveralHosts { scheme });
        }
        let db = parse_db(path, scheme)?;
        let mut url = RedisUrl {
            scheme,
            nodes,
            socket: None,
            username,
            password,
            db,
            resp3: false,
        };
        for (name, value) in query_pairs(query) {
            match name {
                "protocol" => url.resp3 = parse_protocol(value)?,
                "" => {}
                other => {
                    return Err(UrlError::UnknownParameter {
                        name: other.to_owned(),
                        known: "protocol",
                    });
                }
            }
        }
        Ok(url)
    }

    /// What the URL names.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The server (one) or the cluster's seed nodes; empty for a unix socket.
    pub fn nodes(&self) -> &[NodeAddr] {
        &self.nodes
    }

    /// The unix socket, for `unix://` URLs.
    pub fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// The ACL user to log in as, if any (`None` with a password is the default user).
    pub fn username(&self) -> Option<&str> {
        self.username.as_deref()
    }

    /// Whether the URL carries a password (which no accessor, `Display` or `Debug` shows).
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }

    /// The database number (always 0 for a cluster).
    pub fn db(&self) -> i64 {
        self.db
    }

    /// Whether `?protocol=resp3` was given.
    pub fn resp3(&self) -> bool {
        self.resp3
    }

    /// Where this URL points, for messages: `host:port`, the seed list, or the socket.
    pub fn target(&self) -> String {
        if let Some(socket) = &self.socket {
            return socket.display().to_string();
        }
        let nodes: Vec<String> = self.nodes.iter().map(NodeAddr::to_string).collect();
        if self.scheme.is_cluster() {
            format!("the Redis Cluster seeds {}", nodes.join(", "))
        } else {
            nodes.join(", ")
        }
    }

    /// The redis-rs connection settings of one node (or of the socket).
    fn connection_info(&self, node: Option<&NodeAddr>) -> redis::RedisResult<ConnectionInfo> {
        let addr = match (node, &self.socket) {
            (Some(node), _) if self.scheme.is_tls() => ConnectionAddr::TcpTls {
                host: node.host.clone(),
                port: node.port,
                // Certificates and host names are always verified.
                insecure: false,
                tls_params: None,
            },
            (Some(node), _) => ConnectionAddr::Tcp(node.host.clone(), node.port),
            (None, Some(socket)) => ConnectionAddr::Unix(socket.clone()),
            // A parsed URL always has a node or a socket.
            (None, None) => return Err((ErrorKind::InvalidClientConfig, "no host").into()),
        };
        let mut redis = RedisConnectionInfo::default().set_db(self.db);
        if self.resp3 {
            redis = redis.set_protocol(ProtocolVersion::RESP3);
        }
        if let Some(user) = &self.username {
            redis = redis.set_username(user);
        }
        if let Some(password) = &self.password {
            redis = redis.set_password(password);
        }
        Ok(addr.into_connection_info()?.set_redis_settings(redis))
    }
}

impl FromStr for RedisUrl {
    type Err = UrlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RedisUrl::parse(s)
    }
}

impl fmt::Display for RedisUrl {
    /// The URL with the password replaced by `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(socket) = &self.socket {
            write!(f, "unix://{}", socket.display())?;
            let mut sep = '?';
            if self.db != 0 {
                write!(f, "{sep}db={}", self.db)?;
                sep = '&';
            }
            if let Some(user) = &self.username {
                write!(f, "{sep}user={user}")?;
                sep = '&';
            }
            if self.password.is_some() {
                write!(f, "{sep}pass=***")?;
                sep = '&';
            }
            if self.resp3 {
                write!(f, "{sep}protocol=resp3")?;
            }
            return Ok(());
        }
        write!(f, "{}://", self.scheme)?;
        match (&self.username, &self.password) {
            (Some(user), Some(_)) => write!(f, "{user}:***@")?,
            (Some(user), None) => write!(f, "{user}@")?,
            (None, Some(_)) => write!(f, ":***@")?,
            (None, None) => {}
        }
        let nodes: Vec<String> = self.nodes.iter().map(NodeAddr::to_string).collect();
        write!(f, "{}/", nodes.join(","))?;
        if self.db != 0 {
            write!(f, "{}", self.db)?;
        }
        if self.resp3 {
            write!(f, "?protocol=resp3")?;
        }
        Ok(())
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisUrl")
            .field("scheme", &self.scheme)
            .field("nodes", &self.nodes)
            .field("socket", &self.socket)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("db", &self.db)
            .field("resp3", &self.resp3)
            .finish()
    }
}

/// `user:password` or `:password`, percent-decoded.
fn parse_userinfo(info: &str) -> Result<(Option<String>, Option<String>), UrlError> {
    let Some((user, password)) = info.split_once(':') else {
        if info.is_empty() {
            // "redis://@host": nothing given.
            return Ok((None, None));
        }
        // redis-rs would connect without logging in at all: refuse instead.
        return Err(UrlError::UserWithoutPassword);
    };
    let user = decode(user, "user name")?;
    let password = decode(password, "password")?;
    Ok(match (user.is_empty(), password.is_empty()) {
        (true, true) => (None, None),
        (true, false) => (None, Some(password)),
        (false, _) => (Some(user), Some(password)),
    })
}

/// Percent-decodes `text`; `part` names it in errors, which never show the text.
fn decode(text: &str, part: &'static str) -> Result<String, UrlError> {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit())
        {
            return Err(UrlError::BadEscape { part });
        }
    }
    percent_decode_str(text)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| UrlError::NotUtf8 { part })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; `position` is 1-based, for errors.
fn parse_node(text: &str, position: usize) -> Result<NodeAddr, UrlError> {
    if text.is_empty() {
        return Err(UrlError::EmptyHost { position });
    }
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        let Some((v6, after)) = inner.split_once(']') else {
            return Err(UrlError::BadHost {
                host: text.to_owned(),
                why: "an IPv6 address needs its closing ']'",
            });
        };
        if v6.parse::<Ipv6Addr>().is_err() {
            return Err(UrlError::BadHost {
                host: text.to_owned(),
                why: "not an IPv6 address",
            });
        }
        let port = match after {
            "" => None,
            p => match p.strip_prefix(':') {
                Some(port) => Some(port),
                None => {
                    return Err(UrlError::BadHost {
                        host: text.to_owned(),
                        why: "expected ':port' after ']'",
                    });
                }
            },
        };
        (v6.to_owned(), port)
    } else {
        let (host, port) = match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        };
        if port.is_some_and(|p| p.contains(':')) {
            return Err(UrlError::BadHost {
                host: text.to_owned(),
                why: "write IPv6 addresses in brackets, e.g. [::1]:6379",
            });
        }
        if host.is_empty() {
            return Err(UrlError::EmptyHost { position });
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        {
            return Err(UrlError::BadHost {
                host: host.to_owned(),
                why: "a host name has only letters, digits, '.', '-' and '_'",
            });
        }
        (host.to_owned(), port)
    };
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(port) if port > 0 && p.bytes().all(|b| b.is_ascii_digit()) => port,
            _ => {
                return Err(UrlError::BadPort {
                    host,
                    port: p.to_owned(),
                });
            }
        },
    };
    Ok(NodeAddr { host, port })
}

/// `""`, `"/"` or `"/N"`; a cluster has only database 0.
fn parse_db(path: &str, scheme: Scheme) -> Result<i64, UrlError> {
    let digits = path.strip_prefix('/').unwrap_or(path);
    if digits.is_empty() {
        return Ok(0);
    }
    let db = match digits.parse::<i64>() {
        Ok(db) if db >= 0 && digits.bytes().all(|b| b.is_ascii_digit()) => db,
        _ => {
            return Err(UrlError::BadDatabase {
                path: path.to_owned(),
            });
        }
    };
    if scheme.is_cluster() && db != 0 {
        return Err(UrlError::ClusterDatabase { db });
    }
    Ok(db)
}

/// `resp2`/`2` or `resp3`/`3`.
fn parse_protocol(value: &str) -> Result<bool, UrlError> {
    match value.to_ascii_lowercase().as_str() {
        "resp3" | "3" => Ok(true),
        "resp2" | "2" => Ok(false),
        _ => Err(UrlError::BadParameter {
            name: "protocol".into(),
            why: "use protocol=resp2 or protocol=resp3",
        }),
    }
}

/// `a=b&c=d` as raw pairs (values are decoded where they are used).
fn query_pairs(query: Option<&str>) -> impl Iterator<Item = (&str, &str)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
}

/// `unix:///path[?db=N&user=U&pass=P&protocol=resp3]`, the forms redis-rs accepts.
fn parse_unix(rest: &str) -> Result<RedisUrl, UrlError> {
    // The query may hold a password; split at the first '?' (a socket path has none).
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    if !path.starts_with('/') || path.len() < 2 {
        return Err(UrlError::BadSocket);
    }
    let path = decode(path, "socket path")?;
    let mut url = RedisUrl {
        scheme: Scheme::Unix,
        nodes: Vec::new(),
        socket: Some(PathBuf::from(path)),
        username: None,
        password: None,
        db: 0,
        resp3: false,
    };
    for (name, value) in query_pairs(query) {
        match name {
            "db" => url.db = parse_db(value, Scheme::Unix)?,
            "user" => url.username = Some(decode(value, "user name")?),
            "pass" | "password" => url.password = Some(decode(value, "password")?),
            "protocol" => url.resp3 = parse_protocol(value)?,
            other => {
                return Err(UrlError::UnknownParameter {
                    name: other.to_owned(),
                    known: "db, user, pass, protocol",
                });
            }
        }
    }
    if url.username.is_some() && url.password.is_none() {
        return Err(UrlError::UserWithoutPassword);
    }
    Ok(url)
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

/// What one failed connection attempt means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
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
fn classify(err: &RedisError) -> Failure {
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
fn tls_hint(text: &str) -> Option<&'static str> {
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
fn who(url: &RedisUrl) -> String {
    match (&url.username, url.has_password()) {
        (Some(user), _) => format!("as user {user:?}"),
        (None, true) => "as the default user".to_owned(),
        (None, false) => "without credentials (the server needs a user name and password: \
             user:password@host in the URL)"
            .to_owned(),
    }
}

fn connect_error(
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
            hint: if !url.scheme.is_tls() {
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

// ---------------------------------------------------------------------------------
// TLS

/// Installs ring as rustls's process-wide crypto provider, once. redis-rs 1.x builds
/// its rustls configuration with the process default and brings no provider of its
/// own; if the application installed one first (aws-lc-rs, say), that one stays.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::ring::default_provider()
            .install_default()
            .is_err()
        {
            tracing::debug!("a rustls crypto provider was already installed; keeping it");
        }
    });
}

/// Appends `cert` to `pem` as a PEM block.
fn push_pem(pem: &mut String, cert: &CertificateDer<'_>) {
    let b64 = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
    pem.push_str("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
}

fn tls_file_error(what: &'static str, path: &Path, why: impl Into<String>) -> ConnectError {
    ConnectError::TlsFile {
        what,
        path: path.to_owned(),
        why: why.into(),
    }
}

fn read_file(what: &'static str, path: &Path) -> Result<Vec<u8>, ConnectError> {
    std::fs::read(path).map_err(|e| {
        tls_file_error(
            what,
            path,
            format!("{e}; check the path in RedisOptions and that this process may read it"),
        )
    })
}

/// The certificates of a PEM file, each checked to be usable as `what`.
fn pem_certificates(
    what: &'static str,
    path: &Path,
    bytes: &[u8],
) -> Result<Vec<CertificateDer<'static>>, ConnectError> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_file_error(what, path, format!("not valid PEM ({e})")))?;
    if certs.is_empty() {
        return Err(tls_file_error(
            what,
            path,
            "it holds no -----BEGIN CERTIFICATE----- block; give a PEM file",
        ));
    }
    Ok(certs)
}

/// The trusted roots (the system's plus `options.ca_file`) and the client identity,
/// in the form redis-rs takes them.
///
/// redis-rs trusts *only* the roots it is given once any are given, so the system's
/// roots are loaded here and passed along with the CA file; loading them here also
/// lets a store with a few unreadable certificates still work, where redis-rs would
/// refuse to connect at all.
fn tls_certificates(options: &RedisOptions) -> Result<TlsCertificates, ConnectError> {
    let mut pem = String::new();
    let native = rustls_native_certs::load_native_certs();
    let mut system = 0usize;
    for cert in &native.certs {
        // Keep only what rustls accepts as a trust anchor: redis-rs refuses the whole
        // set if one certificate in it does not parse.
        if rustls::RootCertStore::empty().add(cert.clone()).is_ok() {
            push_pem(&mut pem, cert);
            system += 1;
        }
    }
    if !native.errors.is_empty() {
        tracing::warn!(
            loaded = system,
            errors = ?native.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "some system root certificates could not be loaded"
        );
    }
    if let Some(path) = &options.ca_file {
        let bytes = read_file("CA file", path)?;
        for cert in pem_certificates("CA file", path, &bytes)? {
            if let Err(e) = rustls::RootCertStore::empty().add(cert.clone()) {
                return Err(tls_file_error(
                    "CA file",
                    path,
                    format!("a certificate in it is not usable as a CA ({e})"),
                ));
            }
            push_pem(&mut pem, &cert);
        }
    } else if system == 0 {
        let why = if native.errors.is_empty() {
            "no certificates found".to_owned()
        } else {
            native
                .errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        };
        return Err(ConnectError::NoRoots { why });
    }
    let client_tls = match (&options.client_cert, &options.client_key) {
        (None, None) => None,
        (Some(cert_path), Some(key_path)) => {
            let cert = read_file("client certificate", cert_path)?;
            pem_certificates("client certificate", cert_path, &cert)?;
            let key = read_file("client key", key_path)?;
            if let Err(e) = PrivateKeyDer::from_pem_slice(&key) {
                return Err(tls_file_error(
                    "client key",
                    key_path,
                    format!("no usable PEM private key in it ({e}); give the key's PEM file"),
                ));
            }
            Some(ClientTlsConfig {
                client_cert: cert,
                client_key: key,
            })
        }
        _ => {
            return Err(ConnectError::Options(
                "RedisOptions has a client certificate without its key or a key without its \
                 certificate; set both with RedisOptions::with_client_cert(cert, key)"
                    .into(),
            ));
        }
    };
    Ok(TlsCertificates {
        client_tls,
        root_cert: Some(pem.into_bytes()),
    })
}

// ---------------------------------------------------------------------------------
// The connection

/// A connection to one Redis server or to a Redis Cluster.
///
/// Cheap to clone: clones share the underlying multiplexed connection(s). It
/// implements redis-rs's [`ConnectionLike`], so [`redis::ScriptInvocation::invoke_async`],
/// [`redis::Cmd::query_async`] and [`redis::Pipeline::query_async`] work on it; on a
/// cluster, commands are routed by their keys' slot, and an EVALSHA that meets
/// NOSCRIPT (after a failover or resharding moved the slot to a node whose script
/// cache is empty) is answered by `invoke_async`'s SCRIPT LOAD, which redis-rs sends to
/// every primary, and a second EVALSHA.
#[derive(Clone)]
#[non_exhaustive]
pub enum RedisConnection {
    /// One server, through redis-rs's reconnecting [`ConnectionManager`].
    Node(ConnectionManager),
    /// A Redis Cluster, through redis-rs's [`ClusterConnection`], which follows
    /// MOVED and ASK redirections and refreshes its slot map.
    Cluster(ClusterConnection),
}

impl fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisConnection::Node(manager) => f.debug_tuple("Node").field(manager).finish(),
            RedisConnection::Cluster(_) => f.debug_tuple("Cluster").finish_non_exhaustive(),
        }
    }
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConnection::Node(con) => con.req_packed_command(cmd),
            RedisConnection::Cluster(con) => con.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConnection::Node(con) => con.req_packed_commands(pipeline, offset, count),
            RedisConnection::Cluster(con) => con.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConnection::Node(con) => con.get_db(),
            RedisConnection::Cluster(con) => con.get_db(),
        }
    }
}

impl RedisConnection {
    /// Connects to `url` (see [`RedisUrl`] for the forms) with `options`' timeouts,
    /// retries, TLS files and cluster settings.
    ///
    /// Each node is first checked with one connection and a PING: a wrong password
    /// ([`ConnectError::Auth`]), a failed TLS handshake ([`ConnectError::Tls`]) or a
    /// server in the wrong mode ([`ConnectError::Refused`]) fails on the first answer;
    /// an unreachable node is tried `reconnect_retries` more times, with the
    /// reconnection backoff, before [`ConnectError::Unreachable`]. One reachable seed
    /// is enough for a cluster.
    ///
    /// On a cluster, this connection lets redis-rs resend a command after a dropped
    /// connection or a timeout (`cluster_retries`), which is right for commands that
    /// are safe to repeat; [`crate::RedisStore`] sends the others on a second cluster
    /// connection that never resends.
    pub async fn open(url: &str, options: &RedisOptions) -> Result<RedisConnection, ConnectError> {
        Ok(open(url, options, false).await?.connection)
    }
}

/// What [`open`] gives [`crate::RedisStore`].
pub(crate) struct Opened {
    /// For commands that are safe to repeat.
    pub(crate) connection: RedisConnection,
    /// For commands that must not run twice: on a cluster, a connection whose client
    /// never resends a command itself (its `retries` is 0); on one server the same as
    /// `connection`, since a [`ConnectionManager`] never resends either.
    pub(crate) at_most_once: RedisConnection,
}

/// Connects; with `at_most_once`, a cluster also gets its non-resending connection.
pub(crate) async fn open(
    url: &str,
    options: &RedisOptions,
    at_most_once: bool,
) -> Result<Opened, ConnectError> {
    let url = RedisUrl::parse(url)?;
    install_crypto_provider();
    let tls = if url.scheme.is_tls() {
        Some(tls_certificates(options)?)
    } else {
        if options.ca_file.is_some() || options.client_cert.is_some() {
            return Err(ConnectError::Options(format!(
                "RedisOptions has a CA file or client certificate, but the URL is {}:// \
                 (no TLS); use rediss:// (or rediss+cluster://) to connect over TLS",
                url.scheme
            )));
        }
        None
    };
    let began = Instant::now();
    let fail = |err: RedisError| connect_error(&url, url.target(), err, 1, began.elapsed());
    let infos: Vec<(String, ConnectionInfo)> = if url.nodes.is_empty() {
        vec![(url.target(), url.connection_info(None).map_err(fail)?)]
    } else {
        url.nodes
            .iter()
            .map(|node| Ok((node.to_string(), url.connection_info(Some(node))?)))
            .collect::<redis::RedisResult<_>>()
            .map_err(fail)?
    };
    check_nodes(&url, &infos, tls.as_ref(), options, began).await?;
    if url.scheme.is_cluster() {
        let nodes: Vec<ConnectionInfo> = infos.into_iter().map(|(_, info)| info).collect();
        let connection = cluster_builder(&nodes, tls.as_ref(), options, options.cluster_retries)
            .build()
            .map_err(fail)?
            .get_async_connection()
            .await
            .map_err(fail)?;
        let once = if at_most_once {
            // `retries(0)`: the client hands every error back instead of resending;
            // RedisStore retries what is provably not executed (MOVED, ASK, TRYAGAIN,
            // CLUSTERDOWN, LOADING) itself.
            cluster_builder(&nodes, tls.as_ref(), options, 0)
                .build()
                .map_err(fail)?
                .get_async_connection()
                .await
                .map_err(fail)?
        } else {
            connection.clone()
        };
        Ok(Opened {
            connection: RedisConnection::Cluster(connection),
            at_most_once: RedisConnection::Cluster(once),
        })
    } else {
        let client = node_client(&infos[0].1, tls.as_ref()).map_err(fail)?;
        let manager = ConnectionManager::new_with_config(client, options.manager_config())
            .await
            .map_err(fail)?;
        let connection = RedisConnection::Node(manager);
        Ok(Opened {
            at_most_once: connection.clone(),
            connection,
        })
    }
}

/// A redis-rs client for one node, with the TLS material when the URL asks for TLS.
fn node_client(
    info: &ConnectionInfo,
    tls: Option<&TlsCertificates>,
) -> redis::RedisResult<redis::Client> {
    match tls {
        Some(certs) => redis::Client::build_with_tls(info.clone(), certs.clone()),
        None => redis::Client::open(info.clone()),
    }
}

/// The cluster client builder for `options`, resending failed commands up to
/// `retries` times.
fn cluster_builder(
    nodes: &[ConnectionInfo],
    tls: Option<&TlsCertificates>,
    options: &RedisOptions,
    retries: u32,
) -> ClusterClientBuilder {
    let min_wait = millis(options.cluster_min_retry_wait).max(1);
    let mut builder = ClusterClientBuilder::new(nodes.to_vec())
        .connection_timeout(options.connection_timeout)
        // Each node's reply; without it a stalled node hangs the request.
        .response_timeout(options.response_timeout)
        // The whole request, redirections and resends included. redis-rs otherwise
        // uses the per-reply timeout for both, which leaves a resend no time at all.
        .overall_response_timeout(Some(
            options
                .cluster_response_timeout
                .max(options.response_timeout),
        ))
        .retries(retries)
        .min_retry_wait(min_wait)
        .max_retry_wait(millis(options.reconnect_max_delay).max(min_wait + 1));
    if let Some(certs) = tls {
        builder = builder.certs(certs.clone());
    }
    builder
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// One connection attempt and a PING.
async fn ping_once(client: &redis::Client, options: &RedisOptions) -> Result<(), RedisError> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(options.connection_timeout))
        .set_response_timeout(Some(options.response_timeout));
    let mut con = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    redis::cmd("PING").query_async::<()>(&mut con).await
}

/// Whether a failed connection attempt may succeed soon: a refused connection (a
/// Redis restarting) or a name that did not resolve yet. Not a timeout: another
/// attempt costs another `connection_timeout`, and a host that drops packets, or a
/// TLS handshake with a plaintext port, will not answer the next one either. Not a
/// connection the server reset or closed while it was being set up: that is a TLS
/// port refusing plaintext, or a proxy without a backend, neither of which a second
/// attempt a moment later changes.
fn worth_retrying(err: &RedisError) -> bool {
    classify(err) == Failure::Unreachable
        && !err.is_timeout()
        && (err.is_connection_refusal() || !err.is_connection_dropped())
}

/// Checks one node: attempts until it answers, a definite failure, or the retries
/// run out. Returns the attempts made and the last error.
async fn check_node(
    client: redis::Client,
    options: &RedisOptions,
) -> Result<(), (RedisError, u32)> {
    let attempts = u32::try_from(options.reconnect_retries)
        .unwrap_or(u32::MAX)
        .saturating_add(1);
    let mut delay = options.reconnect_min_delay;
    let mut n = 1;
    loop {
        match ping_once(&client, options).await {
            Ok(()) => return Ok(()),
            Err(err) if n < attempts && worth_retrying(&err) => {
                tracing::debug!(attempt = n, error = %err, "redis not reachable yet; retrying");
                tokio::time::sleep(delay).await;
                delay = delay
                    .saturating_mul(2)
                    .min(options.reconnect_max_delay.max(options.reconnect_min_delay));
                n += 1;
            }
            Err(err) => return Err((err, n)),
        }
    }
}

type NodeCheck<'a> =
    Pin<Box<dyn Future<Output = (String, Result<(), (RedisError, u32)>)> + Send + 'a>>;

/// Checks the nodes concurrently. The first node that answers PING ends the check
/// (one reachable seed is enough); a definite failure (credentials, TLS, a server in
/// the wrong mode) ends it at once, since every node shares the configuration; when
/// every node is unreachable, the error names the last one to give up.
async fn check_nodes(
    url: &RedisUrl,
    infos: &[(String, ConnectionInfo)],
    tls: Option<&TlsCertificates>,
    options: &RedisOptions,
    began: Instant,
) -> Result<(), ConnectError> {
    let mut checks: FuturesUnordered<NodeCheck<'_>> = FuturesUnordered::new();
    for (target, info) in infos {
        let client = node_client(info, tls)
            .map_err(|e| connect_error(url, target.clone(), e, 0, began.elapsed()))?;
        let target = target.clone();
        checks.push(Box::pin(async move {
            let result = check_node(client, options).await;
            (target, result)
        }));
    }
    let mut last = None;
    while let Some((target, result)) = checks.next().await {
        match result {
            Ok(()) => return Ok(()),
            Err((err, attempts)) => {
                if classify(&err) != Failure::Unreachable {
                    return Err(connect_error(url, target, err, attempts, began.elapsed()));
                }
                last = Some((target, err, attempts));
            }
        }
    }
    match last {
        Some((target, err, attempts)) => {
            let target = if infos.len() > 1 {
                format!(
                    "{} (none answered; the last to fail was {target})",
                    url.target()
                )
            } else {
                target
            };
            Err(connect_error(url, target, err, attempts, began.elapsed()))
        }
        None => Err(ConnectError::Url(UrlError::MissingHost)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> RedisUrl {
        match RedisUrl::parse(s) {
            Ok(url) => url,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn password(url: &RedisUrl) -> Option<&str> {
        url.password.as_deref()
    }

    #[test]
    fn single_node_forms() {
        let url = parse("redis://127.0.0.1:6390/");
        assert_eq!(url.scheme(), Scheme::Redis);
        assert_eq!(url.nodes(), &[NodeAddr::new("127.0.0.1", 6390)]);
        assert_eq!(
            (url.db(), url.username(), url.has_password()),
            (0, None, false)
        );
        let url = parse("redis://localhost");
        assert_eq!(url.nodes(), &[NodeAddr::new("localhost", 6379)]);
        let url = parse("rediss://app:pw@redis.example.com:6380/3?protocol=resp3");
        assert_eq!(url.scheme(), Scheme::Rediss);
        assert!(url.scheme().is_tls() && !url.scheme().is_cluster());
        assert_eq!(
            (url.db(), url.username(), password(&url)),
            (3, Some("app"), Some("pw"))
        );
        assert!(url.resp3());
        let url = parse("redis://:only-pw@h:1");
        assert_eq!((url.username(), password(&url)), (None, Some("only-pw")));
        let url = parse("REDIS://[::1]:7000/2");
        assert_eq!(url.nodes(), &[NodeAddr::new("::1", 7000)]);
        assert_eq!(url.nodes()[0].to_string(), "[::1]:7000");
        assert_eq!(url.db(), 2);
        let url = parse("  redis://h:1/  ");
        assert_eq!(url.nodes(), &[NodeAddr::new("h", 1)]);
    }

    #[test]
    fn cluster_forms() {
        let url = parse("redis+cluster://10.0.0.1:7000,10.0.0.2:7001,node-3.internal");
        assert_eq!(url.scheme(), Scheme::RedisCluster);
        assert_eq!(
            url.nodes(),
            &[
                NodeAddr::new("10.0.0.1", 7000),
                NodeAddr::new("10.0.0.2", 7001),
                NodeAddr::new("node-3.internal", 6379)
            ]
        );
        let url = parse("rediss+cluster://u:p@a:1,[::1]:2/");
        assert!(url.scheme().is_tls() && url.scheme().is_cluster());
        assert_eq!((url.username(), password(&url)), (Some("u"), Some("p")));
        assert_eq!(url.nodes().len(), 2);
        assert_eq!(parse("redis+cluster://a:1/0").db(), 0);
        assert_eq!(
            RedisUrl::parse("redis+cluster://a:1/1"),
            Err(UrlError::ClusterDatabase { db: 1 })
        );
    }

    #[test]
    fn credentials_are_percent_decoded_and_end_at_the_last_at() {
        let url = parse("redis://us%65r:p%40ss%3Aw%2Frd%25@h:1/");
        assert_eq!(
            (url.username(), password(&url)),
            (Some("user"), Some("p@ss:w/rd%"))
        );
        // Unescaped '@', '/', '?', '#' and ':' in the password.
        let url = parse("redis://u:a@b/c?d#e:f@h:1/2");
        assert_eq!(password(&url), Some("a@b/c?d#e:f"));
        assert_eq!(url.nodes(), &[NodeAddr::new("h", 1)]);
        assert_eq!(url.db(), 2);
        let url = parse("redis+cluster://u:p@w,x@a:1,b:2");
        assert_eq!(password(&url), Some("p@w,x"));
        assert_eq!(url.nodes().len(), 2);
        // Multi-byte UTF-8.
        let url = parse("redis://u:%C3%A9t%C3%A9@h");
        assert_eq!(password(&url), Some("été"));
        // Empty credentials are none.
        let url = parse("redis://:@h");
        assert!(!url.has_password());
        let url = parse("redis://@h");
        assert!(!url.has_password());
    }

    #[test]
    fn unix_sockets() {
        let url = parse("unix:///run/redis.sock");
        assert_eq!(url.scheme(), Scheme::Unix);
        assert_eq!(url.socket(), Some(Path::new("/run/redis.sock")));
        let url = parse("redis+unix:///tmp/r.sock?db=4&user=u&pass=p%26w&protocol=resp3");
        assert_eq!(
            (url.db(), url.username(), password(&url)),
            (4, Some("u"), Some("p&w"))
        );
        assert!(url.resp3());
        assert_eq!(
            url.to_string(),
            "unix:///tmp/r.sock?db=4&user=u&pass=***&protocol=resp3"
        );
        assert_eq!(RedisUrl::parse("unix://relative"), Err(UrlError::BadSocket));
        assert_eq!(
            RedisUrl::parse("unix:///s?user=u"),
            Err(UrlError::UserWithoutPassword)
        );
    }

    /// Every bad URL is a typed error whose message names what to fix, and no message
    /// repeats the password, wherever the mistake is.
    #[test]
    fn hostile_urls_are_refused_without_echoing_the_password() {
        const SECRET: &str = "S3CRET";
        type Expected = fn(&UrlError) -> bool;
        let cases: &[(&str, Expected)] = &[
            ("", |e| *e == UrlError::Empty),
            ("   ", |e| *e == UrlError::Empty),
            ("127.0.0.1:6379", |e| *e == UrlError::MissingScheme),
            ("u:S3CRET@h://x", |e| *e == UrlError::MissingScheme),
            ("://h", |e| *e == UrlError::MissingScheme),
            (
                "http://h",
                |e| matches!(e, UrlError::UnknownScheme { scheme } if scheme == "http"),
            ),
            ("redis://", |e| *e == UrlError::MissingHost),
            ("redis://u:S3CRET@", |e| *e == UrlError::MissingHost),
            ("redis://u:S3CRET@/0", |e| *e == UrlError::MissingHost),
            ("redis://u:S3CRET@a:1,b:2", |e| {
                matches!(
                    e,
                    UrlError::SeveralHosts {
                        scheme: Scheme::Redis
                    }
                )
            }),
            ("redis+cluster://u:S3CRET@a:1,,b:2", |e| {
                *e == UrlError::EmptyHost { position: 2 }
            }),
            ("redis+cluster://a:1,", |e| {
                *e == UrlError::EmptyHost { position: 2 }
            }),
            ("redis://u:S3CRET@h:0", |e| {
                matches!(e, UrlError::BadPort { .. })
            }),
            ("redis://u:S3CRET@h:65536", |e| {
                matches!(e, UrlError::BadPort { .. })
            }),
            ("redis://u:S3CRET@h:+1", |e| {
                matches!(e, UrlError::BadPort { .. })
            }),
            ("redis://u:S3CRET@h:x", |e| {
                matches!(e, UrlError::BadPort { .. })
            }),
            ("redis://u:S3CRET@:1", |e| {
                *e == UrlError::EmptyHost { position: 1 }
            }),
            ("redis://u:S3CRET@::1:6379", |e| {
                matches!(e, UrlError::BadHost { .. })
            }),
            ("redis://u:S3CRET@[::1", |e| {
                matches!(e, UrlError::BadHost { .. })
            }),
            ("redis://u:S3CRET@[zz]:1", |e| {
                matches!(e, UrlError::BadHost { .. })
            }),
            ("redis://u:S3CRET@[::1]x", |e| {
                matches!(e, UrlError::BadHost { .. })
            }),
            ("redis://u:S3CRET@h h", |e| {
                matches!(e, UrlError::BadHost { .. })
            }),
            ("redis://u:S3CRET@h/x", |e| {
                matches!(e, UrlError::BadDatabase { .. })
            }),
            ("redis://u:S3CRET@h/-1", |e| {
                matches!(e, UrlError::BadDatabase { .. })
            }),
            ("redis://u:S3CRET@h/1/2", |e| {
                matches!(e, UrlError::BadDatabase { .. })
            }),
            ("redis://S3CRET@h", |e| *e == UrlError::UserWithoutPassword),
            ("redis://u:S3CRET%@h", |e| {
                *e == UrlError::BadEscape { part: "password" }
            }),
            ("redis://u:S3CRET%4@h", |e| {
                *e == UrlError::BadEscape { part: "password" }
            }),
            ("redis://u:S3CRET%zz@h", |e| {
                *e == UrlError::BadEscape { part: "password" }
            }),
            ("redis://u:S3CRET%FF@h", |e| {
                *e == UrlError::NotUtf8 { part: "password" }
            }),
            ("redis://u%:S3CRET@h", |e| {
                *e == UrlError::BadEscape { part: "user name" }
            }),
            (
                "redis://u:S3CRET@h?db=1",
                |e| matches!(e, UrlError::UnknownParameter { name, .. } if name == "db"),
            ),
            ("redis://u:S3CRET@h?protocol=resp4", |e| {
                matches!(e, UrlError::BadParameter { .. })
            }),
            ("rediss://u:S3CRET@h/#insecure", |e| {
                *e == UrlError::Fragment
            }),
            ("unix:///s?pass=S3CRET%&user=u", |e| {
                *e == UrlError::BadEscape { part: "password" }
            }),
            (
                "unix:///s?pass=S3CRET&bogus=1",
                |e| matches!(e, UrlError::UnknownParameter { name, .. } if name == "bogus"),
            ),
        ];
        for (input, expected) in cases {
            match RedisUrl::parse(input) {
                Ok(url) => panic!("{input:?} parsed as {url:?}"),
                Err(e) => {
                    assert!(expected(&e), "{input:?}: unexpected error {e:?}");
                    let message = e.to_string();
                    assert!(!message.contains(SECRET), "{input:?}: {message}");
                    assert!(!format!("{e:?}").contains(SECRET), "{input:?}: {e:?}");
                    assert!(message.len() > 30, "{input:?}: terse message {message}");
                }
            }
        }
    }

    #[test]
    fn display_and_debug_hide_the_password() {
        let url = parse("rediss://app:S3CRET@h:6380/2?protocol=resp3");
        assert_eq!(url.to_string(), "rediss://app:***@h:6380/2?protocol=resp3");
        assert!(!format!("{url:?}").contains("S3CRET"));
        assert_eq!(
            parse("redis://:S3CRET@h").to_string(),
            "redis://:***@h:6379/"
        );
        // Display round-trips (but for the password).
        for s in [
            "redis://h:1/",
            "redis+cluster://a:1,[::1]:2/",
            "rediss://u:***@h:6379/5",
        ] {
            assert_eq!(parse(s).to_string(), s);
        }
    }

    #[test]
    fn connection_info_carries_everything() {
        let url = parse("rediss://app:pw@h:6380/3?protocol=resp3");
        let info = url.connection_info(url.nodes().first()).expect("info");
        assert!(
            matches!(info.addr(), ConnectionAddr::TcpTls { host, port: 6380, insecure: false, .. } if host == "h")
        );
        let redis = info.redis_settings();
        assert_eq!(
            (redis.username(), redis.password(), redis.db()),
            (Some("app"), Some("pw"), 3)
        );
        assert_eq!(redis.protocol(), ProtocolVersion::RESP3);
        let url = parse("unix:///tmp/s.sock?db=1");
        assert!(
            matches!(url.connection_info(None).expect("info").addr(), ConnectionAddr::Unix(p) if p == Path::new("/tmp/s.sock"))
        );
    }

    #[test]
    fn errors_are_classified() {
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

    #[test]
    fn pem_encoding_round_trips() {
        let der = CertificateDer::from((0u8..200).collect::<Vec<u8>>());
        let mut pem = String::new();
        push_pem(&mut pem, &der);
        push_pem(&mut pem, &der);
        let back: Vec<_> = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("parse");
        assert_eq!(back, vec![der.clone(), der]);
        assert!(pem.lines().all(|l| l.len() <= 64 || l.starts_with("-----")));
    }
}
