//! Re-settlements of closed brackets, on every store (the embedded one, one Redis
//! server, a three-master cluster, a TLS server): the same scenarios, the same
//! answers. A cheater wins a bracket; the bracket is settled again without them.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use leaguekit::operator::{Actor, AuditQuery, ResettleReport};
use leaguekit::rollover::outcome::Movement;
use leaguekit::store::CorrectionStore;
use leaguekit::{Error, InputError, League, ManualClock, MemoryStore, Store, SubmitOptions};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test time")
        .with_timezone(&Utc)
}

/// Daily periods from 2026-01-05; brackets of 10; bronze promotes 20% (two of ten)
/// and rewards ranks 1 and 2.
fn season(prefix: &str) -> leaguekit::Season {
    leaguekit::Season::from_toml(
        &format!(
            r#"
name = "fix"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 10
join = "on_first_score"
[scoring]
mode = "best"
max_score = 1_000_000
time_resolution = "1s"
[[tiers]]
name = "bronze"
promote = "20%"
demote = 0
rewards = [{{ ranks = "1", grant = "gold-chest" }}, {{ ranks = "2", grant = "silver-chest" }}]
[[tiers]]
name = "silver"
promote = "20%"
demote = "20%"
[[tiers]]
name = "gold"
promote = 0
demote = "20%"
"#
        ),
        "fix.toml",
    )
    .expect("season")
}

/// Runs `$body` with a league on each store.
macro_rules! on_every_store {
    (@redis $form:ident, $store:ident, $name:ident, |$league:ident, $clock:ident| $body:block) => {
        #[tokio::test]
        async fn $form() {
            let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
            let store = common::$store().await;
            let prefix = common::unique_prefix(stringify!($name));
            let $league = Arc::new(League::with_clock(season(&prefix), store, Arc::new($clock.clone())));
            $body
        }
    };
    ($name:ident, |$league:ident, $clock:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
                let store = MemoryStore::with_clock(Arc::new($clock.clone()));
                let $league = Arc::new(League::with_clock(season("fixmem"), store, Arc::new($clock.clone())));
                $body
            }

            on_every_store!(@redis redis, redis_store, $name, |$league, $clock| $body);
            on_every_store!(@redis cluster, cluster_store, $name, |$league, $clock| $body);
            on_every_store!(@redis tls, tls_store, $name, |$league, $clock| $body);
        }
    };
}

/// Ten players in period 1's one bronze bracket: `cheat` first, then `p1` ... `p9`.
async fn play_period_one<S: Store>(league: &League<S>) {
    let at = t("2026-01-05T10:00:00Z");
    league
        .submit("cheat", 999, SubmitOptions::default().at(at))
        .await
        .expect("submit");
    for i in 1..10 {
        league
            .submit(&format!("p{i}"), 100 - i, SubmitOptions::default().at(at))
            .await
            .expect("submit");
    }
}

/// Closes period 1 (its end, plus the allowed skew).
async fn close_period_one<S: Store>(league: &League<S>, clock: &ManualClock) {
    clock.set(t("2026-01-06T00:00:10Z"));
    league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
}

fn actor() -> Actor {
    Actor::new("ops:test").expect("actor")
}

async fn resettle<S: Store>(league: &League<S>, exclude: &[&str]) -> Result<ResettleReport, Error> {
    let exclude: Vec<String> = exclude.iter().map(|s| (*s).to_owned()).collect();
    league
        .operator()
        .resettle(
            &actor(),
            1,
            "bronze",
            1,
            &exclude,
            "scores injected by a modified client",
        )
        .await
}

/// Every player's pending rewards, by player.
async fn pending<S: Store>(league: &League<S>) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    for p in std::iter::once("cheat".to_owned()).chain((1..10).map(|i| format!("p{i}"))) {
        let r = league.rewards(&p).await.expect("rewards");
        out.insert(p, r.into_iter().map(|g| (g.source, g.grant)).collect());
    }
    out
}

