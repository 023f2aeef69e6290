//! Live standings as server-sent events, and the hub of every live stream.
//!
//! Every process may write to a bracket (other `serve` processes, embedded game
//! servers), so a live view cannot wait for local writes: one poller per watched
//! bracket (shared by every viewer of it) reads the standings every `poll` interval
//! and sends them when they changed. A submit through this process nudges the poller
//! of its bracket so the change goes out at once. A poller stops when its last viewer
//! leaves; every stream ends when the server shuts down. The log events of the
//! player and bracket streams are read by `live.rs`; the hub counts every stream
//! against the server's limit.
//!
//! Owns: the live streams: one poller per watched bracket, nudges after local writes.
//! Must not: write anything, or keep polling a bracket nobody watches.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::league::League;
use crate::store::Store;

use super::error::ApiError;
use super::live::Logs;
use super::model::StandingsOut;

/// A live stream as the answer: `text/event-stream`, with a keep-alive comment every
/// 15 s.
pub(super) fn answer(
    stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + Send + 'static> {
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

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

/// The pollers of the watched brackets.
pub(super) struct Hub<S: Store> {
    league: Arc<League<S>>,
    boards: Mutex<HashMap<Watch, Weak<Board>>>,
    poll: Duration,
    shutdown: CancellationToken,
    streams: Arc<AtomicUsize>,
    max_streams: usize,
    /// The log events' tickers.
    pub(super) logs: Logs<S>,
}

/// Counts an open stream until dropped.
pub(super) struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<S: Store> Hub<S> {
    pub(super) fn new(
        league: Arc<League<S>>,
        poll: Duration,
        max_streams: usize,
        shutdown: CancellationToken,
    ) -> Self {
        Self {
            logs: Logs::new(league.clone(), poll, shutdown.clone()),
            league,
            boards: Mutex::new(HashMap::new()),
            poll,
            shutdown,
            streams: Arc::new(AtomicUsize::new(0)),
            max_streams,
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

    /// A stream counted against the server's limit of live streams (503
    /// `too_many_streams` over it) until the returned guard is dropped.
    pub(super) fn admit(&self) -> Result<Open, ApiError> {
        if self.streams.fetch_add(1, Ordering::Relaxed) >= self.max_streams {
            self.streams.fetch_sub(1, Ordering::Relaxed);
            return Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "too_many_streams",
                format!(
                    "this server already serves {} live streams; close some or try later",
                    self.max_streams
                ),
            ));
        }
        Ok(Open(self.streams.clone()))
    }

    /// A stream of the standings of `w`: the current ones at once, then every change,
    /// until the viewer leaves or the server shuts down. It holds `open`.
    pub(super) fn standings(
        &self,
        w: Watch,
        open: Open,
    ) -> impl Stream<Item = Result<Event, Infallible>> + use<S> {
        let board = self.board(w);
        let mut rx = board.tx.subscribe();
        rx.mark_changed();
        let shutdown = self.shutdown.clone();
        futures::stream::unfold(
            (rx, board, shutdown, open),
            |(mut rx, board, shutdown, open)| async move {
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
                        return Some((Ok(event), (rx, board, shutdown, open)));
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
