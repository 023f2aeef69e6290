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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use base64::Engine as _;
use futures::{Stream, StreamExt};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, InputError};
use crate::league::League;
use crate::operator::Ban;
use crate::store::Store;

use super::App;
use super::auth::{Caller, Role};
use super::error::ApiError;
use super::live::Logs;
use super::model::StandingsOut;
use super::player_tokens::LEEWAY_SECS;

/// The variable of the most live streams one server holds open at once.
pub const STREAMS_MAX_ENV: &str = "LEAGUEKIT_STREAMS_MAX";
/// The variable of the most live streams one client holds open at once.
pub const STREAMS_PER_TOKEN_ENV: &str = "LEAGUEKIT_STREAMS_PER_TOKEN";
/// The default of [`STREAMS_MAX_ENV`]: half the 20,000 streams one `serve` is sized
/// for (within 1 GB), so that a server left at its defaults keeps headroom in memory
/// and file descriptors (raise `ulimit -n` with it).
pub const DEFAULT_MAX_STREAMS: usize = 10_000;
/// The default streams per player: a game client needs one or two (its player's
/// stream, its bracket's), a few more for tabs and reconnects that overlap; far below
/// what would let one player matter to the server's limit.
pub const DEFAULT_STREAMS_PER_PLAYER: usize = 8;
/// The default streams per server, viewer or admin token: a quarter of the default
/// server limit, so that a game server relaying its players' streams, or a
/// dashboard token shared by a support team, fits, and one such token (leaked, or in
/// a loop) still leaves three quarters of the server to the others.
pub const DEFAULT_STREAMS_PER_STATIC_TOKEN: usize = 2_500;
/// The largest value either variable takes.
pub const MOST_STREAMS: usize = 1_000_000;
/// How often the bans of the players with streams open are read.
pub(super) const BAN_CHECK: Duration = Duration::from_secs(2);
/// The `Retry-After` of a refused stream, in seconds.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// The most live streams one client holds open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamsPerToken {
    /// A player's, whatever the player tokens they are opened with (default 8).
    pub player: usize,
    /// One server, viewer or admin token's (default 2,500).
    pub static_token: usize,
}

impl Default for StreamsPerToken {
    fn default() -> Self {
        StreamsPerToken {
            player: DEFAULT_STREAMS_PER_PLAYER,
            static_token: DEFAULT_STREAMS_PER_STATIC_TOKEN,
        }
    }
}

impl StreamsPerToken {
    /// These limits (each at least 1; a 0 is taken as 1).
    pub fn new(player: usize, static_token: usize) -> Self {
        StreamsPerToken {
            player: player.max(1),
            static_token: static_token.max(1),
        }
    }
}

/// The stream limits of `leaguekit serve`, from its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamLimits {
    /// [`STREAMS_MAX_ENV`] (default [`DEFAULT_MAX_STREAMS`]).
    pub max: usize,
    /// [`STREAMS_PER_TOKEN_ENV`].
    pub per_token: StreamsPerToken,
}

/// A stream limit that cannot be used (`leaguekit serve` does not start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamLimitError {
    /// `LEAGUEKIT_STREAMS_MAX` is not a number in range.
    #[error(
        "{STREAMS_MAX_ENV}: {0:?} is not a whole number from 1 to {MOST_STREAMS}: set the \
         most live streams this server holds open at once (default {DEFAULT_MAX_STREAMS}; \
         raise the file-descriptor limit with it), or unset the variable"
    )]
    Max(String),
    /// `LEAGUEKIT_STREAMS_PER_TOKEN` cannot be read.
    #[error(
        "{STREAMS_PER_TOKEN_ENV}: {value:?}: {why}; write one whole number from 1 to \
         {MOST_STREAMS} for every token (e.g. 8), or player=N,static=M (the streams of one \
         player, whatever their player tokens; of one server, viewer or admin token), either \
         part optional (default player={DEFAULT_STREAMS_PER_PLAYER},\
         static={DEFAULT_STREAMS_PER_STATIC_TOKEN}), or unset the variable"
    )]
    PerToken {
        /// The value (its first 120 characters).
        value: String,
        /// What is wrong with it.
        why: String,
    },
}

impl StreamLimits {
    /// From the process's environment (unset or empty variables take the defaults).
    pub fn from_env() -> Result<StreamLimits, StreamLimitError> {
        StreamLimits::from_lookup(|k| std::env::var(k).ok())
    }