/// Period 1's outcome log: `(player, rank, outcome, next tier, reward, corrected)`.
async fn log<S: Store>(
    league: &League<S>,
) -> Vec<(String, u64, Movement, String, Option<String>, bool)> {
    league
        .outcomes(1, None, 1000)
        .await
        .expect("outcomes")
        .into_iter()
        .map(|r| {
            (
                r.player,
                r.rank,
                r.outcome,
                r.next_tier,
                r.reward,
                r.corrected,
            )
        })
        .collect()
}

fn input_err(e: Error) -> InputError {
    match e {
        Error::Input(i) => i,
        other => panic!("expected an input error, got {other:?}"),
    }
}

on_every_store!(the_runner_up_takes_the_cheaters_place, |league, clock| {
    play_period_one(&league).await;
    close_period_one(&league, &clock).await;
    let report = resettle(&league, &["cheat"]).await.expect("resettle");
    assert!(report.changed);
    assert_eq!(
        (report.version, report.excluded.clone()),
        (1, vec!["cheat".to_owned()])
    );
    // p1 (rank 2, promoted, silver chest) is now first: the gold chest too.
    let p1 = report
        .players
        .iter()
        .find(|p| p.player == "p1")
        .expect("p1");
    assert_eq!((p1.before.rank, p1.after.rank), (2, 1));
    assert_eq!(p1.granted.len(), 1);
    assert_eq!(p1.granted[0].grant, "gold-chest");
    assert_eq!(p1.granted[0].source, "1/bronze/1/c1");
    // p2 (rank 3, stayed, nothing) is now promoted, with the silver chest.
    let p2 = report
        .players
        .iter()
        .find(|p| p.player == "p2")
        .expect("p2");
    assert_eq!(
        (p2.before.outcome, p2.after.outcome),
        (Movement::Stayed, Movement::Promoted)
    );
    assert_eq!(p2.after.next_tier, "silver");
    assert!(p2.tier_credits.is_empty(), "{p2:?}");
    // The cheater: the pending chest revoked, the promotion gone.
    let cheat = report
        .players
        .iter()
        .find(|p| p.player == "cheat")
        .expect("cheat");
    assert!(cheat.excluded);
    assert_eq!(cheat.revoked.len(), 1);
    assert_eq!(cheat.revoked[0].grant, "gold-chest");
    assert!(cheat.not_revocable.is_empty(), "{cheat:?}");
    assert_eq!(
        (cheat.after.outcome, cheat.after.rank),
        (Movement::Stayed, 10)
    );
    assert_eq!(report.granted_now, 2);

    let rewards = pending(&league).await;
    assert_eq!(rewards["cheat"], vec![]);
    assert_eq!(
        rewards["p1"],
        vec![
            ("1/bronze/1".to_owned(), "silver-chest".to_owned()),
            ("1/bronze/1/c1".to_owned(), "gold-chest".to_owned())
        ]
    );
    assert_eq!(
        rewards["p2"],
        vec![("1/bronze/1/c1".to_owned(), "silver-chest".to_owned())]
    );
    // The outcome log shows the corrections, with the reason.
    let lines = log(&league).await;
    assert_eq!(lines[0].0, "p1");
    assert_eq!(
        lines[1],
        (
            "p2".to_owned(),
            2,
            Movement::Promoted,
            "silver".to_owned(),
            Some("silver-chest".to_owned()),
            true
        )
    );
    assert_eq!(lines[9].0, "cheat");
    assert!(lines.iter().all(|l| l.5), "every rank moved: {lines:?}");
    let records = league.outcomes(1, None, 1000).await.expect("outcomes");
    assert_eq!(
        records[0].reason.as_deref(),
        Some("scores injected by a modified client")
    );
    // Next period: p2 joins silver, the cheater stays in bronze.
    clock.set(t("2026-01-06T10:00:00Z"));
    assert_eq!(league.join("p2", None).await.expect("join").tier, "silver");
    assert_eq!(league.join("p1", None).await.expect("join").tier, "silver");
    assert_eq!(
        league.join("cheat", None).await.expect("join").tier,
        "bronze"
    );
    let audit = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(
        (audit[0].action.as_str(), audit[0].player.as_deref()),
        ("resettle", Some("cheat"))
    );
    assert_eq!(audit[0].actor, "ops:test");

    // Again, the same exclusions: nothing changes.
    let before = (pending(&league).await, log(&league).await);
    let again = resettle(&league, &["cheat"]).await.expect("again");
    assert!(!again.changed);
    assert_eq!(again.granted_now, 0);
    assert_eq!(again.version, 1);
    assert_eq!((pending(&league).await, log(&league).await), before);
    let audit = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
});

