//! Redis URLs. redis-rs parses each node's URL (its `IntoConnectionInfo` for the
//! `url` crate's `Url`, the parser it uses itself); what is leaguekit's own:
//!
//! - the cluster schemes and their seed lists: `redis+cluster://a:1,b:2` is one
//!   redis-rs URL per seed, with the same credentials and parameters;
//! - the credentials: they end at the last `@` (a password may hold `@`, `/`, `?` or
//!   `#` unescaped), are percent-decoded strictly, are handed to redis-rs apart from
//!   the URL, and no error, `Display` or `Debug` repeats the password;
//! - the checks redis-rs does not make, each a typed [`UrlError`] that says what to
//!   write: a user name without a password (redis-rs would not log in at all), port 0,
//!   a database that is not `/N` or not 0 on a cluster, an unknown `?parameter`, a
//!   `#fragment` (redis-rs's `#insecure` turns certificate checks off; leaguekit
//!   always verifies them), several hosts for one server, a host that is no host name.
//!
//! The url crate's own errors (a bad port, an IPv6 address) become the same typed
//! errors.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use percent_encoding::percent_decode_str;
use redis::{
    ConnectionAddr, ConnectionInfo, IntoConnectionInfo, ProtocolVersion, RedisConnectionInfo,
};

use super::errors::UrlError;

