//! Redis URLs: the four schemes with `user:password@`, host lists for clusters, an
//! optional database, and unix sockets. redis-rs parses neither cluster URLs nor host
//! lists, so the parsing is ours; a bad URL is a [`UrlError`] that says what is wrong
//! and never repeats the password.

use super::errors::UrlError;
use std::fmt;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use percent_encoding::percent_decode_str;

use super::DEFAULT_PORT;
use redis::{
    ConnectionAddr, ConnectionInfo, ErrorKind, IntoConnectionInfo, ProtocolVersion,
    RedisConnectionInfo,
};

/// The URL forms, for error messages.
pub(super) const FORMS: &str = "redis://[user:password@]host[:port][/db], \
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
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisUrl {
    pub(crate) scheme: Scheme,
    pub(crate) nodes: Vec<NodeAddr>,
    pub(crate) socket: Option<PathBuf>,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) db: i64,
    pub(crate) resp3: bool,
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
    pub(crate) fn connection_info(
        &self,
        node: Option<&NodeAddr>,
    ) -> redis::RedisResult<ConnectionInfo> {
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
pub(crate) fn parse_userinfo(info: &str) -> Result<(Option<String>, Option<String>), UrlError> {
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
pub(crate) fn decode(text: &str, part: &'static str) -> Result<String, UrlError> {
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
pub(crate) fn parse_node(text: &str, position: usize) -> Result<NodeAddr, UrlError> {
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
pub(crate) fn parse_db(path: &str, scheme: Scheme) -> Result<i64, UrlError> {
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
pub(crate) fn parse_protocol(value: &str) -> Result<bool, UrlError> {
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
pub(crate) fn query_pairs(query: Option<&str>) -> impl Iterator<Item = (&str, &str)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
}

/// `unix:///path[?db=N&user=U&pass=P&protocol=resp3]`, the forms redis-rs accepts.
pub(crate) fn parse_unix(rest: &str) -> Result<RedisUrl, UrlError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn parse(s: &str) -> RedisUrl {
        match RedisUrl::parse(s) {
            Ok(url) => url,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    pub(crate) fn password(url: &RedisUrl) -> Option<&str> {
        url.password.as_deref()
    }

    #[test]
    pub(crate) fn single_node_forms() {
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
    pub(crate) fn cluster_forms() {
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
    pub(crate) fn credentials_are_percent_decoded_and_end_at_the_last_at() {
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
    pub(crate) fn unix_sockets() {
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
    pub(crate) fn hostile_urls_are_refused_without_echoing_the_password() {
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
    pub(crate) fn display_and_debug_hide_the_password() {
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
    pub(crate) fn connection_info_carries_everything() {
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
}
