//! The deliverer: looks for (log, URL) pairs with events not yet delivered
//! (`watch.rs`) and delivers each pair in order under its lease (see the module's docs
//! in `mod.rs`). Each URL has its own slots, so a URL that hangs or fails holds only
//! its own.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::config::WebhookConfig;
use super::sign::headers;
use super::watch::BUCKET_SCAN;
use super::{DEAD, DELIVERED, FAILED, LAG, TRIMMED};
use crate::events::{event_id, kind_of, with_id};
use crate::league::League;
use crate::store::keys::{hook_cursors, hook_lease};
use crate::store::{DeadLetter, LogRead, Pos, Store};

/// How often the running periods' logs (and the marked ones) are looked at.
pub(super) const PERIOD_SCAN: Duration = Duration::from_millis(500);
/// The most logs one process looks at a second: a league of many brackets is looked
/// at less often than every [`PERIOD_SCAN`] (a million players, two periods of
/// 10,000 brackets each and the buckets: about every 2.5 s), so that the look costs
/// Redis a bounded share of its time whatever the league's size.
const LOGS_PER_SEC: f64 = 15_000.0;
/// A lease's time to live; its holder renews it at least every third of it.
pub(super) const LEASE_TTL: Duration = Duration::from_secs(30);
/// The most (log, URL) pairs one process delivers at once to one URL: a URL that
/// hangs holds at most these, never another URL's.
pub(super) const PAIRS_PER_URL: usize = 32;
/// Events read from a log at a time.
const PAGE: usize = 200;
/// How often a reward waiting for its bracket's events looks again.
const CAUSE_POLL: Duration = Duration::from_millis(100);
/// How long a reward waits for its bracket's events before its pair gives its slot up.
const CAUSE_WAIT: Duration = Duration::from_secs(5);
/// How often this process records its URLs as seen.
const REGISTER_EVERY: Duration = Duration::from_secs(60);
/// The most bytes of an answer read (the rest is dropped with the connection).
const ANSWER_CAP: usize = 64 * 1024;

/// One URL.
#[derive(Debug)]
pub(super) struct Target {
    pub(super) url: String,
    /// [`crate::store::url_tag`] of the URL: its cursor's field and its lease's suffix.
    pub(super) tag: String,
    /// Where it starts (see `watch.rs`), once registered.
    start: Mutex<Option<Pos>>,
}

impl Target {
    pub(super) fn new(url: String, tag: String) -> Target {
        Target {
            url,
            tag,
            start: Mutex::new(None),
        }
    }

