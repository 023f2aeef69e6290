//! Replaying real history: JSON lines of score updates (`{"player","value","at"}`,
//! the lines `leaguekit submit --batch` reads) or `leaguekit export` rows, bound to a
//! season's calendar and read by either run path as a [`Source`].
//!
//! - An update needs `at` (RFC 3339): it is replayed at that time, in the period of
//!   the season given that holds it. A `request_id` repeated for the same player in
//!   the same period is a retry: only the first (in time order) counts, as the
//!   league's idempotency would make it.
//! - An export row (`{"period","player","score",...}`) has no time: it is one update of
//!   `score` at the start of period `period` of the season given (ties on score then
//!   fall to player id). A row with score 0 is a player who never scored: an idle join
//!   in an explicit-join season, skipped otherwise.
//! - Events are replayed in time order, whatever the order of the file; equal times
//!   keep the file's order.
//! - A `cohort` (on either kind of line) is accepted and not replayed: every player is
//!   placed without one, in the brackets of their tier.
//!
//! Owns: reading and checking the file, and the player index (ids in byte order, the
//! league's tie order). Must not: apply anything (the run paths do).

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::context::normalize_time;
use crate::league::validate_player;
use crate::season::calendar::PeriodId;
use crate::season::{JoinPolicy, Season};

use super::options::MAX_PERIODS;
use super::source::{Activity, Event, Source};

/// A replay file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The file could not be read.
    #[error("cannot read replay file {path}: {source}; check the path given to --replay")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not an event or an export row; the message says how to fix it.
    #[error("{path}:{line}: {message}")]
    Line {
        /// The path.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The file as a whole cannot be replayed.
    #[error("{path}: {message}")]
    File {
        /// The path.
        path: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// What a replay replayed (part of its report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReplayInfo {
    /// The file, as given.
    pub file: String,
    /// Score updates replayed.
    pub events: u64,
    /// Distinct players.
    pub players: u64,
    /// The first and last periods (of the season given) the events fall in.
    pub first_period: PeriodId,
    /// See `first_period`.
    pub last_period: PeriodId,
    /// Updates dropped as retries of an earlier one (same player, request id, period).
    pub duplicates: u64,
    /// Export rows with score 0 skipped in a season that joins on first score.
    pub skipped: u64,
}

/// One line of the file.
#[derive(Deserialize)]
#[expect(
    dead_code,
    reason = "an export row's other fields are accepted and not used"
)]
#[serde(deny_unknown_fields)]
struct Line {
    player: String,
    value: Option<i64>,
    at: Option<String>,
    request_id: Option<String>,
    /// Accepted and not replayed: every player is placed without a cohort.
    cohort: Option<serde::de::IgnoredAny>,
    // An export row.
    period: Option<u64>,
    score: Option<u64>,
    tier: Option<serde::de::IgnoredAny>,
    bracket: Option<serde::de::IgnoredAny>,
    rank: Option<serde::de::IgnoredAny>,
    outcome: Option<serde::de::IgnoredAny>,
    next_tier: Option<serde::de::IgnoredAny>,
    reward: Option<serde::de::IgnoredAny>,
    cursor: Option<serde::de::IgnoredAny>,
}

/// When a line happened: a time, or (an export row) a period of the season given.
#[derive(Debug, Clone)]
enum When {
    At(DateTime<Utc>),
    Period(PeriodId),
}

#[derive(Debug, Clone)]
struct RawEvent {
    player: u32,
    when: When,
    /// `None`: an export row with score 0 (never scored).
    value: Option<i64>,
    request_id: Option<String>,
    line: u32,
}

/// A replay file read and checked, not yet bound to a season.
#[derive(Debug, Clone)]
pub struct History {
    file: String,
    /// Player ids in byte order.
    ids: Vec<String>,
    events: Vec<RawEvent>,
}

