//! Where a live stream resumes: the bracket stream's cursor, and the checks a cursor
//! sent back passes before a stream opens (see the module's docs).

use std::fmt::Write as _;

use axum::http::HeaderMap;

use crate::error::{Error, StoreError};
use crate::events::cursor::{PlayerCursor, owner_tag, shown};
use crate::league::League;
use crate::server::error::ApiError;
use crate::store::{LogRead, Pos, Store};

use super::*;

/// The tag of a bracket stream's ids ([`owner_tag`]).
pub(super) fn bracket_tag(tier: &str, bracket: u32) -> String {
    owner_tag(&format!("bracket:{tier}/{bracket}"))
}

/// Where a bracket stream is: a position in the bracket's log of each period it
/// follows (at most two, oldest first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(in crate::server) struct BracketCursor(pub(super) Vec<(u64, Pos)>);

impl BracketCursor {
    /// Follows exactly `periods` (ascending): known positions are kept, new periods
    /// start before their first event.
    pub(super) fn follow(&mut self, periods: &[u64]) {
        self.0 = periods
            .iter()
            .map(|&p| {
                let at = self.0.iter().find(|(q, _)| *q == p).map(|(_, at)| *at);
                (p, at.unwrap_or(Pos::START))
            })
            .collect();
    }

    /// The text form with `tag`: `v2.<tag>.<period>.<pos>...`.
    pub(super) fn to_text(&self, tag: &str) -> String {
        let mut out = format!("v2.{tag}");
        for (period, at) in &self.0 {
            let _ = write!(out, ".{period}.{at}");
        }
        out
    }

    /// Either text form, with its tag (v2) or none (v1).
    pub(super) fn parse(s: &str) -> Result<(Option<&str>, BracketCursor), String> {
        let bad = |why: &str| {
            format!(
                "{:?} is not a bracket stream's event id ({why}): send back an id this stream \
                 sent, or none to start from the oldest event kept",
                shown(s)
            )
        };
        let (tag, mut parts) = crate::events::cursor::versioned(s).map_err(bad)?;
        let mut out = Vec::new();
        while let Some(period) = parts.next() {
            if period.is_empty() || !period.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("a period is not a number"));
            }
            let period: u64 = period.parse().map_err(|_| bad("a period is too large"))?;
            let at = parts
                .next()
                .ok_or_else(|| bad("it is cut short"))?
                .parse()
                .map_err(|_| bad("a position is malformed"))?;
            out.push((period, at));
            if out.len() > 2 {
                return Err(bad("its periods are not two or fewer, in order"));
            }
        }
        if out.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(bad("its periods are not two or fewer, in order"));
        }
        Ok((tag, BracketCursor(out)))
    }
}

/// The 400 of an event id a stream cannot resume from.
pub(in crate::server) fn invalid_event_id(why: String) -> ApiError {
    ApiError::bad_request("invalid_event_id", why)
}

/// The 404 of a player's stream in a season without an event log.
pub(in crate::server) fn events_disabled() -> ApiError {
    ApiError::not_found(
        "events_disabled",
        "this league keeps no event log: add an [events] section to the season file \
         (`[events]` alone takes the defaults) and restart the server",
    )
}

/// The event id to resume after: the `Last-Event-ID` header (which a reconnecting
/// `EventSource` sends), else the `last_event_id` query parameter; none when neither
/// is sent or it is empty.
pub(in crate::server) fn resume_from(
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let given = match headers.get("last-event-id") {
        Some(v) => v.to_str().map_err(|_| {
            invalid_event_id(
                "the Last-Event-ID header is not plain text: send back an id this stream \
                 sent, or none to start from the oldest event kept"
                    .to_owned(),
            )
        })?,
        None => query.unwrap_or(""),
    };
    let given = given.trim();
    Ok((!given.is_empty()).then(|| given.to_owned()))
}

/// The 400 of a cursor that names a position past the end of a log the stream reads.
fn past_the_end(id: &str) -> ApiError {
    invalid_event_id(format!(
        "{:?} points past the last event of a log this stream reads (an id from the \
         future, or of another stream): send back an id this stream sent, or none to start \
         from the oldest event kept",
        shown(id)
    ))
}

