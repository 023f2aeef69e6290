//! A score update's route through the league: the checks ([`Boards::prepare`]), the
//! player's placement ([`Placements`]: the cache, the store's record, or a join on a
//! first score), the update on the board ([`Boards::apply`]), and the answer
//! ([`Boards::answer`]). Batches take the same steps in stages for all their items.
//!
//! These functions take the two parts they join as parameters; they keep no state.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tracing::instrument;

use super::placements::{PlaceWant, Placements, Welcome};
use crate::context::{Placed, copy_error};
use crate::error::{Error, InputError};
use crate::ranking::{BatchItem, Boards, Prepared, Submission, SubmitOptions};
use crate::season::JoinPolicy;
use crate::store::{Store, UpdateStatus};

/// [`crate::League::submit`]: one update, sent again once if this process stamped it
/// and the store's clock contradicted the stamp.
pub(crate) async fn submit<S: Store>(
    places: &Placements<S>,
    boards: &Boards<S>,
    player: &str,
    value: i64,
    options: SubmitOptions,
) -> Result<Submission, Error> {
    let mut result = submit_one(places, boards, player, value, &options).await;
    if let Err(e) = &result
        && boards.ctx().clock_contradicted(options.at.is_none(), e)
    {
        result = submit_one(places, boards, player, value, &options).await;
    }
    crate::metrics::submitted(submit_label(&result));
    result
}

/// [`submit`] without its metrics.
#[instrument(name = "submit", skip(places, boards, options), fields(request_id = options.request_id.as_deref()), err(level = "debug"))]
async fn submit_one<S: Store>(
    places: &Placements<S>,
    boards: &Boards<S>,
    player: &str,
    value: i64,
    options: &SubmitOptions,
) -> Result<Submission, Error> {
    let now = boards.ctx().now().await?;
    let item = match boards.prepare(player, value, options, now) {
        Ok(item) => item,
        Err(e) => return Err(with_current_score(places, player, options, now, e).await),
    };
    let (mut placed, mut welcome) = places
        .placement_for_update(
            player,
            item.period(),
            item.at(),
            now,
            options.cohort.as_deref(),
            boards.refused_on_empty_board(value),
        )
        .await?;
    let mut reply = boards.apply(player, value, &item, options, &placed).await?;
    if reply.status == UpdateStatus::NotPlaced {
        // The placement this process remembered (or the store had) is not on the
        // board: the store lost data. Place the player again, once.
        // Boxed, as rare: see `placement_for_update`.
        let (again, w) = Box::pin(replace(places, player, &item, now)).await?;
        placed = again;
        welcome = welcome.or(w);
        reply = boards.apply(player, value, &item, options, &placed).await?;
    }
    boards.answer(
        player,
        &item,
        &placed,
        reply,
        value,
        Welcome::fields(welcome),
    )
}

/// Forgets the player's placement and places them again (after an update found
/// them missing from the board they were placed on), unless they are banned
/// ([`InputError::Banned`]).
async fn replace<S: Store>(
    places: &Placements<S>,
    player: &str,
    item: &Prepared,
    now: DateTime<Utc>,
) -> Result<(Arc<Placed>, Option<Welcome>), Error> {
    places.forget(player);
    // A banned player was taken off the board: the ban record, read only on this rare
    // path, says so.
    places.refuse_if_banned(player, now).await?;
    tracing::warn!(
        player,
        period = item.period().id,
        "player missing from their board (the store lost data?); placing them again"
    );
    places
        .ctx()
        .check_time(item.period(), item.at(), now, false)?;
    // The cohort of the lost placement is the one in the player's state.
    places
        .place(player, item.period(), item.at(), now, None)
        .await
}

/// [`crate::League::submit_many`]: the batch, and once more the items this process
/// stamped whose refusal contradicted its estimate of the league clock.
pub(crate) async fn submit_many<S: Store>(
    places: &Placements<S>,
    boards: &Boards<S>,
    items: &[BatchItem],
) -> Vec<Result<Submission, Error>> {
    boards
        .ctx()
        .league_clock()
        .restamping(
            &(places, boards),
            items,
            |item| item.options.at.is_none(),
            |(places, boards), items| Box::pin(submit_many_once(places, boards, items)),
        )
        .await
}

