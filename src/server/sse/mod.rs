//! Live standings as server-sent events, and the hub of every live stream: its
//! limits, and what ends a stream before its client leaves.
//!
//! Every process may write to a bracket (other `serve` processes, embedded game
//! servers), so a live view cannot wait for local writes: one poller per watched
//! bracket (shared by every viewer of it) reads the standings every `poll` interval
//! and sends them when they changed. A submit through this process nudges the poller
//! of its bracket so the change goes out at once. A poller stops when its last viewer
//! leaves. The log events of the player and bracket streams are read by `live.rs`.
//!
//! **Limits.** Every stream is counted against the server's limit
//! ([`ServerOptions::max_streams`], `LEAGUEKIT_STREAMS_MAX`: 503 `too_many_streams`
//! over it) and against its client's ([`StreamsPerToken`],
//! `LEAGUEKIT_STREAMS_PER_TOKEN`: 429 `too_many_streams` over it, to that client
//! only): a player token's streams per player (whatever their tokens), any other
//! token's per token. Both answers carry `Retry-After`. The counts live in one map
//! whose entries are the clients with a stream open, so it is bounded by the limit.
//!
//! **Ends.** A stream ends when its client leaves, or when the server shuts down (the
//! body just ends: reconnect). A stream opened with a player token also ends, with an
//! `event: end` (`{"reason", "message"}`, no id) and then the end of the body, when
//! that token expires (`token_expired`: when a request with it would be refused, its
//! `exp` plus the leeway) or its player is banned (`banned`). Bans are seen by one checker per process, running
//! while player streams are open: every [`BAN_CHECK`] it reads the season's index of
//! bans (one command, whatever the number of streams) and asks the player's own
//! record (which decides) only for a watched player the index says is banned; a ban
//! through this process's API nudges it at once.
//!
//! Owns: the live streams: one poller per watched bracket, nudges after local writes,
//! the stream limits and ends.
//! Must not: write anything, or keep polling a bracket nobody watches.
//!
//! [`ServerOptions::max_streams`]: super::ServerOptions::max_streams

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::sse::Event;
use futures::Stream;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::league::League;
use crate::operator::Ban;
use crate::store::Store;

mod grant;
mod limits;

use grant::{BanFlag, BanWatch, Counts, Holder, ban_message};
pub(super) use grant::{BanSub, Open, admit, answer};

pub use limits::{
    DEFAULT_MAX_STREAMS, DEFAULT_STREAMS_PER_PLAYER, DEFAULT_STREAMS_PER_STATIC_TOKEN,
    MOST_STREAMS, STREAMS_MAX_ENV, STREAMS_PER_TOKEN_ENV, StreamLimitError, StreamLimits,
    StreamsPerToken,
};

use super::App;
use super::auth::{Caller, Role};
use super::error::ApiError;
use super::live::Logs;
use super::model::StandingsOut;
use super::player_tokens::LEEWAY_SECS;

/// How often the bans of the players with streams open are read.
pub(super) const BAN_CHECK: Duration = Duration::from_secs(2);
/// The `Retry-After` of a refused stream, in seconds.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// What a bracket's viewers see: an event name and its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    event: &'static str,
    data: Arc<str>,
}

/// Which standings a poller reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Watch {
    pub(super) tier: String,
    pub(super) bracket: u32,
    pub(super) period: Option<u64>,
    pub(super) limit: u64,
}

/// One watched bracket.
struct Board {
    tx: watch::Sender<Option<Snapshot>>,
    nudge: Arc<Notify>,
}

/// The pollers of the watched brackets, the stream counts and the ban watch.
pub(super) struct Hub<S: Store> {
    league: Arc<League<S>>,
    boards: Mutex<HashMap<Watch, Weak<Board>>>,
    poll: Duration,
    shutdown: CancellationToken,
    counts: Arc<Mutex<Counts>>,
    max_streams: usize,
    per_token: StreamsPerToken,
    bans: Arc<BanWatch>,
    /// The log events' tickers.
    pub(super) logs: Logs<S>,
}

