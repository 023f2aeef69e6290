//! A real three-master Redis Cluster on loopback, for the cluster tests.
//!
//! `cluster_url()` uses `LEAGUEKIT_TEST_CLUSTER_URL` when set (`scripts/test` starts a
//! cluster and sets it); otherwise the first call starts one for this test binary,
//! which lives until the process exits. `Cluster::start()` gives a test a private one
//! (to stop a node, say). The nodes are three `redis-server --cluster-enabled yes` on
//! free loopback ports, joined by `redis-cli --cluster create ... --cluster-replicas 0
//! --cluster-yes`; the cluster is ready once every node reports `cluster_state:ok`
//! and all three agree on who owns which slots.

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::tls::TestCerts;
use super::{HOW_TO_GET_REDIS, RedisServer, base_args, command, free_cluster_port, listening};

/// How to get `redis-cli`, for every failure to find it.
const HOW_TO_GET_REDIS_CLI: &str = "the cluster tests need redis-cli (Debian's redis-server \
     package installs it, or redis-tools): apt-get install redis-server, or run scripts/test; \
     or set LEAGUEKIT_TEST_CLUSTER_URL=redis+cluster://HOST:PORT,HOST:PORT to use a running \
     cluster";

/// A cluster the tests share: `LEAGUEKIT_TEST_CLUSTER_URL`, or one started on first use.
pub fn cluster_url() -> String {
    if let Ok(url) = std::env::var("LEAGUEKIT_TEST_CLUSTER_URL")
        && !url.trim().is_empty()
    {
        return url;
    }
    static SHARED: OnceLock<String> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let cluster = Cluster::start();
            let url = cluster.url();
            // Lives as long as the test process; the watchdogs stop the nodes at exit.
            std::mem::forget(cluster);
            url
        })
        .clone()
}

/// The loopback ports of a `redis+cluster://127.0.0.1:P,127.0.0.1:Q,...` URL (the
/// form `scripts/test` and `Cluster::url` produce; credentials are not expected).
pub fn cluster_ports(url: &str) -> Vec<u16> {
    let hosts = url
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or(url)
        .trim_end_matches('/');
    hosts
        .split(',')
        .map(|host| {
            let port = host.rsplit(':').next().unwrap_or("");
            port.parse()
                .unwrap_or_else(|_| panic!("no port in cluster host {host:?} of {url}"))
        })
        .collect()
}

/// The `redis-cli` binary: `LEAGUEKIT_TEST_REDIS_CLI`, else next to redis-server,
/// else on PATH. Panics with instructions when there is none.
pub fn redis_cli_bin() -> String {
    if let Ok(bin) = std::env::var("LEAGUEKIT_TEST_REDIS_CLI")
        && !bin.trim().is_empty()
    {
        return bin;
    }
    let server = std::path::PathBuf::from(super::redis_bin());
    if let Some(dir) = server.parent() {
        let beside = dir.join("redis-cli");
        if beside.is_file() {
            return beside.to_string_lossy().into_owned();
        }
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("redis-cli"))
            .find(|candidate| candidate.is_file())
    });
    match found {
        Some(path) => path.to_string_lossy().into_owned(),
        None => panic!("redis-cli not found; {HOW_TO_GET_REDIS_CLI}"),
    }
}

/// Three cluster-mode servers that own every slot between them.
pub struct Cluster {
    /// The nodes, each a master with about a third of the slots.
    pub nodes: Vec<RedisServer>,
    /// The certificates of a TLS cluster.
    pub tls: Option<TestCerts>,
}

impl Cluster {
    /// Starts three nodes, joins them with `redis-cli --cluster create` and waits until
    /// the cluster is ok and consistent (at most 30 s, else a panic that says what
    /// the nodes report).
    pub fn start() -> Cluster {
        Self::start_with(None)
    }

    /// The same over TLS only: each node listens on a TLS port (`--port 0`), talks
    /// TLS on the cluster bus (`--tls-cluster yes`) and presents a certificate from
    /// `certs` (which names 127.0.0.1), whose CA clients must trust.
    pub fn start_tls(certs: &TestCerts) -> Cluster {
        Self::start_with(Some(certs))
    }

