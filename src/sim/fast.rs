//! The fast path: the same season rules as the engine, on compact per-player arrays
//! instead of keyed store records, on every core.
//!
//! Per period: (1) every player's activity is drawn and applied with the season's own
//! packing ([`crate::season::packing::Packing::apply`]): their join time and final
//! packed score; their tier comes from their last outcome and the idle policy
//! ([`after_skipped`]), with the embedded store's expiries ([`super::model`]);
//! (2) joiners are placed in the order they showed up, per tier, by the season's join
//! rule: `size` to a bracket (bracket = ceil(n / size), as the join counter does), or
//! with reserved late seats each join counted by [`TierJoins::count`], late when it
//! is at or after the period's late point; (3) each bracket is ranked
//! by packed score, then player id, and closed with the league's outcome rule
//! ([`BracketRule`], [`reward_for`]); (4) players' states move on.
//!
//! Steps 1, 3 and 4 run on all threads, step 2 is a parallel sort of unique keys, and
//! every sum is of integers: the result is the same for any number of threads. The
//! differential tests in `tests/cli/sim.rs` hold it to the full engine path byte for byte.
//!
//! Owns: the compact run. Must not: change a rule; a rule it needs comes from the
//! season, packing or outcome modules.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::error::{Error, InputError};
use crate::rollover::outcome::{BracketRule, after_skipped, reward_for};
use crate::season::seats::TierJoins;
use crate::season::{JoinPolicy, Season};

use super::engine::Run;
use super::fairness::{self, DECILES, FairCounts};
use super::model::Timing;
use super::report::{NONE, PeriodFigures};
use super::source::{Activity, Event, Source, hopeless};

/// Players per parallel work item.
const CHUNK: usize = 8192;

/// A player's state between periods.
#[derive(Debug, Clone, Copy, Default)]
struct PlayerState {
    /// When their records expire (unix seconds).
    expire: i64,
    /// The run period they were last placed in, plus one (0: never).
    last: u32,
    quit: bool,
    /// Their tier then, and the next tier their outcome gave.
    tier: u8,
    next: u8,
}

/// A player's period.
#[derive(Debug, Clone, Copy)]
struct Slot {
    packed: u64,
    /// When they joined (ms after the period's start).
    first: i64,
    /// Their tier, or [`NONE`] if not placed.
    tier: u8,
    next: u8,
    scored: bool,
}

const EMPTY: Slot = Slot {
    packed: 0,
    first: 0,
    tier: NONE,
    next: NONE,
    scored: false,
};

/// One closed bracket.
struct Closed {
    tier: usize,
    /// (player, next tier), in rank order.
    members: Vec<(u32, u8)>,
    promoted: u64,
    demoted: u64,
    rewards: u64,
    idle: u64,
    /// Members per tenth of the period they joined in: (placed, promoted).
    by_join: [[u32; 2]; DECILES],
}

/// What step 1 found in a chunk of players.
#[derive(Default)]
struct Drawn {
    refused: u64,
    playing: u64,
}