    /// From variables looked up by `get` (as [`StreamLimits::from_env`]).
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<StreamLimits, StreamLimitError> {
        let count = |v: &str| -> Option<usize> {
            let v = v.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            v.parse::<usize>()
                .ok()
                .filter(|n| (1..=MOST_STREAMS).contains(n))
        };
        let max = match get(STREAMS_MAX_ENV).filter(|v| !v.trim().is_empty()) {
            None => DEFAULT_MAX_STREAMS,
            Some(v) => {
                count(&v).ok_or_else(|| StreamLimitError::Max(v.chars().take(120).collect()))?
            }
        };
        let per_token = match get(STREAMS_PER_TOKEN_ENV).filter(|v| !v.trim().is_empty()) {
            None => StreamsPerToken::default(),
            Some(v) => {
                let bad = |why: &str| StreamLimitError::PerToken {
                    value: v.chars().take(120).collect(),
                    why: why.to_owned(),
                };
                if let Some(n) = count(&v) {
                    StreamsPerToken::new(n, n)
                } else if !v.contains('=') {
                    return Err(bad(&format!("not a whole number from 1 to {MOST_STREAMS}")));
                } else {
                    let (mut player, mut static_token) = (None, None);
                    for part in v.split(',').map(str::trim) {
                        let (key, n) = part
                            .split_once('=')
                            .ok_or_else(|| bad(&format!("{part:?} is not KEY=N")))?;
                        let slot = match key.trim() {
                            "player" => &mut player,
                            "static" => &mut static_token,
                            other => {
                                return Err(bad(&format!(
                                    "{:?} is neither player nor static",
                                    other.chars().take(40).collect::<String>()
                                )));
                            }
                        };
                        if slot.is_some() {
                            return Err(bad(&format!("{} is given twice", key.trim())));
                        }
                        *slot = Some(count(n).ok_or_else(|| {
                            bad(&format!(
                                "{}'s value {:?} is not a whole number from 1 to {MOST_STREAMS}",
                                key.trim(),
                                n.trim().chars().take(40).collect::<String>()
                            ))
                        })?);
                    }
                    let d = StreamsPerToken::default();
                    StreamsPerToken::new(
                        player.unwrap_or(d.player),
                        static_token.unwrap_or(d.static_token),
                    )
                }
            }
        };
        Ok(StreamLimits { max, per_token })
    }
}

/// A live stream as the answer: `text/event-stream`, with a keep-alive comment every
/// 15 s, ending as `grant` says (see the module's docs) and releasing its place in
/// the limits when it ends or its client leaves.
pub(super) fn answer(
    stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
    grant: Grant,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + Send + 'static> {
    Sse::new(ending(stream, grant)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// Why a player's stream ended before its client left.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    /// The player token expired (its `exp`).
    TokenExpired(u64),
    /// The player is banned: the message.
    Banned(String),
}

impl End {
    /// The `event: end` that says so.
    fn event(&self) -> Event {
        let (reason, message) = match self {
            End::TokenExpired(exp) => (
                "token_expired",
                format!(
                    "the player token this stream was opened with expired (exp {exp}, unix \
                     seconds): mint a new token and open the stream again with it, with \
                     last_event_id set to the last id received"
                ),
            ),
            End::Banned(message) => ("banned", message.clone()),
        };
        Event::default()
            .event("end")
            .data(serde_json::json!({ "reason": reason, "message": message }).to_string())
    }
}

/// A stream's right to be served: its place in the limits, and what ends it.
pub(super) struct Grant {
    _open: Open,
    /// When the player token stops being accepted, and its `exp`.
    expires: Option<(tokio::time::Instant, u64)>,
    /// The ban watch of the stream's player (player tokens only).
    ban: Option<BanSub>,
}

impl Grant {
    /// Resolves when the stream must end, with why.
    async fn ended(&mut self) -> End {
        let Grant { expires, ban, .. } = self;
        let expiry = async {
            match *expires {
                Some((at, exp)) => {
                    tokio::time::sleep_until(at).await;
                    exp
                }
                None => std::future::pending().await,
            }
        };
        let banned = async {
            match ban {
                Some(sub) => sub.banned().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            message = banned => End::Banned(message),
            exp = expiry => End::TokenExpired(exp),
        }
    }
}

/// What `ending` does next.
enum Step {
    Item(Option<Result<Event, Infallible>>),
    End(End),
}

/// `inner` until `grant` says the stream ends (then an `event: end`, and the end).
fn ending(
    inner: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
    grant: Grant,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    futures::stream::unfold(Some((Box::pin(inner), grant)), |state| async move {
        let (mut inner, mut grant) = state?;
        let step = tokio::select! {
            biased;
            why = grant.ended() => Step::End(why),
            item = inner.next() => Step::Item(item),
        };
        match step {
            Step::Item(Some(item)) => Some((item, Some((inner, grant)))),
            Step::Item(None) => None,
            Step::End(why) => Some((Ok(why.event()), None)),
        }
    })
}

/// Who a stream is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Holder {
    /// A player, whatever their player tokens.
    Player(String),
    /// A server, viewer or admin token, by its role and name.
    Token(String),
}

/// The open streams: in all, and per client with one open.
#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by: HashMap<Holder, usize>,
}

