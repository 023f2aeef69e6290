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
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::sse::Event;
use futures::Stream;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, StoreError};
use crate::events::cursor::{PlayerCursor, owner_tag, shown};
use crate::league::League;
use crate::store::{LogRead, Pos, Store};

use super::error::{ApiError, ErrorBody};

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

/// The tag of a bracket stream's ids ([`owner_tag`]).
fn bracket_tag(tier: &str, bracket: u32) -> String {
    owner_tag(&format!("bracket:{tier}/{bracket}"))
}

/// Where a bracket stream is: a position in the bracket's log of each period it
/// follows (at most two, oldest first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct BracketCursor(Vec<(u64, Pos)>);

impl BracketCursor {
    /// Follows exactly `periods` (ascending): known positions are kept, new periods
    /// start before their first event.
    fn follow(&mut self, periods: &[u64]) {
        self.0 = periods
            .iter()
            .map(|&p| {
                let at = self.0.iter().find(|(q, _)| *q == p).map(|(_, at)| *at);
                (p, at.unwrap_or(Pos::START))
            })
            .collect();
    }

    /// The text form with `tag`: `v2.<tag>.<period>.<pos>...`.
    fn to_text(&self, tag: &str) -> String {
        let mut out = format!("v2.{tag}");
        for (period, at) in &self.0 {
            let _ = write!(out, ".{period}.{at}");
        }
        out
    }

    /// Either text form, with its tag (v2) or none (v1).
    fn parse(s: &str) -> Result<(Option<&str>, BracketCursor), String> {
        let bad = |why: &str| {
            format!(
                "{:?} is not a bracket stream's event id ({why}): send back an id this stream \
                 sent, or none to start from the oldest event kept",
                shown(s)
            )
        };
        let mut parts = s.split('.');
        let tag = match parts.next() {
            Some("v1") => None,
            Some("v2") => match parts.next() {
                Some(t) if t.len() == 8 && t.bytes().all(|b| b.is_ascii_hexdigit()) => Some(t),
                _ => return Err(bad("its tag is not 8 hex digits")),
            },
            _ => return Err(bad("it does not start with v1 or v2")),
        };
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
pub(super) fn invalid_event_id(why: String) -> ApiError {
    ApiError::bad_request("invalid_event_id", why)
}

/// The 404 of a player's stream in a season without an event log.
pub(super) fn events_disabled() -> ApiError {
    ApiError::not_found(
        "events_disabled",
        "this league keeps no event log: add an [events] section to the season file \
         (`[events]` alone takes the defaults) and restart the server",
    )
}

/// The event id to resume after: the `Last-Event-ID` header (which a reconnecting
/// `EventSource` sends), else the `last_event_id` query parameter; none when neither
/// is sent or it is empty.
pub(super) fn resume_from(
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

/// Checks a player stream's cursor against the player's placements and logs.
async fn check_player<S: Store>(
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
async fn check_bracket<S: Store>(
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

/// A bracket log's position as [`crate::events::EventLog::bracket`] gives it.
fn position(text: &str) -> Result<Pos, Error> {
    text.parse().map_err(|e: String| {
        Error::from(StoreError::Protocol(format!("an event log position: {e}")))
    })
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
