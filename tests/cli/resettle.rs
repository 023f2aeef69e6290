//! `leaguekit resettle` as an operator runs it, against a real Redis: a cheater wins a
//! bracket, the period closes, the bracket is settled again without them. (Banning
//! the cheater is a command of its own; the re-settlement excludes them either way.)

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Daily periods, the first ending at `end`; bronze promotes its winner, who earns
/// gems:100 (the runner-up gems:20).
fn season(prefix: &str, end: DateTime<Utc>) -> String {
    format!(
        r#"
name = "fix"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = {start}
[clock]
max_skew = "1s"
[brackets]
size = 100
[scoring]
mode = "increment"
max_score = 1_000_000
[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{{ ranks = "1", grant = "gems:100" }}, {{ ranks = "2", grant = "gems:20" }}]
[[tiers]]
name = "silver"
promote = 0
demote = 1
"#,
        start = rfc(end - chrono::Duration::days(1))
    )
}

struct Cli {
    config: tempfile::NamedTempFile,
    url: String,
}

impl Cli {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .arg("--config")
            .arg(self.config.path())
            .arg("--redis")
            .arg(&self.url)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .expect("run leaguekit")
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
        serde_json::from_str(&text).expect("json")
    }

    fn lines(&self, args: &[&str]) -> Vec<Value> {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    }

    fn fails(&self, args: &[&str], needle: &str) {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "nothing on stdout for an error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

fn rewards(cli: &Cli, player: &str) -> Value {
    cli.json(&["rewards", player])["rewards"].clone()
}

#[test]
fn a_cheater_is_excluded_and_the_runner_up_takes_the_place() {
    let end = Utc::now() + chrono::Duration::seconds(4);
    let mut config = tempfile::NamedTempFile::new().expect("temp");
    config
        .write_all(season(&common::unique_prefix("resettle"), end).as_bytes())
        .expect("write");
    let cli = Cli {
        config,
        url: common::redis_url(),
    };
    let at = rfc(Utc::now());
    for (p, v) in [("cheat", 99_999), ("ana", 50), ("bo", 40)] {
        cli.json(&["submit", p, &v.to_string(), "--at", &at]);
    }
    let resettle = [
        "resettle",
        "--period",
        "1",
        "--tier",
        "bronze",
        "--bracket",
        "1",
        "--exclude",
        "cheat",
        "--reason",
        "speed hack",
    ];
    // Not closed yet: refused, nothing written.
    cli.fails(&resettle, "not closed yet");
    let wait = (end + chrono::Duration::milliseconds(1300) - Utc::now())
        .to_std()
        .unwrap_or_default();
    std::thread::sleep(wait);
    assert_eq!(cli.json(&["rollover"])["closed"][0]["players"], 3);
    assert_eq!(
        rewards(&cli, "cheat"),
        json!([{"source": "1/bronze/1", "grant": "gems:100"}])
    );
    // The cheater is banned: a ban changes no closed bracket, the re-settlement does.
    cli.json(&["ban", "cheat", "--reason", "speed hack"]);
    assert_eq!(
        rewards(&cli, "cheat"),
        json!([{"source": "1/bronze/1", "grant": "gems:100"}])
    );

    // Bad input: a typed error on stderr, exit 2, nothing written.
    cli.fails(
        &[
            "resettle",
            "--period",
            "1",
            "--tier",
            "bronze",
            "--bracket",
            "2",
            "--exclude",
            "cheat",
            "--reason",
            "x",
        ],
        "has no bracket 2",
    );
    cli.fails(
        &[
            "resettle",
            "--period",
            "1",
            "--tier",
            "bronze",
            "--bracket",
            "1",
            "--exclude",
            "zed",
            "--reason",
            "x",
        ],
        "was not on the closed board",
    );
    cli.fails(
        &[
            "resettle",
            "--period",
            "1",
            "--tier",
            "bronze",
            "--bracket",
            "1",
            "--exclude",
            "cheat",
            "ana",
            "bo",
            "--reason",
            "x",
        ],
        "leave nobody",
    );
    cli.fails(
        &[
            "resettle",
            "--period",
            "1",
            "--tier",
            "bronze",
            "--bracket",
            "1",
            "--reason",
            "x",
        ],
        "--exclude",
    );
    let closed = cli.lines(&["export", "--period", "1"]);
    assert!(
        closed.iter().all(|l| l.get("corrected").is_none()),
        "{closed:?}"
    );

    let report = cli.json(&resettle);
    assert_eq!(
        (report["version"].as_u64(), report["changed"].as_bool()),
        (Some(1), Some(true))
    );
    // Ana gets the winner's gems:100, Bo (now second) gems:20.
    assert_eq!(report["granted_now"], 2);
    let ana = &report["players"][0];
    assert_eq!(ana["player"], "ana");
    assert_eq!(ana["before"]["outcome"], "stayed");
    assert_eq!(ana["after"]["outcome"], "promoted");
    assert_eq!(ana["after"]["next_tier"], "silver");
    assert_eq!(
        ana["granted"],
        json!([{"source": "1/bronze/1/c1", "grant": "gems:100"}])
    );
    let cheat = report["players"]
        .as_array()
        .expect("players")
        .iter()
        .find(|p| p["player"] == "cheat")
        .expect("cheat");
    assert_eq!(
        cheat["revoked"],
        json!([{"source": "1/bronze/1", "grant": "gems:100"}])
    );
    assert_eq!(cheat["after"]["outcome"], "stayed");

    // The runner-up has the winner's reward once (and keeps their own), and joins the
    // next period in silver; the cheater has nothing and stays in bronze.
    let ana_rewards = json!([
        {"source": "1/bronze/1", "grant": "gems:20"},
        {"source": "1/bronze/1/c1", "grant": "gems:100"}
    ]);
    assert_eq!(rewards(&cli, "ana"), ana_rewards);
    assert_eq!(rewards(&cli, "cheat"), json!([]));
    assert_eq!(
        rewards(&cli, "bo"),
        json!([{"source": "1/bronze/1/c1", "grant": "gems:20"}])
    );
    let export = cli.lines(&["export", "--period", "1"]);
    assert_eq!(export[0]["player"], "ana");
    assert_eq!(export[0]["corrected"], true);
    assert_eq!(export[0]["reason"], "speed hack");
    assert_eq!(export[2]["player"], "cheat");
    assert_eq!(export[2]["outcome"], "stayed");

    // Again: nothing changes.
    let again = cli.json(&resettle);
    assert_eq!(
        (again["changed"].as_bool(), again["granted_now"].as_u64()),
        (Some(false), Some(0))
    );
    assert_eq!(rewards(&cli, "ana"), ana_rewards);
    assert_eq!(cli.lines(&["export", "--period", "1"]), export);

    assert_eq!(cli.json(&["join", "ana"])["tier"], "silver");
    assert_eq!(cli.json(&["join", "bo"])["tier"], "bronze");
    cli.fails(&["join", "cheat"], "banned");
    // Both actions are in the audit log; once unbanned, the cheater plays bronze.
    let audit = cli.json(&["audit", "--player", "cheat"]);
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(actions, ["ban", "resettle"], "{audit}");
    cli.json(&["unban", "cheat", "--reason", "appeal"]);
    assert_eq!(cli.json(&["join", "cheat"])["tier"], "bronze");
}
