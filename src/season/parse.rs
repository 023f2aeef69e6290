//! Reading the season file: serde reads the TOML into raw structs that deny unknown
//! keys and keep the span of every value checked afterwards; the checks then build the
//! public types, each error a `file:line:col` with what is wrong and how to fix it.

pub(super) use super::duration::{fmt_duration, fmt_millis, parse_duration, parse_window};
use std::ops::Range;
use std::time::Duration;

use chrono::{DateTime, Utc};

use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;
use crate::season::calendar::{Calendar, CalendarError, parse_cron, parse_zone};
pub(super) use crate::season::calendar::{PeriodRule, Schedule};
use crate::season::packing::{Packing, ScoreMode};

use super::seats::{LatePoint, LateSeats};
use super::*;

/// Parses and validates a season (see [`Season::from_toml`]).
pub(super) fn season(text: &str, file: &str) -> Result<Season, ConfigError> {
    let src = Src { text, file };
    let raw: RawSeason = toml::from_str(text).map_err(|e| src.toml_error(&e))?;

    let name = src.ident(&raw.name, "name", 64, NAME_CHARS, "")?;
    let key_prefix = src.ident(&raw.key_prefix, "key_prefix", 64, NAME_CHARS, ".")?;

    let schedule = src.schedule(&raw.schedule)?;
    let calendar = Calendar::build(&schedule).map_err(|e| match e {
        CalendarError::Period(m) => {
            src.at(raw.schedule.period.span(), format!("schedule.period: {m}"))
        }
        CalendarError::Start(m) => src.at(raw.schedule.start.span(), format!("schedule.start {m}")),
    })?;

    let brackets = match &raw.brackets {
        Some(b) => src.brackets(b)?,
        None => Brackets::default(),
    };
    let scoring = src.scoring(raw.scoring.get_ref())?;
    let packing = src.packing(&raw.scoring, &scoring, &calendar)?;
    let profiles = match &raw.profiles {
        Some(p) => src.profiles(p)?,
        None => Profiles::default(),
    };
    let tiers = src.tiers(&raw.tiers, &brackets)?;
    let idle = match raw.idle.as_ref().and_then(|i| i.policy.as_ref()) {
        Some(p) => Idle {
            policy: match p.get_ref().as_str() {
                "stay" => IdlePolicy::Stay,
                "drop_one_tier" => IdlePolicy::DropOneTier,
                other => {
                    return Err(src.at(
                        p.span(),
                        format!(
                            "idle.policy = {other:?} is not a policy; \
                             use \"stay\" or \"drop_one_tier\""
                        ),
                    ));
                }
            },
        },
        None => Idle::default(),
    };
    let mut retention = Retention::default();
    if let Some(r) = &raw.retention {
        if let Some(p) = &r.periods {
            retention.periods = src.int_in(p, "retention.periods", 1, 520)? as u32;
        }
        if let Some(t) = &r.player_ttl {
            retention.player_ttl = parse_duration(t.get_ref(), MIN_PLAYER_TTL, MAX_PLAYER_TTL)
                .map_err(|m| src.at(t.span(), format!("retention.player_ttl: {m}")))?;
        }
    }
    let mut audit = super::Audit::default();
    if let Some(a) = &raw.audit
        && let Some(k) = &a.keep
    {
        audit.keep = parse_duration(
            k.get_ref(),
            Duration::from_secs(86_400),
            Duration::from_secs(3650 * 86_400),
        )
        .map_err(|m| src.at(k.span(), format!("audit.keep: {m}")))?;
    }
    let mut clock = ClockRules::default();
    if let Some(c) = &raw.clock
        && let Some(s) = &c.max_skew
    {
        clock.max_skew = parse_duration(s.get_ref(), Duration::ZERO, MAX_SKEW)
            .map_err(|m| src.at(s.span(), format!("clock.max_skew: {m}")))?;
    }
    if let Some(c) = &raw.clock {
        clock.travel = c.travel.unwrap_or(false);
    }
    let simulation = raw.simulation.as_ref().map(|s| src.simulation(s));
    let simulation = simulation.transpose()?.unwrap_or_default();
    let tune = raw.tune.as_ref().map(|t| src.tune(t, &tiers)).transpose()?;
    let (max, period_ms) = (packing.max_score(), calendar.max_period_millis());
    let limits = super::limits::parse(&src, raw.limits.as_ref(), max, period_ms)?;

    Ok(Season {
        name,
        key_prefix,
        schedule,
        brackets,
        scoring,
        profiles,
        tiers,
        cohorts: super::cohorts::parse(&src, raw.cohorts.as_ref())?,
        idle,
        retention,
        clock,
        calendar,
        packing,
        simulation,
        server: super::server::parse(&src, raw.server.as_ref())?,
        tune,
        limits,
        events: super::events::parse(&src, raw.events.as_ref())?,
        audit,
    })
}