/// The URL forms, for error messages.
pub(super) const FORMS: &str = "redis://[user:password@]host[:port][/db], \
     rediss://[user:password@]host[:port][/db] (TLS), \
     redis+cluster://[user:password@]host:port,host:port,... (Redis Cluster), \
     rediss+cluster://[user:password@]host:port,... (Redis Cluster over TLS), \
     or unix:///path/to/redis.sock";

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
/// use leaguekit::store::redis::connection::{RedisUrl, Scheme};
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
#[derive(Clone)]
#[non_exhaustive]
pub struct RedisUrl {
    scheme: Scheme,
    nodes: Vec<NodeAddr>,
    /// redis-rs's settings for each node (one for one server or a socket).
    infos: Vec<ConnectionInfo>,
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
        if scheme_text.is_empty()
            || !scheme_text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            return Err(UrlError::MissingScheme);
        }
        let scheme = match scheme_text.to_ascii_lowercase().as_str() {
            "redis" => Scheme::Redis,
            "rediss" => Scheme::Rediss,
            "redis+cluster" => Scheme::RedisCluster,
            "rediss+cluster" => Scheme::RedissCluster,
            "unix" | "redis+unix" => Scheme::Unix,
            _ => {
                return Err(UrlError::UnknownScheme {
                    scheme: scheme_text.to_owned(),
                });
            }
        };
        let unix = scheme == Scheme::Unix;
        // The credentials end at the last '@': a password may hold an unescaped '@',
        // '/', '?' or '#', and none of that may end up in a host, a path or an error.
        // (A unix URL has them in its query.)
        let (mut credentials, rest) = match rest.rfind('@').filter(|_| !unix) {
            Some(at) => (Credentials::parse(&rest[..at])?, &rest[at + 1..]),
            None => (Credentials::default(), rest),
        };
        if rest.contains('#') && !unix {
            return Err(UrlError::Fragment);
        }
        let (before, query) = match rest.split_once('?') {
            Some((before, query)) => (before, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = before.split_at(before.find('/').unwrap_or(before.len()));
        if unix && (!authority.is_empty() || path.len() < 2) {
            return Err(UrlError::BadSocket);
        } else if unix {
            decode(path, "socket path")?;
        } else if authority.is_empty() {
            return Err(UrlError::MissingHost);
        } else {
            check_db(path, scheme)?;
        }
        // The parameters redis-rs reads; the credentials of a unix URL are decoded here.
        let mut kept = Vec::new();
        for (name, value) in query_pairs(query) {
            match (name, unix) {
                ("protocol", _) => check_protocol(value)?,
                ("db", true) => check_db(value, scheme)?,
                ("user", true) => credentials.user = Some(decode(value, "user name")?),
                ("pass" | "password", true) => {
                    credentials.password = Some(decode(value, "password")?);
                }
                ("", _) => {}
                (other, _) => {
                    return Err(UrlError::UnknownParameter {
                        name: other.to_owned(),
                        known: if unix {
                            "db, user, pass, protocol"
                        } else {
                            "protocol"
                        },
                    });
                }
            }
            if matches!(name, "protocol" | "db") {
                kept.push(format!("{name}={}", value.to_ascii_lowercase()));
            }
        }
        if credentials.user.is_some() && credentials.password.is_none() {
            return Err(UrlError::UserWithoutPassword);
        }
        let tail = format!("{path}?{}", kept.join("&"));
        if unix {
            let info = ::url::Url::parse(&format!("unix://{tail}"))
                .ok()
                .and_then(|url| url.into_connection_info().ok())
                .ok_or(UrlError::BadSocket)?;
            let infos = vec![credentials.apply(info)];
            let nodes = Vec::new();
            return Ok(RedisUrl {
                scheme,
                nodes,
                infos,
            });
        }
        let hosts: Vec<&str> = authority.split(',').collect();
        if !scheme.is_cluster() && hosts.len() > 1 {
            return Err(UrlError::SeveralHosts { scheme });
        }
        let node_scheme = if scheme.is_tls() { "rediss" } else { "redis" };
        let (mut nodes, mut infos) = (Vec::new(), Vec::new());
        for (i, host) in hosts.into_iter().enumerate() {
            let info = node_info(node_scheme, host, &tail, i + 1)?;
            let (ConnectionAddr::Tcp(name, port)
            | ConnectionAddr::TcpTls {
                host: name, port, ..
            }) = info.addr()
            else {
                return Err(UrlError::MissingHost);
            };
            nodes.push(NodeAddr::new(name.clone(), *port));
            infos.push(credentials.apply(info));
        }
        Ok(RedisUrl {
            scheme,
            nodes,
            infos,
        })
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
        match self.infos.first().map(ConnectionInfo::addr) {
            Some(ConnectionAddr::Unix(path)) => Some(path),
            _ => None,
        }
    }

    /// The ACL user to log in as, if any (`None` with a password is the default user).
    pub fn username(&self) -> Option<&str> {
        self.settings().and_then(RedisConnectionInfo::username)
    }

    /// Whether the URL carries a password (which no accessor, `Display` or `Debug` shows).
    pub fn has_password(&self) -> bool {
        self.password().is_some()
    }

    /// The database number (always 0 for a cluster).
    pub fn db(&self) -> i64 {
        self.settings().map_or(0, RedisConnectionInfo::db)
    }

    /// Whether `?protocol=resp3` was given.
    pub fn resp3(&self) -> bool {
        self.settings()
            .is_some_and(|s| s.protocol() == ProtocolVersion::RESP3)
    }

    /// Where this URL points, for messages: `host:port`, the seed list, or the socket.
    pub fn target(&self) -> String {
        if let Some(socket) = self.socket() {
            return socket.display().to_string();
        }
        let nodes: Vec<String> = self.nodes.iter().map(NodeAddr::to_string).collect();
        if self.scheme.is_cluster() {
            format!("the Redis Cluster seeds {}", nodes.join(", "))
        } else {
            nodes.join(", ")
        }
    }

    /// redis-rs's settings for each node (or the socket), with where it is for messages.
    pub(crate) fn node_infos(&self) -> Vec<(String, ConnectionInfo)> {
        if self.nodes.is_empty() {
            return self
                .infos
                .iter()
                .map(|i| (self.target(), i.clone()))
                .collect();
        }
        let names = self.nodes.iter().map(NodeAddr::to_string);
        names.zip(self.infos.iter().cloned()).collect()
    }

    /// The settings every node shares (credentials, database, protocol).
    fn settings(&self) -> Option<&RedisConnectionInfo> {
        self.infos.first().map(ConnectionInfo::redis_settings)
    }

    fn password(&self) -> Option<&str> {
        self.settings().and_then(RedisConnectionInfo::password)
    }
}

impl PartialEq for RedisUrl {
    fn eq(&self, other: &Self) -> bool {
        // Display shows everything but the password.
        self.to_string() == other.to_string() && self.password() == other.password()
    }
}

impl Eq for RedisUrl {}

impl FromStr for RedisUrl {
    type Err = UrlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RedisUrl::parse(s)
    }
}

impl fmt::Display for RedisUrl {
    /// The URL with the password replaced by `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(socket) = self.socket() {
            write!(f, "unix://{}", socket.display())?;
            let db = (self.db() != 0).then(|| format!("db={}", self.db()));
            let user = self.username().map(|u| format!("user={u}"));
            let pass = self.has_password().then(|| "pass=***".to_owned());
            let resp3 = self.resp3().then(|| "protocol=resp3".to_owned());
            let query: Vec<String> = [db, user, pass, resp3].into_iter().flatten().collect();
            if !query.is_empty() {
                write!(f, "?{}", query.join("&"))?;
            }
            return Ok(());
        }
        write!(f, "{}://", self.scheme)?;
        match (self.username(), self.has_password()) {
            (Some(user), true) => write!(f, "{user}:***@")?,
            (Some(user), false) => write!(f, "{user}@")?,
            (None, true) => write!(f, ":***@")?,
            (None, false) => {}
        }
        let nodes: Vec<String> = self.nodes.iter().map(NodeAddr::to_string).collect();
        write!(f, "{}/", nodes.join(","))?;
        if self.db() != 0 {
            write!(f, "{}", self.db())?;
        }
        if self.resp3() {
            write!(f, "?protocol=resp3")?;
        }
        Ok(())
    }
}