impl History {
    /// Reads and checks a replay file.
    pub fn load(path: impl AsRef<Path>) -> Result<History, ReplayError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ReplayError::Read {
            path: path.display().to_string(),
            source,
        })?;
        History::parse(&text, &path.display().to_string())
    }

    /// Checks JSON-lines `text`; `file` names it in errors. Blank lines are skipped.
    pub fn parse(text: &str, file: &str) -> Result<History, ReplayError> {
        let err = |line: usize, message: String| ReplayError::Line {
            path: file.to_owned(),
            line,
            message,
        };
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut ids: Vec<String> = Vec::new();
        let mut events = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let l: Line = serde_json::from_str(raw).map_err(|e| {
                err(
                    line,
                    format!(
                        "{e}; write one JSON object per line: an update \
                         {{\"player\",\"value\",\"at\"}} or a `leaguekit export` row"
                    ),
                )
            })?;
            validate_player(&l.player).map_err(|e| err(line, e.to_string()))?;
            let (when, value) = match (l.value, &l.at, l.period, l.score) {
                (Some(v), Some(at), _, _) => {
                    let at = DateTime::parse_from_rfc3339(at)
                        .map(|t| normalize_time(t.with_timezone(&Utc)))
                        .map_err(|e| {
                            err(
                                line,
                                format!(
                                    "invalid time {at:?}: {e}; use RFC 3339, e.g. \
                                     2026-01-05T12:00:00Z"
                                ),
                            )
                        })?;
                    (When::At(at), Some(v))
                }
                (Some(_), None, _, _) => {
                    return Err(err(
                        line,
                        "this update has no \"at\"; a replay needs every update's time \
                         (RFC 3339, e.g. \"at\":\"2026-01-05T12:00:00Z\")"
                            .into(),
                    ));
                }
                (None, _, Some(p), Some(s)) => {
                    let v = i64::try_from(s)
                        .map_err(|_| err(line, format!("score {s} is too large")))?;
                    (When::Period(p), (s > 0).then_some(v))
                }
                _ => {
                    return Err(err(
                        line,
                        "neither an update ({\"player\",\"value\",\"at\"}) nor an export row \
                         ({\"period\",\"player\",\"score\",...}); add the missing keys"
                            .into(),
                    ));
                }
            };
            let player = match index.get(&l.player) {
                Some(i) => *i,
                None => {
                    let i = u32::try_from(ids.len()).map_err(|_| {
                        err(line, "more than 4 billion players; split the file".into())
                    })?;
                    index.insert(l.player.clone(), i);
                    ids.push(l.player);
                    i
                }
            };
            events.push(RawEvent {
                player,
                when,
                value,
                request_id: l.request_id,
                line: u32::try_from(line).unwrap_or(u32::MAX),
            });
        }
        if events.is_empty() {
            return Err(ReplayError::File {
                path: file.to_owned(),
                message: "holds no events; write one JSON object per line".into(),
            });
        }
        // Player indexes in byte order of their ids: the league's tie order.
        let mut by_id: Vec<u32> = (0..ids.len() as u32).collect();
        by_id.sort_by(|a, b| ids[*a as usize].cmp(&ids[*b as usize]));
        let mut rank = vec![0u32; ids.len()];
        for (r, i) in by_id.iter().enumerate() {
            rank[*i as usize] = r as u32;
        }
        for e in &mut events {
            e.player = rank[e.player as usize];
        }
        ids.sort();
        Ok(History {
            file: file.to_owned(),
            ids,
            events,
        })
    }

    /// The history on `season`'s calendar.
    pub fn bind(&self, season: &Season) -> Result<Replay, ReplayError> {
        let file_err = |message: String| ReplayError::File {
            path: self.file.clone(),
            message,
        };
        let line_err = |line: u32, message: String| ReplayError::Line {
            path: self.file.clone(),
            line: line as usize,
            message,
        };
        let mut bound: Vec<Bound<'_>> = Vec::with_capacity(self.events.len());
        for e in &self.events {
            let (period, at) = match &e.when {
                When::At(at) => {
                    let p = season.calendar.period_at(*at).ok_or_else(|| {
                        let why = if *at < season.schedule.start {
                            format!(
                                "is before the season's start {}; replay it under a season \
                                 whose [schedule] start is no later than that time",
                                season.schedule.start.to_rfc3339()
                            )
                        } else {
                            "is after the end of the season's calendar".to_owned()
                        };
                        line_err(e.line, format!("time {} {why}", at.to_rfc3339()))
                    })?;
                    (p.id, (*at - p.start).num_milliseconds())
                }
                When::Period(id) => {
                    if season.calendar.period(*id).is_none() {
                        return Err(line_err(
                            e.line,
                            format!("period {id} is not in the season's calendar"),
                        ));
                    }
                    (*id, 0)
                }
            };
            bound.push((
                period,
                e.player,
                at,
                e.line,
                e.value,
                e.request_id.as_deref(),
            ));
        }
        // Time order; equal times keep the file's order.
        bound.sort_unstable_by_key(|b| (b.0, b.1, b.2, b.3));
        let first_period = bound.first().map_or(1, |b| b.0);
        let last_period = bound.last().map_or(1, |b| b.0);
        let periods = last_period - first_period + 1;
        if periods > MAX_PERIODS * 10 {
            return Err(file_err(format!(
                "spans {periods} periods of the season given (more than {}); replay a \
                 shorter history or use a longer period",
                MAX_PERIODS * 10
            )));
        }
        let explicit = season.brackets.join == JoinPolicy::Explicit;
        let mut seen: std::collections::HashSet<(PeriodId, u32, &str)> = Default::default();
        let mut out = Replay {
            info: ReplayInfo {
                file: self.file.clone(),
                events: 0,
                players: self.ids.len() as u64,
                first_period,
                last_period,
                duplicates: 0,
                skipped: 0,
            },
            ids: self.ids.clone(),
            events: Vec::new(),
            period_start: Vec::new(),
            idle: Vec::new(),
            offsets: Vec::new(),
            idle_at: Vec::new(),
        };
        for (period, player, at, _, value, request) in bound {
            if let Some(id) = request
                && !seen.insert((period, player, id))
            {
                out.info.duplicates += 1;
                continue;
            }
            let k = (period - first_period) as u32;
            match value {
                Some(value) => {
                    out.info.events += 1;
                    out.events.push((k, player, Event { at, value }));
                }
                None if explicit => out.idle.push((k, player, at)),
                None => out.info.skipped += 1,
            }
        }
        let mut at = 0;
        for k in 0..=periods as u32 {
            while at < out.events.len() && out.events[at].0 < k {
                at += 1;
            }
            out.period_start.push(at);
        }
        Ok(out)
    }
}

