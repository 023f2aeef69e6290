//! Webhooks: `leaguekit serve` POSTs each event of the league's log to the URLs of
//! `LEAGUEKIT_WEBHOOK_URLS`, signed, at least once, in order per log.
//!
//! **Work.** The unit of work is one (log, URL) pair: a log's events go to a URL one
//! at a time, in log order, so a player's events within a bracket, and within their
//! rewards, arrive in the order they happened. Which logs are looked at follows from
//! what was logged (`watch.rs`): the running period and the one before, periods not
//! closed yet, every period a write marked before logging into it (a rollover's
//! close, however many periods one run closes; a re-settlement) until each URL has all
//! of its events, and the 16,384 player buckets' logs (rewards) every 5 s. A look
//! reads each log's last position and its cursors in one pipelined call per slot
//! group; only pairs whose log is past the cursor get work. Each URL has its own
//! 32 slots per process, so a URL that hangs holds only its own. A
//! `reward.granted` waits for its bracket's events to that URL (causal order).
//!
//! **Progress** is stored, not kept in the process: per (log, URL) a cursor, the
//! position of the last event the URL is done with, in the hash `<log>:hook` (the
//! log's slot; it lives the log's `keep` plus a day). Before delivering a pair a
//! process takes the pair's lease (`<log>:hooklease:<url tag>`, `SET NX PX` in a
//! script, owner = a random id of the process, 30 s, renewed every 10 s while it
//! delivers or waits to retry); the cursor moves only forward and only for the
//! lease's holder, in one script (`hook_advance.lua`). So any number of `serve`
//! processes share the work, each pair delivered by one of them at a time, and a
//! restart goes on from the cursors.
//!
//! **Retries.** A 2xx answer is a delivery; another status (a redirect included: never
//! followed), a connection failure or no answer in 10 s is a failed attempt, retried after 1 s, 2 s, 4 s... (capped at
//! 5 min, each shortened by a random jitter of up to half) up to
//! `LEAGUEKIT_WEBHOOK_ATTEMPTS` attempts (8); then the event becomes a **dead
//! letter** (the season's hash `{season}:hookdead`: event id, URL, event JSON,
//! attempts, last error, time) and the pair goes on with the next event. An operator
//! lists them (`GET /v1/webhooks/dead`) and marks them for replay
//! (`POST /v1/webhooks/dead:replay`, audited); a deliverer then sends each marked
//! letter once more and removes it once delivered (a failed replay keeps it, unmarked,
//! with its new error).
//!
//! **What a crash repeats.** The cursor moves after the receiver's 2xx. A process
//! that dies (or loses its connection to Redis) between the two leaves the event
//! undone: whoever takes the pair next (after the 30 s lease expires, or the same
//! process restarted) sends it again, once. Nothing else is sent twice: a stopping
//! `serve` finishes the POST in flight, moves its cursor and gives its leases up. A
//! process paused past its lease's 30 s (a stopped VM) may find another holder has
//! sent the same events meanwhile: its POST in flight then is a duplicate too, and
//! its cursor write is refused. A dead letter replayed just before a crash may be sent
//! again at the next replay. Receivers deduplicate by `Leaguekit-Event-Id`.
//! Events that expire from a log (its `keep`) before being delivered are not sent;
//! events trimmed by its cap before being delivered become a dead letter naming them.
//!
//! Owns: the webhook configuration, signatures, the deliverer task and the dead
//! letters' listing and replay marks. Must not: write anything of the league itself.

mod config;
mod dead;
mod deliver;
mod sign;
mod watch;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use config::{
    ATTEMPTS_ENV, BACKOFF_ENV, DEAD_KEEP_ENV, DEAD_MAX_ENV, EVENTS_ENV, FROM_ENV, MIN_SECRET,
    SECRET_ENV, TIMEOUT_ENV, URLS_ENV, WebhookConfig, WebhookConfigError,
};
pub use sign::{
    MAX_WHSEC_KEY, MIN_WHSEC_KEY, SIGNATURE_HEADER, Secret, TOLERANCE_SECS, WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, WHSEC_PREFIX, headers, signature, verify,
    verify_standard,
};