impl fmt::Debug for RedisUrl {
    /// The URL as [`Display`](fmt::Display) shows it, without the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RedisUrl").field(&self.to_string()).finish()
    }
}

/// The credentials of a URL, decoded, given to redis-rs apart from the URL.
#[derive(Default)]
struct Credentials {
    user: Option<String>,
    password: Option<String>,
}

impl Credentials {
    /// `user:password` or `:password`, percent-decoded.
    fn parse(info: &str) -> Result<Credentials, UrlError> {
        let Some((user, password)) = info.split_once(':') else {
            if info.is_empty() {
                // "redis://@host": nothing given.
                return Ok(Credentials::default());
            }
            // redis-rs would connect without logging in at all: refuse instead.
            return Err(UrlError::UserWithoutPassword);
        };
        let (user, password) = (decode(user, "user name")?, decode(password, "password")?);
        // An empty password counts only with a user name (`:@host` is nothing given).
        let some_password = !user.is_empty() || !password.is_empty();
        Ok(Credentials {
            user: (!user.is_empty()).then_some(user),
            password: some_password.then_some(password),
        })
    }

    fn apply(&self, info: ConnectionInfo) -> ConnectionInfo {
        let mut settings = info.redis_settings().clone();
        if let Some(user) = &self.user {
            settings = settings.set_username(user);
        }
        if let Some(password) = &self.password {
            settings = settings.set_password(password);
        }
        info.set_redis_settings(settings)
    }
}

/// Percent-decodes `text`; `part` names it in errors, which never show the text.
fn decode(text: &str, part: &'static str) -> Result<String, UrlError> {
    let bytes = text.as_bytes();
    let bad = |i: usize| {
        !(i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit())
    };
    if (0..bytes.len()).any(|i| bytes[i] == b'%' && bad(i)) {
        return Err(UrlError::BadEscape { part });
    }
    percent_decode_str(text)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| UrlError::NotUtf8 { part })
}

/// One node's URL (`scheme://host` and the path and query every node shares), parsed
/// by redis-rs; `position` (1-based) names the host in errors.
fn node_info(
    scheme: &str,
    host: &str,
    tail: &str,
    position: usize,
) -> Result<ConnectionInfo, UrlError> {
    let bad_host = |why| UrlError::BadHost {
        host: host.to_owned(),
        why,
    };
    let bad_port = || {
        let (name, port) = host.rsplit_once(':').unwrap_or((host, ""));
        UrlError::BadPort {
            host: name.to_owned(),
            port: port.to_owned(),
        }
    };
    if !host.starts_with('[') && host.matches(':').count() > 1 {
        return Err(bad_host(
            "write IPv6 addresses in brackets, e.g. [::1]:6379",
        ));
    }
    if host.is_empty() || host.starts_with(':') {
        return Err(UrlError::EmptyHost { position });
    }
    let url = ::url::Url::parse(&format!("{scheme}://{host}{tail}")).map_err(|e| match e {
        ::url::ParseError::InvalidPort => bad_port(),
        ::url::ParseError::EmptyHost => UrlError::EmptyHost { position },
        ::url::ParseError::InvalidIpv6Address => {
            bad_host("not an IPv6 address (write one in brackets, e.g. [::1]:6379)")
        }
        _ => bad_host("a host name has only letters, digits, '.', '-' and '_'"),
    })?;
    if url.port() == Some(0) {
        return Err(bad_port());
    }
    if let Some(::url::Host::Domain(name)) = url.host()
        && !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(bad_host(
            "a host name has only letters, digits, '.', '-' and '_'",
        ));
    }
    url.into_connection_info().map_err(|e| UrlError::Unusable {
        host: host.to_owned(),
        why: e.to_string(),
    })
}

/// `""`, `"/"` or `"/N"`; a cluster has only database 0.
fn check_db(path: &str, scheme: Scheme) -> Result<(), UrlError> {
    let digits = path.strip_prefix('/').unwrap_or(path);
    if digits.is_empty() {
        return Ok(());
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
    Ok(())
}

/// `resp2`/`2` or `resp3`/`3`.
fn check_protocol(value: &str) -> Result<(), UrlError> {
    match value.to_ascii_lowercase().as_str() {
        "resp3" | "3" | "resp2" | "2" => Ok(()),
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

#[cfg(test)]
mod tests;
