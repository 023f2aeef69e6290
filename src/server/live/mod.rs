//! League events as server-sent events: a player's stream and a bracket's log events.
//!
//! Each stream reads the event log from its own cursor (the `id` of the last event it
//! sent, which a client sends back as `Last-Event-ID` to resume: nothing after it is
//! missed, nothing is sent twice). Streams do not poll the store each on their own:
//! one ticker per watched player or bracket (shared by every stream of it) reads the
//! log every `poll` interval, from where it got to, and wakes the streams when it
//! found something new; each then reads on from its own cursor. A ticker starts from
//! the logs' ends as they are when it starts (a few seconds back, and it wakes its
//! streams once when it has read that far), never from a stream's cursor: one
//! stream's cursor never moves what another stream sees. A write through this
//! process nudges the ticker of its player or bracket so its events go out at once.
//! A ticker stops when its last stream leaves; every stream ends when the server shuts
//! down.
//!
//! A bracket stream's cursor is `v2.<tag>` then `.<period>.<pos>` per period it
//! follows (at most two; `<tag>`: [`owner_tag`] of the bracket): without a fixed
//! `period` it follows the running period and the one before (whose close, outcomes
//! included, is written after the boundary). The untagged `v1` form (before 0.4) is
//! still read.
//!
//! **A cursor sent back is checked** before the stream opens (400 `invalid_event_id`
//! otherwise): it must be of this stream (its tag: the player's, the bracket's), name
//! only periods the stream reads or read before (none after them: a player's
//! placements, a bracket's running period), and in each log the stream reads, a
//! position not past the log's last entry (an empty log, expired or never written:
//! not after the store's clock). So a position from the future, the largest id, or
//! another stream's id never reaches a read.
//!
//! Owns: reading the logs for live streams, their cursors and tickers.
//! Must not: write anything, or keep reading a log nobody watches.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::response::sse::Event;
use futures::Stream;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::events::cursor::{PlayerCursor, shown};
use crate::league::League;
use crate::store::{Pos, Store};

use super::error::{ApiError, ErrorBody};

mod resume;

pub(super) use resume::{BracketCursor, events_disabled, invalid_event_id, resume_from};
use resume::{bracket_tag, check_bracket, check_player, position};

/// The most entries read from one log at a time.
const PAGE: usize = 200;

/// How far back from the store's clock a ticker starts reading (for entries appended
/// while it started, and a store clock stepped back a little).
const TICKER_BACK_MS: u64 = 5_000;

/// What a ticker watches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Source {
    Player(String),
    Bracket {
        tier: String,
        bracket: u32,
        period: Option<u64>,
    },
}

/// What a stream reads, and where it is.
#[derive(Debug, Clone)]
pub(super) enum Follower {
    /// A player's events (`League::events().player`).
    Player {
        /// The player.
        player: String,
        /// Where the stream is.
        cursor: PlayerCursor,
    },
    /// A bracket's log events.
    Bracket {
        /// The tier (its board group, with the cohort).
        tier: String,
        /// The bracket number.
        bracket: u32,
        /// The one period to read; none: the running one and the one before.
        period: Option<u64>,
        /// Where the stream is.
        cursor: BracketCursor,
        /// The tag of its ids.
        tag: String,
    },
}

/// One event to send.
#[derive(Debug)]
struct Item {
    kind: String,
    json: String,
    id: String,
}

/// The periods a bracket stream reads now: `period`, or the running one and the one
/// before it.
async fn followed<S: Store>(league: &League<S>, period: Option<u64>) -> Result<Vec<u64>, Error> {
    Ok(match period {
        Some(p) => vec![p],
        None => {
            let now = league.now().await?;
            let current = league.period_at(Some(now)).map_err(Error::from)?.id;
            let mut periods = Vec::new();
            if let Some(before) = current.checked_sub(1)
                && league.period(before).is_ok()
            {
                periods.push(before);
            }
            periods.push(current);
            periods
        }
    })
}

impl Follower {
    /// A player's stream resuming after `last` (an id it sent), or from the start. The
    /// id is checked against the player's logs (see the module's docs).
    pub(super) async fn player<S: Store>(
        league: &League<S>,
        player: String,
        last: Option<&str>,
    ) -> Result<Self, ApiError> {
        let cursor = match last {
            Some(id) => {
                let cursor = PlayerCursor::parse_for(id, &player)
                    .map_err(|e| invalid_event_id(e.to_string()))?;
                if league.events().enabled() {
                    check_player(league, &player, &cursor, id).await?;
                }
                cursor
            }
            None => PlayerCursor::default(),
        };
        Ok(Follower::Player { player, cursor })
    }