    fn start_with(tls: Option<&TestCerts>) -> Cluster {
        let began = Instant::now();
        let cluster_args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
        ];
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| match tls {
                None => RedisServer::start(&cluster_args),
                Some(certs) => RedisServer::launch(
                    "tlscluster",
                    free_cluster_port,
                    |_| {},
                    |port, dir| {
                        let mut args = vec![
                            "--port".to_owned(),
                            "0".to_owned(),
                            "--tls-port".to_owned(),
                            port.to_string(),
                            "--tls-cluster".to_owned(),
                            "yes".to_owned(),
                        ];
                        args.extend(base_args(dir));
                        args.extend(certs.server_args("no"));
                        args.extend(cluster_args.iter().map(|s| s.to_string()));
                        args
                    },
                    listening,
                    false,
                ),
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let cli = Cli::new(tls);
        // redis-cli waits for the nodes to join for as long as it takes: bound it.
        let mut child = cli
            .command()
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}; {HOW_TO_GET_REDIS_CLI}", cli.bin));
        let deadline = Instant::now() + Duration::from_secs(30);
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
        }
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("cannot wait for {}: {e}", cli.bin));
        assert!(
            out.status.success(),
            "redis-cli --cluster create {} failed or took over 30 s: {}{}; {HOW_TO_GET_REDIS}",
            addrs.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Cluster {
            nodes,
            tls: tls.cloned(),
        };
        cluster.wait_until_consistent(Duration::from_secs(30));
        eprintln!(
            "test cluster {} ready in {:?}",
            cluster.url(),
            began.elapsed()
        );
        cluster
    }

    /// `redis+cluster://127.0.0.1:P,127.0.0.1:Q,127.0.0.1:R/` (`rediss+cluster` for a
    /// TLS cluster).
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}+cluster://{}/", hosts.join(","))
    }

    /// The nodes' ports.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// Runs one command on the node at `port` (over TLS for a TLS cluster) and
    /// returns its reply as text.
    pub fn command(&self, port: u16, args: &[&str]) -> std::io::Result<String> {
        Cli::new(self.tls.as_ref()).run(port, args)
    }

    /// Waits until every node reports `cluster_state:ok` with all 16384 slots and
    /// three known nodes, and all nodes describe the same slot owners.
    pub fn wait_until_consistent(&self, limit: Duration) {
        let cli = Cli::new(self.tls.as_ref());
        wait_until_consistent(&self.ports(), limit, |port, args| cli.run(port, args));
    }
}

/// redis-cli, with the TLS flags of a TLS cluster.
struct Cli {
    bin: String,
    tls: Option<TestCerts>,
}

impl Cli {
    fn new(tls: Option<&TestCerts>) -> Cli {
        Cli {
            bin: redis_cli_bin(),
            tls: tls.cloned(),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        if let Some(certs) = &self.tls {
            cmd.arg("--tls").arg("--cacert").arg(certs.ca());
        }
        cmd
    }

    /// One command; the reply as text. Plain servers are asked without redis-cli.
    fn run(&self, port: u16, args: &[&str]) -> std::io::Result<String> {
        if self.tls.is_none() {
            return command(port, args);
        }
        let out = self
            .command()
            .arg("-p")
            .arg(port.to_string())
            .args(args)
            .output()?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// See [`Cluster::wait_until_consistent`]; for any cluster on loopback `ports`, asked
/// through `run(port, command)`.
pub fn wait_until_consistent(
    ports: &[u16],
    limit: Duration,
    run: impl Fn(u16, &[&str]) -> std::io::Result<String>,
) {
    let deadline = Instant::now() + limit;
    loop {
        let mut problems = Vec::new();
        let mut views = Vec::new();
        for &port in ports {
            match run(port, &["CLUSTER", "INFO"]) {
                Ok(info) => {
                    let info = info.replace("\r\n", "\n");
                    let ok = info.contains("cluster_state:ok")
                        && info.contains("cluster_slots_assigned:16384")
                        && info.contains(&format!("cluster_known_nodes:{}", ports.len()));
                    if !ok {
                        problems.push(format!("{port}: {}", info.replace('\n', " ")));
                    }
                }
                Err(e) => problems.push(format!("{port}: CLUSTER INFO failed: {e}")),
            }
            match run(port, &["CLUSTER", "NODES"]) {
                Ok(nodes) => views.push((port, slot_owners(&nodes))),
                Err(e) => problems.push(format!("{port}: CLUSTER NODES failed: {e}")),
            }
        }
        if let Some((first_port, first)) = views.first() {
            for (port, view) in &views[1..] {
                if view != first {
                    problems.push(format!(
                        "{port} sees slots {view:?}, {first_port} sees {first:?}"
                    ));
                }
            }
        }
        if problems.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the test cluster on ports {ports:?} is not ok after {limit:?}: {}",
            problems.join("; ")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Each master's address and slot ranges, sorted, from CLUSTER NODES.
fn slot_owners(nodes: &str) -> Vec<String> {
    let mut owners: Vec<String> = nodes
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 || !fields[2].contains("master") {
                return None;
            }
            // "127.0.0.1:7000@17000" -> "127.0.0.1:7000"
            let addr = fields[1].split('@').next().unwrap_or(fields[1]);
            Some(format!("{addr} {}", fields[8..].join(" ")))
        })
        .collect();
    owners.sort();
    owners
}