on_every_store!(
    a_player_already_placed_gets_a_tier_credit,
    |league, clock| {
        play_period_one(&league).await;
        close_period_one(&league, &clock).await;
        // Before the correction: p2 is placed in period 2 in bronze; the cheater claims
        // the chest and is placed in silver.
        clock.set(t("2026-01-06T10:00:00Z"));
        assert_eq!(league.join("p2", None).await.expect("join").tier, "bronze");
        assert_eq!(
            league.join("cheat", None).await.expect("join").tier,
            "silver"
        );
        assert_eq!(league.claim("cheat", None).await.expect("claim").len(), 1);
        let report = resettle(&league, &["cheat"]).await.expect("resettle");
        let p2 = report
            .players
            .iter()
            .find(|p| p.player == "p2")
            .expect("p2");
        assert_eq!(p2.tier_credits.len(), 1);
        assert_eq!(
            (p2.tier_credits[0].from_period, p2.tier_credits[0].steps),
            (3, 1)
        );
        let cheat = report
            .players
            .iter()
            .find(|p| p.player == "cheat")
            .expect("cheat");
        assert!(cheat.revoked.is_empty());
        assert_eq!(cheat.not_revocable.len(), 2, "{cheat:?}");
        // p2 plays period 2 alone in bronze (nobody promoted from a bracket of one), and
        // the credit lifts them one tier at their next placement, once.
        league
            .submit(
                "p2",
                5,
                SubmitOptions::default().at(t("2026-01-06T10:00:00Z")),
            )
            .await
            .expect("submit");
        clock.set(t("2026-01-07T10:00:00Z"));
        assert_eq!(league.join("p2", None).await.expect("join").tier, "silver");
        league
            .submit(
                "p2",
                5,
                SubmitOptions::default().at(t("2026-01-07T10:00:00Z")),
            )
            .await
            .expect("submit");
        clock.set(t("2026-01-08T10:00:00Z"));
        // Alone in silver, period 3: promote 20% of one is nobody; demote 20% of one too.
        assert_eq!(league.join("p2", None).await.expect("join").tier, "silver");
        // Again: the same credit, decided once.
        let again = resettle(&league, &["cheat"]).await.expect("again");
        let p2 = again.players.iter().find(|p| p.player == "p2").expect("p2");
        assert_eq!(
            (p2.tier_credits[0].from_period, p2.tier_credits[0].steps),
            (3, 1)
        );
    }
);

on_every_store!(exclusions_accumulate, |league, clock| {
    play_period_one(&league).await;
    close_period_one(&league, &clock).await;
    resettle(&league, &["cheat"]).await.expect("first");
    let second = resettle(&league, &["p1"]).await.expect("second");
    assert_eq!((second.version, second.changed), (2, true));
    assert_eq!(second.excluded, ["cheat", "p1"]);
    let rewards = pending(&league).await;
    // p1's chests (silver at the close, gold of version 1) are taken back; p2 keeps
    // version 1's silver chest and gets version 2's gold; p3 is promoted with silver.
    assert_eq!(rewards["p1"], vec![]);
    assert_eq!(
        rewards["p2"],
        vec![
            ("1/bronze/1/c1".to_owned(), "silver-chest".to_owned()),
            ("1/bronze/1/c2".to_owned(), "gold-chest".to_owned())
        ]
    );
    assert_eq!(
        rewards["p3"],
        vec![("1/bronze/1/c2".to_owned(), "silver-chest".to_owned())]
    );
    let lines = log(&league).await;
    let ranks: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(ranks[..3], ["p2", "p3", "p4"]);
    assert_eq!(ranks[8..], ["cheat", "p1"]);
    // Both at once again: nothing more.
    let before = pending(&league).await;
    let third = resettle(&league, &["p1", "cheat"]).await.expect("third");
    assert_eq!(
        (third.version, third.changed, third.granted_now),
        (2, false, 0)
    );
    assert_eq!(pending(&league).await, before);
    let audit = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 2);
});