use crate::error::{Error, InputError};
use crate::league::League;
use crate::store::{DeadBounds, DeadLetter, Store, url_tag};
use deliver::{Deliverer, Target};
pub use watch::StartFrom;

// The metrics' names are in crate::metrics, with the others.
pub use crate::metrics::{
    WEBHOOK_DEAD as DEAD, WEBHOOK_DEAD_DROPPED as DEAD_DROPPED, WEBHOOK_DELIVERED as DELIVERED,
    WEBHOOK_FAILED as FAILED, WEBHOOK_LAG as LAG, WEBHOOK_TRIMMED as TRIMMED,
};

/// The most dead letters listed.
pub const MAX_LISTED: usize = 1000;

fn describe() {
    use ::metrics::{Unit, describe_counter, describe_gauge};
    describe_counter!(DELIVERED, "Webhook events delivered (a 2xx answer)");
    describe_counter!(
        FAILED,
        "Webhook attempts that failed (another status, no answer in time, no connection)"
    );
    describe_counter!(DEAD, "Webhook events given up and recorded as dead letters");
    describe_counter!(
        DEAD_DROPPED,
        "Webhook dead letters dropped because their URL had LEAGUEKIT_WEBHOOK_DEAD_MAX"
    );
    describe_counter!(
        TRIMMED,
        "Runs of webhook events trimmed from a log (max_per_log) before delivery, each a dead letter"
    );
    describe_gauge!(
        LAG,
        Unit::Seconds,
        "Age of the oldest webhook event not yet delivered to one of this process's URLs (0 when caught up)"
    );
    metrics::counter!(DELIVERED).absolute(0);
    metrics::counter!(FAILED).absolute(0);
    metrics::counter!(DEAD).absolute(0);
    metrics::counter!(TRIMMED).absolute(0);
    metrics::counter!(DEAD_DROPPED).absolute(0);
}

/// Starts delivering `league`'s events as `config` says, until `shutdown`: the task
/// ends after the POSTs in flight (at most the timeout). The URLs are recorded as seen
/// before this returns (`serve` calls it before it answers requests), so a URL seen
/// for the first time with `LEAGUEKIT_WEBHOOK_FROM=now` gets every event logged from
/// then on; if the store cannot be asked now, they are recorded at the first look
/// that can. Refused for a season without an event log.
pub async fn start<S: Store>(
    league: Arc<League<S>>,
    config: WebhookConfig,
    shutdown: CancellationToken,
) -> Result<JoinHandle<()>, WebhookConfigError> {
    let Some(spec) = league.context().log_spec() else {
        return Err(WebhookConfigError::NoEventLog(league.season().name.clone()));
    };
    let client = reqwest::Client::builder()
        .connect_timeout(config.timeout)
        .pool_idle_timeout(std::time::Duration::from_secs(50))
        // A redirect is a failed attempt: following it would send the signed event
        // where the receiver points (307/308) or turn it into a body-less GET (301-303).
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("leaguekit/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| WebhookConfigError::BadUrl(format!("(the HTTP client: {e})")))?;
    describe();
    let targets = config
        .urls
        .iter()
        .map(|u| Target::new(u.clone(), url_tag(u)))
        .collect();
    let deliverer = Arc::new(Deliverer {
        league,
        config: Arc::new(config),
        client,
        owner: deliver::process_id(),
        targets,
        cursor_ttl_ms: spec.keep_secs.saturating_add(86_400).saturating_mul(1000),
        shutdown,
        active: Mutex::new(HashSet::new()),
        closed_logs: Mutex::new(HashMap::new()),
    });
    let registered = deliverer.register().await;
    if !registered {
        tracing::warn!("webhooks: cannot record the URLs as seen yet; retried at each look");
    }
    Ok(tokio::spawn(deliverer.run(registered)))
}

/// Which dead letters to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// Those of these event ids (every URL's).
    Ids(Vec<String>),
    /// All of them.
    All,
}

