//! The full engine path: every event goes through [`League`] on a [`Store`] (the
//! embedded store or Redis), exactly as a game server's would: joins, score updates,
//! rollovers, idle policy and rewards. It is the reference the fast path is held to
//! (`tests/cli/sim.rs` compares their reports byte for byte), and the only path on Redis.
//!
//! Owns: driving the league period by period and reading its figures back. Must not:
//! decide placement, order, outcomes or rewards itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Duration;

use crate::clock::ManualClock;
use crate::error::{Error, InputError};
use crate::league::{JoinItem, JoinOptions, League};
use crate::ranking::{BatchItem, SubmitOptions};
use crate::rollover::RolloverOptions;
use crate::rollover::outcome::Tally;
use crate::season::{JoinPolicy, Season};
use crate::store::Store;

use super::report::{NONE, PeriodFigures};
use super::source::{Activity, Event, Source};

/// Updates per `submit_many` call.
const CHUNK: usize = 2000;

/// What the engine path returns: the figures per period and every player's tier
/// history (`periods` tier indexes per player).
pub(crate) struct Run {
    pub(crate) figures: Vec<PeriodFigures>,
    pub(crate) history: Vec<u8>,
}

/// Runs `source` through the league on `store`, with `clock` as the league clock.
pub(crate) async fn run<S: Store>(
    season: Season,
    store: S,
    clock: ManualClock,
    source: &mut dyn Source,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Run, Error> {
    let tiers: Vec<String> = season.tiers.iter().map(|t| t.name.clone()).collect();
    let explicit = season.brackets.join == JoinPolicy::Explicit;
    let first_id = source.first_period();
    let periods = source.periods();
    let first = season
        .calendar
        .period(first_id)
        .ok_or(InputError::UnknownPeriod { period: first_id })?;
    clock.set(first.start);
    let league = League::with_clock(season, store, Arc::new(clock.clone()));
    let n = source.players();
    let ids: Vec<String> = (0..n).map(|i| source.player_id(i)).collect();
    let mut quit = vec![false; n];
    let width = periods as usize;
    let mut history = vec![NONE; n * width];
    let mut figures = Vec::with_capacity(width);
    let mut buf: Vec<Event> = Vec::new();
    for k in 0..width {
        source.prepare(k);
        let period = league.period(first_id + k as u64)?;
        // The period's events are replayed at its last instant: every event time is in
        // the past and the period has not closed, by the league clock.
        clock.set(period.end - Duration::milliseconds(1));
        // (time, player, order within the player, value), and idle joins.
        let mut events: Vec<(i64, usize, usize, i64)> = Vec::new();
        let mut idle_joins: Vec<(i64, usize)> = Vec::new();
        for (i, q) in quit.iter_mut().enumerate() {
            match source.activity(i, k, q, &mut buf) {
                Activity::Absent => {}
                Activity::Idle { at } => idle_joins.push((at, i)),
                Activity::Scored => {
                    events.extend(buf.iter().enumerate().map(|(s, e)| (e.at, i, s, e.value)));
                }
            }
        }
        // Players are placed in the order they show up, as on a real server.
        events.sort_unstable();
        idle_joins.sort_unstable();
        let at = |ms: i64| period.start + Duration::milliseconds(ms);
        let mut placed = vec![NONE; n];
        let tier_index = |name: &str| league.season().tier(name).map_or(0, |(t, _)| t as u8);
        if explicit {
            let mut joins = idle_joins.clone();
            let mut seen = vec![false; n];
            for (t, i, _, _) in &events {
                if !seen[*i] {
                    seen[*i] = true;
                    joins.push((*t, *i));
                }
            }
            joins.sort_unstable();
            // In time order, a chunk at a time through the bulk join path (a few
            // pipelined stages per chunk on Redis, not a few round trips per player).
            for chunk in joins.chunks(CHUNK) {
                let items: Vec<JoinItem> = chunk
                    .iter()
                    .map(|(t, i)| {
                        JoinItem::new(ids[*i].clone())
                            .with_options(JoinOptions::default().at(at(*t)))
                    })
                    .collect();
                for (result, (_, i)) in league.join_many(&items).await.into_iter().zip(chunk) {
                    placed[*i] = tier_index(&result?.tier);
                }
            }
        }
        let mut playing = 0u64;
        let mut refused = 0u64;
        let mut scored = vec![false; n];
        let mut unsure: Vec<usize> = Vec::new();
        for chunk in events.chunks(CHUNK) {
            let items: Vec<BatchItem> = chunk
                .iter()
                .map(|(t, i, _, value)| {
                    BatchItem::new(ids[*i].clone(), *value)
                        .with_options(SubmitOptions::default().at(at(*t)))
                })
                .collect();
            for (result, (_, i, _, _)) in league.submit_many(&items).await.into_iter().zip(chunk) {
                match result {
                    Ok(s) => {
                        if !scored[*i] {
                            scored[*i] = true;
                            playing += 1;
                            placed[*i] = tier_index(&s.tier);
                        }
                    }
                    // A value out of range: refused, nothing written; the player may
                    // or may not have been placed by it.
                    Err(Error::Input(InputError::Score(_))) => {
                        refused += 1;
                        unsure.push(*i);
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        for i in unsure {
            if placed[i] == NONE {
                let view = league.player(&ids[i], Some(period.id)).await?;
                if view.bracket.is_some() {
                    placed[i] = tier_index(&view.tier);
                }
            }
        }
        for (i, t) in placed.iter().enumerate() {
            history[i * width + k] = *t;
        }
        // Close the period as the scheduler would, once the league clock allows it.
        clock.set(league.closes_at(&period));
        let report = league.rollover(None, RolloverOptions::default()).await?;
        let closed = report.closed.iter().find(|p| p.period == period.id);
        let counts = league.counts(Some(period.id)).await?;
        let by_tier = |f: &dyn Fn(&Tally) -> u64| -> BTreeMap<String, u64> {
            tiers
                .iter()
                .map(|t| {
                    let v = closed.and_then(|c| c.tiers.get(t)).map_or(0, f);
                    (t.clone(), v)
                })
                .collect()
        };
        figures.push(PeriodFigures {
            period: period.id,
            playing,
            players: counts.into_iter().map(|c| (c.tier, c.players)).collect(),
            active: by_tier(&|t| t.players - t.idle),
            promoted: by_tier(&|t| t.promoted),
            demoted: by_tier(&|t| t.demoted),
            rewards: closed.map_or(0, |c| c.totals.rewards),
            idle: closed.map_or(0, |c| c.totals.idle),
            refused,
        });
        progress(k as u64 + 1, periods);
    }
    // Freeing millions of small objects takes a noticeable share of a large run;
    // the report does not wait for it.
    std::thread::spawn(move || drop(league));
    Ok(Run { figures, history })
}
