//! Random sequences of joins, updates and reads run against both stores; every answer
//! and every standings read must be the same.

use crate::common;

use chrono::{DateTime, Duration, Utc};
use leaguekit::SubmitOptions;
use leaguekit::{League, MemoryStore, Season, Store};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

#[derive(Debug, Clone)]
enum Op {
    Join(u8),
    Submit {
        player: u8,
        value: i64,
        secs: u32,
        request: Option<u8>,
    },
    Read {
        tier: u8,
        bracket: u32,
    },
    Player(u8),
}

/// Few distinct values, so equal scores (and so the time tiebreak) are common; some
/// values are out of range for every mode.
fn value() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => prop::sample::select(vec![-10i64, 0, 10, 20, 30]),
        1 => -600i64..700,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0u8..7).prop_map(Op::Join),
        6 => (0u8..7, value(), prop_oneof![9 => 0u32..80_000, 1 => 80_000u32..200_000], proptest::option::of(0u8..6))
            .prop_map(|(player, value, secs, request)| Op::Submit { player, value, secs, request }),
        1 => (0u8..2, 1u32..5).prop_map(|(tier, bracket)| Op::Read { tier, bracket }),
        1 => (0u8..7).prop_map(Op::Player),
    ]
}

fn season(prefix: &str, mode: &str) -> Season {
    let text = format!(
        r#"
name = "props"
key_prefix = "{prefix}"
[schedule]
timezone = "Europe/Berlin"
period = "daily"
start = "2026-03-27T00:00:00+01:00"
[brackets]
size = 3
[scoring]
mode = "{mode}"
max_score = 500
[profiles]
fields = ["name"]
[[tiers]]
name = "low"
promote = 1
demote = 0
[[tiers]]
name = "high"
promote = 0
demote = 1
"#
    );
    Season::from_toml(&text, "props.toml").expect("valid season")
}

/// Runs `ops` and renders every answer as text, so two stores can be compared.
async fn run<S: Store>(league: &League<S>, ops: &[Op]) -> Vec<String> {
    let start: DateTime<Utc> = league.season().schedule.start;
    let tiers = ["low", "high"];
    let mut out = Vec::new();
    for op in ops {
        let line = match op {
            Op::Join(p) => format!(
                "{:?}",
                league
                    .join(&format!("p{p}"), Some(start))
                    .await
                    .map_err(|e| e.to_string())
            ),
            Op::Submit {
                player,
                value,
                secs,
                request,
            } => {
                let mut o =
                    SubmitOptions::default().at(start + Duration::seconds(i64::from(*secs)));
                if let Some(r) = request {
                    o = o.request_id(format!("r{r}"));
                }
                format!(
                    "{:?}",
                    league
                        .submit(&format!("p{player}"), *value, o)
                        .await
                        .map_err(|e| e.to_string())
                )
            }
            Op::Read { tier, bracket } => format!(
                "{:?}",
                league
                    .standings(tiers[*tier as usize], *bracket, Some(1), 0, 100)
                    .await
                    .map_err(|e| e.to_string())
            ),
            Op::Player(p) => format!(
                "{:?}",
                league
                    .player(&format!("p{p}"), Some(1))
                    .await
                    .map_err(|e| e.to_string())
            ),
        };
        out.push(line);
    }
    // Finish with a full read of every bracket.
    for tier in tiers {
        for bracket in 1..=4 {
            out.push(format!(
                "{:?}",
                league
                    .standings(tier, bracket, Some(1), 0, 100)
                    .await
                    .map_err(|e| e.to_string())
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 150,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn stores_agree(ops in proptest::collection::vec(op(), 1..60), mode in 0usize..3) {
        let mode = ["increment", "best", "set"][mode];
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let (mem, red) = rt.block_on(async {
            let mem = League::new(season("lkmem", mode), MemoryStore::new());
            let prefix = common::unique_prefix("props");
            let red = League::new(season(&prefix, mode), common::redis_store().await);
            (run(&mem, &ops).await, run(&red, &ops).await)
        });
        prop_assert_eq!(mem, red);
    }
}
