//! The deliverer: finds the logs with events not yet delivered and delivers each
//! (log, URL) pair in order under its lease (see the module's docs in `mod.rs`).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::config::WebhookConfig;
use super::sign::signature;
use super::{DEAD, DELIVERED, FAILED, LAG};
use crate::events::{event_id, kind_of, with_id};
use crate::league::League;
use crate::store::keys::{hook_cursors, hook_dead_lease, hook_lease};
use crate::store::{DeadLetter, LogRead, Pos, Store};

/// How often the periods' logs (brackets and the period's own) are looked at.
pub(super) const PERIOD_SCAN: Duration = Duration::from_millis(500);
/// How often the 16,384 player buckets' logs (rewards) and the dead letters are.
pub(super) const BUCKET_SCAN: Duration = Duration::from_secs(5);
/// The most logs one process looks at a second: a league of many brackets is looked
/// at less often than every [`PERIOD_SCAN`] (a million players, two periods of
/// 10,000 brackets each and the buckets: about every 2.5 s), so that the look costs
/// Redis a bounded share of its time whatever the league's size.
const LOGS_PER_SEC: f64 = 15_000.0;
/// A lease's time to live; its holder renews it at least every third of it.
const LEASE_TTL: Duration = Duration::from_secs(30);
/// The most (log, URL) pairs delivered at once by one process.
const PAIRS_IN_FLIGHT: usize = 64;
/// Events read from a log at a time.
const PAGE: usize = 200;
/// Logs whose heads are read in one pipelined call.
const HEADS_CHUNK: usize = 2048;
/// How many periods back from the current one are watched at most (the rollover's
/// catch-up after a long stop closes older periods).
const PERIODS_BACK: u64 = 8;

