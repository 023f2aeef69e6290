//! League events as server-sent events: a player's stream and a bracket's log events.
//!
//! Each stream reads the event log from its own cursor (the `id` of the last event it
//! sent, which a client sends back as `Last-Event-ID` to resume: nothing after it is
//! missed, nothing is sent twice). Streams do not poll the store each on their own:
//! one ticker per watched player or bracket (shared by every stream of it) reads the
//! log every `poll` interval, from where it got to, and wakes the streams when it
//! found something new; each then reads on from its own cursor. A write through this
//! process nudges the ticker of its player or bracket so its events go out at once.
//! A ticker stops when its last stream leaves; every stream ends when the server shuts
//! down.
//!
//! A bracket stream's cursor is `v1.<period>.<pos>` per period it follows (at most
//! two): without a fixed `period` it follows the running period and the one before
//! (whose close, outcomes included, is written after the boundary).
//!
//! Owns: reading the logs for live streams, their cursors and tickers.
//! Must not: write anything, or keep reading a log nobody watches.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::sse::Event;
use futures::Stream;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, StoreError};
use crate::events::cursor::PlayerCursor;
use crate::league::League;
use crate::store::{Pos, Store};

use super::error::{ApiError, ErrorBody};
use super::sse::Open;

/// The most entries read from one log at a time.
const PAGE: usize = 200;

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
}

impl fmt::Display for BracketCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v1")?;
        for (period, at) in &self.0 {
            write!(f, ".{period}.{at}")?;
        }
        Ok(())
    }
}

impl FromStr for BracketCursor {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            format!(
                "{:?} is not a bracket stream's event id ({why}): send back an id this stream \
                 sent, or none to start from the oldest event kept",
                s.chars().take(120).collect::<String>()
            )
        };
        let mut parts = s.split('.');
        if parts.next() != Some("v1") {
            return Err(bad("it does not start with v1"));
        }
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
        }
        if out.len() > 2 || out.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(bad("its periods are not two or fewer, in order"));
        }
        Ok(BracketCursor(out))
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
    },
}

/// One event to send.
#[derive(Debug)]
struct Item {
    kind: String,
    json: String,
    id: String,
}

impl Follower {
    /// A player's stream resuming after `last` (an id it sent), or from the start.
    pub(super) fn player(player: String, last: Option<&str>) -> Result<Self, ApiError> {
        let cursor = match last {
            Some(id) => id.parse().map_err(invalid_event_id)?,
            None => PlayerCursor::default(),
        };
        Ok(Follower::Player { player, cursor })
    }

    /// A bracket's stream resuming after `last` (an id it sent), or from the start.
    pub(super) fn bracket(
        tier: String,
        bracket: u32,
        period: Option<u64>,
        last: Option<&str>,
    ) -> Result<Self, ApiError> {
        let cursor = match last {
            Some(id) => id.parse().map_err(invalid_event_id)?,
            None => BracketCursor::default(),
        };
        Ok(Follower::Bracket {
            tier,
            bracket,
            period,
            cursor,
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
                        id: e.cursor,
                    })
                    .collect();
                Ok((items, more))
            }
            Follower::Bracket {
                tier,
                bracket,
                period,
                cursor,
            } => {
                let periods = match *period {
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
                };
                cursor.follow(&periods);
                read_bracket(league, tier, *bracket, cursor).await
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
            id: cursor.to_string(),
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
        open: Option<Open>,
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
            _open: open,
        };
        futures::stream::unfold(reader, Reader::next)
    }

    /// The ticker of `follower`'s source, started (from the follower's cursor) if it
    /// has none.
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
/// whenever it found new events.
async fn tick<S: Store>(
    league: Arc<League<S>>,
    mut follower: Follower,
    ticker: Weak<Ticker>,
    nudge: Arc<Notify>,
    every: Duration,
    shutdown: CancellationToken,
) {
    loop {
        let mut found = false;
        // Up to the end of the log (a failed read waits for the next tick).
        while let Ok((items, more)) = follower.read(&league).await {
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
    _open: Option<Open>,
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
        let mut c = BracketCursor::default();
        assert_eq!(c.to_string(), "v1");
        c.follow(&[44, 45]);
        c.0[1].1 = Pos { ms: 17, seq: 2 };
        let text = c.to_string();
        assert_eq!(text, "v1.44.0-0.45.17-2");
        assert_eq!(text.parse::<BracketCursor>(), Ok(c.clone()));
        c.follow(&[45, 46]);
        assert_eq!(c.to_string(), "v1.45.17-2.46.0-0");
        for bad in [
            "",
            "v2",
            "v1.45",
            "v1.x.0-0",
            "v1.45.17",
            "v1.46.0-0.45.0-0",
            "v1.1.0-0.2.0-0.3.0-0",
        ] {
            assert!(bad.parse::<BracketCursor>().is_err(), "{bad:?}");
        }
    }
}