    /// A bracket's stream resuming after `last` (an id it sent), or from the start.
    /// With an event log, the id is checked against the bracket's logs.
    pub(super) async fn bracket<S: Store>(
        league: &League<S>,
        tier: String,
        bracket: u32,
        period: Option<u64>,
        last: Option<&str>,
    ) -> Result<Self, ApiError> {
        let tag = bracket_tag(&tier, bracket);
        let cursor = match last {
            Some(id) => {
                let (given, cursor) = BracketCursor::parse(id).map_err(invalid_event_id)?;
                if given.is_some_and(|t| t != tag) {
                    return Err(invalid_event_id(format!(
                        "{:?} is an event id of another stream (another bracket's, or a \
                         player's), not of bracket {bracket} of {tier:?}: send back an id \
                         this stream sent, or none to start from the oldest event kept",
                        shown(id)
                    )));
                }
                if league.events().enabled() {
                    check_bracket(league, &tier, bracket, period, &cursor, id).await?;
                }
                cursor
            }
            None => BracketCursor::default(),
        };
        Ok(Follower::Bracket {
            tier,
            bracket,
            period,
            cursor,
            tag,
        })
    }

    fn source(&self) -> Source {
        match self {
            Follower::Player { player, .. } => Source::Player(player.clone()),
            Follower::Bracket {
                tier,
                bracket,
                period,
                ..
            } => Source::Bracket {
                tier: tier.clone(),
                bracket: *bracket,
                period: *period,
            },
        }
    }

    /// Moves the cursor to a little before the ends of the logs it reads now (a
    /// ticker's start: it looks for what is appended from then on).
    async fn seek_recent<S: Store>(&mut self, league: &League<S>) -> Result<(), Error> {
        let now = u64::try_from(league.store().now().await?).unwrap_or(0);
        let at = Pos {
            ms: now.saturating_sub(TICKER_BACK_MS),
            seq: 0,
        };
        match self {
            Follower::Player { player, cursor } => {
                let state = league
                    .store()
                    .player_state(&league.keys().player(player))
                    .await?;
                let mut fresh = PlayerCursor {
                    bucket: at,
                    periods: Vec::new(),
                };
                if let Some(s) = state {
                    let mut periods = vec![s.period];
                    periods.extend(s.previous.map(|p| p.0));
                    fresh.follow(&periods);
                    for p in &mut fresh.periods {
                        p.bracket = at;
                        p.period_log = at;
                    }
                }
                *cursor = fresh;
            }
            Follower::Bracket { period, cursor, .. } => {
                let mut fresh = BracketCursor::default();
                fresh.follow(&followed(league, *period).await?);
                for p in &mut fresh.0 {
                    p.1 = at;
                }
                *cursor = fresh;
            }
        }
        Ok(())
    }

    /// The next events after the cursor (which moves past them), and whether there may
    /// be more to read at once.
    async fn read<S: Store>(&mut self, league: &League<S>) -> Result<(Vec<Item>, bool), Error> {
        match self {
            Follower::Player { player, cursor } => {
                let page = league.events().player(player, cursor, PAGE).await?;
                let more = page.cursor != *cursor;
                *cursor = page.cursor;
                let items = page
                    .events
                    .into_iter()
                    .map(|e| Item {
                        kind: e.kind,
                        json: e.json,
                        // The library's v1 form, bound to the player.
                        id: PlayerCursor::parse_for(&e.cursor, player)
                            .map_or(e.cursor, |c| c.to_text_for(player)),
                    })
                    .collect();
                Ok((items, more))
            }
            Follower::Bracket {
                tier,
                bracket,
                period,
                cursor,
                tag,
            } => {
                cursor.follow(&followed(league, *period).await?);
                read_bracket(league, tier, *bracket, cursor, tag).await
            }
        }
    }
}

