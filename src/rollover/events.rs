//! The events of a rollover: a closed bracket's (`bracket.closed` and each player's
//! outcome), each reward's grant, and the period's close.
//!
//! Their `at` is the period's end, the moment the outcomes take effect, so that a
//! re-run builds the same events (it appends none of them again: see
//! [`crate::store::RolloverStore::finish_with_outcomes`]).

use serde_json::json;

use crate::events::{Event, Kind};
use crate::rollover::outcome::{Movement, Outcome};
use crate::season::calendar::Period;

/// The events of a closed bracket: `bracket.closed`, then each player's outcome in
/// rank order.
pub(crate) fn bracket_closed(
    season: &str,
    period: &Period,
    tier: &str,
    bracket: u32,
    outcomes: &[Outcome],
) -> Vec<String> {
    let at = period.end.timestamp_millis();
    let active = outcomes.iter().filter(|o| !o.idle).count();
    let mut out = Vec::with_capacity(outcomes.len() + 1);
    out.push(
        Event::new(Kind::BracketClosed, season, period.id, at)
            .bracket(tier, bracket)
            .data(json!({"players": outcomes.len(), "active": active}))
            .body(),
    );
    for o in outcomes {
        let kind = match o.outcome {
            Movement::Promoted => Kind::Promoted,
            Movement::Stayed => Kind::Stayed,
            Movement::Demoted => Kind::Demoted,
        };
        out.push(
            Event::new(kind, season, period.id, at)
                .player(&o.player)
                .bracket(tier, bracket)
                .data(json!({
                    "rank": o.rank,
                    "score": o.score,
                    "idle": o.idle,
                    "next_tier": o.next_tier,
                    "reward": o.reward,
                }))
                .body(),
        );
    }
    out
}

/// The event of a reward granted to `player` from `source`.
pub(crate) fn granted(
    season: &str,
    period: &Period,
    player: &str,
    source: &str,
    grant: &str,
) -> String {
    Event::new(
        Kind::RewardGranted,
        season,
        period.id,
        period.end.timestamp_millis(),
    )
    .player(player)
    .data(json!({"source": source, "grant": grant}))
    .body()
}

/// The event of a closed period.
pub(crate) fn period_closed(season: &str, period: &Period, brackets: u64, players: u64) -> String {
    Event::new(
        Kind::PeriodClosed,
        season,
        period.id,
        period.end.timestamp_millis(),
    )
    .data(json!({"brackets": brackets, "players": players}))
    .body()
}
