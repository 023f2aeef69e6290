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

use super::fairness::{self, FairCounts};
use super::model::early_clock;
use super::report::{NONE, PeriodFigures};
use super::source::{Activity, Event, Source};

/// Updates per `submit_many` call.
const CHUNK: usize = 2000;

/// What the engine path returns: the figures per period and every player's tier
/// history (`periods` tier indexes per player).
pub(crate) struct Run {
    pub(crate) figures: Vec<PeriodFigures>,
    pub(crate) history: Vec<u8>,
    /// The fairness counts of every closed bracket.
    pub(crate) fairness: FairCounts,
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
    let mut tally = FairCounts::new(tiers.len());
    let index: std::collections::HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let size = u64::from(league.season().brackets.size.max(1));
    let mut buf: Vec<Event> = Vec::new();
    for k in 0..width {
        source.prepare(k);
        let period = league.period(first_id + k as u64)?;
        // The period's events are replayed at its last instant: every event time is in
        // the past and the period has not closed, by the league clock. With reserved
        // late seats, the events before the late point are replayed first, at its last
        // instant before it: the store judges a join early or late by the league clock,
        // which is then on the same side of the late point as the join's own time.
        let late_from = league.season().brackets.late.map(|l| {
            l.late_from(
                period.start.timestamp_millis(),
                period.end.timestamp_millis(),
            )
        });
        let late_ms = late_from.map_or(i64::MAX, |l| l - period.start.timestamp_millis());
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
        // When each player was placed (ms after the period's start).
        let mut joined_at = vec![0i64; n];
        let tier_index = |name: &str| league.season().tier(name).map_or(0, |(t, _)| t as u8);
        let mut joins = Vec::new();
        if explicit {
            joins = idle_joins.clone();
            let mut seen = vec![false; n];
            for (t, i, _, _) in &events {
                if !seen[*i] {
                    seen[*i] = true;
                    joins.push((*t, *i));
                }
            }
            joins.sort_unstable();
        }
        let mut playing = 0u64;
        let mut refused = 0u64;
        let mut scored = vec![false; n];
        let mut unsure: Vec<(usize, i64)> = Vec::new();
        let split = events.partition_point(|e| e.0 < late_ms);
        let join_split = joins.partition_point(|j| j.0 < late_ms);
        let phases = [
            (&joins[..join_split], &events[..split]),
            (&joins[join_split..], &events[split..]),
        ];
        for (phase, (joins, events)) in phases.into_iter().enumerate() {
            if joins.is_empty() && events.is_empty() {
                continue;
            }
            clock.set(match (phase, late_from) {
                (0, Some(l)) => early_clock(l),
                _ => period.end - Duration::milliseconds(1),
            });
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
                for (result, (t, i)) in league.join_many(&items).await.into_iter().zip(chunk) {
                    placed[*i] = tier_index(&result?.tier);
                    joined_at[*i] = *t;
                }
            }
            for chunk in events.chunks(CHUNK) {
                let items: Vec<BatchItem> = chunk
                    .iter()
                    .map(|(t, i, _, value)| {
                        BatchItem::new(ids[*i].clone(), *value)
                            .with_options(SubmitOptions::default().at(at(*t)))
                    })
                    .collect();
                for (result, (t, i, _, _)) in
                    league.submit_many(&items).await.into_iter().zip(chunk)
                {
                    match result {
                        Ok(s) => {
                            if !scored[*i] {
                                scored[*i] = true;
                                playing += 1;
                                if placed[*i] == NONE {
                                    joined_at[*i] = *t;
                                }
                                placed[*i] = tier_index(&s.tier);
                            }
                        }
                        // A value out of range: refused, nothing written; the player
                        // may or may not have been placed by it.
                        Err(Error::Input(InputError::Score(_))) => {
                            refused += 1;
                            unsure.push((*i, *t));
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        for (i, t) in unsure {
            if placed[i] == NONE {
                let view = league.player(&ids[i], Some(period.id)).await?;
                if view.bracket.is_some() {
                    placed[i] = tier_index(&view.tier);
                    joined_at[i] = t;
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
        if closed.is_some() {
            let length = (period.end - period.start).num_milliseconds().max(1);
            tally_outcomes(
                &league, period.id, &index, &joined_at, length, size, &mut tally,
            )
            .await?;
        }
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
    Ok(Run {
        figures,
        history,
        fairness: tally,
    })
}

/// Reads a closed period's outcomes back from the league, a bracket at a time, into
/// the fairness counts: each bracket's size at the close, and each member's join time
/// and movement.
async fn tally_outcomes<S: Store>(
    league: &League<S>,
    period: u64,
    index: &std::collections::HashMap<&str, usize>,
    joined_at: &[i64],
    length: i64,
    size: u64,
    tally: &mut FairCounts,
) -> Result<(), Error> {
    let mut cursor: Option<String> = None;
    // (tier, bracket, members, promoted) of the bracket being read.
    let mut current: Option<(usize, u32, u64, u64)> = None;
    let flush = |c: Option<(usize, u32, u64, u64)>, tally: &mut FairCounts| {
        if let Some((t, _, n, p)) = c {
            tally.bracket(t, fairness::bucket(n, size), n, p);
        }
    };
    loop {
        let page = league.outcomes(period, cursor.as_deref(), 10_000).await?;
        let Some(last) = page.last() else { break };
        cursor = Some(last.cursor.clone());
        for r in &page {
            let t = league.season().tier(&r.tier).map_or(0, |(t, _)| t);
            let promoted = u64::from(r.outcome == crate::rollover::outcome::Movement::Promoted);
            match &mut current {
                Some((ct, cb, n, p)) if *ct == t && *cb == r.bracket => {
                    *n += 1;
                    *p += promoted;
                }
                _ => {
                    flush(current.take(), tally);
                    current = Some((t, r.bracket, 1, promoted));
                }
            }
            let at = index.get(r.player.as_str()).map_or(0, |&i| joined_at[i]);
            tally.joined(t, fairness::decile(at, length), 1, promoted);
        }
    }
    flush(current.take(), tally);
    Ok(())
}