/// Runs `source` on `pool`.
pub(crate) fn run(
    season: &Season,
    source: &mut dyn Source,
    pool: &rayon::ThreadPool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Run, Error> {
    let first_id = source.first_period();
    let periods = source.periods();
    let timing = Timing::new(season, first_id, periods)?;
    let n = source.players();
    let width = periods as usize;
    let tiers = season.tiers.len();
    let size = season.brackets.size.max(1) as usize;
    let mut states = vec![PlayerState::default(); n];
    let mut slots = vec![EMPTY; n];
    let mut history = vec![NONE; n * width];
    let mut figures = Vec::with_capacity(width);
    let mut tally = FairCounts::new(tiers);
    // The store's clock at the last close that dropped expired data (`finish_period`
    // runs only for periods somebody played in).
    let mut last_finish = i64::MIN;
    let at_bits = bits(timing.length_ms.iter().copied().max().unwrap_or(1) as u64);
    let i_bits = bits(n as u64);
    for k in 0..width {
        source.prepare(k);
        let src: &dyn Source = source;
        // Step 1: activity, scores, join times and tiers.
        let drawn = pool.install(|| {
            slots
                .par_chunks_mut(CHUNK)
                .zip(states.par_chunks_mut(CHUNK))
                .enumerate()
                .map(|(c, (slots, states))| {
                    let mut d = Drawn::default();
                    let mut buf = Vec::new();
                    for (j, (slot, st)) in slots.iter_mut().zip(states.iter_mut()).enumerate() {
                        let i = c * CHUNK + j;
                        let act = src.activity(i, k, &mut st.quit, &mut buf);
                        *slot = draw(season, act, &buf, &mut d)?;
                        if slot.tier != NONE {
                            slot.tier = tier_of(season, st, slot.first, k, &timing, last_finish);
                        }
                    }
                    Ok(d)
                })
                .collect::<Result<Vec<Drawn>, Error>>()
        })?;
        // Step 2: placement order, grouped by tier.
        let (mut order, counts) = pool.install(|| placement_order(&slots, tiers, at_bits, i_bits));
        let ranges = match timing.late[k] {
            None => fixed_brackets(&counts, size),
            Some(early) => late_seat_brackets(season, &mut order, &counts, &slots, early.from_ms),
        };
        // Step 3: close every bracket.
        let length = timing.length_ms[k];
        let closed: Vec<Closed> = pool.install(|| {
            ranges
                .par_iter()
                .map(|&(t, lo, hi)| close(season, t, &order[lo..hi], &slots, length))
                .collect()
        });
        let mut promoted = vec![0u64; tiers];
        let mut demoted = vec![0u64; tiers];
        let mut idle_by = vec![0u64; tiers];
        let (mut rewards, mut idle) = (0u64, 0u64);
        for c in &closed {
            promoted[c.tier] += c.promoted;
            demoted[c.tier] += c.demoted;
            idle_by[c.tier] += c.idle;
            rewards += c.rewards;
            idle += c.idle;
            let n = c.members.len() as u64;
            if n > 0 {
                tally.bracket(c.tier, fairness::bucket(n, size as u64), n, c.promoted);
            }
            for (d, x) in c.by_join.iter().enumerate() {
                tally.joined(c.tier, d, u64::from(x[0]), u64::from(x[1]));
            }
            for &(i, next) in &c.members {
                slots[i as usize].next = next;
            }
        }
        // Step 4: players' states and histories.
        pool.install(|| {
            states
                .par_chunks_mut(CHUNK)
                .zip(slots.par_chunks(CHUNK))
                .zip(history.par_chunks_mut(CHUNK * width))
                .for_each(|((states, slots), rows)| {
                    for ((st, slot), row) in
                        states.iter_mut().zip(slots).zip(rows.chunks_mut(width))
                    {
                        if slot.tier == NONE {
                            continue;
                        }
                        row[k] = slot.tier;
                        st.last = k as u32 + 1;
                        st.tier = slot.tier;
                        st.next = slot.next;
                        // A grant keeps the player's rewards, not their state.
                        st.expire = match timing.late[k] {
                            Some(e) if slot.first < e.from_ms => e.placement_expire,
                            _ => timing.placement_expire[k],
                        };
                    }
                })
        });
        if counts.iter().any(|&c| c > 0) {
            last_finish = timing.closes[k];
        }
        let map = |v: &[u64]| -> BTreeMap<String, u64> {
            season
                .tiers
                .iter()
                .zip(v)
                .map(|(t, n)| (t.name.clone(), *n))
                .collect()
        };
        let active: Vec<u64> = counts.iter().zip(&idle_by).map(|(c, i)| c - i).collect();
        figures.push(PeriodFigures {
            period: first_id + k as u64,
            playing: drawn.iter().map(|d| d.playing).sum(),
            players: map(&counts),
            active: map(&active),
            promoted: map(&promoted),
            demoted: map(&demoted),
            rewards,
            idle,
            refused: drawn.iter().map(|d| d.refused).sum(),
        });
        progress(k as u64 + 1, periods);
    }
    Ok(Run {
        figures,
        history,
        fairness: tally,
    })
}

/// Brackets of `size` in placement order: (tier, from, to) in `order`.
fn fixed_brackets(counts: &[u64], size: usize) -> Vec<(usize, usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0usize;
    for (t, &c) in counts.iter().enumerate() {
        let c = c as usize;
        let mut b = 0;
        while b < c {
            ranges.push((t, start + b, start + (b + size).min(c)));
            b += size;
        }
        start += c;
    }
    ranges
}

/// Brackets with reserved late seats: each tier's joiners, in placement order, counted
/// as the stores count them ([`TierJoins::count`]), late from `late_ms` after the
/// period's start; `order` is regrouped by bracket. Returns (tier, from, to) in it.
fn late_seat_brackets(
    season: &Season,
    order: &mut [u32],
    counts: &[u64],
    slots: &[Slot],
    late_ms: i64,
) -> Vec<(usize, usize, usize)> {
    let caps = season.caps();
    let mut ranges = Vec::new();
    let mut start = 0usize;
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    for (t, &c) in counts.iter().enumerate() {
        let segment = &mut order[start..start + c as usize];
        let mut joins = TierJoins::default();
        keyed.clear();
        keyed.extend(segment.iter().map(|&i| {
            let late = joins.is_late(slots[i as usize].first, Some(late_ms));
            (joins.count(late, caps), i)
        }));
        // Stable: within a bracket, members stay in placement order.
        keyed.sort_by_key(|&(b, _)| b);
        let mut lo = 0usize;
        for (j, (&(b, i), slot)) in keyed.iter().zip(segment.iter_mut()).enumerate() {
            *slot = i;
            if j > 0 && keyed[j - 1].0 != b {
                ranges.push((t, start + lo, start + j));
                lo = j;
            }
        }
        if !keyed.is_empty() {
            ranges.push((t, start + lo, start + keyed.len()));
        }
        start += c as usize;
    }
    ranges
}

/// Bits needed to hold `x`.
fn bits(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// A player's period from their activity: whether and when they join, and their
/// final packed score, applying the events in order as the store would.
fn draw(season: &Season, act: Activity, events: &[Event], d: &mut Drawn) -> Result<Slot, Error> {
    let mut slot = EMPTY;
    match act {
        Activity::Absent => {}
        Activity::Idle { at } => {
            slot.tier = 0;
            slot.first = at;
        }
        Activity::Scored => {
            let explicit = season.brackets.join == JoinPolicy::Explicit;
            let packing = &season.packing;
            let resolution = season.scoring.time_resolution.millis();
            let mut first = None;
            for e in events {
                // An explicit-join season joins at the first event, whatever its value;
                // otherwise the first update the league does not refuse outright places.
                if explicit && first.is_none() {
                    first = Some(e.at);
                }
                // A value no score can take, or one an empty board refuses (a negative
                // delta), places nobody.
                if hopeless(season, e.value)
                    || (first.is_none() && season.scoring.mode.refuses_first(e.value))
                {
                    d.refused += 1;
                    continue;
                }
                if first.is_none() {
                    first = Some(e.at);
                }
                let tick = u64::try_from(e.at).unwrap_or(0) / resolution;
                if tick >= packing.ticks() {
                    return Err(InputError::Other(
                        "a period is longer than the season's validated longest period; \
                         report this with the season file"
                            .into(),
                    )
                    .into());
                }
                match packing.apply(season.scoring.mode, Some(slot.packed), e.value, tick) {
                    Ok(p) => {
                        slot.packed = p;
                        slot.scored = true;
                    }
                    Err(_) => d.refused += 1,
                }
            }
            if let Some(f) = first {
                slot.tier = 0;
                slot.first = f;
            }
            d.playing += u64::from(slot.scored);
        }
    }
    Ok(slot)
}

/// The tier a player joins in run period `k` (the engine's `next_tier`): a new player
/// (or one whose records expired) starts at the bottom; otherwise their last
/// outcome's next tier while its bracket is kept, else the tier they last played; then
/// the idle policy for each period skipped.
fn tier_of(
    season: &Season,
    st: &PlayerState,
    first: i64,
    k: usize,
    t: &Timing,
    last_finish: i64,
) -> u8 {
    let now = match t.late[k] {
        Some(e) if first < e.from_ms => e.join_now,
        _ => t.join_now[k],
    };
    if st.last == 0 || st.expire <= now {
        return 0;
    }
    let p = st.last as usize - 1;
    let gap = (k - p) as u64;
    let (base, skipped) = if t.bracket_expire[p] > last_finish {
        (st.next, gap - 1)
    } else {
        (st.tier, gap)
    };
    after_skipped(season, usize::from(base), skipped) as u8
}

/// Placed players in placement order: by tier, then join time, then id.
fn placement_order(
    slots: &[Slot],
    tiers: usize,
    at_bits: u32,
    i_bits: u32,
) -> (Vec<u32>, Vec<u64>) {
    let mut counts = vec![0u64; tiers];
    let low = at_bits + i_bits;
    let order: Vec<u32> = if 8 + low <= 64 {
        let mut keys: Vec<u64> = slots
            .par_iter()
            .enumerate()
            .filter(|(_, s)| s.tier != NONE)
            .map(|(i, s)| (u64::from(s.tier) << low) | ((s.first as u64) << i_bits) | i as u64)
            .collect();
        keys.par_sort_unstable();
        let mask = (1u64 << i_bits) - 1;
        keys.iter()
            .map(|k| {
                counts[(k >> low) as usize] += 1;
                (k & mask) as u32
            })
            .collect()
    } else {
        let mut keys: Vec<u128> = slots
            .par_iter()
            .enumerate()
            .filter(|(_, s)| s.tier != NONE)
            .map(|(i, s)| (u128::from(s.tier) << low) | ((s.first as u128) << i_bits) | i as u128)
            .collect();
        keys.par_sort_unstable();
        let mask = (1u128 << i_bits) - 1;
        keys.iter()
            .map(|k| {
                counts[(k >> low) as usize] += 1;
                (k & mask) as u32
            })
            .collect()
    };
    (order, counts)
}

/// Closes one bracket of tier `tier` holding `members`: ranks them (packed score
/// descending, then id) and applies the outcome rule.
fn close(season: &Season, tier: usize, members: &[u32], slots: &[Slot], length: i64) -> Closed {
    let mut board: Vec<(Reverse<u64>, u32)> = members
        .iter()
        .map(|&i| (Reverse(slots[i as usize].packed), i))
        .collect();
    board.sort_unstable();
    let active_of = |p: u64| season.packing.unpack(p).1.is_some();
    let active = board.iter().filter(|(p, _)| active_of(p.0)).count() as u64;
    let mut out = Closed {
        tier,
        members: Vec::with_capacity(board.len()),
        promoted: 0,
        demoted: 0,
        rewards: 0,
        idle: 0,
        by_join: [[0; 2]; DECILES],
    };
    let Some(rule) = BracketRule::new(season, tier, board.len() as u64, active) else {
        return out;
    };
    let mut seen = 0u64;
    for (r, (p, i)) in board.iter().enumerate() {
        let is_active = active_of(p.0);
        let rank = (is_active).then(|| {
            seen += 1;
            seen
        });
        let movement = rule.movement(season, rank);
        let next = rule.next_tier(movement);
        let rewarded = is_active && reward_for(season, tier, r as u64 + 1).is_some();
        let joined = &mut out.by_join[fairness::decile(slots[*i as usize].first, length)];
        joined[0] += 1;
        match movement {
            crate::rollover::outcome::Movement::Promoted => {
                out.promoted += 1;
                joined[1] += 1;
            }
            crate::rollover::outcome::Movement::Demoted => out.demoted += 1,
            _ => {}
        }
        out.rewards += u64::from(rewarded);
        out.idle += u64::from(!is_active);
        out.members.push((*i, next as u8));
    }
    out
}
