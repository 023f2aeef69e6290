//! Dead letters as the deliverer keeps them: recorded within their bounds (per URL at
//! most `LEAGUEKIT_WEBHOOK_DEAD_MAX`, none older than `LEAGUEKIT_WEBHOOK_DEAD_KEEP`,
//! by this process's clock), and replayed when an operator marked them: a deliverer
//! reads only the marked ones (at most [`REPLAY_BATCH`] a look), never the whole set.

use std::time::Instant;

use super::deliver::{Deliverer, LEASE_TTL, now_ms, ttl_ms};
use super::{DEAD_DROPPED, DELIVERED, FAILED};
use crate::error::StoreError;
use crate::store::keys::hook_dead_lease;
use crate::store::{DeadBounds, DeadLetter, Store};

/// The most marked letters one look replays.
const REPLAY_BATCH: usize = 100;

impl<S: Store> Deliverer<S> {
    /// The bounds letters are kept within, now.
    fn dead_bounds(&self) -> DeadBounds {
        let keep = i64::try_from(self.config.dead_keep.as_millis()).unwrap_or(i64::MAX);
        DeadBounds {
            max_per_url: self.config.dead_max,
            before_ms: now_ms().saturating_sub(keep),
        }
    }

    /// Records `letter` within the bounds; letters dropped for the cap are counted and
    /// logged.
    pub(super) async fn record_dead(&self, letter: &DeadLetter) -> Result<(), StoreError> {
        let season = self.league.keys().season();
        let dropped = self
            .league
            .store()
            .put_dead(&season, letter, self.dead_bounds())
            .await?;
        if dropped > 0 {
            metrics::counter!(DEAD_DROPPED).increment(dropped);
            tracing::warn!(
                url = %letter.url,
                dropped,
                max = self.config.dead_max,
                "webhooks: the URL's oldest dead letters dropped (LEAGUEKIT_WEBHOOK_DEAD_MAX)"
            );
        }
        Ok(())
    }

    /// Drops the letters older than `LEAGUEKIT_WEBHOOK_DEAD_KEEP`.
    pub(super) async fn prune_dead(&self) {
        let tags: Vec<String> = self.targets.iter().map(|t| t.tag.clone()).collect();
        let before = self.dead_bounds().before_ms;
        if let Err(e) = self
            .league
            .store()
            .prune_dead(&self.league.keys().season(), before, &tags)
            .await
        {
            tracing::warn!(error = %e, "webhooks: cannot drop expired dead letters");
        }
    }

    /// Sends the dead letters an operator marked for replay, once each, under the
    /// season's replay lease: a delivered one is removed, a failed one kept with its
    /// new error and unmarked. Only letters of this process's URLs: a URL no longer
    /// configured is never posted to (its letters stay marked).
    pub(super) async fn replay_dead(&self) {
        let store = self.league.store();
        let season = self.league.keys().season();
        let marked: Vec<DeadLetter> = match store.marked_dead(&season, REPLAY_BATCH).await {
            Ok(l) => l
                .into_iter()
                .filter(|l| self.targets.iter().any(|t| t.url == l.url))
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot read the dead letters marked");
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
                    store.remove_dead(&season, &letter, &record).await
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
                    self.record_dead(&again).await
                }
            };
            if let Err(e) = written {
                tracing::warn!(error = %e, "webhooks: cannot update a dead letter");
            }
        }
        let _ = store.drop_lease(&lease, &self.owner).await;
    }
}