// ---------------------------------------------------------------------------------
// The file as written. Every table denies unknown keys; values whose meaning is checked
// here (not by serde) keep their span so errors can point at them.
// ---------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSeason {
    pub(super) name: Spanned<String>,
    pub(super) key_prefix: Spanned<String>,
    pub(super) schedule: RawSchedule,
    pub(super) brackets: Option<RawBrackets>,
    pub(super) scoring: Spanned<RawScoring>,
    pub(super) profiles: Option<RawProfiles>,
    pub(super) tiers: Spanned<Vec<Spanned<RawTier>>>,
    pub(super) idle: Option<RawIdle>,
    pub(super) retention: Option<RawRetention>,
    pub(super) audit: Option<RawAudit>,
    pub(super) clock: Option<RawClock>,
    pub(super) simulation: Option<RawSimulation>,
    pub(super) tune: Option<super::tune::RawTune>,
    pub(super) cohorts: Option<Spanned<super::cohorts::RawCohorts>>,
    pub(super) server: Option<super::server::RawServer>,
    pub(super) limits: Option<super::limits::RawLimits>,
    pub(super) events: Option<super::events::RawEvents>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSchedule {
    pub(super) timezone: Spanned<String>,
    pub(super) period: Spanned<String>,
    /// A TOML offset date-time or an RFC 3339 string.
    pub(super) start: Spanned<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBrackets {
    pub(super) size: Option<Spanned<i64>>,
    pub(super) join: Option<Spanned<String>>,
    pub(super) early_cap: Option<Spanned<i64>>,
    pub(super) late_after: Option<Spanned<String>>,
    pub(super) zones: Option<Spanned<String>>,
    pub(super) min_players: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScoring {
    pub(super) mode: Option<Spanned<String>>,
    pub(super) max_score: Spanned<i64>,
    pub(super) time_resolution: Option<Spanned<String>>,
    pub(super) idempotency_window: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfiles {
    pub(super) fields: Option<Spanned<Vec<Spanned<String>>>>,
    pub(super) max_bytes: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTier {
    pub(super) name: Spanned<String>,
    /// An integer count or a `"N%"` string; checked by hand for a clear message.
    pub(super) promote: Spanned<toml::Value>,
    pub(super) demote: Spanned<toml::Value>,
    pub(super) rewards: Option<Vec<Spanned<RawReward>>>,
    /// The tier's name before a rename, so that live players keep their tier.
    pub(super) renamed_from: Option<Spanned<String>>,
    /// The tier's own `zones` and `min_players` (else `[brackets]`'s).
    pub(super) zones: Option<Spanned<String>>,
    pub(super) min_players: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReward {
    pub(super) ranks: Spanned<String>,
    pub(super) grant: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIdle {
    pub(super) policy: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetention {
    pub(super) periods: Option<Spanned<i64>>,
    pub(super) player_ttl: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAudit {
    pub(super) keep: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClock {
    pub(super) max_skew: Option<Spanned<String>>,
    pub(super) travel: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSimulation {
    pub(super) players: Option<Spanned<i64>>,
    pub(super) periods: Option<Spanned<i64>>,
    pub(super) seed: Option<Spanned<i64>>,
    pub(super) skill_spread: Option<Spanned<f64>>,
    pub(super) active_share: Option<Spanned<f64>>,
    pub(super) quit_rate: Option<Spanned<f64>>,
    pub(super) return_rate: Option<Spanned<f64>>,
    pub(super) arrival: Option<Spanned<String>>,
}

/// Characters allowed in season and tier names (key_prefix also allows `.`).
pub(super) const NAME_CHARS: &str = "A-Z, a-z, 0-9, '_' and '-'";

/// Longest idempotency window: request ids are kept this long at most.
pub(super) const MAX_WINDOW: Duration = Duration::from_secs(30 * 86_400);

/// Bounds of `clock.max_skew`: clocks that disagree by more than minutes are broken,
/// and a period that stays open that long after its end delays every rollover.
pub(super) const MAX_SKEW: Duration = Duration::from_secs(600);

/// Bounds of `retention.player_ttl`.
pub(super) const MIN_PLAYER_TTL: Duration = Duration::from_secs(86_400);
pub(super) const MAX_PLAYER_TTL: Duration = Duration::from_secs(3650 * 86_400);

/// The text being parsed, for turning byte spans into `file:line:col` errors.
pub(super) struct Src<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Src<'_> {
    /// An error at the start of `span`.
    pub(super) fn at(&self, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        let (line, col) = line_col(self.text, span.start);
        ConfigError::Invalid {
            file: self.file.to_owned(),
            line,
            col,
            message: message.into(),
        }
    }

    /// A `toml` syntax or shape error, reworded for designers with a hint how to fix it.
    pub(super) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span().unwrap_or(0..0);
        let raw = e.message().trim_end_matches('.').to_owned();
        let message = if let Some(rest) = raw.strip_prefix("unknown field") {
            format!("unknown key{rest}; remove it or correct its spelling")
        } else if let Some(rest) = raw.strip_prefix("missing field") {
            format!(
                "missing key{rest} in this table; add it (config/season.toml shows every key \
                 with an example)"
            )
        } else if raw.starts_with("invalid type") || raw.starts_with("invalid value") {
            let worded = raw
                .replace("expected i64", "expected an integer")
                .replace("expected f64", "expected a number")
                .replace("expected a sequence", "expected an array")
                .replace("expected struct", "expected a table")
                .replace("expected a map", "expected a table");
            format!("{worded}; change the value to that type")
        } else if raw.starts_with("duplicate key") {
            format!("{raw}; a key may appear only once in a table, remove the repeated one")
        } else {
            format!("{raw}; fix the TOML syntax here (see https://toml.io)")
        };
        self.at(span, message)
    }

    /// A name of 1..=`max` characters from `[A-Za-z0-9_-]` plus `extra`.
    pub(super) fn ident(
        &self,
        v: &Spanned<String>,
        key: &str,
        max: usize,
        allowed: &str,
        extra: &str,
    ) -> Result<String, ConfigError> {
        let s = v.get_ref();
        let rule = if extra.is_empty() {
            format!("use 1-{max} characters from {allowed}")
        } else {
            format!("use 1-{max} characters from {allowed} and {extra:?}")
        };
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(c);
        if s.is_empty() {
            return Err(self.at(v.span(), format!("{key} is empty; {rule}")));
        }
        if s.chars().count() > max {
            return Err(self.at(
                v.span(),
                format!(
                    "{key} {s:?} is {} characters long; {rule}",
                    s.chars().count()
                ),
            ));
        }
        if let Some(bad) = s.chars().find(|c| !ok(*c)) {
            return Err(self.at(
                v.span(),
                format!("{key} {s:?} contains {bad:?}, which is not allowed; {rule}"),
            ));
        }
        Ok(s.clone())
    }

    /// An integer in `lo..=hi`.
    pub(super) fn int_in(
        &self,
        v: &Spanned<i64>,
        key: &str,
        lo: i64,
        hi: i64,
    ) -> Result<i64, ConfigError> {
        let n = *v.get_ref();
        if (lo..=hi).contains(&n) {
            Ok(n)
        } else {
            Err(self.at(
                v.span(),
                format!("{key} = {n} is out of range; use a whole number from {lo} to {hi}"),
            ))
        }
    }

    /// A finite number in `lo..=hi`.
    pub(super) fn float_in(
        &self,
        v: &Spanned<f64>,
        key: &str,
        lo: f64,
        hi: f64,
    ) -> Result<f64, ConfigError> {
        let x = *v.get_ref();
        if x.is_finite() && (lo..=hi).contains(&x) {
            Ok(x)
        } else {
            let range = if hi.is_finite() {
                format!("from {lo} to {hi}")
            } else {
                format!("of at least {lo}")
            };
            Err(self.at(
                v.span(),
                format!("{key} = {x} is out of range; use a number {range}"),
            ))
        }
    }

    pub(super) fn schedule(&self, raw: &RawSchedule) -> Result<Schedule, ConfigError> {
        let timezone = parse_zone(raw.timezone.get_ref().trim())
            .map_err(|m| self.at(raw.timezone.span(), format!("schedule.timezone: {m}")))?;
        let text = raw.period.get_ref().trim();
        let period = match text {
            "daily" => PeriodRule::Daily,
            "weekly" => PeriodRule::Weekly,
            expr => {
                parse_cron(expr).map_err(|m| {
                    self.at(
                        raw.period.span(),
                        format!(
                            "schedule.period {expr:?} is neither \"daily\", \"weekly\" nor a \
                             valid cron expression: {m}; write \"daily\", \"weekly\" or a cron \
                             expression such as \"0 0 * * MON\""
                        ),
                    )
                })?;
                PeriodRule::Cron(expr.to_owned())
            }
        };
        let start = self.start(&raw.start)?;
        Ok(Schedule {
            timezone,
            period,
            start,
        })
    }

    pub(super) fn start(&self, v: &Spanned<toml::Value>) -> Result<DateTime<Utc>, ConfigError> {
        const HOW: &str = "write an RFC 3339 date-time with a UTC offset, such as \
                           2026-01-05T00:00:00Z or 2026-01-05T00:00:00+01:00";
        let text = match v.get_ref() {
            toml::Value::Datetime(dt) => {
                let missing = match (dt.date, dt.time, dt.offset) {
                    (None, _, _) => Some("a date"),
                    (_, None, _) => Some("a time of day"),
                    (_, _, None) => Some("a UTC offset"),
                    _ => None,
                };
                if let Some(missing) = missing {
                    return Err(self.at(
                        v.span(),
                        format!(
                            "schedule.start = {dt} has no {missing}, so it names no single \
                             instant; {HOW}"
                        ),
                    ));
                }
                dt.to_string()
            }
            toml::Value::String(s) => s.trim().to_owned(),
            other => {
                return Err(self.at(
                    v.span(),
                    format!(
                        "schedule.start must be a date-time, not a {}; {HOW}",
                        other.type_str()
                    ),
                ));
            }
        };
        DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| {
                self.at(
                    v.span(),
                    format!("schedule.start {text:?} is not an RFC 3339 date-time ({e}); {HOW}"),
                )
            })
    }

    pub(super) fn brackets(&self, raw: &RawBrackets) -> Result<Brackets, ConfigError> {
        let mut b = Brackets::default();
        if let Some(size) = &raw.size {
            b.size = self.int_in(size, "brackets.size", 1, 10_000)? as u32;
        }
        if let Some(join) = &raw.join {
            b.join = match join.get_ref().as_str() {
                "on_first_score" => JoinPolicy::OnFirstScore,
                "explicit" => JoinPolicy::Explicit,
                other => {
                    return Err(self.at(
                        join.span(),
                        format!(
                            "brackets.join = {other:?} is not a join policy; \
                             use \"on_first_score\" or \"explicit\""
                        ),
                    ));
                }
            };
        }
        b.late = self.late_seats(raw, b.size)?;
        b.zones = self.zones(raw.zones.as_ref(), "brackets.zones", b.zones)?;
        b.min_players =
            self.min_players(raw.min_players.as_ref(), "brackets.min_players", b.size, 0)?;
        Ok(b)
    }

    /// `early_cap` and `late_after`: both or neither.
    fn late_seats(&self, raw: &RawBrackets, size: u32) -> Result<Option<LateSeats>, ConfigError> {
        const HOW: &str = "reserved late seats need both `early_cap` (players a bracket takes \
                           before the late point, below `size`) and `late_after` (\"60%\" of \
                           the period, or a time after its start such as \"4d\")";
        let (cap, after) = match (&raw.early_cap, &raw.late_after) {
            (None, None) => return Ok(None),
            (Some(cap), Some(after)) => (cap, after),
            (Some(cap), None) => {
                return Err(self.at(cap.span(), format!("brackets.late_after is missing; {HOW}")));
            }
            (None, Some(after)) => {
                return Err(self.at(
                    after.span(),
                    format!("brackets.early_cap is missing; {HOW}"),
                ));
            }
        };
        if size < 2 {
            return Err(self.at(
                cap.span(),
                "brackets.early_cap needs brackets.size of at least 2; raise size or remove \
                 early_cap and late_after",
            ));
        }
        let early_cap = self.int_in(cap, "brackets.early_cap", 1, i64::from(size) - 1)? as u32;
        let text = after.get_ref().trim();
        let after = if let Some(p) = text.strip_suffix('%') {
            match p.trim().parse::<u32>() {
                Ok(p) if (1..=99).contains(&p) => LatePoint::Percent(p),
                _ => {
                    return Err(self.at(
                        after.span(),
                        format!(
                            "brackets.late_after = {text:?} is not a whole percentage from 1% \
                             to 99%; {HOW}"
                        ),
                    ));
                }
            }
        } else {
            let d = parse_duration(
                text,
                Duration::from_secs(1),
                Duration::from_secs(366 * 86_400),
            )
            .map_err(|m| self.at(after.span(), format!("brackets.late_after: {m}; {HOW}")))?;
            LatePoint::Elapsed(d)
        };
        Ok(Some(LateSeats { early_cap, after }))
    }

    pub(super) fn scoring(&self, raw: &RawScoring) -> Result<Scoring, ConfigError> {
        let mode = match &raw.mode {
            None => ScoreMode::Increment,
            Some(m) => match m.get_ref().as_str() {
                "increment" => ScoreMode::Increment,
                "best" => ScoreMode::Best,
                "set" => ScoreMode::Set,
                other => {
                    return Err(self.at(
                        m.span(),
                        format!(
                            "scoring.mode = {other:?} is not a mode; \
                             use \"increment\", \"best\" or \"set\""
                        ),
                    ));
                }
            },
        };
        let max_score = self.int_in(&raw.max_score, "scoring.max_score", 1, i64::MAX)? as u64;
        let time_resolution = match &raw.time_resolution {
            None => Resolution::Second,
            Some(r) => match r.get_ref().as_str() {
                "1s" => Resolution::Second,
                "1ms" => Resolution::Millisecond,
                other => {
                    return Err(self.at(
                        r.span(),
                        format!(
                            "scoring.time_resolution = {other:?} is not supported; \
                             use \"1s\" or \"1ms\""
                        ),
                    ));
                }
            },
        };
        let idempotency_window = match &raw.idempotency_window {
            None => Duration::from_secs(86_400),
            Some(w) => parse_window(w.get_ref())
                .map_err(|m| self.at(w.span(), format!("scoring.idempotency_window: {m}")))?,
        };
        Ok(Scoring {
            mode,
            max_score,
            time_resolution,
            idempotency_window,
        })
    }

    /// The exact packing for the season, or an error naming the largest max_score.
    pub(super) fn packing(
        &self,
        raw: &Spanned<RawScoring>,
        scoring: &Scoring,
        calendar: &Calendar,
    ) -> Result<Packing, ConfigError> {
        let period_ms = calendar.max_period_millis();
        let res = scoring.time_resolution;
        let ticks = period_ms.div_ceil(res.millis());
        Packing::new(scoring.max_score, ticks).map_err(|e| {
            let schedule = calendar.schedule();
            let coarser = match res {
                Resolution::Millisecond => {
                    let at_1s = Packing::largest_max_score(period_ms.div_ceil(1000)).unwrap_or(0);
                    format!(", use time_resolution = \"1s\" (which allows up to {at_1s})")
                }
                Resolution::Second => String::new(),
            };
            self.at(
                raw.get_ref().max_score.span(),
                format!(
                    "scoring.max_score = {max} cannot be stored exactly: a {rule} period in {zone} \
                     lasts up to {len} ({ticks} ticks of {res}), and score × {span} + time must \
                     stay within 2^53 (the largest integer a Redis score holds exactly). \
                     The largest max_score allowed is {largest}; lower max_score to at most \
                     {largest}{coarser}, or use a shorter period",
                    max = scoring.max_score,
                    rule = schedule.period.as_str(),
                    zone = schedule.timezone.name(),
                    len = fmt_millis(period_ms),
                    res = res.as_str(),
                    span = ticks.saturating_add(1),
                    largest = e.largest,
                ),
            )
        })
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