/// Where a page of dead letters ends: the last letter's time and key. As text (the
/// `after` of `GET /v1/webhooks/dead`): `<unix ms>~<event id>~<url tag>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadCursor {
    /// When the last letter listed was recorded (unix ms).
    pub at_ms: i64,
    /// Its key ([`DeadLetter::key`]).
    pub key: String,
}

impl DeadCursor {
    /// The cursor after `letter`.
    pub fn after(letter: &DeadLetter) -> DeadCursor {
        DeadCursor {
            at_ms: letter.at_ms,
            key: letter.key(),
        }
    }

    /// The cursor as text.
    pub fn text(&self) -> String {
        let (id, tag) = self.key.rsplit_once(' ').unwrap_or((&self.key, ""));
        format!("{}~{id}~{tag}", self.at_ms)
    }

    /// A cursor from its text; `None` if it is not one.
    pub fn parse(text: &str) -> Option<DeadCursor> {
        let (ms, rest) = text.split_once('~')?;
        let (id, tag) = rest.rsplit_once('~')?;
        let ok_tag = tag.len() == 16 && tag.bytes().all(|b| b.is_ascii_hexdigit());
        if id.is_empty() || !ok_tag || id.contains(' ') {
            return None;
        }
        Some(DeadCursor {
            at_ms: ms.parse().ok()?,
            key: format!("{id} {tag}"),
        })
    }
}

/// A page of the season's dead letters in the order they were recorded: up to
/// `limit` (at most [`MAX_LISTED`]) after `after`, and the cursor after the page when
/// more may follow.
pub async fn dead_letters<S: Store>(
    league: &League<S>,
    after: Option<&DeadCursor>,
    limit: usize,
) -> Result<(Vec<DeadLetter>, Option<DeadCursor>), Error> {
    let limit = limit.clamp(1, MAX_LISTED);
    let letters = league
        .store()
        .dead_letters(
            &league.keys().season(),
            after.map(|c| (c.at_ms, c.key.as_str())),
            limit,
        )
        .await?;
    let next = if letters.len() == limit {
        letters.last().map(DeadCursor::after)
    } else {
        None
    };
    Ok((letters, next))
}

/// Marks dead letters for replay: the deliverers send them again within about 5 s.
/// Returns how many were marked and the first [`MAX_LISTED`] of them. An id with no
/// letter, or whose events were trimmed, is refused (nothing marked).
pub async fn mark_replay<S: Store>(
    league: &League<S>,
    which: &Replay,
) -> Result<(u64, Vec<DeadLetter>), Error> {
    let season = league.keys().season();
    let store = league.store();
    let mut chosen: Vec<DeadLetter> = Vec::new();
    match which {
        Replay::Ids(ids) => {
            for id in ids {
                let found = store.dead_of(&season, id).await?;
                if found.is_empty() {
                    return Err(InputError::Other(format!(
                        "no dead letter has event id {id:?} (GET /v1/webhooks/dead lists them)"
                    ))
                    .into());
                }
                if let Some(gone) = found.iter().find(|l| l.is_trimmed()) {
                    return Err(InputError::Other(format!(
                        "dead letter {:?} records events trimmed from their log before \
                         delivery: they are gone, there is nothing to replay (raise [events] \
                         max_per_log)",
                        gone.id
                    ))
                    .into());
                }
                chosen.extend(found);
            }
        }
        Replay::All => {
            let mut after: Option<DeadCursor> = None;
            loop {
                let page = store
                    .dead_letters(
                        &season,
                        after.as_ref().map(|c| (c.at_ms, c.key.as_str())),
                        MAX_LISTED,
                    )
                    .await?;
                after = page.last().map(DeadCursor::after);
                let done = page.len() < MAX_LISTED;
                chosen.extend(page.into_iter().filter(|l| !l.is_trimmed()));
                if done {
                    break;
                }
            }
        }
    }
    let mut marked = Vec::new();
    let mut count = 0;
    for letter in chosen {
        let letter = DeadLetter {
            replay: true,
            ..letter
        };
        store.put_dead(&season, &letter, DeadBounds::NONE).await?;
        count += 1;
        if marked.len() < MAX_LISTED {
            marked.push(letter);
        }
    }
    Ok((count, marked))
}
