//! A real TLS-only Redis with an ACL user, for the TLS tests.
//!
//! The certificates are made at test time by `scripts/make-test-certs` (the openssl
//! command line): a CA, a server certificate for 127.0.0.1/::1/localhost, a client
//! certificate, and an unrelated CA. The server listens on a TLS port only
//! (`--port 0 --tls-port P`), its default user is disabled, and the ACL user
//! `leaguekit` has a password full of URL metacharacters, so every test also checks
//! the percent-decoding of credentials.
//!
//! `tls_target()` uses `LEAGUEKIT_TEST_TLS_URL` and `LEAGUEKIT_TEST_TLS_CA` when set
//! (`scripts/test` starts such a server); otherwise the first call starts one for
//! this test binary. `TlsServer::start` gives a test a private one, such as a server
//! that requires client certificates.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use super::{RedisServer, base_args, free_port, listening};

/// The ACL user of the test servers.
pub const TLS_USER: &str = "leaguekit";
/// Its password: '@', ':', '/', '%' and '#' must all be percent-encoded in a URL.
pub const TLS_PASSWORD: &str = "l3ague@kit:pw/%#x";

/// The certificates of `scripts/make-test-certs`.
#[derive(Debug, Clone)]
pub struct TestCerts {
    /// The directory holding them.
    pub dir: PathBuf,
}

impl TestCerts {
    /// Makes a fresh set in `dir`. Panics with instructions without openssl.
    pub fn make(dir: &Path) -> TestCerts {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-test-certs");
        let out = Command::new("sh")
            .arg(&script)
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "{} failed: {}; the TLS tests need the openssl command line \
             (apt-get install openssl, or run scripts/test)",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        TestCerts {
            dir: dir.to_owned(),
        }
    }

    /// The test CA, which signed the server and client certificates.
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A CA that signed nothing here.
    pub fn other_ca(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }

    /// The client certificate and key, for mutual TLS.
    pub fn client(&self) -> (PathBuf, PathBuf) {
        (self.dir.join("client.pem"), self.dir.join("client.key"))
    }

    /// redis-server's TLS arguments (the server certificate, and the CA it checks
    /// client certificates against).
    pub fn server_args(&self, auth_clients: &str) -> Vec<String> {
        let path = |name: &str| self.dir.join(name).to_string_lossy().into_owned();
        vec![
            "--tls-cert-file".into(),
            path("server.pem"),
            "--tls-key-file".into(),
            path("server.key"),
            "--tls-ca-cert-file".into(),
            path("ca.pem"),
            "--tls-auth-clients".into(),
            auth_clients.into(),
        ]
    }
}

/// The ACL arguments: the default user off, `leaguekit` on with every permission.
pub fn acl_args() -> Vec<String> {
    [
        "--user",
        "default",
        "off",
        "--user",
        TLS_USER,
        "on",
        &format!(">{TLS_PASSWORD}"),
        "~*",
        "&*",
        "+@all",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A TLS-only redis-server with the ACL user.
pub struct TlsServer {
    /// The server (its `port` is the TLS port).
    pub server: RedisServer,
    /// Its certificates.
    pub certs: TestCerts,
}

impl TlsServer {
    /// Starts one. `client_certs` is redis-server's `tls-auth-clients`: `"no"`,
    /// `"optional"` (checked when sent) or `"yes"` (required).
    pub fn start(client_certs: &str) -> TlsServer {
        let server = RedisServer::launch(
            "tls",
            free_port,
            |dir| {
                TestCerts::make(dir);
            },
            |port, dir| {
                let certs = TestCerts {
                    dir: dir.to_owned(),
                };
                let mut args = vec![
                    "--port".to_owned(),
                    "0".to_owned(),
                    "--tls-port".to_owned(),
                    port.to_string(),
                ];
                args.extend(base_args(dir));
                // Also 127.0.0.2, an address the certificate does not name.
                args.extend([
                    "--bind".to_owned(),
                    "127.0.0.1".to_owned(),
                    "127.0.0.2".to_owned(),
                ]);
                args.extend(certs.server_args(client_certs));
                args.extend(acl_args());
                args
            },
            // The TLS port accepts connections once the server has loaded its
            // certificates; the plain PING of `RedisServer::start` cannot be used.
            listening,
            false,
        );
        let certs = TestCerts {
            dir: server.dir.clone(),
        };
        TlsServer { server, certs }
    }

    /// The target this server is.
    pub fn target(&self) -> TlsTarget {
        TlsTarget {
            host: "127.0.0.1".into(),
            port: self.server.port,
            user: TLS_USER.into(),
            password: TLS_PASSWORD.into(),
            ca: self.certs.ca(),
        }
    }
}

/// Where a TLS test server is and how to log in.
#[derive(Debug, Clone)]
pub struct TlsTarget {
    /// Its host (an IP address the certificate names).
    pub host: String,
    /// Its TLS port.
    pub port: u16,
    /// The ACL user.
    pub user: String,
    /// Its password (not encoded).
    pub password: String,
    /// The CA file that signed the server's certificate.
    pub ca: PathBuf,
}

impl TlsTarget {
    /// `rediss://user:password@host:port/` with both percent-encoded.
    pub fn url(&self) -> String {
        self.url_with(&self.user, &self.password)
    }

    /// The same URL with other credentials (percent-encoded here).
    pub fn url_with(&self, user: &str, password: &str) -> String {
        format!(
            "rediss://{}:{}@{}:{}/",
            utf8_percent_encode(user, NON_ALPHANUMERIC),
            utf8_percent_encode(password, NON_ALPHANUMERIC),
            self.host,
            self.port
        )
    }

    /// The URL without credentials.
    pub fn anonymous_url(&self) -> String {
        format!("rediss://{}:{}/", self.host, self.port)
    }
}

/// The TLS server the tests share: `LEAGUEKIT_TEST_TLS_URL` (with
/// `LEAGUEKIT_TEST_TLS_CA`) or one started on first use.
pub fn tls_target() -> TlsTarget {
    if let Ok(url) = std::env::var("LEAGUEKIT_TEST_TLS_URL")
        && !url.trim().is_empty()
    {
        let ca = std::env::var("LEAGUEKIT_TEST_TLS_CA").unwrap_or_else(|_| {
            panic!("LEAGUEKIT_TEST_TLS_URL is set but LEAGUEKIT_TEST_TLS_CA (the CA file) is not")
        });
        return parse_target(&url, PathBuf::from(ca));
    }
    static SHARED: OnceLock<TlsTarget> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let server = TlsServer::start("optional");
            let target = server.target();
            // Lives as long as the test process; its watchdog stops it at exit.
            std::mem::forget(server);
            target
        })
        .clone()
}

/// `rediss://user:password@host:port/` (credentials percent-encoded).
fn parse_target(url: &str, ca: PathBuf) -> TlsTarget {
    fn bad<T>() -> T {
        panic!("LEAGUEKIT_TEST_TLS_URL must be rediss://USER:PASSWORD@HOST:PORT/")
    }
    let rest = url.strip_prefix("rediss://").unwrap_or_else(bad);
    let (credentials, host) = rest.rsplit_once('@').unwrap_or_else(bad);
    let (user, password) = credentials.split_once(':').unwrap_or_else(bad);
    let (host, port) = host
        .trim_end_matches('/')
        .rsplit_once(':')
        .unwrap_or_else(bad);
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .unwrap_or_else(|_| bad())
            .into_owned()
    };
    TlsTarget {
        host: host.to_owned(),
        port: port.parse().unwrap_or_else(|_| bad()),
        user: decode(user),
        password: decode(password),
        ca,
    }
}