/// The next events of a bracket's logs after `cursor`, in the order they were written.
async fn read_bracket<S: Store>(
    league: &League<S>,
    tier: &str,
    bracket: u32,
    cursor: &mut BracketCursor,
    tag: &str,
) -> Result<(Vec<Item>, bool), Error> {
    let mut read = Vec::new();
    // A log that filled its page may have more: the others' events are kept only up to
    // its last one, so that the events go out in the order they were written.
    let mut upto: Option<Pos> = None;
    for (i, (period, after)) in cursor.0.iter().enumerate() {
        let page = league
            .events()
            .bracket(*period, tier, bracket, *after, PAGE)
            .await?;
        if page.len() >= PAGE
            && let Some(last) = page.last()
        {
            let last: Pos = position(&last.cursor)?;
            upto = Some(upto.map_or(last, |u| u.min(last)));
        }
        for logged in page {
            read.push((position(&logged.cursor)?, i, logged));
        }
    }
    read.sort_by_key(|(pos, i, _)| (*pos, *i));
    let more = upto.is_some();
    let mut items = Vec::new();
    for (pos, i, logged) in read {
        if upto.is_some_and(|u| pos > u) {
            continue;
        }
        cursor.0[i].1 = pos;
        items.push(Item {
            kind: logged.kind,
            json: logged.json,
            id: cursor.to_text(tag),
        });
    }
    Ok((items, more))
}

/// The shared ticker of one watched player or bracket.
struct Ticker {
    tx: watch::Sender<u64>,
    nudge: Arc<Notify>,
}

/// The tickers of the watched players and brackets.
pub(super) struct Logs<S: Store> {
    league: Arc<League<S>>,
    tickers: Mutex<HashMap<Source, Weak<Ticker>>>,
    poll: Duration,
    shutdown: CancellationToken,
}

impl<S: Store> Logs<S> {
    pub(super) fn new(league: Arc<League<S>>, poll: Duration, shutdown: CancellationToken) -> Self {
        Logs {
            league,
            tickers: Mutex::new(HashMap::new()),
            poll,
            shutdown,
        }
    }

    /// Whether the season keeps an event log.
    pub(super) fn enabled(&self) -> bool {
        self.league.events().enabled()
    }

    /// Tells the tickers of `tier`/`bracket` to read now (after a local write).
    pub(super) fn nudge_bracket(&self, tier: &str, bracket: u32) {
        self.nudge_where(
            |s| matches!(s, Source::Bracket { tier: t, bracket: b, .. } if t == tier && *b == bracket),
        );
    }

    /// Tells the ticker of `player` to read now (after a local write).
    pub(super) fn nudge_player(&self, player: &str) {
        self.nudge_where(|s| matches!(s, Source::Player(p) if p == player));
    }

    fn nudge_where(&self, which: impl Fn(&Source) -> bool) {
        let tickers = self.tickers.lock().unwrap_or_else(|e| e.into_inner());
        for (source, ticker) in tickers.iter() {
            if which(source)
                && let Some(t) = ticker.upgrade()
            {
                t.nudge.notify_one();
            }
        }
    }

    /// The events of `follower` from its cursor on, each as `event: <type>`, `id:
    /// <cursor>`, `data: <event JSON>`; an `event: error` (no id) while the store
    /// fails. It ends when the server shuts down.
    pub(super) fn follow(
        &self,
        follower: Follower,
    ) -> impl Stream<Item = Result<Event, Infallible>> + use<S> {
        let ticker = self.ticker(&follower);
        let mut rx = ticker.tx.subscribe();
        rx.mark_unchanged();
        let reader = Reader {
            league: self.league.clone(),
            follower,
            rx,
            _ticker: ticker,
            pending: VecDeque::new(),
            read: true,
            failed: false,
            poll: self.poll,
            shutdown: self.shutdown.clone(),
        };
        futures::stream::unfold(reader, Reader::next)
    }

    /// The ticker of `follower`'s source, started if it has none (from the ends of
    /// its logs, not from the follower's cursor).
    fn ticker(&self, follower: &Follower) -> Arc<Ticker> {
        let source = follower.source();
        let mut tickers = self.tickers.lock().unwrap_or_else(|e| e.into_inner());
        tickers.retain(|_, t| t.strong_count() > 0);
        if let Some(t) = tickers.get(&source).and_then(Weak::upgrade) {
            return t;
        }
        let ticker = Arc::new(Ticker {
            tx: watch::channel(0).0,
            nudge: Arc::new(Notify::new()),
        });
        tickers.insert(source, Arc::downgrade(&ticker));
        tokio::spawn(tick(
            self.league.clone(),
            follower.clone(),
            Arc::downgrade(&ticker),
            ticker.nudge.clone(),
            self.poll,
            self.shutdown.clone(),
        ));
        ticker
    }
}

