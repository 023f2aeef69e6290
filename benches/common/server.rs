//! A redis-server a benchmark starts for itself on a free port, optionally under
//! callgrind (to count Redis's instructions a phase), killed and its directory removed
//! on drop (unless its callgrind files are kept).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::free_port;

/// A redis-server this program started.
pub struct Server {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its directory (its callgrind files).
    pub dir: PathBuf,
    /// Whether it runs under callgrind.
    pub callgrind: bool,
    dumps: usize,
    /// Keep the callgrind files (one a phase) for callgrind_annotate.
    keep: bool,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Server {
    /// Starts `binary` (a redis-server), under callgrind if `callgrind`, its files in
    /// a directory named after `tag`; waits until it answers.
    pub fn start(binary: &str, callgrind: bool, keep: bool, tag: &str) -> Result<Server, String> {
        let tools: &[&str] = if callgrind {
            &["valgrind", "callgrind_control", "redis-cli"]
        } else {
            &["redis-cli"]
        };
        for tool in tools {
            Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| {
                    format!(
                        "{tool} is needed ({e}): apt-get install valgrind redis-server redis-tools"
                    )
                })?;
        }
        Command::new(binary)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("{binary} does not run ({e}): give a redis-server"))?;
        let dir = std::env::temp_dir().join(format!("leaguekit-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let port = free_port();
        let mut cmd = if callgrind {
            let mut c = Command::new("valgrind");
            c.arg("--tool=callgrind")
                .arg(format!(
                    "--callgrind-out-file={}",
                    dir.join("cg.out").display()
                ))
                .arg(binary);
            c
        } else {
            Command::new(binary)
        };
        let child = cmd
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{binary}: {e}"))?;
        let server = Server {
            child,
            port,
            dir,
            callgrind,
            dumps: 0,
            keep,
        };
        let t = Instant::now();
        while !server.cli(&["ping"]).contains("PONG") {
            if t.elapsed() > Duration::from_secs(60) {
                return Err("redis-server did not answer in 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(server)
    }

    /// redis-cli's output of `args` against this server ("" if it fails).
    pub fn cli(&self, args: &[&str]) -> String {
        Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    fn control(&self, what: &str) -> Result<(), String> {
        let out = Command::new("callgrind_control")
            .arg(what)
            .arg(self.child.id().to_string())
            .output()
            .map_err(|e| format!("callgrind_control: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "callgrind_control {what}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Calls of `command` (lower case) the server has answered, from INFO
    /// commandstats.
    pub fn calls(&self, command: &str) -> u64 {
        let prefix = format!("cmdstat_{command}:");
        self.cli(&["info", "commandstats"])
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .filter_map(|l| {
                l.split("calls=")
                    .nth(1)?
                    .split(',')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    }

    /// Runs `work` and answers the server's instructions over it (under callgrind) and
    /// the calls of `command` it made; with `keep`, the phase's callgrind file is kept
    /// as `phase.callgrind`.
    pub async fn count<F: std::future::Future<Output = Result<(), String>>>(
        &mut self,
        phase: &str,
        command: &str,
        work: F,
    ) -> Result<(u64, u64), String> {
        let calls = self.calls(command);
        self.control("--zero")?;
        work.await?;
        self.control("--dump")?;
        let calls = self.calls(command) - calls;
        self.dumps += 1;
        let file = self.dir.join(format!("cg.out.{}", self.dumps));
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let total = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("summary:")
                    .or_else(|| l.strip_prefix("totals:"))
            })
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .ok_or_else(|| format!("no summary in {}", file.display()))?;
        if self.keep {
            let kept = self.dir.join(format!("{phase}.callgrind"));
            std::fs::rename(&file, &kept).map_err(|e| format!("{}: {e}", kept.display()))?;
        } else {
            let _ = std::fs::remove_file(&file);
        }
        Ok((total, calls))
    }
}