/// One URL.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) url: String,
    /// [`crate::store::url_tag`] of the URL: its cursor's field and its lease's suffix.
    pub(super) tag: String,
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
    /// (log, target tag) pairs being delivered by this process.
    pub(super) active: Mutex<HashSet<(String, String)>>,
    /// Per active pair: the time (store clock, ms) of its oldest undelivered event.
    pub(super) oldest: Mutex<HashMap<(String, String), u64>>,
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
    /// Runs until shutdown: scans, starts a task per pending pair, replays dead
    /// letters; on shutdown waits for the tasks (each ends after its POST in flight).
    pub(super) async fn run(self: Arc<Self>) {
        let mut tasks = JoinSet::new();
        let mut bucket_scan: Option<Instant> = None;
        loop {
            while tasks.try_join_next().is_some() {}
            let mut logs = self.period_logs().await;
            let sweep = bucket_scan.is_none_or(|t| t.elapsed() >= BUCKET_SCAN);
            if sweep {
                logs.extend(self.league.events().bucket_logs());
                bucket_scan = Some(Instant::now());
            }
            for (log, target) in self.pending(&logs).await {
                if tasks.len() >= PAIRS_IN_FLIGHT {
                    break;
                }
                let key = (log.clone(), target.tag.clone());
                if !self
                    .active
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key.clone())
                {
                    continue;
                }
                let me = self.clone();
                tasks.spawn(async move {
                    me.deliver_pair(&log, &target).await;
                    me.active
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&key);
                    me.oldest
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&key);
                });
            }
            if sweep {
                self.replay_dead().await;
            }
            self.report_lag().await;
            let pause = PERIOD_SCAN.max(Duration::from_secs_f64(logs.len() as f64 / LOGS_PER_SEC));
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = self.shutdown.cancelled() => break,
            }
        }
        while tasks.join_next().await.is_some() {}
    }

    /// The logs of the watched periods: from the last closed one (whose close the
    /// rollover may be writing) or the previous one, to the current one.
    async fn period_logs(&self) -> Vec<String> {
        let league = &self.league;
        let current = match league.now().await {
            Ok(now) => match league.period_at(Some(now)) {
                Ok(p) => p.id,
                Err(_) => return Vec::new(),
            },
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot read the league clock");
                return Vec::new();
            }
        };
        let closed = league
            .store()
            .closed_through(&league.keys().season())
            .await
            .unwrap_or(0);
        let from = closed
            .min(current.saturating_sub(1))
            .max(current.saturating_sub(PERIODS_BACK))
            .max(1);
        let mut logs = Vec::new();
        for period in from..=current {
            match league.events().logs_of_period(period).await {
                Ok(l) => logs.extend(l),
                Err(e) => {
                    tracing::warn!(period, error = %e, "webhooks: cannot list a period's logs")
                }
            }
        }
        logs
    }

    /// The (log, target) pairs with events past the target's cursor, not being
    /// delivered by this process already.
    async fn pending(&self, logs: &[String]) -> Vec<(String, Target)> {
        let tags: Vec<String> = self.targets.iter().map(|t| t.tag.clone()).collect();
        let mut out = Vec::new();
        for chunk in logs.chunks(HEADS_CHUNK) {
            let cursors: Vec<String> = chunk.iter().map(|l| hook_cursors(l)).collect();
            let pairs: Vec<(&str, &str)> = chunk
                .iter()
                .zip(&cursors)
                .map(|(l, c)| (l.as_str(), c.as_str()))
                .collect();
            let heads = self.league.store().log_heads(&pairs, &tags).await;
            for (log, head) in chunk.iter().zip(heads) {
                let head = match head {
                    Ok(h) => h,
                    Err(e) => {
                        tracing::warn!(log, error = %e, "webhooks: cannot read a log's head");
                        continue;
                    }
                };
                for (target, at) in self.targets.iter().zip(&head.cursors) {
                    if head.last > *at {
                        out.push((log.clone(), target.clone()));
                    }
                }
            }
        }
        out
    }

    /// Delivers `log`'s events past `target`'s cursor, in order, while this process
    /// holds the pair's lease.
    async fn deliver_pair(&self, log: &str, target: &Target) {
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
        'pages: loop {
            // The cursor as stored now, under the lease: another holder may have moved
            // it since the scan.
            let at = match store
                .log_heads(&[(log, &cursors)], std::slice::from_ref(&target.tag))
                .await
                .pop()
            {
                Some(Ok(h)) => h.cursors.first().copied().unwrap_or(Pos::START),
                _ => break,
            };
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
            let key = (log.to_owned(), target.tag.clone());
            self.oldest
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, entries[0].pos.ms);
            for e in &entries {
                if self.shutdown.is_cancelled() {
                    break 'pages;
                }
                let kind = kind_of(&e.body).unwrap_or("unknown");
                if self.config.sends(kind) {
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
                            if let Err(err) =
                                store.put_dead(&self.league.keys().season(), &letter).await
                            {
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
                self.oldest
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert((log.to_owned(), target.tag.clone()), e.pos.ms);
            }
            if entries.len() < PAGE {
                break;
            }
        }
        let _ = store.drop_lease(&lease, &self.owner).await;
    }

    /// Renews the lease if a third of its time to live has passed: false if lost.
    async fn keep_lease(&self, lease: &str, renewed: &mut Instant) -> bool {
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
        let sig = signature(&self.config.secret, unix_secs(), json.as_bytes());
        let answer = self
            .client
            .post(url)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header("Leaguekit-Event-Id", id)
            .header("Leaguekit-Event-Type", kind)
            .header("Leaguekit-Signature", sig)
            .timeout(self.config.timeout)
            .body(json.to_owned())
            .send()
            .await;
        match answer {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(format!("HTTP {}", r.status().as_u16())),
            Err(e) if e.is_timeout() => Err(format!(
                "no answer in {} ms",
                self.config.timeout.as_millis()
            )),
            Err(e) => Err(format!("request failed: {}", error_chain(&e))),
        }
    }

    /// Sends the dead letters an operator marked for replay, once each, under the
    /// season's replay lease: a delivered one is removed, a failed one kept with its
    /// new error and unmarked.
    async fn replay_dead(&self) {
        let store = self.league.store();
        let season = self.league.keys().season();
        let marked: Vec<DeadLetter> = match store.dead_letters(&season, usize::MAX).await {
            Ok(l) => l.into_iter().filter(|l| l.replay).collect(),
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot read the dead letters");
                return;
            }
        };
        if marked.is_empty() {
            return;
        }
        let lease = hook_dead_lease(&season);
        if !matches!(
            store
                .take_lease(&lease, &self.owner, ttl_ms(LEASE_TTL))
                .await,
            Ok(true)
        ) {
            return;
        }
        let mut renewed = Instant::now();
        for letter in marked {
            if self.shutdown.is_cancelled() || !self.keep_lease(&lease, &mut renewed).await {
                break;
            }
            let kind = serde_json::from_str::<serde_json::Value>(&letter.event)
                .ok()
                .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned());
            let record = letter.to_json();
            let result = self
                .post(&letter.url, &letter.id, &kind, &letter.event)
                .await;
            let written = match result {
                Ok(()) => {
                    metrics::counter!(DELIVERED).increment(1);
                    store.remove_dead(&season, &letter.key(), &record).await
                }
                Err(error) => {
                    metrics::counter!(FAILED).increment(1);
                    let again = DeadLetter {
                        attempts: letter.attempts.saturating_add(1),
                        error,
                        at_ms: now_ms(),
                        replay: false,
                        ..letter
                    };
                    store.put_dead(&season, &again).await
                }
            };
            if let Err(e) = written {
                tracing::warn!(error = %e, "webhooks: cannot update a dead letter");
            }
        }
        let _ = store.drop_lease(&lease, &self.owner).await;
    }

    /// Sets the lag gauge: the age of the oldest event this process is delivering.
    async fn report_lag(&self) {
        let oldest = self
            .oldest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .min()
            .copied();
        let lag = match oldest {
            Some(ms) => match self.league.store().now().await {
                Ok(now) => (u64::try_from(now).unwrap_or(0).saturating_sub(ms)) as f64 / 1000.0,
                Err(_) => return,
            },
            None => 0.0,
        };
        metrics::gauge!(LAG).set(lag);
    }
}

fn ttl_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn now_ms() -> i64 {
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