/// Reads a source's log until its ticker has no stream left, waking the streams
/// whenever it found new events. It starts a little before the logs' ends as they are
/// when it starts (whatever the cursor of the stream that started it), and wakes its
/// streams once when it has read that far.
async fn tick<S: Store>(
    league: Arc<League<S>>,
    mut follower: Follower,
    ticker: Weak<Ticker>,
    nudge: Arc<Notify>,
    every: Duration,
    shutdown: CancellationToken,
) {
    let mut started = false;
    loop {
        let mut found = false;
        if !started && follower.seek_recent(&league).await.is_ok() {
            started = true;
            found = true;
        }
        // Up to the end of the log (a failed read waits for the next tick).
        while started && let Ok((items, more)) = follower.read(&league).await {
            found |= !items.is_empty();
            if !more {
                break;
            }
        }
        {
            let Some(t) = ticker.upgrade() else { return };
            if t.tx.receiver_count() == 0 {
                return;
            }
            if found {
                t.tx.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
            _ = nudge.notified() => {}
        }
    }
}

/// One stream's state.
struct Reader<S: Store> {
    league: Arc<League<S>>,
    follower: Follower,
    rx: watch::Receiver<u64>,
    _ticker: Arc<Ticker>,
    pending: VecDeque<Item>,
    /// Whether to read (at start, after a wake-up, while there is more).
    read: bool,
    /// Whether the last read failed (the next one waits a poll interval).
    failed: bool,
    poll: Duration,
    shutdown: CancellationToken,
}

impl<S: Store> Reader<S> {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Self)> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                let kind = if item.kind.contains(['\n', '\r']) {
                    "unknown"
                } else {
                    &item.kind
                };
                let event = Event::default().event(kind).id(item.id).data(item.json);
                return Some((Ok(event), self));
            }
            if self.read {
                if self.failed {
                    tokio::select! {
                        _ = self.shutdown.cancelled() => return None,
                        _ = tokio::time::sleep(self.poll) => {}
                    }
                }
                match self.follower.read(&self.league).await {
                    Ok((items, more)) => {
                        self.pending.extend(items);
                        self.read = more;
                        self.failed = false;
                    }
                    Err(e) => {
                        self.failed = true;
                        let body = ErrorBody {
                            error: ApiError::from(e).detail(),
                        };
                        let data = serde_json::to_string(&body).unwrap_or_else(|e| {
                            format!(
                                "{{\"error\":{{\"code\":\"internal\",\"message\":\"cannot encode: {e}\"}}}}"
                            )
                        });
                        return Some((Ok(Event::default().event("error").data(data)), self));
                    }
                }
                continue;
            }
            tokio::select! {
                _ = self.shutdown.cancelled() => return None,
                changed = self.rx.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    self.rx.borrow_and_update();
                    self.read = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracket_cursors_print_and_parse_back() {
        let tag = bracket_tag("bronze", 3);
        let mut c = BracketCursor::default();
        assert_eq!(c.to_text(&tag), format!("v2.{tag}"));
        c.follow(&[44, 45]);
        c.0[1].1 = Pos { ms: 17, seq: 2 };
        let text = c.to_text(&tag);
        assert_eq!(text, format!("v2.{tag}.44.0-0.45.17-2"));
        assert_eq!(
            BracketCursor::parse(&text),
            Ok((Some(tag.as_str()), c.clone()))
        );
        // The v1 form (before 0.4): no tag.
        assert_eq!(
            BracketCursor::parse("v1.44.0-0.45.17-2"),
            Ok((None, c.clone()))
        );
        c.follow(&[45, 46]);
        assert_eq!(c.to_text(&tag), format!("v2.{tag}.45.17-2.46.0-0"));
        assert_ne!(bracket_tag("bronze", 3), bracket_tag("bronze", 4));
        assert_ne!(bracket_tag("bronze", 3), bracket_tag("silver", 3));
        for bad in [
            "",
            "v3",
            "v1.45",
            "v1.x.0-0",
            "v1.45.17",
            "v1.46.0-0.45.0-0",
            "v1.1.0-0.2.0-0.3.0-0",
            "v2",
            "v2.xyz.45.0-0",
            "v2.0123456g.45.0-0",
        ] {
            assert!(BracketCursor::parse(bad).is_err(), "{bad:?}");
        }
        let long = format!("v1.{}", "9".repeat(10_000));
        let e = BracketCursor::parse(&long).expect_err("long");
        assert!(e.len() < 400, "{e}");
    }
}