/// [`submit_many`], stamped once.
async fn submit_many_once<S: Store>(
    places: &Placements<S>,
    boards: &Boards<S>,
    items: &[BatchItem],
) -> Vec<Result<Submission, Error>> {
    let ctx = boards.ctx();
    let now = match ctx.now().await {
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
        match boards.prepare(&item.player, item.value, &item.options, now) {
            Ok(p) => {
                let hit = places.cached(&item.player, p.period().id);
                results.push(None);
                prepared.push((i, p, hit));
            }
            Err(e) => {
                let e = with_current_score(places, &item.player, &item.options, now, e).await;
                results.push(Some(Err(e)));
            }
        }
    }
    let mut by_period: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (k, (_, p, hit)) in prepared.iter().enumerate() {
        if hit.is_none() {
            by_period.entry(p.period().id).or_default().push(k);
        }
    }
    let mut found: Vec<Option<Arc<Placed>>> = prepared.iter().map(|(_, _, h)| h.clone()).collect();
    let mut to_place = Vec::new();
    for (period, members) in by_period {
        let players: Vec<&str> = members
            .iter()
            .map(|&k| items[prepared[k].0].player.as_str())
            .collect();
        let placements = ctx
            .store()
            .placements(&places.period_keys(period), &players)
            .await;
        for (&k, placement) in members.iter().zip(placements) {
            let (i, p, _) = &prepared[k];
            let item = &items[*i];
            match placement {
                Ok(Some((tier, bracket))) => {
                    found[k] = Some(places.remember(&item.player, period, &tier, bracket));
                }
                Ok(None) => match (
                    ctx.season().brackets.join,
                    boards.refused_on_empty_board(item.value),
                ) {
                    // Refused on an empty board: the player is not placed for it.
                    (JoinPolicy::OnFirstScore, Some(refused)) => {
                        results[*i] = Some(Err(refused));
                    }
                    (JoinPolicy::OnFirstScore, None) => {
                        // A first score is a join: it must pass the join's time rules
                        // even when it carries a request id.
                        match ctx.check_time(p.period(), p.at(), now, false) {
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
            PlaceWant::new(
                &items[*i].player,
                *p.period(),
                p.at(),
                items[*i].options.cohort.as_deref(),
            )
        })
        .collect();
    let placed = places.place_many(&wants, now).await;
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
    let batch: Vec<_> = pending
        .iter()
        .map(|(i, (prepared, (placed, _)))| {
            let item = &items[*i];
            (
                item.player.as_str(),
                item.value,
                prepared,
                &item.options,
                &**placed,
            )
        })
        .collect();
    let replies = boards.apply_many(&batch).await;
    drop(batch);
    for ((i, (prepared, (placed, welcome))), reply) in pending.into_iter().zip(replies) {
        let item = &items[i];
        let result = match reply {
            Err(e) => Err(e),
            Ok(reply) if reply.status == UpdateStatus::NotPlaced => {
                submit_again(places, boards, item, &prepared, now, welcome).await
            }
            Ok(reply) => boards.answer(
                &item.player,
                &prepared,
                &placed,
                reply,
                item.value,
                Welcome::fields(welcome),
            ),
        };
        results[i] = Some(result);
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(InputError::Other("internal: missing result".into()).into()))
        })
        .inspect(|r| crate::metrics::submitted(submit_label(r)))
        .collect()
}

/// A value refused before any write ([`Boards::prepare`]: it can never fit, whatever
/// the score) names the player's real current score in the period of the update, read
/// from the store, rather than none; any other error, or a failed read, is returned as
/// it came. Only a refused update pays the read.
async fn with_current_score<S: Store>(
    places: &Placements<S>,
    player: &str,
    options: &SubmitOptions,
    now: DateTime<Utc>,
    e: Error,
) -> Error {
    use crate::season::packing::{ScoreMode, ScoreRangeError};
    let Error::Input(InputError::Score(ScoreRangeError::OutOfRange {
        current: 0,
        value,
        max,
        ..
    })) = e
    else {
        return e;
    };
    let Ok(period) = places.ctx().period_at(Some(options.at.unwrap_or(now))) else {
        return e;
    };
    let current = match places.player(player, Some(period.id)).await {
        Ok(view) => view.score.unwrap_or(0),
        Err(_) => return e,
    };
    let result = match places.ctx().season().scoring.mode {
        ScoreMode::Increment => i128::from(current) + i128::from(value),
        _ => i128::from(value),
    };
    InputError::Score(ScoreRangeError::OutOfRange {
        current,
        value,
        result,
        max,
    })
    .into()
}

/// One batch item whose player was missing from their board: placed again and
/// sent on its own.
async fn submit_again<S: Store>(
    places: &Placements<S>,
    boards: &Boards<S>,
    item: &BatchItem,
    prepared: &Prepared,
    now: DateTime<Utc>,
    welcome: Option<Welcome>,
) -> Result<Submission, Error> {
    let (placed, again) = replace(places, &item.player, prepared, now).await?;
    let reply = boards
        .apply(&item.player, item.value, prepared, &item.options, &placed)
        .await?;
    boards.answer(
        &item.player,
        prepared,
        &placed,
        reply,
        item.value,
        Welcome::fields(welcome.or(again)),
    )
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