impl<S: Store> Hub<S> {
    pub(super) fn new(
        league: Arc<League<S>>,
        poll: Duration,
        max_streams: usize,
        per_token: StreamsPerToken,
        shutdown: CancellationToken,
    ) -> Self {
        Self {
            logs: Logs::new(league.clone(), poll, shutdown.clone()),
            league,
            boards: Mutex::new(HashMap::new()),
            poll,
            shutdown,
            counts: Arc::new(Mutex::new(Counts::default())),
            max_streams: max_streams.max(1),
            per_token,
            bans: Arc::new(BanWatch::default()),
        }
    }

    /// Tells the pollers of `tier`/`bracket` (standings and log events) to read now
    /// (after a local write).
    pub(super) fn nudge(&self, tier: &str, bracket: u32) {
        self.logs.nudge_bracket(tier, bracket);
        let boards = self.boards.lock().unwrap_or_else(|e| e.into_inner());
        for (w, board) in boards.iter() {
            if w.bracket == bracket
                && w.tier == tier
                && let Some(b) = board.upgrade()
            {
                b.nudge.notify_one();
            }
        }
    }

    /// Tells the ban checker to read the bans now (after a ban through this process).
    pub(super) fn bans_changed(&self) {
        self.bans.nudge.notify_one();
    }

    /// A stream of `holder` counted against the limits until the returned guard is
    /// dropped: 429 `too_many_streams` over the client's own limit, 503 over the
    /// server's, each with `Retry-After`.
    fn count(&self, holder: Holder) -> Result<Open, ApiError> {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mine = c.by.get(&holder).copied().unwrap_or(0);
        let (limit, who) = match &holder {
            Holder::Player(p) => (
                self.per_token.player,
                format!(
                    "player {:?} already holds",
                    p.chars().take(64).collect::<String>()
                ),
            ),
            Holder::Token(_) => (
                self.per_token.static_token,
                "this token already holds".to_owned(),
            ),
        };
        if mine >= limit {
            let mut e = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_streams",
                format!(
                    "{who} {mine} live streams, the most one client may hold open at once \
                     ({STREAMS_PER_TOKEN_ENV}): close one (an EventSource left open, another \
                     tab) before opening another"
                ),
            );
            e.retry_after = Some(RETRY_AFTER);
            return Err(e);
        }
        if c.total >= self.max_streams {
            let mut e = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_streams",
                format!(
                    "this server already serves {} live streams, its limit \
                     ({STREAMS_MAX_ENV}): try again later, or another server",
                    self.max_streams
                ),
            );
            e.retry_after = Some(RETRY_AFTER);
            return Err(e);
        }
        c.total += 1;
        *c.by.entry(holder.clone()).or_insert(0) += 1;
        Ok(Open {
            counts: self.counts.clone(),
            holder,
        })
    }

    /// A subscription to `player`'s ban watch, with the checker started if it is not
    /// running.
    fn watch_ban(&self, player: &str) -> BanSub {
        let flag = {
            let mut watched = self.bans.watched.lock().unwrap_or_else(|e| e.into_inner());
            watched.retain(|_, f| f.strong_count() > 0);
            match watched.get(player).and_then(Weak::upgrade) {
                Some(f) => f,
                None => {
                    let f = Arc::new(watch::channel(None).0);
                    watched.insert(player.to_owned(), Arc::downgrade(&f));
                    f
                }
            }
        };
        let rx = flag.subscribe();
        if !self.bans.running.swap(true, Ordering::AcqRel) {
            tokio::spawn(check_bans(
                self.league.clone(),
                self.bans.clone(),
                self.shutdown.clone(),
            ));
        }
        BanSub { _flag: flag, rx }
    }

    /// A stream of the standings of `w`: the current ones at once, then every change,
    /// until the viewer leaves or the server shuts down.
    pub(super) fn standings(
        &self,
        w: Watch,
    ) -> impl Stream<Item = Result<Event, Infallible>> + use<S> {
        let board = self.board(w);
        let mut rx = board.tx.subscribe();
        rx.mark_changed();
        let shutdown = self.shutdown.clone();
        futures::stream::unfold(
            (rx, board, shutdown),
            |(mut rx, board, shutdown)| async move {
                loop {
                    tokio::select! {
                        _ = shutdown.cancelled() => return None,
                        changed = rx.changed() => {
                            if changed.is_err() {
                                return None;
                            }
                        }
                    }
                    let snapshot = rx.borrow_and_update().clone();
                    if let Some(s) = snapshot {
                        let event = Event::default().event(s.event).data(&*s.data);
                        return Some((Ok(event), (rx, board, shutdown)));
                    }
                }
            },
        )
    }

    /// The board of `w`, with its poller started if it has none.
    fn board(&self, w: Watch) -> Arc<Board> {
        let mut boards = self.boards.lock().unwrap_or_else(|e| e.into_inner());
        boards.retain(|_, b| b.strong_count() > 0);
        if let Some(b) = boards.get(&w).and_then(Weak::upgrade) {
            return b;
        }
        let board = Arc::new(Board {
            tx: watch::channel(None).0,
            nudge: Arc::new(Notify::new()),
        });
        boards.insert(w.clone(), Arc::downgrade(&board));
        tokio::spawn(poll(
            self.league.clone(),
            w,
            Arc::downgrade(&board),
            board.nudge.clone(),
            self.poll,
            self.shutdown.clone(),
        ));
        board
    }
}

