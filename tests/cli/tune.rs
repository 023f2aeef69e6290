//! The tuner: the `[tune]` section's checks, the rewrite of a season file with new
//! quotas, a deterministic search that never ends worse than it started, and
//! `leaguekit simulate --tune` writing a season that `leaguekit check` accepts.

use std::process::Command;

use leaguekit::Season;
use leaguekit::season::{Knob, Quota, rewrite_late_seats, rewrite_quotas};
use leaguekit::sim::{SimOptions, tune::tune};

fn text(tune: &str) -> String {
    format!(
        r#"# a test season
name = "tunetest"
key_prefix = "t"
[schedule]
timezone = "UTC"
period = "weekly"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 20
[scoring]
max_score = 100000
[[tiers]]
name = "bronze"
promote = 5       # keep this comment
demote = 0
[[tiers]]
name = "silver"
promote = "20%"
demote = 3
[[tiers]]
name = "gold"
promote = 0
demote = 4
[simulation]
players = 3000
seed = 3
{tune}
"#
    )
}

const TUNE: &str = "[tune]\nafter = 4\ntargets = { gold = \"15%\", silver = \"30%\" }\ntrials = 14";

#[test]
fn the_tune_section_is_read_and_checked() {
    let s = Season::from_toml(&text(TUNE), "t.toml").expect("valid");
    let t = s.tune.expect("[tune]");
    assert_eq!(t.after, 4);
    assert_eq!(t.trials, 14);
    // In tier order, whatever the order written.
    assert_eq!(
        t.targets,
        vec![("silver".into(), 30.0), ("gold".into(), 15.0)]
    );
    assert_eq!(t.vary, vec![Knob::Promote, Knob::Demote]);
    let bad = [
        (
            "[tune]\nafter = 0\ntargets = { gold = \"1%\" }",
            "tune.after = 0",
        ),
        (
            "[tune]\nafter = 3\ntargets = { platinum = \"1%\" }",
            "bronze, silver, gold",
        ),
        (
            "[tune]\nafter = 3\ntargets = { gold = \"120%\" }",
            "from \"0%\" to \"100%\"",
        ),
        ("[tune]\nafter = 3\ntargets = { gold = 10 }", "\"0.5%\""),
        (
            "[tune]\nafter = 3\ntargets = { gold = \"60%\", silver = \"50%\" }",
            "more than 100%",
        ),
        ("[tune]\nafter = 3\ntargets = {}", "is empty"),
        (
            "[tune]\nafter = 3\ntargets = { gold = \"1%\" }\nvary = [\"rewards\"]",
            "can vary",
        ),
        (
            "[tune]\nafter = 3\ntargets = { gold = \"1%\" }\nvary = [\"demote\", \"demote\"]",
            "twice",
        ),
        ("[tune]\ntargets = { gold = \"1%\" }", "missing key `after`"),
        (
            "[tune]\nafter = 3\ntargets = { gold = \"1%\" }\nsteps = 2",
            "unknown key",
        ),
    ];
    for (section, why) in bad {
        let e = Season::from_toml(&text(section), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.toml:"), "{e}");
        assert!(e.contains(why), "{section}: {e}");
    }
}

#[test]
fn a_rewrite_changes_only_the_quotas() {
    let original = text(TUNE);
    let quotas = [
        (Quota::Count(7), Quota::Count(0)),
        (Quota::Percent(35), Quota::Count(2)),
        (Quota::Count(0), Quota::Percent(10)),
    ];
    let new = rewrite_quotas(&original, "t.toml", &quotas).expect("rewrite");
    let s = Season::from_toml(&new, "t.toml").expect("valid");
    let got: Vec<(Quota, Quota)> = s.tiers.iter().map(|t| (t.promote, t.demote)).collect();
    assert_eq!(got, quotas);
    assert!(
        new.contains("promote = 7       # keep this comment"),
        "{new}"
    );
    assert!(new.contains("promote = \"35%\"") && new.contains("demote = \"10%\""));
    // Everything but the quota lines is as written.
    let other = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("promote") && !l.starts_with("demote"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(other(&original), other(&new));
    // Quotas the season file would refuse are refused.
    let e = rewrite_quotas(
        &original,
        "t.toml",
        &[
            (Quota::Count(15), Quota::Count(0)),
            (Quota::Count(15), Quota::Count(15)),
            (Quota::Count(0), Quota::Count(4)),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("more than brackets.size"), "{e}");
    let e = rewrite_quotas(&original, "t.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("3 tiers but 0"), "{e}");
}

#[test]
fn the_search_is_deterministic_and_never_worse() {
    let s = Season::from_toml(&text(TUNE), "t.toml").expect("valid");
    let options = SimOptions::from_season(&s);
    let a = tune(&s, &options, 2, |_, _| {}).expect("tune");
    let b = tune(&s, &options, 1, |_, _| {}).expect("tune");
    assert_eq!(
        serde_json::to_string(&a.report).expect("json"),
        serde_json::to_string(&b.report).expect("json")
    );
    let r = &a.report;
    assert!(
        r.trials.len() <= 14 && r.trials.len() > 1,
        "{}",
        r.trials.len()
    );
    assert_eq!(
        r.trials[0].quotas[0].promote, "5",
        "trial 1 is the current season"
    );
    assert!(r.best_distance <= r.current_distance);
    assert!(
        r.best_distance < r.current_distance,
        "the search found something better: {r:?}"
    );
    // The best trial is the one whose quotas are returned, and its distance is the best.
    let best = &r.trials[r.best_trial as usize - 1];
    assert!(best.best);
    assert_eq!(best.distance, r.best_distance);
    assert_eq!(best.quotas, r.best);
    assert!(r.trials.iter().all(|t| t.distance >= r.best_distance));
    // The bottom tier's demote and the top tier's promote never move.
    assert!(
        r.trials
            .iter()
            .all(|t| t.quotas[0].demote == "0" && t.quotas[2].promote == "0")
    );
    // The tuned report is the simulation of the best quotas.
    let shares = a.tuned.active_shares(3).expect("shares");
    assert!((100.0 * shares["gold"] - best.shares["gold"]).abs() < 0.01);
    // A season without [tune] is refused with what to add.
    let plain = Season::from_toml(&text(""), "t.toml").expect("valid");
    let e = tune(&plain, &options, 1, |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("no [tune] section"), "{e}");
}

#[test]
fn simulate_tune_writes_a_season_that_check_accepts() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("season.toml");
    std::fs::write(&config, text(TUNE)).expect("write");
    let out = dir.path().join("out");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .args(args)
            .output()
            .expect("run leaguekit")
    };
    let o = run(&[
        "--config".as_ref(),
        config.as_os_str(),
        "simulate".as_ref(),
        "--tune".as_ref(),
        "--quiet".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("distance") && stdout.contains("-> tuned"),
        "{stdout}"
    );
    for f in [
        "tuned.toml",
        "tune.json",
        "tune-progress.svg",
        "tune-progress.png",
        "tuned.svg",
        "tuned.png",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let tuned = out.join("tuned.toml");
    let o = run(&["--config".as_ref(), tuned.as_os_str(), "check".as_ref()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune.json")).expect("tune.json"))
            .expect("json");
    let s = Season::load(&tuned).expect("tuned season");
    let best = report["best"].as_array().expect("best");
    for (t, b) in s.tiers.iter().zip(best) {
        let fmt = |q: Quota| match q {
            Quota::Count(n) => n.to_string(),
            Quota::Percent(p) => format!("{p}%"),
            _ => unreachable!("no other quota"),
        };
        assert_eq!(fmt(t.promote), b["promote"].as_str().expect("promote"));
        assert_eq!(fmt(t.demote), b["demote"].as_str().expect("demote"));
    }
}

/// With a fairness target the search also moves `[brackets] early_cap` and
/// `late_after`, and the tuned file carries them.
#[test]
fn a_fairness_target_tunes_the_late_seats() {
    let tune_text = "[tune]\nafter = 3\ntargets = {}\nlate_promotion_within = \"0%\"\ntrials = 12";
    let t = text(tune_text).replace("seed = 3\n", "seed = 3\narrival = \"uniform\"\n");
    let s = Season::from_toml(&t, "t.toml").expect("valid");
    assert_eq!(
        s.tune.as_ref().and_then(|t| t.late_promotion_within),
        Some(0.0)
    );
    let options = SimOptions::from_season(&s);
    let a = tune(&s, &options, 2, |_, _| {}).expect("tune");
    let r = &a.report;
    assert!(
        r.trials[0].late_seats.is_none(),
        "trial 1 is the current season"
    );
    assert!(r.trials[0].late_vs_early.is_some());
    assert!(
        r.trials.iter().any(|t| t.late_seats.is_some()),
        "the late seats moved: {r:?}"
    );
    assert!(r.best_distance <= r.current_distance);
    // The tuned file: the quotas and the late seats, valid.
    let q = rewrite_quotas(&t, "t.toml", &a.quotas).expect("quotas");
    let out = rewrite_late_seats(&q, "t.toml", Some((15, 40))).expect("late seats");
    let tuned = Season::from_toml(&out, "t.toml").expect("valid");
    let late = tuned.brackets.late.expect("late seats");
    assert_eq!(late.early_cap, 15);
    assert!(out.contains("keep this comment"));
    // Set again (keys present) and removed.
    let again = rewrite_late_seats(&out, "t.toml", Some((12, 70))).expect("again");
    assert_eq!(
        Season::from_toml(&again, "t.toml")
            .expect("valid")
            .brackets
            .late
            .map(|l| l.early_cap),
        Some(12)
    );
    let none = rewrite_late_seats(&again, "t.toml", None).expect("none");
    assert!(
        Season::from_toml(&none, "t.toml")
            .expect("valid")
            .brackets
            .late
            .is_none()
    );
    // A bad target is refused with what to write.
    let bad = text("[tune]\nafter = 3\ntargets = {}\nlate_promotion_within = 20");
    let e = Season::from_toml(&bad, "t.toml").unwrap_err().to_string();
    assert!(
        e.contains("late_promotion_within") && e.contains("\"20%\""),
        "{e}"
    );
}
