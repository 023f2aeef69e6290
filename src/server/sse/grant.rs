//! A stream's right to be served (see the module's docs): its place in the limits,
//! the refusals over them, and what ends it before its client leaves (its player
//! token's `exp`, a ban).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use base64::Engine as _;
use futures::{Stream, StreamExt};
use tokio::sync::{Notify, watch};

use crate::error::{Error, InputError};
use crate::operator::Ban;
use crate::store::Store;

use super::*;

/// A live stream as the answer: `text/event-stream`, with a keep-alive comment every
/// 15 s, ending as `grant` says (see the module's docs) and releasing its place in
/// the limits when it ends or its client leaves.
pub(in crate::server) fn answer(
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
pub(in crate::server) struct Grant {
    pub(super) _open: Open,
    /// When the player token stops being accepted, and its `exp`.
    pub(super) expires: Option<(tokio::time::Instant, u64)>,
    /// The ban watch of the stream's player (player tokens only).
    pub(super) ban: Option<BanSub>,
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
pub(super) enum Holder {
    /// A player, whatever their player tokens.
    Player(String),
    /// A server, viewer or admin token, by its role and name.
    Token(String),
}

/// The open streams: in all, and per client with one open.
#[derive(Debug, Default)]
pub(super) struct Counts {
    pub(super) total: usize,
    pub(super) by: HashMap<Holder, usize>,
}

/// Counts an open stream until dropped.
pub(in crate::server) struct Open {
    pub(super) counts: Arc<Mutex<Counts>>,
    pub(super) holder: Holder,
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
pub(super) type BanFlag = watch::Sender<Option<String>>;

/// The players whose bans are watched (those with player streams open).
#[derive(Default)]
pub(super) struct BanWatch {
    pub(super) watched: Mutex<HashMap<String, Weak<BanFlag>>>,
    pub(super) nudge: Notify,
    pub(super) running: AtomicBool,
}

/// A stream's subscription to its player's ban watch.
pub(in crate::server) struct BanSub {
    pub(super) _flag: Arc<BanFlag>,
    pub(super) rx: watch::Receiver<Option<String>>,
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
pub(super) fn ban_message(ban: &Ban) -> String {
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
pub(in crate::server) async fn admit<S: Store>(
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

#[cfg(test)]
mod tests {
    use super::*;

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
