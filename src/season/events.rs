//! The `[events]` section of the season file: whether the league keeps an event log,
//! how long, and whether score updates log who passed whom.
//!
//! A season without the section keeps no log, and its joins, updates and rollovers
//! run exactly the commands they ran before events existed. With it, every change
//! that makes an event appends it in the same atomic step (see
//! `store/redis/lua/events.lua`):
//!
//! - `keep`: how long a log lives after its last event (default `"14d"`, 1 hour to
//!   400 days); the webhooks and streams can resume only from events still kept;
//! - `max_per_log`: the most events one log keeps (default 10,000; 100 to 1,000,000),
//!   older ones trimmed first. A log is one bracket's, one period's or one player
//!   bucket's, so a bracket of 100 logs a few hundred events a period without
//!   `overtaken`;
//! - `overtaken = true`: every score update that passes other players logs a
//!   `player.overtaken` event for each of them. It costs a rank lookup and a range
//!   read per update, and an event per player passed: opt-in.
//!
//! Owns: the section's shape and checks. Must not: touch a store.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;

use super::parse::{Src, fmt_duration, parse_duration};

/// `[events]`: the league's event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Events {
    /// How long a log lives after its last event.
    pub keep: Duration,
    /// The most events one log keeps.
    pub max_per_log: u32,
    /// Whether score updates log `player.overtaken`.
    pub overtaken: bool,
}

impl Default for Events {
    fn default() -> Self {
        Events {
            keep: Duration::from_secs(14 * 86_400),
            max_per_log: 10_000,
            overtaken: false,
        }
    }
}

impl Events {
    /// `keep` in whole seconds, as the stores expire logs.
    pub fn keep_secs(&self) -> u64 {
        self.keep.as_secs()
    }

    /// The section as a season file writes it.
    pub fn describe(&self) -> String {
        format!(
            "keep = \"{}\", max_per_log = {}, overtaken = {}",
            fmt_duration(self.keep),
            self.max_per_log,
            self.overtaken
        )
    }
}

/// Bounds of `events.keep`.
const MIN_KEEP: Duration = Duration::from_secs(3_600);
const MAX_KEEP: Duration = Duration::from_secs(400 * 86_400);

/// `[events]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvents {
    keep: Option<Spanned<String>>,
    max_per_log: Option<Spanned<i64>>,
    overtaken: Option<bool>,
}

/// `[events]`, or `None` (no log) when the section is absent.
pub(super) fn parse(src: &Src<'_>, raw: Option<&RawEvents>) -> Result<Option<Events>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let mut events = Events::default();
    if let Some(k) = &raw.keep {
        events.keep = parse_duration(k.get_ref(), MIN_KEEP, MAX_KEEP)
            .map_err(|m| src.at(k.span(), format!("events.keep: {m}")))?;
    }
    if let Some(m) = &raw.max_per_log {
        events.max_per_log = src.int_in(m, "events.max_per_log", 100, 1_000_000)? as u32;
    }
    events.overtaken = raw.overtaken.unwrap_or(false);
    Ok(Some(events))
}
