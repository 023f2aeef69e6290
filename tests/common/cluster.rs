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
    /// The arguments every node got beyond the usual ones (`start_with_args`).
    extra: Vec<String>,
}

impl Cluster {
    /// Starts three nodes, joins them with `redis-cli --cluster create` and waits until
    /// the cluster is ok and consistent (at most 30 s, else a panic that says what
    /// the nodes report).
    pub fn start() -> Cluster {
        Self::start_with(None, &[])
    }

    /// The same with `extra` redis-server arguments on every node, such as
    /// `["--appendonly", "yes"]` for a cluster whose nodes keep their data when killed
    /// and restarted ([`Cluster::kill_and_restart`]).
    pub fn start_with_args(extra: &[&str]) -> Cluster {
        Self::start_with(None, extra)
    }

    /// The same over TLS only: each node listens on a TLS port (`--port 0`), talks
    /// TLS on the cluster bus (`--tls-cluster yes`) and presents a certificate from
    /// `certs` (which names 127.0.0.1), whose CA clients must trust.
    pub fn start_tls(certs: &TestCerts) -> Cluster {
        Self::start_with(Some(certs), &[])
    }

    fn start_with(tls: Option<&TestCerts>, extra: &[&str]) -> Cluster {
        let began = Instant::now();
        let cluster_args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
        ];
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| match tls {
                None => RedisServer::start(&[&cluster_args[..], extra].concat()),
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
            extra: extra.iter().map(|s| s.to_string()).collect(),
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

impl Cluster {
    /// The process id of node `i`'s redis-server (from `INFO server`), to stop it
    /// with [`signal`] while it cannot answer.
    pub fn pid(&self, i: usize) -> u32 {
        let port = self.nodes[i].port;
        let info = self
            .command(port, &["INFO", "server"])
            .unwrap_or_else(|e| panic!("INFO server on {port}: {e}"));
        info.lines()
            .find_map(|l| l.trim().strip_prefix("process_id:"))
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("no process_id in INFO server of {port}: {info}"))
    }

    /// Kills node `i` (SIGKILL, so nothing is saved on the way out) and starts a
    /// redis-server again on the same port from a copy of its directory: the same
    /// `nodes.conf` (its node id, epoch and slots) and, on a cluster started with
    /// `--appendonly yes`, the same data. `pid` is from [`Cluster::pid`] (the node may
    /// be stopped). Waits until the cluster is consistent again (30 s at most).
    pub fn kill_and_restart(&mut self, i: usize, pid: u32) {
        assert!(self.tls.is_none(), "kill_and_restart is for plain clusters");
        let port = self.nodes[i].port;
        // Stopped first, so its files are still while they are copied (and its
        // watchdog, which removes the directory once the server is gone, waits).
        signal(pid, "STOP");
        let saved = std::env::temp_dir().join(format!(
            "leaguekit-test-restart-{}-{port}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&saved);
        copy_dir(&self.nodes[i].dir, &saved);
        signal(pid, "KILL");
        let deadline = Instant::now() + Duration::from_secs(10);
        while listening(port) {
            assert!(
                Instant::now() < deadline,
                "node {port} still listens after SIGKILL"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Its watchdog cleans up and exits.
        drop(self.nodes.remove(i));
        let extra = self.extra.clone();
        let restarted = RedisServer::launch(
            "redis",
            || port,
            |dir| copy_dir(&saved, dir),
            |port, dir| {
                let mut args = vec!["--port".to_owned(), port.to_string()];
                args.extend(base_args(dir));
                args.extend(
                    [
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                    ]
                    .iter()
                    .map(|s| s.to_string()),
                );
                args.extend(extra.iter().cloned());
                args
            },
            super::ping,
            true,
        );
        let _ = std::fs::remove_dir_all(&saved);
        self.nodes.insert(i, restarted);
        self.wait_until_consistent(Duration::from_secs(30));
    }
}

/// A synchronous admin connection to one node of a plain test cluster.
pub fn admin(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection())
        .unwrap_or_else(|e| panic!("admin connection to {port}: {e}"))
}

/// The node id of the node on `port`.
pub fn node_id(port: u16) -> String {
    redis::cmd("CLUSTER")
        .arg("MYID")
        .query(&mut admin(port))
        .expect("cluster myid")
}

/// The master that owns `slot`, as its node id and port, as the node on `port`
/// sees it.
pub fn slot_owner(port: u16, slot: u16) -> (String, u16) {
    let nodes: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query(&mut admin(port))
        .expect("cluster nodes");
    for line in nodes.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 9 || !fields[2].contains("master") {
            continue;
        }
        let owns = fields[8..].iter().any(|range| {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            matches!((lo.parse::<u16>(), hi.parse::<u16>()), (Ok(lo), Ok(hi)) if lo <= slot && slot <= hi)
        });
        if owns {
            let addr = fields[1].split('@').next().expect("address");
            let owner_port = addr
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("port");
            return (fields[0].to_owned(), owner_port);
        }
    }
    panic!("no master owns slot {slot}: {nodes}");
}

/// Moves `slot` with its keys from the node on `from` to the node on `to`, as
/// `redis-cli --cluster reshard` does: IMPORTING, MIGRATING, MIGRATE in batches,
/// SETSLOT NODE on every node. `slowly` keeps the slot half-moved for a while (30 ms
/// before the first key, batches of 10 keys 3 ms apart), so that commands meet ASK
/// and TRYAGAIN. Returns the keys moved.
pub fn move_slot(ports: &[u16], slot: u16, from: u16, to: u16, slowly: bool) -> usize {
    let moving = SlotMove::begin(slot, from, to);
    if slowly {
        std::thread::sleep(Duration::from_millis(30));
    }
    let moved = moving.migrate_keys(slowly);
    moving.finish(ports);
    moved
}

/// A slot being moved from one master to another, in the steps of a resharding.
pub struct SlotMove {
    slot: u16,
    from: u16,
    to: u16,
    to_id: String,
}

impl SlotMove {
    /// IMPORTING on `to`, MIGRATING on `from`: from now on `from` answers ASK for a
    /// key of `slot` it does not hold.
    pub fn begin(slot: u16, from: u16, to: u16) -> SlotMove {
        let (from_id, to_id) = (node_id(from), node_id(to));
        let moving = SlotMove {
            slot,
            from,
            to,
            to_id,
        };
        moving.setslot(to, "IMPORTING", &from_id);
        moving.setslot(from, "MIGRATING", &moving.to_id);
        moving
    }

    fn setslot(&self, port: u16, how: &str, id: &str) {
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(self.slot)
            .arg(how)
            .arg(id)
            .query::<()>(&mut admin(port))
            .unwrap_or_else(|e| {
                panic!(
                    "slot {} from {} to {}: SETSLOT {how} on {port}: {e}",
                    self.slot, self.from, self.to
                )
            })
    }

    /// MIGRATE every key of the slot from `from` to `to` (10 at a time, 3 ms apart,
    /// when `slowly`; else 100 at a time). Returns the keys moved.
    pub fn migrate_keys(&self, slowly: bool) -> usize {
        let mut source = admin(self.from);
        let mut moved = 0;
        loop {
            let keys: Vec<Vec<u8>> = redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(self.slot)
                .arg(if slowly { 10 } else { 100 })
                .query(&mut source)
                .expect("getkeysinslot");
            if keys.is_empty() {
                break;
            }
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(self.to)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query::<()>(&mut source)
                .unwrap_or_else(|e| {
                    panic!(
                        "slot {} from {} to {}: migrate: {e}",
                        self.slot, self.from, self.to
                    )
                });
            moved += keys.len();
            if slowly {
                std::thread::sleep(Duration::from_millis(3));
            }
        }
        moved
    }

    /// SETSLOT NODE on the new owner, the old one and every other node of `ports`.
    pub fn finish(self, ports: &[u16]) {
        self.setslot(self.to, "NODE", &self.to_id);
        self.setslot(self.from, "NODE", &self.to_id);
        for &port in ports.iter().filter(|&&p| p != self.from && p != self.to) {
            self.setslot(port, "NODE", &self.to_id);
        }
    }
}

/// Sends `signal` (`STOP`, `CONT`, `KILL`) to the process `pid` with kill(1).
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap_or_else(|e| panic!("cannot run kill -{signal} {pid}: {e}"));
    assert!(status.success(), "kill -{signal} {pid}: {status}");
}

/// Copies the files of `from` (and of its subdirectories) into `to`.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("create {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| {
                panic!(
                    "copy {} to {}: {e}",
                    entry.path().display(),
                    target.display()
                )
            });
        }
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
