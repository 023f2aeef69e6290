//! Score updates: checks before anything is written, the placement (one round trip
//! less once cached), the store's atomic update with its idempotency record, and
//! honest per-item answers for batches.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::error::{Error, InputError, StoreError};
use crate::season::JoinPolicy;
use crate::season::calendar::Period;
use crate::store::keys::BracketKeys;
use crate::store::{Store, Update, UpdateReply, UpdateStatus};

use super::*;
use crate::league::*;

impl<S: Store> League<S> {
    fn update<'a>(
        &self,
        player: &'a str,
        value: i64,
        item: &Prepared,
        options: &SubmitOptions,
        bkeys: &BracketKeys,
    ) -> Update<'a> {
        let window = self.season.scoring.idempotency_window.as_secs().max(1);
        Update {
            player,
            mode: self.season.scoring.mode,
            value,
            tick: item.tick,
            max_score: self.season.packing.max_score(),
            span: self.season.packing.span(),
            request: options
                .request_id
                .as_deref()
                .map(|id| (bkeys.request(player, id), window)),
            time: self.time_check(&item.period, item.at),
            rank: !options.without_rank,
        }
    }

    fn submission(
        &self,
        player: &str,
        item: &Prepared,
        placed: &Placed,
        reply: UpdateReply,
        value: i64,
        welcome: Option<Welcome>,
    ) -> Result<Submission, Error> {
        let period = item.period.id;
        let applied = match reply.status {
            UpdateStatus::Applied => true,
            UpdateStatus::Duplicate => false,
            UpdateStatus::Closed => return Err(InputError::PeriodClosed { period }.into()),
            UpdateStatus::Refused(why) => return Err(self.time_error(why, &item.period, item.at)),
            UpdateStatus::NotPlaced => {
                return Err(StoreError::Protocol(format!(
                    "{player:?} is still not on the board of {} after being placed again",
                    placed.keys.base
                ))
                .into());
            }
            UpdateStatus::OutOfRange { current } => {
                let (cur, _) = self.season.packing.unpack(current);
                let result = match self.season.scoring.mode {
                    crate::season::packing::ScoreMode::Increment => cur as i128 + value as i128,
                    _ => value as i128,
                };
                return Err(InputError::Score(
                    crate::season::packing::ScoreRangeError::OutOfRange {
                        current: cur,
                        value,
                        result,
                        max: self.season.packing.max_score(),
                    },
                )
                .into());
            }
        };
        let (score, _) = self.season.packing.unpack(reply.packed);
        let (last, pending_rewards) = Welcome::fields(welcome);
        let (tier, cohort) = crate::season::split_group(&placed.tier);
        Ok(Submission {
            player: player.to_owned(),
            period,
            tier: tier.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket: placed.bracket,
            score,
            rank: reply.rank.map(|r| r + 1),
            applied,
            last,
            pending_rewards,
        })
    }

    /// The error of an update that a board without the player refuses (a negative
    /// delta: the score would start below 0), so that a player who is not placed yet
    /// is refused before the placement, which would otherwise be written for nothing.
    fn refused_on_empty_board(&self, value: i64) -> Option<Error> {
        self.season.scoring.mode.refuses_first(value).then(|| {
            InputError::Score(crate::season::packing::ScoreRangeError::OutOfRange {
                current: 0,
                value,
                result: i128::from(value),
                max: self.season.packing.max_score(),
            })
            .into()
        })
    }

    /// Checks what can be checked before any write: ids, value range, time.
    fn precheck(
        &self,
        player: &str,
        value: i64,
        options: &SubmitOptions,
        now: DateTime<Utc>,
    ) -> Result<Prepared, Error> {
        validate_player(player)?;
        if let Some(id) = &options.request_id {
            validate_request_id(id)?;
        }
        self.validate_cohort(options.cohort.as_deref())?;
        let max = self.season.packing.max_score();
        let mode = self.season.scoring.mode;
        // Values that can never be valid are refused before the player is placed, so
        // such an update does not even create a placement.
        let hopeless = match mode {
            crate::season::packing::ScoreMode::Increment => value.unsigned_abs() > max,
            _ => value < 0 || value as u64 > max,
        };
        if hopeless {
            return Err(
                InputError::Score(crate::season::packing::ScoreRangeError::OutOfRange {
                    current: 0,
                    value,
                    result: value as i128,
                    max,
                })
                .into(),
            );
        }
        let at = normalize_time(options.at.unwrap_or(now));
        let period = self.period_at(Some(at))?;
        // An update with a request id may be the retry of one that was applied: the
        // store answers it from its idempotency record even once the period closed.
        self.check_time(&period, at, now, options.request_id.is_some())?;
        let tick = self.tick(&period, at)?;
        Ok(Prepared { period, tick, at })
    }

    /// Submits a score value for `player` (a delta, a best or a new value by the
    /// season's mode). Refused updates write nothing.
    ///
    /// When the store fails after the update may have been applied, the error is
    /// [`StoreError::Unknown`], with the update's `at`: resend only an update that
    /// carries a request id, with the same id and that `at`. When the request never
    /// reached the store, it is [`StoreError::Unreachable`]: nothing was written.
    pub async fn submit(
        &self,
        player: &str,
        value: i64,
        options: SubmitOptions,
    ) -> Result<Submission, Error> {
        let mut result = self.submit_one(player, value, &options).await;
        if let Err(e) = &result
            && self.clock_contradicted(options.at.is_none(), e)
        {
            result = self.submit_one(player, value, &options).await;
        }
        crate::metrics::submitted(submit_label(&result));
        result
    }

    /// [`League::submit`] without its metrics.
    #[instrument(name = "submit", skip(self, options), fields(request_id = options.request_id.as_deref()), err(level = "debug"))]
    async fn submit_one(
        &self,
        player: &str,
        value: i64,
        options: &SubmitOptions,
    ) -> Result<Submission, Error> {
        let now = self.now().await?;
        let item = self.precheck(player, value, options, now)?;
        let (mut placed, mut welcome) = self
            .placement_for_update(
                player,
                &item.period,
                item.at,
                now,
                options.cohort.as_deref(),
                self.refused_on_empty_board(value),
            )
            .await?;
        // An unknown outcome says which `at` the update carried: a resend must repeat
        // it, and the caller may not know it (the league clock's, when it gave none).
        let mut reply = self
            .store
            .update(
                &placed.keys,
                &self.update(player, value, &item, options, &placed.keys),
            )
            .await
            .map_err(|e| e.stamped(item.at))?;
        if reply.status == UpdateStatus::NotPlaced {
            // The placement this process remembered (or the store had) is not on the
            // board: the store lost data. Place the player again, once.
            // Boxed, as rare: see `placement_for_update`.
            let (again, w) = Box::pin(self.replace(player, &item, now)).await?;
            placed = again;
            welcome = welcome.or(w);
            reply = self
                .store
                .update(
                    &placed.keys,
                    &self.update(player, value, &item, options, &placed.keys),
                )
                .await
                .map_err(|e| e.stamped(item.at))?;
        }
        self.submission(player, &item, &placed, reply, value, welcome)
    }

    /// Forgets the player's placement and places them again (after an update found
    /// them missing from the board they were placed on).
    async fn replace(
        &self,
        player: &str,
        item: &Prepared,
        now: DateTime<Utc>,
    ) -> Result<(Arc<Placed>, Option<Welcome>), Error> {
        self.forget(player);
        tracing::warn!(
            player,
            period = item.period.id,
            "player missing from their board (the store lost data?); placing them again"
        );
        self.check_time(&item.period, item.at, now, false)?;
        // The cohort of the lost placement is the one in the player's state.
        self.place(player, &item.period, item.at, now, None).await
    }

    /// Submits many updates; the updates themselves go to the store in one pipelined
    /// round trip (placements of players not seen before cost their own round trips).
    ///
    /// Every item gets exactly one result, in order: applied (or a duplicate),
    /// refused with the reason, or [`StoreError::Unknown`] when the store failed after
    /// the item may have been applied. Resend only unknown items with a request id.
    #[instrument(skip(self, items), fields(items = items.len()))]
    pub async fn submit_many(&self, items: &[BatchItem]) -> Vec<Result<Submission, Error>> {
        self.restamping(
            items,
            |item| item.options.at.is_none(),
            |league, items| Box::pin(league.submit_many_once(items)),
        )
        .await
    }

    /// [`League::submit_many`], stamped once.
    async fn submit_many_once(&self, items: &[BatchItem]) -> Vec<Result<Submission, Error>> {
        let now = match self.now().await {
            Ok(now) => now,
            // Without the league clock nothing can be decided (or was written).
            Err(e) => return items.iter().map(|_| Err(copy_error(&e))).collect(),
        };
        let mut results: Vec<Option<Result<Submission, Error>>> = Vec::with_capacity(items.len());
        // Placements in stages for the whole batch: the cache; then one pipelined
        // read of the assignments of the rest; then the players not yet placed, placed
        // together by the bulk join path (when the season joins on first score).
        let mut prepared = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match self.precheck(&item.player, item.value, &item.options, now) {
                Ok(p) => {
                    let hit = self.cached(&item.player, p.period.id);
                    results.push(None);
                    prepared.push((i, p, hit));
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        let mut by_period: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
        for (k, (_, p, hit)) in prepared.iter().enumerate() {
            if hit.is_none() {
                by_period.entry(p.period.id).or_default().push(k);
            }
        }
        let mut found: Vec<Option<Arc<Placed>>> =
            prepared.iter().map(|(_, _, h)| h.clone()).collect();
        let mut to_place = Vec::new();
        for (period, members) in by_period {
            let players: Vec<&str> = members
                .iter()
                .map(|&k| items[prepared[k].0].player.as_str())
                .collect();
            let placements = self
                .store
                .placements(&self.period_keys(period), &players)
                .await;
            for (&k, placement) in members.iter().zip(placements) {
                let (i, p, _) = &prepared[k];
                let item = &items[*i];
                match placement {
                    Ok(Some((tier, bracket))) => {
                        found[k] = Some(self.remember(&item.player, period, &tier, bracket));
                    }
                    Ok(None) => match (
                        self.season.brackets.join,
                        self.refused_on_empty_board(item.value),
                    ) {
                        // Refused on an empty board: the player is not placed for it.
                        (JoinPolicy::OnFirstScore, Some(refused)) => {
                            results[*i] = Some(Err(refused));
                        }
                        (JoinPolicy::OnFirstScore, None) => {
                            // A first score is a join: it must pass the join's time rules
                            // even when it carries a request id.
                            match self.check_time(&p.period, p.at, now, false) {
                                Ok(()) => to_place.push(k),
                                Err(e) => results[*i] = Some(Err(e)),
                            }
                        }
                        (JoinPolicy::Explicit, _) => {
                            results[*i] = Some(Err(InputError::NotJoined {
                                player: item.player.clone(),
                                period,
                            }
                            .into()))
                        }
                    },
                    Err(e) => results[*i] = Some(Err(e.into())),
                }
            }
        }
        let wants: Vec<PlaceWant<'_>> = to_place
            .iter()
            .map(|&k| {
                let (i, p, _) = &prepared[k];
                PlaceWant {
                    player: &items[*i].player,
                    period: p.period,
                    at: p.at,
                    cohort: items[*i].options.cohort.as_deref(),
                }
            })
            .collect();
        let placed = self.place_many(&wants, now).await;
        drop(wants);
        let mut welcomes: Vec<Option<Welcome>> = prepared.iter().map(|_| None).collect();
        for (&k, placed) in to_place.iter().zip(placed) {
            match placed {
                Ok((placed, welcome)) => {
                    found[k] = Some(placed);
                    welcomes[k] = welcome;
                }
                Err(e) => results[prepared[k].0] = Some(Err(e)),
            }
        }
        let pending: Vec<_> = prepared
            .into_iter()
            .zip(found)
            .zip(welcomes)
            .filter_map(|(((i, p, _), placed), welcome)| {
                placed.map(|placed| (i, (p, (placed, welcome))))
            })
            .collect();
        let batch: Vec<(&BracketKeys, Update<'_>)> = pending
            .iter()
            .map(|(i, (prepared, (placed, _)))| {
                let item = &items[*i];
                let update = self.update(
                    &item.player,
                    item.value,
                    prepared,
                    &item.options,
                    &placed.keys,
                );
                (&placed.keys, update)
            })
            .collect();
        let replies = self.store.update_many(&batch).await;
        // A store owes one reply per update; anything else is a broken store, and the
        // updates may or may not have been applied.
        let replies = if replies.len() == pending.len() {
            replies
        } else {
            let e = StoreError::Protocol(format!(
                "{} replies to {} updates",
                replies.len(),
                pending.len()
            ));
            pending.iter().map(|_| Err(e.clone())).collect()
        };
        drop(batch);
        for ((i, (prepared, (placed, welcome))), reply) in pending.into_iter().zip(replies) {
            let item = &items[i];
            let result = match reply {
                Err(e) => Err(e.stamped(prepared.at).into()),
                Ok(reply) if reply.status == UpdateStatus::NotPlaced => {
                    self.submit_again(item, &prepared, now, welcome).await
                }
                Ok(reply) => {
                    self.submission(&item.player, &prepared, &placed, reply, item.value, welcome)
                }
            };
            results[i] = Some(result);
        }
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(
                    || Err(InputError::Other("internal: missing result".into()).into()),
                )
            })
            .inspect(|r| crate::metrics::submitted(submit_label(r)))
            .collect()
    }

    /// One batch item whose player was missing from their board: placed again and
    /// sent on its own.
    async fn submit_again(
        &self,
        item: &BatchItem,
        prepared: &Prepared,
        now: DateTime<Utc>,
        welcome: Option<Welcome>,
    ) -> Result<Submission, Error> {
        let (placed, again) = self.replace(&item.player, prepared, now).await?;
        let update = self.update(
            &item.player,
            item.value,
            prepared,
            &item.options,
            &placed.keys,
        );
        let reply = self
            .store
            .update(&placed.keys, &update)
            .await
            .map_err(|e| e.stamped(prepared.at))?;
        self.submission(
            &item.player,
            prepared,
            &placed,
            reply,
            item.value,
            welcome.or(again),
        )
    }
}

/// A batch item that passed the checks: its period, tick and (normalized) time.
#[derive(Debug, Clone)]
struct Prepared {
    period: Period,
    tick: u64,
    at: DateTime<Utc>,
}

/// How `leaguekit_submits_total` labels a score update's answer.
fn submit_label(result: &Result<Submission, Error>) -> crate::metrics::Submit {
    use crate::metrics::Submit;
    match result {
        Ok(s) if s.applied => Submit::Applied,
        Ok(_) => Submit::Duplicate,
        Err(e) if e.is_unknown() => Submit::Unknown,
        Err(Error::Store(_)) => Submit::Failed,
        Err(_) => Submit::Refused,
    }
}