/// Counts an open stream until dropped.
pub(super) struct Open {
    counts: Arc<Mutex<Counts>>,
    holder: Holder,
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.by.get_mut(&self.holder) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by.remove(&self.holder);
            }
        }
    }
}

/// The ban watch of one player: `Some(message)` once banned.
type BanFlag = watch::Sender<Option<String>>;

/// The players whose bans are watched (those with player streams open).
#[derive(Default)]
struct BanWatch {
    watched: Mutex<HashMap<String, Weak<BanFlag>>>,
    nudge: Notify,
    running: AtomicBool,
}

/// A stream's subscription to its player's ban watch.
pub(super) struct BanSub {
    _flag: Arc<BanFlag>,
    rx: watch::Receiver<Option<String>>,
}

impl BanSub {
    /// Resolves with the ban's message once the player is banned.
    async fn banned(&mut self) -> String {
        let got = self
            .rx
            .wait_for(Option::is_some)
            .await
            .map(|m| m.clone().unwrap_or_default());
        match got {
            Ok(m) => m,
            Err(_) => std::future::pending().await,
        }
    }
}

/// What a banned player's stream is told.
fn ban_message(ban: &Ban) -> String {
    let until = ban.until.map_or_else(
        || "until an operator lifts it".to_owned(),
        |u| format!("until {}", u.to_rfc3339()),
    );
    format!(
        "player {:?} is banned {until}: their live streams are closed, and cannot be opened \
         again meanwhile",
        ban.player
    )
}

/// The 403 `banned` of a banned player's stream.
fn banned(ban: Ban) -> ApiError {
    ApiError::from(Error::from(InputError::Banned {
        player: ban.player,
        until: ban.until,
    }))
}

/// The `exp` of the player token of this request (the bearer token, else
/// `?access_token=`) if it is a valid token of `player`: of those presented, the
/// earliest.
fn player_token_exp<S: Store>(
    app: &App<S>,
    player: &str,
    headers: &HeaderMap,
    query_token: Option<&str>,
) -> Option<u64> {
    let keys = app.players.as_ref()?;
    let bearer = headers.get(header::AUTHORIZATION).and_then(|v| {
        let v = v.as_bytes();
        v.get(..7)
            .filter(|s| s.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| v.get(7..))
            .map(<[u8]>::trim_ascii)
    });
    bearer
        .into_iter()
        .chain(query_token.map(str::as_bytes))
        .filter(|t| matches!(keys.check(t), Ok(p) if p == player))
        .filter_map(exp_claim)
        .min()
}

/// The `exp` claim of a JWT (whose signature was checked), read from its payload.
fn exp_claim(token: &[u8]) -> Option<u64> {
    let payload = token.split(|b| *b == b'.').nth(1)?;
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&json).ok()?;
    let exp = claims.get("exp")?;
    // Rounded as the JWT library rounds it.
    exp.as_u64().or_else(|| {
        exp.as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0 && *f < u64::MAX as f64)
            .map(|f| f.round() as u64)
    })
}

/// When a token whose `exp` is `exp` stops being accepted (a request is refused once
/// the system clock's whole seconds pass `exp` plus the leeway), on tokio's clock;
/// `None` past what the clock can hold.
fn deadline(exp: u64) -> Option<tokio::time::Instant> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let end = Duration::from_secs(exp.saturating_add(LEEWAY_SECS).saturating_add(1));
    tokio::time::Instant::now().checked_add(end.saturating_sub(now))
}