    /// The position before the first event it gets; `None` until registered.
    pub(super) fn start(&self) -> Option<Pos> {
        *self.start.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn start_at(&self, at: Pos) {
        *self.start.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }
}

/// What one attempt, or one event's attempts, came to.
enum Sent {
    Delivered,
    /// Every attempt failed: the last error and how many there were.
    Failed(u32, String),
    /// Stopped before delivering (shutdown, or the lease lost): not done.
    Stopped,
}

/// Delivers one league's events to the configured URLs, until its shutdown token.
pub(super) struct Deliverer<S: Store> {
    pub(super) league: Arc<League<S>>,
    pub(super) config: Arc<WebhookConfig>,
    pub(super) client: reqwest::Client,
    pub(super) owner: String,
    pub(super) targets: Vec<Target>,
    /// How long a cursor hash lives after its last move: the log's own `keep` and a day.
    pub(super) cursor_ttl_ms: u64,
    pub(super) shutdown: CancellationToken,
    /// (log, target index) pairs being delivered by this process.
    pub(super) active: Mutex<HashSet<(String, usize)>>,
    /// The logs of closed periods being looked at (they no longer change).
    pub(super) closed_logs: Mutex<HashMap<u64, Vec<String>>>,
}

/// A random id: this process's name on leases.
pub(super) fn process_id() -> String {
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{}-{r:016x}", std::process::id())
}

/// A number in [0, 1) for jitter.
fn jitter() -> f64 {
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (r >> 11) as f64 / (1u64 << 53) as f64
}

fn unix_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl<S: Store> Deliverer<S> {
    /// Runs until shutdown: looks, starts a task per pending pair (within each URL's
    /// slots), replays dead letters; on shutdown waits for the tasks (each ends after
    /// its POST in flight). `registered`: whether the URLs were just recorded as seen.
    pub(super) async fn run(self: Arc<Self>, registered: bool) {
        let mut tasks = JoinSet::new();
        let mut bucket_scan: Option<Instant> = None;
        let mut registered = registered.then(Instant::now);
        loop {
            while tasks.try_join_next().is_some() {}
            if registered.is_none_or(|t| t.elapsed() >= REGISTER_EVERY) && self.register().await {
                registered = Some(Instant::now());
            }
            let sweep = bucket_scan.is_none_or(|t| t.elapsed() >= BUCKET_SCAN);
            if sweep {
                bucket_scan = Some(Instant::now());
            }
            let look = self.look(sweep).await;
            for (log, target) in look.pending {
                let key = (log.clone(), target);
                {
                    let mut active = self.active.lock().unwrap_or_else(|e| e.into_inner());
                    let busy = active.iter().filter(|(_, t)| *t == target).count();
                    if busy >= PAIRS_PER_URL || !active.insert(key.clone()) {
                        continue;
                    }
                }
                let me = self.clone();
                tasks.spawn(async move {
                    me.deliver_pair(&log, target).await;
                    me.active
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&key);
                });
            }
            if sweep {
                self.replay_dead().await;
                self.prune_dead().await;
            }
            metrics::gauge!(LAG).set(look.lag_ms as f64 / 1000.0);
            let pause = PERIOD_SCAN.max(Duration::from_secs_f64(look.logs as f64 / LOGS_PER_SEC));
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = self.shutdown.cancelled() => break,
            }
        }
        while tasks.join_next().await.is_some() {}
    }

    /// Delivers `log`'s events past target `index`'s cursor, in order, while this
    /// process holds the pair's lease.
    async fn deliver_pair(&self, log: &str, index: usize) {
        let target = &self.targets[index];
        let Some(start) = target.start() else {
            return;
        };
        let store = self.league.store();
        let lease = hook_lease(log, &target.tag);
        let cursors = hook_cursors(log);
        match store
            .take_lease(&lease, &self.owner, ttl_ms(LEASE_TTL))
            .await
        {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(log, error = %e, "webhooks: cannot take a lease");
                return;
            }
        }
        let mut renewed = Instant::now();
        let mut checked_trim = false;
        'pages: loop {
            // The cursor as stored now, under the lease: another holder may have moved
            // it since the look.
            let at = match store
                .log_heads(&[(log, &cursors)], std::slice::from_ref(&target.tag))
                .await
                .pop()
            {
                Some(Ok(h)) => h.cursors.first().copied().unwrap_or(Pos::START).max(start),
                _ => break,
            };
            if !checked_trim {
                checked_trim = true;
                match self
                    .report_trimmed(log, target, at, start, &lease, &cursors)
                    .await
                {
                    Ok(true) => continue 'pages,
                    Ok(false) => {}
                    Err(()) => break 'pages,
                }
            }
            let read = [LogRead {
                log,
                after: at,
                limit: PAGE,
            }];
            let entries = match self.league.events().read(&read).await.pop() {
                Some(Ok(e)) if !e.is_empty() => e,
                Some(Err(e)) => {
                    tracing::warn!(log, error = %e, "webhooks: cannot read a log");
                    break;
                }
                _ => break,
            };
            for e in &entries {
                if self.shutdown.is_cancelled() {
                    break 'pages;
                }
                let kind = kind_of(&e.body).unwrap_or("unknown");
                if self.config.sends(kind) {
                    if kind == "reward.granted"
                        && !self
                            .after_its_cause(&e.body, target, start, &lease, &mut renewed)
                            .await
                    {
                        break 'pages;
                    }
                    let json = with_id(log, e);
                    let id = event_id(log, e.pos);
                    match self
                        .send_with_retries(&lease, &mut renewed, target, &id, kind, &json)
                        .await
                    {
                        Sent::Delivered => {}
                        Sent::Stopped => break 'pages,
                        Sent::Failed(attempts, error) => {
                            let letter = DeadLetter {
                                id,
                                url: target.url.clone(),
                                event: json,
                                attempts,
                                error,
                                at_ms: now_ms(),
                                replay: false,
                            };
                            if let Err(err) = self.record_dead(&letter).await {
                                tracing::warn!(error = %err, "webhooks: cannot record a dead letter");
                                break 'pages;
                            }
                            tracing::warn!(id = %letter.id, url = %letter.url, error = %letter.error, "webhooks: event given up: recorded as a dead letter");
                            metrics::counter!(DEAD).increment(1);
                        }
                    }
                }
                match store
                    .advance_cursor(
                        &lease,
                        &self.owner,
                        &cursors,
                        &target.tag,
                        e.pos,
                        self.cursor_ttl_ms,
                    )
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(log, "webhooks: lease lost; another process goes on");
                        return;
                    }
                    Err(err) => {
                        tracing::warn!(log, error = %err, "webhooks: cannot move a cursor");
                        break 'pages;
                    }
                }
            }
            if entries.len() < PAGE {
                break;
            }
        }
        let _ = store.drop_lease(&lease, &self.owner).await;
    }

    /// When events after `at` (the entry the cursor is at) were trimmed from `log` by
    /// its cap before `target` got them, records the run as a dead letter (error
    /// `trimmed`), counts it, and moves the cursor to just before the log's first
    /// entry: Ok(true). Ok(false) when nothing was lost (and for a cursor at the
    /// target's start, which is no entry); Err when the store failed (the pair stops,
    /// to try again later).
    async fn report_trimmed(
        &self,
        log: &str,
        target: &Target,
        at: Pos,
        start: Pos,
        lease: &str,
        cursors: &str,
    ) -> Result<bool, ()> {
        if at <= start {
            return Ok(false);
        }
        let store = self.league.store();
        let first = match store.log_gap(log, at).await {
            Ok(Some(first)) => first,
            Ok(None) => return Ok(false),
            Err(e) => {
                tracing::warn!(log, error = %e, "webhooks: cannot read a log's first entry");
                return Err(());
            }
        };
        let label = crate::store::keys::log_label(log);
        let letter = DeadLetter {
            id: event_id(log, first.before()),
            url: target.url.clone(),
            event: serde_json::json!({
                "trimmed": {"log": label, "after": at.to_string(), "before": first.to_string()},
            })
            .to_string(),
            attempts: 0,
            error: format!(
                "trimmed: events of log {label} after {at} and before {first} were trimmed \
                 ([events] max_per_log) before they were delivered; raise max_per_log"
            ),
            at_ms: now_ms(),
            replay: false,
        };
        if let Err(e) = self.record_dead(&letter).await {
            tracing::warn!(error = %e, "webhooks: cannot record a dead letter");
            return Err(());
        }
        tracing::error!(log, url = %target.url, after = %at, before = %first, "webhooks: events trimmed before delivery: recorded as a dead letter");
        metrics::counter!(TRIMMED).increment(1);
        match store
            .advance_cursor(
                lease,
                &self.owner,
                cursors,
                &target.tag,
                first.before(),
                self.cursor_ttl_ms,
            )
            .await
        {
            Ok(true) => Ok(true),
            _ => Err(()),
        }
    }

    /// Waits until `target` has been given every event its bracket's log held when
    /// this grant (`body`, a `reward.granted` of source `period/tier/bracket`) is
    /// about to go, so that a player's `bracket.closed` and outcome (or re-settlement)
    /// come before the reward they earned: the grant was logged after them. False if
    /// stopped meanwhile (shutdown, the lease lost, or [`CAUSE_WAIT`] passed): the
    /// grant is not sent now, and its pair ends.
    async fn after_its_cause(
        &self,
        body: &str,
        target: &Target,
        start: Pos,
        lease: &str,
        renewed: &mut Instant,
    ) -> bool {
        let source = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v["data"]["source"].as_str().map(str::to_owned));
        let Some((period, tier, bracket)) = source.as_deref().and_then(|s| {
            let (period, rest) = s.split_once('/')?;
            let (tier, bracket) = rest.rsplit_once('/')?;
            Some((
                period.parse::<u64>().ok()?,
                tier,
                bracket.parse::<u32>().ok()?,
            ))
        }) else {
            return true;
        };
        let log = self.league.keys().bracket(period, tier, bracket).events();
        let cursors = hook_cursors(&log);
        let store = self.league.store();
        let mut before: Option<Pos> = None;
        let waited = Instant::now();
        loop {
            let head = match store
                .log_heads(&[(&log, &cursors)], std::slice::from_ref(&target.tag))
                .await
                .pop()
            {
                Some(Ok(h)) => h,
                // Unknown: the grant goes; order is a courtesy, loss is not an option.
                _ => return true,
            };
            let cause = *before.get_or_insert(head.last);
            let at = head
                .cursors
                .first()
                .copied()
                .unwrap_or(Pos::START)
                .max(start);
            if at >= cause {
                return true;
            }
            // The bracket's pair may be waiting for a slot this pair holds: give the
            // slot up for a while (the pair is taken up again at a later look).
            if waited.elapsed() >= CAUSE_WAIT {
                return false;
            }
            tokio::select! {
                () = tokio::time::sleep(CAUSE_POLL) => {}
                () = self.shutdown.cancelled() => return false,
            }
            if !self.keep_lease(lease, renewed).await {
                return false;
            }
        }
    }

    /// Renews the lease if a third of its time to live has passed: false if lost.
    pub(super) async fn keep_lease(&self, lease: &str, renewed: &mut Instant) -> bool {
        if renewed.elapsed() < LEASE_TTL / 3 {
            return true;
        }
        match self
            .league
            .store()
            .take_lease(lease, &self.owner, ttl_ms(LEASE_TTL))
            .await
        {
            Ok(true) => {
                *renewed = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Sends one event to one target, retrying with backoff up to the configured
    /// attempts, renewing the lease meanwhile.
    async fn send_with_retries(
        &self,
        lease: &str,
        renewed: &mut Instant,
        target: &Target,
        id: &str,
        kind: &str,
        json: &str,
    ) -> Sent {
        let mut attempt = 0;
        loop {
            if !self.keep_lease(lease, renewed).await {
                return Sent::Stopped;
            }
            attempt += 1;
            match self.post(&target.url, id, kind, json).await {
                Ok(()) => {
                    metrics::counter!(DELIVERED).increment(1);
                    return Sent::Delivered;
                }
                Err(error) => {
                    metrics::counter!(FAILED).increment(1);
                    tracing::debug!(id, url = %target.url, attempt, error, "webhooks: attempt failed");
                    if attempt >= self.config.attempts {
                        return Sent::Failed(attempt, error);
                    }
                }
            }
            let until = Instant::now() + self.config.delay(attempt, jitter());
            while Instant::now() < until {
                let step = (until - Instant::now()).min(LEASE_TTL / 3);
                tokio::select! {
                    () = tokio::time::sleep(step) => {}
                    () = self.shutdown.cancelled() => return Sent::Stopped,
                }
                if !self.keep_lease(lease, renewed).await {
                    return Sent::Stopped;
                }
            }
        }
    }

    /// One POST: `Ok` on a 2xx answer within the timeout, else why not.
    pub(super) async fn post(
        &self,
        url: &str,
        id: &str,
        kind: &str,
        json: &str,
    ) -> Result<(), String> {
        let mut request = self
            .client
            .post(url)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header("Leaguekit-Event-Id", id)
            .header("Leaguekit-Event-Type", kind);
        // Leaguekit-Signature and Standard Webhooks' webhook-id, -timestamp, -signature.
        for (name, value) in headers(&self.config.secret, id, unix_secs(), json.as_bytes()) {
            request = request.header(name, value);
        }
        let answer = request
            .timeout(self.config.timeout)
            .body(json.to_owned())
            .send()
            .await;
        match answer {
            Ok(mut r) => {
                let status = r.status();
                let location = r
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .map(|l| l.chars().take(200).collect::<String>());
                // The answer's body is read, up to a cap, so the connection can serve
                // the next POST; what it says does not matter.
                let mut read = 0;
                while read < ANSWER_CAP {
                    match r.chunk().await {
                        Ok(Some(c)) => read += c.len(),
                        _ => break,
                    }
                }
                if status.is_success() {
                    Ok(())
                } else if status.is_redirection() {
                    Err(format!(
                        "HTTP {} to {}: redirects are not followed (set the URL it points \
                         to in LEAGUEKIT_WEBHOOK_URLS)",
                        status.as_u16(),
                        location.as_deref().unwrap_or("nowhere")
                    ))
                } else {
                    Err(format!("HTTP {}", status.as_u16()))
                }
            }
            Err(e) if e.is_timeout() => Err(format!(
                "no answer in {} ms",
                self.config.timeout.as_millis()
            )),
            Err(e) => Err(format!("request failed: {}", error_chain(&e))),
        }
    }
}

pub(super) fn ttl_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// An error with its causes, for a dead letter's `error`.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
