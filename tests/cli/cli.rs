//! The command line as an operator uses it: JSON shapes on stdout, errors on stderr
//! with a non-zero exit code, against a real Redis.

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

struct Cli {
    config: tempfile::NamedTempFile,
    url: String,
}

/// An RFC 3339 time in whole seconds.
fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Now, in whole seconds.
fn now() -> DateTime<Utc> {
    let n = Utc::now();
    n - chrono::Duration::nanoseconds(i64::from(n.timestamp_subsec_nanos()))
}

impl Cli {
    /// The example season with daily periods whose first one ends at `first_end`, so
    /// the league clock (Redis's) runs inside the season, and `[clock] max_skew = 1s`.
    fn new(tag: &str) -> Cli {
        Cli::ending(tag, now() + chrono::Duration::hours(12))
    }

    fn ending(tag: &str, first_end: DateTime<Utc>) -> Cli {
        let start = first_end - chrono::Duration::days(1);
        let text = std::fs::read_to_string("config/season.toml")
            .expect("config/season.toml")
            .replacen(
                "key_prefix = \"lk\"",
                &format!("key_prefix = \"{}\"", common::unique_prefix(tag)),
                1,
            )
            .replacen("period = \"weekly\"", "period = \"daily\"", 1)
            .replacen(
                "start = 2026-01-05T00:00:00Z",
                &format!("start = {}", rfc(start)),
                1,
            )
            .replacen("max_skew = \"5s\"", "max_skew = \"1s\"", 1);
        assert!(
            !text.contains("key_prefix = \"lk\"")
                && !text.contains("period = \"weekly\"")
                && !text.contains("start = 2026-01-05T00")
                && text.contains("max_skew = \"1s\""),
            "the example season's prefix, period or start moved"
        );
        let mut config = tempfile::NamedTempFile::new().expect("temp");
        config.write_all(text.as_bytes()).expect("write");
        Cli {
            config,
            url: common::redis_url(),
        }
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
        c.arg("--config")
            .arg(self.config.path())
            .arg("--redis")
            .arg(&self.url)
            .args(args);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn leaguekit");
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        drop(child.stdin.take());
        child.wait_with_output().expect("wait")
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args, None);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
        serde_json::from_str(&text).expect("json")
    }

    fn fails(&self, args: &[&str], code: i32, needle: &str) {
        let out = self.run(args, None);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(out.stdout.is_empty(), "nothing on stdout for an error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort();
    k
}

#[test]
#[allow(non_snake_case)]
fn data_commands_print_their_json_shapes() {
    let cli = Cli::new("cli");
    let at = rfc(now() - chrono::Duration::minutes(1));
    let AT = at.as_str();
    let j = cli.json(&["join", "ana", "--at", AT]);
    assert_eq!(
        keys(&j),
        [
            "bracket",
            "last",
            "pending_rewards",
            "period",
            "player",
            "tier"
        ]
    );
    // The placing reply tells a new player there is nothing before.
    assert!(j["last"].is_null() && j["pending_rewards"] == serde_json::json!([]));
    assert_eq!(
        (j["tier"].as_str(), j["bracket"].as_u64()),
        (Some("bronze"), Some(1))
    );
    let s = cli.json(&["submit", "ana", "42", "--request-id", "r1", "--at", AT]);
    assert_eq!(
        keys(&s),
        [
            "applied",
            "bracket",
            "last",
            "pending_rewards",
            "period",
            "player",
            "rank",
            "score",
            "tier"
        ]
    );
    // Ana was placed by the join: this reply carries no news.
    assert!(s["last"].is_null() && s["pending_rewards"].is_null());
    assert_eq!(
        (s["score"].as_u64(), s["applied"].as_bool()),
        (Some(42), Some(true))
    );
    let again = cli.json(&["submit", "ana", "42", "--request-id", "r1", "--at", AT]);
    assert_eq!(
        (again["score"].as_u64(), again["applied"].as_bool()),
        (Some(42), Some(false))
    );
    let neg = cli.json(&["submit", "ana", "-2", "--at", AT]);
    assert_eq!(
        (neg["score"].as_u64(), neg["rank"].as_u64()),
        (Some(40), Some(1))
    );
    let unranked = cli.json(&["submit", "ana", "1", "--at", AT, "--no-rank"]);
    assert_eq!(unranked["score"].as_u64(), Some(41));
    assert!(unranked["rank"].is_null(), "{unranked}");
    cli.json(&["submit", "ana", "-1", "--at", AT]);
    let p = cli.json(&["profile", "ana", "name=Ana", "avatar=a.png"]);
    assert_eq!(p["profile"]["name"], "Ana");
    let period = s["period"].as_u64().expect("period").to_string();
    let st = cli.json(&[
        "standings",
        "bronze",
        "1",
        "--period",
        &period,
        "--limit",
        "10",
    ]);
    assert_eq!(
        keys(&st),
        ["bracket", "entries", "period", "players", "tier"]
    );
    assert_eq!(
        keys(&st["entries"][0]),
        ["player", "profile", "rank", "score"]
    );
    let me = cli.json(&["player", "ana", "--period", &period]);
    assert_eq!(
        keys(&me),
        [
            "bracket", "last", "period", "player", "rank", "score", "tier"
        ]
    );
    assert_eq!(me["rank"].as_u64(), Some(1));
    let ghost = cli.json(&["player", "ghost", "--period", &period]);
    assert!(ghost["bracket"].is_null() && ghost["rank"].is_null() && ghost["score"].is_null());
    // Around-me and counts: the library's shapes.
    cli.json(&["submit", "bea", "50", "--at", AT]);
    cli.json(&["submit", "cal", "10", "--at", AT]);
    let around = cli.json(&["around", "ana", "--radius", "1", "--period", &period]);
    assert_eq!(
        keys(&around),
        ["bracket", "entries", "period", "players", "tier"]
    );
    let names: Vec<&str> = around["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["player"].as_str().expect("player"))
        .collect();
    assert_eq!(names, ["bea", "ana", "cal"]);
    assert_eq!(around["entries"][1]["rank"].as_u64(), Some(2));
    let nobody = cli.run(&["around", "ghost", "--period", &period], None);
    assert_eq!(nobody.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&nobody.stdout).trim(), "null");
    cli.fails(&["around", "ana", "--radius", "501"], 2, "limit");
    let counts = cli.json(&["counts", "--period", &period]);
    let tiers = counts.as_array().expect("one entry per tier");
    assert_eq!(keys(&tiers[0]), ["brackets", "players", "tier"]);
    assert_eq!(
        (
            tiers[0]["tier"].as_str(),
            tiers[0]["players"].as_u64(),
            tiers[0]["brackets"].as_u64()
        ),
        (Some("bronze"), Some(3), Some(1))
    );
    assert!(tiers[1..].iter().all(|t| t["players"].as_u64() == Some(0)));
    let top = cli.json(&["top", "bronze", "--period", &period, "--limit", "2"]);
    assert_eq!(
        keys(&top),
        ["brackets", "entries", "frozen", "period", "tier"]
    );
    assert_eq!(
        keys(&top["entries"][0]),
        ["bracket", "player", "profile", "rank", "score"]
    );
    let names: Vec<&str> = top["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["player"].as_str().expect("player"))
        .collect();
    assert_eq!(names, ["bea", "ana"]);
    cli.fails(&["top", "bronze", "--limit", "1001"], 2, "limit");

    // Batch: one line out per line in, with its line number and status, errors in
    // place, a summary on stderr, exit code 2 if any was refused.
    let input = format!(
        "{{\"player\":\"bo\",\"value\":5,\"at\":\"{AT}\"}}\nnot json\n{{\"player\":\"cy\",\"value\":7,\"request_id\":\"x\",\"at\":\"{AT}\"}}\n{{\"player\":\"\",\"value\":1}}\n{{\"player\":\"cy\",\"value\":7,\"request_id\":\"x\",\"at\":\"{AT}\"}}\n"
    );
    let out = cli.run(&["submit", "--batch", "-"], Some(&input));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("5 line(s): 2 applied, 1 duplicate(s), 2 refused, 0 unknown"),
        "{err}"
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 5);
    let status: Vec<_> = lines
        .iter()
        .map(|l| l["status"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        status,
        ["applied", "refused", "applied", "refused", "duplicate"]
    );
    let numbers: Vec<_> = lines.iter().map(|l| l["line"].as_u64()).collect();
    assert_eq!(numbers, [Some(1), Some(2), Some(3), Some(4), Some(5)]);
    assert_eq!(lines[0]["score"].as_u64(), Some(5));
    assert_eq!(lines[2]["player"], "cy");
    assert!(
        lines[3]["error"]
            .as_str()
            .expect("error")
            .contains("player id")
    );
}

#[test]
#[allow(non_snake_case)]
fn errors_go_to_stderr_and_write_nothing() {
    let cli = Cli::new("clierr");
    let at = rfc(now() - chrono::Duration::minutes(1));
    let AT = at.as_str();
    // Times ahead of the league clock (Redis's) by more than max_skew are refused.
    let ahead = rfc(now() + chrono::Duration::hours(2));
    cli.fails(&["submit", "ana", "5", "--at", &ahead], 2, "in the future");
    cli.fails(&["join", "ana", "--at", &ahead], 2, "in the future");
    cli.fails(&["rollover", "--at", &ahead], 2, "in the future");
    cli.fails(&["submit", "ana", "5", "--at", "yesterday"], 2, "RFC 3339");
    cli.fails(
        &["submit", "ana", "5", "--at", "2020-01-01T00:00:00Z"],
        2,
        "before the season",
    );
    cli.fails(
        &["submit", "ana", "99999999999", "--at", AT],
        2,
        "outside 0..=",
    );
    cli.fails(&["standings", "mithril", "1"], 2, "unknown tier");
    cli.fails(&["profile", "ana", "email=x"], 2, "unknown profile field");
    let v = cli.json(&["player", "ana", "--period", "9"]);
    assert!(v["bracket"].is_null(), "nothing was written");
    let v = cli.json(&["player", "ana"]);
    assert!(v["bracket"].is_null(), "nothing was written");
    // No Redis given.
    let out = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .arg("--config")
        .arg(cli.config.path())
        .args(["join", "ana"])
        .env_remove("LEAGUEKIT_REDIS")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("LEAGUEKIT_REDIS"));
}

#[test]
fn check_validates_and_prints_limits() {
    let cli = Cli::new("check");
    let c = cli.json(&["check", "--json"]);
    assert!(c["max_score"].as_u64().is_some());
    assert!(c["tiers"].as_array().expect("tiers").len() >= 2);
    let p = &c["periods"][0];
    assert_eq!(keys(p), ["end", "id", "start"]);
    assert_eq!(c["brackets"]["size"], 100);
    assert!(
        c["brackets"]["early_cap"].is_null(),
        "no late seats by default"
    );
    assert!(c["events"].is_null(), "no event log by default");
    // The demo season of the README's walk-through is valid and has short periods.
    let out = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .args(["--config", "config/demo.toml", "check", "--json"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let demo: Value = serde_json::from_slice(&out.stdout).expect("json");
    let (start, end) = (&demo["periods"][0]["start"], &demo["periods"][0]["end"]);
    let length = chrono::DateTime::parse_from_rfc3339(end.as_str().expect("end")).expect("end")
        - chrono::DateTime::parse_from_rfc3339(start.as_str().expect("start")).expect("start");
    assert_eq!(length.num_seconds(), 120);
    // It logs events, overtakes included, for the live streams and webhooks.
    assert_eq!(demo["events"]["overtaken"], true, "{demo}");
    assert_eq!(demo["events"]["keep_secs"], 14 * 86_400);
    // A bad season: the message names file:line:col.
    let mut bad = tempfile::NamedTempFile::new().expect("temp");
    bad.write_all(b"name = \"x\"\nkey_prefix = \"lk\"\nbogus = 1\n")
        .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .arg("--config")
        .arg(bad.path())
        .arg("check")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:", bad.path().display())), "{err}");
}

#[test]
fn rollover_export_rewards_claim() {
    // Period 1 ends in a few seconds by the league clock.
    let end = now() + chrono::Duration::seconds(4);
    let cli = Cli::ending("cliroll", end);
    let at = rfc(now());
    for (p, v) in [("ana", 50), ("bo", 40), ("cy", 30)] {
        cli.json(&["submit", p, &v.to_string(), "--at", &at]);
    }
    // A dry run may look ahead; a real rollover may not, and nothing is closed early.
    let closes = rfc(end + chrono::Duration::seconds(1));
    let dry = cli.json(&["rollover", "--at", &closes, "--dry-run"]);
    assert_eq!(dry["closed"][0]["players"].as_u64(), Some(3));
    let early = cli.json(&["rollover"]);
    assert!(
        early["closed"].as_array().expect("list").is_empty(),
        "{early}"
    );
    assert!(
        cli.json(&["rewards", "ana"])["rewards"]
            .as_array()
            .expect("list")
            .is_empty()
    );
    // An export of the running period says when it will close, not to run a rollover.
    cli.fails(
        &["export", "--period", "1"],
        2,
        "is still running and takes events until",
    );
    // Wait until the period may close (its end plus max_skew) by the league clock.
    let wait = (end + chrono::Duration::milliseconds(1200) - Utc::now())
        .to_std()
        .unwrap_or_default();
    std::thread::sleep(wait);
    let r = cli.json(&["rollover"]);
    let first = &r["closed"][0];
    for k in [
        "period", "brackets", "players", "promoted", "demoted", "stayed", "rewards",
    ] {
        assert!(first.get(k).is_some(), "missing {k}: {first}");
    }
    assert_eq!(first["players"].as_u64(), Some(3), "{r}");
    let out = cli.run(&["export", "--period", "1"], None);
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        keys(&lines[0]),
        [
            "bracket",
            "next_tier",
            "outcome",
            "period",
            "player",
            "rank",
            "reward",
            "score",
            "tier"
        ]
    );
    let pending = cli.json(&["rewards", "ana"]);
    assert!(!pending["rewards"].as_array().expect("list").is_empty());
    let claimed = cli.json(&["claim", "ana", "--request-id", "c1"]);
    let again = cli.json(&["claim", "ana", "--request-id", "c1"]);
    assert_eq!(claimed["granted"], again["granted"]);
    assert!(
        cli.json(&["rewards", "ana"])["rewards"]
            .as_array()
            .expect("list")
            .is_empty()
    );
    let me = cli.json(&["player", "ana", "--period", "2"]);
    assert_eq!(
        keys(&me["last"]),
        [
            "bracket",
            "next_tier",
            "outcome",
            "period",
            "rank",
            "reward",
            "score",
            "tier"
        ]
    );
}

/// `check --against` compares the file with the live league; a file that lost a tier
/// with players in it exits 2 and says how to fix it.
#[test]
fn check_against_the_live_league() {
    let cli = Cli::new("against");
    let at = rfc(now() - chrono::Duration::minutes(1));
    cli.json(&["join", "ana", "--at", &at]);
    let same = cli.json(&["check", "--against", "--json"]);
    assert_eq!(keys(&same), ["changes", "refused", "running"]);
    assert_eq!(same["refused"], serde_json::json!([]));
    // The same league under a file without bronze, where ana is placed.
    let text = std::fs::read_to_string(cli.config.path()).expect("config");
    let lost = text.replacen("name = \"bronze\"", "name = \"copper\"", 1);
    let edited = Cli {
        config: {
            let mut f = tempfile::NamedTempFile::new().expect("temp");
            f.write_all(lost.as_bytes()).expect("write");
            f
        },
        url: cli.url.clone(),
    };
    let out = edited.run(&["check", "--against"], None);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("REFUSED: tier \"bronze\" has 1 player(s) placed")
            && said.contains("renamed_from = \"bronze\""),
        "{said}"
    );
    let renamed = lost.replacen(
        "name = \"copper\"",
        "name = \"copper\"\nrenamed_from = \"bronze\"",
        1,
    );
    std::fs::write(edited.config.path(), renamed).expect("write");
    let out = edited.run(&["check", "--against"], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("tier \"bronze\" is renamed \"copper\""),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Cohorts from the command line: join and first scores carry a label, reads take
/// --cohort, an undeclared label is refused.
#[test]
fn cohorts_on_the_command_line() {
    let cli = Cli::new("cohorts");
    let text = std::fs::read_to_string(cli.config.path()).expect("config");
    std::fs::write(
        cli.config.path(),
        text.replacen("# [cohorts]", "[cohorts]", 1).replacen(
            "# values = [\"eu\"",
            "values = [\"eu\"",
            1,
        ),
    )
    .expect("write");
    let at = rfc(now() - chrono::Duration::minutes(1));
    let j = cli.json(&["join", "ana", "--cohort", "eu", "--at", &at]);
    assert_eq!(
        (j["cohort"].as_str(), j["bracket"].as_u64()),
        (Some("eu"), Some(1))
    );
    let s = cli.json(&["submit", "bo", "7", "--cohort", "na", "--at", &at]);
    assert_eq!(s["cohort"].as_str(), Some("na"));
    let period = s["period"].as_u64().expect("period").to_string();
    let st = cli.json(&[
        "standings",
        "bronze",
        "1",
        "--cohort",
        "na",
        "--period",
        &period,
    ]);
    assert_eq!(
        (st["cohort"].as_str(), st["entries"][0]["player"].as_str()),
        (Some("na"), Some("bo"))
    );
    let counts = cli.json(&["counts", "--period", &period, "--cohort", "eu"]);
    assert_eq!(counts[0]["players"].as_u64(), Some(1));
    let top = cli.json(&["top", "bronze", "--period", &period]);
    assert_eq!(top["entries"].as_array().map(Vec::len), Some(2));
    cli.fails(
        &["join", "cy", "--cohort", "mars", "--at", &at],
        2,
        "unknown cohort",
    );
}

#[test]
fn ban_unban_and_bans_on_the_command_line() {
    let cli = Cli::new("clibans");
    cli.json(&["submit", "ana", "40"]);
    cli.json(&["submit", "bo", "10"]);
    // Bad input: typed errors on stderr, nothing written.
    cli.fails(
        &["ban", "ghost", "--reason", "x"],
        2,
        "unknown to the league",
    );
    cli.fails(
        &[
            "ban",
            "ana",
            "--reason",
            "x",
            "--until",
            "2020-01-01T00:00:00Z",
        ],
        2,
        "not after now",
    );
    cli.fails(&["ban", "ana", "--reason", ""], 2, "reason is empty");
    assert_eq!(cli.json(&["bans"]), serde_json::json!({"bans": []}));

    let until = rfc(now() + chrono::Duration::hours(2));
    let ban = cli.json(&["ban", "ana", "--reason", "aimbot", "--until", &until]);
    assert_eq!(keys(&ban), ["actor", "player", "reason", "since", "until"]);
    assert!(ban["actor"].as_str().is_some_and(|a| a.starts_with("cli:")));
    let bans = cli.json(&["bans"]);
    assert_eq!(bans["bans"][0]["player"], "ana");
    // Off the board, and refused.
    let page = cli.json(&["standings", "bronze", "1"]);
    assert_eq!(page["entries"].as_array().map(Vec::len), Some(1), "{page}");
    cli.fails(&["submit", "ana", "1"], 2, "is banned until");
    cli.fails(&["join", "ana"], 2, "leaguekit unban");

    let lifted = cli.json(&["unban", "ana", "--reason", "appeal"]);
    assert_eq!(lifted["lifted"]["reason"], "aimbot");
    assert_eq!(cli.json(&["submit", "ana", "2"])["score"], 2);
    assert_eq!(cli.json(&["bans"]), serde_json::json!({"bans": []}));
}

#[test]
fn adjust_changes_a_score_and_refuses_bad_input() {
    let cli = Cli::new("cli_adjust");
    cli.json(&["submit", "ana", "100"]);
    let done = cli.json(&["adjust", "ana", "--by", "-30", "--reason", "replayed match"]);
    assert_eq!(
        keys(&done),
        ["after", "before", "bracket", "period", "player", "tier"]
    );
    assert_eq!(
        (done["before"].as_u64(), done["after"].as_u64()),
        (Some(100), Some(70))
    );
    let done = cli.json(&["adjust", "ana", "--set", "5", "--reason", "ticket 7"]);
    assert_eq!(done["after"], 5);
    cli.fails(
        &["adjust", "ana", "--set", "-1", "--reason", "x"],
        2,
        "score would become -1",
    );
    cli.fails(
        &["adjust", "nobody", "--by", "1", "--reason", "x"],
        2,
        "not placed",
    );
    cli.fails(&["adjust", "ana", "--by", "1"], 2, "--reason");
    cli.fails(
        &["adjust", "ana", "--by", "1", "--set", "2", "--reason", "x"],
        2,
        "cannot be used with",
    );
    assert_eq!(cli.json(&["player", "ana"])["score"], 5);
}

#[test]
fn operator_commands_record_who_acted() {
    let cli = Cli::new("cliactor");
    cli.json(&["submit", "ana", "40"]);
    let ban = cli.json(&["--actor", "alice", "ban", "ana", "--reason", "aimbot"]);
    assert_eq!(ban["actor"], "cli:alice", "{ban}");
    // LEAGUEKIT_ACTOR says the same; with neither nor $USER, cli:unknown and a warning.
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
        c.arg("--config")
            .arg(cli.config.path())
            .arg("--redis")
            .arg(&cli.url)
            .args(args)
            .env_remove("LEAGUEKIT_ACTOR")
            .env_remove("USER")
            .env_remove("USERNAME");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("run leaguekit")
    };
    let out = run(
        &[("LEAGUEKIT_ACTOR", "bob")],
        &["unban", "ana", "--reason", "appeal"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&[], &["ban", "ana", "--reason", "again"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cli:unknown") && err.contains("--actor"),
        "{err}"
    );
    let out = run(&[("LEAGUEKIT_ACTOR", "bad\nname")], &["unban", "ana"]);
    assert_eq!(out.status.code(), Some(2), "a control character is refused");
    let audit = cli.json(&["audit"]);
    let actors: Vec<&str> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["actor"].as_str())
        .collect();
    assert_eq!(actors, ["cli:alice", "cli:bob", "cli:unknown"], "{audit}");
}