/// Checks a cursor's positions in the logs a stream reads: each `(log, at)` must not
/// be past the log's last entry (in an empty log: not after the store's clock). Two
/// reads per log, in one pipeline.
async fn check_positions<S: Store>(
    league: &League<S>,
    id: &str,
    checks: &[(String, Pos)],
) -> Result<(), ApiError> {
    let checks: Vec<&(String, Pos)> = checks.iter().filter(|(_, at)| *at != Pos::START).collect();
    if checks.is_empty() {
        return Ok(());
    }
    let mut reads = Vec::with_capacity(checks.len() * 2);
    for (log, at) in &checks {
        // The first entry at or after `at`, and the log's first entry.
        reads.push(LogRead {
            log,
            after: at.before(),
            limit: 1,
        });
        reads.push(LogRead {
            log,
            after: Pos::START,
            limit: 1,
        });
    }
    let mut got = league.events().read(&reads).await.into_iter();
    let mut now: Option<u64> = None;
    for (_, at) in &checks {
        let (Some(from), Some(first)) = (got.next(), got.next()) else {
            return Err(ApiError::from(Error::from(StoreError::Protocol(
                "reading the logs answered fewer reads than asked".to_owned(),
            ))));
        };
        if !from?.is_empty() {
            continue;
        }
        if !first?.is_empty() {
            return Err(past_the_end(id));
        }
        let now = match now {
            Some(n) => n,
            None => {
                let ms = league.store().now().await.map_err(Error::from)?;
                *now.insert(u64::try_from(ms).unwrap_or(0))
            }
        };
        if at.ms > now {
            return Err(invalid_event_id(format!(
                "{:?} points at a time after now (position {at}; the store's clock is at {now} \
                 ms): send back an id this stream sent, or none to start from the oldest event \
                 kept",
                shown(id)
            )));
        }
    }
    Ok(())
}

/// Checks a player stream's cursor against the player's placements and logs.
pub(super) async fn check_player<S: Store>(
    league: &League<S>,
    player: &str,
    cursor: &PlayerCursor,
    id: &str,
) -> Result<(), ApiError> {
    let keys = league.keys();
    let pkeys = keys.player(player);
    let state = league
        .store()
        .player_state(&pkeys)
        .await
        .map_err(|e| ApiError::from(Error::from(e)))?;
    let mut placements: Vec<(u64, String, u32)> = Vec::new();
    if let Some(s) = state {
        placements.push((s.period, s.tier, s.bracket));
        placements.extend(s.previous);
    }
    // A period named must be one of the player's placements, or older than those the
    // league still keeps for them (a stream that followed them then).
    let oldest = placements.iter().map(|p| p.0).min();
    for p in &cursor.periods {
        let known =
            placements.iter().any(|q| q.0 == p.period) || oldest.is_some_and(|o| p.period < o);
        if !known {
            return Err(invalid_event_id(format!(
                "{:?} names period {}, which is not one of {player:?}'s periods: send back an \
                 id this stream sent, or none to start from the oldest event kept",
                shown(id),
                p.period
            )));
        }
    }
    // The logs the stream will read (as `EventLog::player` picks them).
    let mut follow = cursor.clone();
    let mut periods: Vec<u64> = cursor.periods.iter().map(|p| p.period).collect();
    periods.extend(placements.iter().map(|p| p.0));
    follow.follow(&periods);
    let mut checks = vec![(pkeys.events(), cursor.bucket)];
    for (period, tier, bracket) in &placements {
        if let Some(at) = follow.periods.iter().find(|p| p.period == *period) {
            checks.push((keys.bracket(*period, tier, *bracket).events(), at.bracket));
            checks.push((keys.period(*period).events(), at.period_log));
        }
    }
    check_positions(league, id, &checks).await
}

/// Checks a bracket stream's cursor against the periods it follows and their logs.
pub(super) async fn check_bracket<S: Store>(
    league: &League<S>,
    tier: &str,
    bracket: u32,
    period: Option<u64>,
    cursor: &BracketCursor,
    id: &str,
) -> Result<(), ApiError> {
    let periods = followed(league, period).await?;
    let last = periods.last().copied().unwrap_or(0);
    if let Some((p, _)) = cursor.0.iter().find(|(p, _)| *p > last) {
        return Err(invalid_event_id(format!(
            "{:?} names period {p}, after the last period this stream reads ({last}): send \
             back an id this stream sent, or none to start from the oldest event kept",
            shown(id)
        )));
    }
    let mut follow = cursor.clone();
    follow.follow(&periods);
    let checks: Vec<(String, Pos)> = follow
        .0
        .iter()
        .map(|(p, at)| (league.keys().bracket(*p, tier, bracket).events(), *at))
        .collect();
    check_positions(league, id, &checks).await
}

/// A bracket log's position as [`crate::events::EventLog::bracket`] gives it.
pub(super) fn position(text: &str) -> Result<Pos, Error> {
    text.parse().map_err(|e: String| {
        Error::from(StoreError::Protocol(format!("an event log position: {e}")))
    })
}