/// This request's right to a live stream: counted against the limits (429 or 503
/// `too_many_streams` over them); for a player token, refused while the player is
/// banned (403 `banned`), and ending at the token's `exp` or at a ban. `query_token`
/// is the route's `?access_token=`.
pub(super) async fn admit<S: Store>(
    app: &App<S>,
    caller: Option<&Caller>,
    headers: &HeaderMap,
    query_token: Option<&str>,
) -> Result<Grant, ApiError> {
    let hub = &app.hub;
    let (holder, expires, ban) = match caller {
        Some(c) if c.role == Role::Player => {
            let exp = player_token_exp(app, &c.name, headers, query_token).ok_or_else(|| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the player token of this stream was accepted but its exp cannot be read \
                     back: please report it",
                )
            })?;
            // Watched before the ban is read, so that a ban from now on is seen.
            let sub = hub.watch_ban(&c.name);
            if let Some(ban) = app.league.operator().ban_of(&c.name).await? {
                return Err(banned(ban));
            }
            (
                Holder::Player(c.name.clone()),
                deadline(exp).map(|at| (at, exp)),
                Some(sub),
            )
        }
        Some(c) => (
            Holder::Token(format!("{:?}:{}", c.role, c.name)),
            None,
            None,
        ),
        None => (Holder::Token("anonymous".to_owned()), None, None),
    };
    Ok(Grant {
        _open: hub.count(holder)?,
        expires,
        ban,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(vars: &[(&str, &str)]) -> Result<StreamLimits, StreamLimitError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        StreamLimits::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn stream_limits_from_the_environment() {
        let d = limits(&[]).expect("defaults");
        assert_eq!(d.max, DEFAULT_MAX_STREAMS);
        assert_eq!(d.per_token, StreamsPerToken::default());
        assert_eq!(limits(&[(STREAMS_MAX_ENV, " ")]), Ok(d));
        let l = limits(&[(STREAMS_MAX_ENV, "25000"), (STREAMS_PER_TOKEN_ENV, "16")]).expect("ok");
        assert_eq!((l.max, l.per_token), (25_000, StreamsPerToken::new(16, 16)));
        let l = limits(&[(STREAMS_PER_TOKEN_ENV, "static=100")]).expect("ok");
        assert_eq!(l.per_token, StreamsPerToken::new(8, 100));
        let l = limits(&[(STREAMS_PER_TOKEN_ENV, " player = 2 , static=3 ")]).expect("ok");
        assert_eq!(l.per_token, StreamsPerToken::new(2, 3));
        for bad in [
            "0",
            "-1",
            "1e3",
            "lots",
            "1000001",
            "99999999999999999999999",
        ] {
            let e = limits(&[(STREAMS_MAX_ENV, bad)]).expect_err(bad);
            assert!(e.to_string().starts_with(STREAMS_MAX_ENV), "{e}");
        }
        for bad in [
            "0",
            "player=",
            "players=3",
            "player=2,player=3",
            "static=0",
            "player=2,",
            "player:2",
            "=4",
        ] {
            let e = limits(&[(STREAMS_PER_TOKEN_ENV, bad)]).expect_err(bad);
            let text = e.to_string();
            assert!(text.starts_with(STREAMS_PER_TOKEN_ENV), "{text}");
            assert!(text.contains("player=N,static=M"), "{text}");
        }
        let long = "x".repeat(100_000);
        let e = limits(&[(STREAMS_PER_TOKEN_ENV, &long)]).expect_err("long");
        assert!(
            e.to_string().len() < 1_000,
            "the value is not repeated whole"
        );
    }

    #[test]
    fn exp_is_read_from_the_payload() {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = |claims: &str| format!("{}.{}.sig", b64("{}"), b64(claims));
        assert_eq!(
            exp_claim(token(r#"{"exp": 1700000000}"#).as_bytes()),
            Some(1_700_000_000)
        );
        assert_eq!(
            exp_claim(token(r#"{"exp": 1700000000.4}"#).as_bytes()),
            Some(1_700_000_000)
        );
        assert_eq!(exp_claim(token(r#"{"exp": 1e300}"#).as_bytes()), None);
        assert_eq!(exp_claim(token(r#"{"exp": -1}"#).as_bytes()), None);
        assert_eq!(exp_claim(token(r#"{"sub": "ana"}"#).as_bytes()), None);
        assert_eq!(exp_claim(b"not-a-jwt"), None);
        assert_eq!(exp_claim(b"a.%%%.c"), None);
        // A deadline the clock cannot hold is none (never), not a panic.
        assert!(deadline(u64::MAX).is_none() || deadline(u64::MAX).is_some());
        assert!(deadline(0).is_some_and(|d| d <= tokio::time::Instant::now()));
    }
}