/// An event on a season's calendar: (period, player, ms into the period, line,
/// value or `None` for an idle row, request id).
type Bound<'a> = (PeriodId, u32, i64, u32, Option<i64>, Option<&'a str>);

/// A history bound to a season, ready for [`super::replay`] or [`super::replay_fast`].
#[derive(Debug)]
pub struct Replay {
    info: ReplayInfo,
    ids: Vec<String>,
    /// (run period, player, event), sorted.
    events: Vec<(u32, u32, Event)>,
    /// Where each run period's events start in `events` (one more entry at the end).
    period_start: Vec<usize>,
    /// Idle joins: (run period, player, at).
    idle: Vec<(u32, u32, i64)>,
    /// For the prepared period: where each player's events start (one more at the end).
    offsets: Vec<usize>,
    /// For the prepared period: each player's idle join, if any.
    idle_at: Vec<Option<i64>>,
}

impl Replay {
    /// What is replayed.
    pub fn info(&self) -> &ReplayInfo {
        &self.info
    }
}

impl Source for Replay {
    fn players(&self) -> usize {
        self.ids.len()
    }

    fn player_id(&self, i: usize) -> String {
        self.ids.get(i).cloned().unwrap_or_default()
    }

    fn first_period(&self) -> PeriodId {
        self.info.first_period
    }

    fn periods(&self) -> u64 {
        self.info.last_period - self.info.first_period + 1
    }

    fn prepare(&mut self, k: usize) {
        let n = self.ids.len();
        let (lo, hi) = (self.period_start[k], self.period_start[k + 1]);
        self.offsets.clear();
        self.offsets.resize(n + 1, 0);
        for (_, p, _) in &self.events[lo..hi] {
            self.offsets[*p as usize + 1] += 1;
        }
        for i in 0..n {
            self.offsets[i + 1] += self.offsets[i];
        }
        for o in &mut self.offsets {
            *o += lo;
        }
        self.idle_at.clear();
        self.idle_at.resize(n, None);
        // Idle joins are sorted by period, then player, then time: the first wins.
        let k = k as u32;
        let from = self.idle.partition_point(|(pk, _, _)| *pk < k);
        for (_, p, at) in self.idle[from..].iter().take_while(|(pk, _, _)| *pk == k) {
            let slot = &mut self.idle_at[*p as usize];
            if slot.is_none() {
                *slot = Some(*at);
            }
        }
    }

    fn activity(&self, i: usize, _k: usize, _quit: &mut bool, out: &mut Vec<Event>) -> Activity {
        out.clear();
        let (lo, hi) = (self.offsets[i], self.offsets[i + 1]);
        if lo < hi {
            out.extend(self.events[lo..hi].iter().map(|(_, _, e)| *e));
            return Activity::Scored;
        }
        match self.idle_at[i] {
            Some(at) => Activity::Idle { at },
            None => Activity::Absent,
        }
    }
}