on_every_store!(concurrent_resettles_grant_once, |league, clock| {
    play_period_one(&league).await;
    close_period_one(&league, &clock).await;
    let (a, b, c) = tokio::join!(
        resettle(&league, &["cheat"]),
        resettle(&league, &["cheat"]),
        resettle(&league, &["cheat"])
    );
    let granted: u64 = [a, b, c]
        .into_iter()
        .map(|r| r.expect("resettle").granted_now)
        .sum();
    assert_eq!(granted, 2);
    let rewards = pending(&league).await;
    assert_eq!(rewards["p1"].len(), 2);
    assert_eq!(rewards["p2"].len(), 1);
    assert_eq!(rewards["cheat"], vec![]);
    let audit = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
});

on_every_store!(bad_input_writes_nothing, |league, clock| {
    play_period_one(&league).await;
    let reason = "cheating";
    let op = league.operator();
    let ex = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
    // The period is still running.
    let e = op
        .resettle(&actor(), 1, "bronze", 1, &ex(&["cheat"]), reason)
        .await;
    assert!(matches!(
        input_err(e.expect_err("open")),
        InputError::BracketNotClosed { .. }
    ));
    close_period_one(&league, &clock).await;
    let cases: Vec<(u64, &str, u32, Vec<String>, &str)> = vec![
        (1, "bronze", 2, ex(&["cheat"]), reason),
        (1, "bronze", 0, ex(&["cheat"]), reason),
        (1, "platinum", 1, ex(&["cheat"]), reason),
        (0, "bronze", 1, ex(&["cheat"]), reason),
        (1, "bronze", 1, ex(&[]), reason),
        (1, "bronze", 1, ex(&["nobody"]), reason),
        (
            1,
            "bronze",
            1,
            ex(&[
                "cheat", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9",
            ]),
            reason,
        ),
        (1, "bronze", 1, ex(&["cheat"]), " "),
        (1, "bronze", 1, ex(&[""]), reason),
    ];
    let mut kinds = Vec::new();
    for (period, tier, bracket, exclude, why) in cases {
        let e = op
            .resettle(&actor(), period, tier, bracket, &exclude, why)
            .await
            .expect_err("refused");
        kinds.push(match input_err(e) {
            InputError::UnknownBracket { .. } => "unknown_bracket",
            InputError::BadBracket { .. } => "bad_bracket",
            InputError::UnknownTier { .. } => "unknown_tier",
            InputError::UnknownPeriod { .. } => "unknown_period",
            InputError::NoExclusions => "no_exclusions",
            InputError::NotInBracket { .. } => "not_in_bracket",
            InputError::ExcludesEveryone { .. } => "excludes_everyone",
            InputError::PlayerId { .. } => "invalid_player",
            InputError::Other(_) => "other",
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(
        kinds,
        [
            "unknown_bracket",
            "bad_bracket",
            "unknown_tier",
            "unknown_period",
            "no_exclusions",
            "not_in_bracket",
            "excludes_everyone",
            "other",
            "invalid_player"
        ]
    );
    // Nothing written: no correction, no audit entry, the log as it closed.
    let bk = league.keys().bracket(1, "bronze", 1);
    let record = league.store().correction(&bk).await.expect("record");
    assert!(record.versions.is_empty() && record.original.is_none());
    assert!(
        league
            .operator()
            .audit(&AuditQuery::default())
            .await
            .expect("audit")
            .is_empty()
    );
    assert!(log(&league).await.iter().all(|l| !l.5));
    // Exclusions that, with an earlier one, leave nobody.
    resettle(&league, &["cheat"]).await.expect("resettle");
    let rest = ex(&["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"]);
    let e = op.resettle(&actor(), 1, "bronze", 1, &rest, reason).await;
    assert!(matches!(
        input_err(e.expect_err("all")),
        InputError::ExcludesEveryone { players: 10 }
    ));
    let record = league.store().correction(&bk).await.expect("record");
    assert_eq!(record.versions.len(), 1);
});

on_every_store!(player_corrections_are_once_each, |league, clock| {
    use leaguekit::store::Revocation;
    play_period_one(&league).await;
    let store = league.store();
    let ttl = 3600;
    // A bracket not closed yet: nothing begins.
    let bk = league.keys().bracket(1, "bronze", 1);
    let exclude = ["cheat".to_owned()];
    let start = leaguekit::store::CorrectionStart::new(&exclude, 10, 0, "ops", "why");
    assert_eq!(
        store.begin_correction(&bk, &start).await.expect("begin"),
        leaguekit::store::Begun::NotClosed
    );
    assert!(
        store
            .correction(&bk)
            .await
            .expect("record")
            .versions
            .is_empty()
    );
    close_period_one(&league, &clock).await;

    let ana = league.keys().player("ana");
    // Granted once; revoked while pending; never granted again.
    assert!(
        store
            .grant_corrected(&ana, "1/bronze/1/c1", "gems", ttl)
            .await
            .expect("grant")
    );
    assert!(
        !store
            .grant_corrected(&ana, "1/bronze/1/c1", "gems", ttl)
            .await
            .expect("again")
    );
    assert_eq!(league.rewards("ana").await.expect("rewards").len(), 1);
    for _ in 0..2 {
        assert_eq!(
            store
                .revoke_reward(&ana, "1/bronze/1/c1", ttl)
                .await
                .expect("revoke"),
            Revocation::Revoked
        );
    }
    assert!(
        !store
            .grant_corrected(&ana, "1/bronze/1/c1", "gems", ttl)
            .await
            .expect("after")
    );
    assert!(league.rewards("ana").await.expect("rewards").is_empty());
    // Nothing to revoke: remembered all the same, so no grant comes after it.
    for _ in 0..2 {
        assert_eq!(
            store
                .revoke_reward(&ana, "1/bronze/1/c2", ttl)
                .await
                .expect("revoke"),
            Revocation::Absent
        );
    }
    assert!(
        !store
            .grant_corrected(&ana, "1/bronze/1/c2", "gems", ttl)
            .await
            .expect("after")
    );
    // A claimed reward stays.
    assert_eq!(league.claim("cheat", None).await.expect("claim").len(), 1);
    let cheat = league.keys().player("cheat");
    assert_eq!(
        store
            .revoke_reward(&cheat, "1/bronze/1", ttl)
            .await
            .expect("revoke"),
        Revocation::Claimed
    );
    // A tier credit decision: the first one stays.
    assert_eq!(
        store
            .decide_credit(&ana, "t:b", "3|1", ttl)
            .await
            .expect("decide"),
        "3|1"
    );
    assert_eq!(
        store
            .decide_credit(&ana, "t:b", "-", ttl)
            .await
            .expect("again"),
        "3|1"
    );
    assert_eq!(
        store
            .decide_credit(&ana, "t:a", "-", ttl)
            .await
            .expect("decide"),
        "-"
    );
    assert_eq!(
        store.credits(&ana).await.expect("credits"),
        [
            ("t:a".to_owned(), "-".to_owned()),
            ("t:b".to_owned(), "3|1".to_owned())
        ]
    );
    assert!(store.credits(&cheat).await.expect("credits").is_empty());
});