/// Reads the bans of the watched players every [`BAN_CHECK`] (or when nudged) while
/// any is watched, and raises the flag of each one banned.
async fn check_bans<S: Store>(
    league: Arc<League<S>>,
    bans: Arc<BanWatch>,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(BAN_CHECK) => {}
            () = bans.nudge.notified() => {}
        }
        let watched: HashMap<String, Arc<BanFlag>> = {
            let mut w = bans.watched.lock().unwrap_or_else(|e| e.into_inner());
            w.retain(|_, f| f.strong_count() > 0);
            w.iter()
                .filter_map(|(p, f)| f.upgrade().map(|f| (p.clone(), f)))
                .collect()
        };
        if watched.is_empty() {
            bans.running.store(false, Ordering::Release);
            // A stream that subscribed since takes this checker over if it saw it
            // running.
            let again = !bans
                .watched
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty();
            if again && !bans.running.swap(true, Ordering::AcqRel) {
                continue;
            }
            return;
        }
        if let Err(e) = check_once(&league, &watched).await {
            tracing::debug!(error = %e, "reading the bans of the live streams' players failed; trying again");
        }
    }
}

/// One reading of the season's index of bans; each watched player it says is banned
/// is checked against their own record (which decides).
async fn check_once<S: Store>(
    league: &League<S>,
    watched: &HashMap<String, Arc<BanFlag>>,
) -> Result<(), Error> {
    let index = league.store().ban_index(&league.keys().season()).await?;
    let mut now = None;
    for (player, record) in index {
        let Some(flag) = watched.get(&player) else {
            continue;
        };
        let now = match now {
            Some(n) => n,
            None => *now.insert(league.now().await?),
        };
        // A record the index holds but cannot be read: ask the player's own.
        if serde_json::from_str::<Ban>(&record).is_ok_and(|b| !b.holds_at(now)) {
            continue;
        }
        if let Some(ban) = league.operator().ban_of(&player).await? {
            flag.send_replace(Some(ban_message(&ban)));
        }
    }
    Ok(())
}

/// Reads the standings of `w` until its board has no viewer left.
async fn poll<S: Store>(
    league: Arc<League<S>>,
    w: Watch,
    board: Weak<Board>,
    nudge: Arc<Notify>,
    every: Duration,
    shutdown: CancellationToken,
) {
    loop {
        let snapshot = read(&league, &w).await;
        {
            let Some(b) = board.upgrade() else { return };
            if b.tx.receiver_count() == 0 {
                return;
            }
            b.tx.send_if_modified(|current| {
                if current.as_ref() == Some(&snapshot) {
                    false
                } else {
                    *current = Some(snapshot);
                    true
                }
            });
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
            _ = nudge.notified() => {}
        }
    }
}

async fn read<S: Store>(league: &League<S>, w: &Watch) -> Snapshot {
    let result = league
        .standings(&w.tier, w.bracket, w.period, 0, w.limit)
        .await
        .map(StandingsOut::from)
        .map_err(ApiError::from);
    let (event, json) = match result {
        Ok(s) => ("standings", serde_json::to_string(&s)),
        Err(e) => (
            "error",
            serde_json::to_string(&super::error::ErrorBody { error: e.detail() }),
        ),
    };
    let data = json.unwrap_or_else(|e| {
        format!("{{\"error\":{{\"code\":\"internal\",\"message\":\"cannot encode: {e}\"}}}}")
    });
    Snapshot {
        event,
        data: data.into(),
    }
}
