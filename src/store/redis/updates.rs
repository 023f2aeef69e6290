//! Score updates on Redis: `update.lua` calls of many updates.
//!
//! An update costs Redis about 12 µs, and a fifth of it is per call, not per update:
//! reading and dispatching the request, entering the script with its arguments,
//! writing the reply. So `update.lua` takes any number of updates of one season's
//! period (their shared arguments once), and `update_many` sends its batch as calls
//! of up to [`UPDATES_AT_ONCE`] updates (of any brackets on one server, of one
//! bracket's slot on a cluster), pipelined. Concurrent single submits reach it as
//! such batches: the engine gathers them (`league/batching.rs`) when
//! [`RedisOptions::gather_submits`](super::RedisOptions::gather_submits) is on (the
//! default, read through [`LeagueStore::gathers_submits`]); this store gathers
//! nothing itself.
//!
//! A batch behaves as its updates one by one: the script applies them in order, each
//! with its own idempotency record, refusal or error. A call's retry is what its
//! updates allow together: after a failure that may have come after the call ran, it
//! is sent again only if every update in it carries a request id; otherwise each of
//! its updates answers [`StoreError::Unknown`], as a lone update would.

use std::collections::HashMap;

use ::redis::{ScriptInvocation, Value};

use super::bulk::spread;
use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, RedisStore, Retry, attempt_token, time_refusal};
use crate::error::StoreError;
use crate::season::limits::{Limit, Limits};
use crate::season::packing::{EXACT_LIMIT, Packing};
use crate::store::keys::{BracketKeys, hash_tag};
use crate::store::*;

/// Updates in one `update.lua` call at most: large enough that the per-call cost is
/// small beside the updates' own, small enough that one call holds the server for
/// well under a millisecond (64 updates: about 0.5 ms).
pub(super) const UPDATES_AT_ONCE: usize = 64;

/// One update and its attempt token, as a call takes it.
type Item<'a, 'u> = (&'a BracketKeys, &'a Update<'u>, &'a str);

/// What the updates of one `update.lua` call share: its shared arguments, except the
/// league clock, for which the call takes the latest of its updates (each update was
/// checked against its own by the engine, and a clock a few milliseconds later is the
/// clock the update would have met had it arrived that much later).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Shared {
    mode: &'static str,
    limits: Limits,
    /// The max_score argument: -1 when the packing parameters are invalid (the
    /// in-memory store refuses every update then; the script answers out of range).
    max: i128,
    span: u64,
    /// The clock's kind: `None` for a given time (the call takes the latest), else
    /// the store's clock plus this offset (`Now::Store`: 0).
    store_clock: Option<i64>,
    start: i64,
    closes: i64,
    skew: i64,
    /// The event log's spec when the updates log `player.overtaken`.
    overtakes: Option<LogSpec>,
}

impl Shared {
    fn of(update: &Update<'_>) -> Shared {
        Shared {
            mode: update.mode.as_str(),
            limits: update.limits,
            max: if valid(update) {
                i128::from(update.max_score)
            } else {
                -1
            },
            span: update.span,
            store_clock: match update.time.now {
                Now::At(_) => None,
                Now::Travel(offset) => Some(offset),
                _ => Some(0),
            },
            start: update.time.start_ms,
            closes: update.time.closes_ms,
            skew: update.time.skew_ms,
            overtakes: update.overtakes.as_ref().map(|o| o.spec),
        }
    }
}

/// Whether the update's packing parameters are ones the in-memory store accepts.
fn valid(update: &Update<'_>) -> bool {
    update.span >= 2 && Packing::new(update.max_score, update.span - 1).is_ok()
}

/// The `update.lua` call of `items`, which share one [`Shared`].
///
/// The arguments are prepared so that Lua's doubles stay exact without changing any
/// outcome: the value is clamped to ±2^53 (every value beyond takes the score out of
/// range either way), the tick to the last tick of the period (as `Packing::apply`
/// does), and invalid packing parameters are sent as a `max_score` of -1.
fn update_call(items: &[Item<'_, '_>]) -> ScriptInvocation<'static> {
    let mut inv = SCRIPTS.update.prepare_invoke();
    let Some((_, first, _)) = items.first() else {
        return inv;
    };
    let shared = Shared::of(first);
    // Shared by the call's updates, so checked once: -1 marks invalid parameters.
    let valid = shared.max >= 0;
    let clock = items
        .iter()
        .filter_map(|(_, u, _)| match u.time.now {
            Now::At(ms) => Some(ms),
            _ => None,
        })
        .max();
    // The limits and the overtaken events ride on the mode argument, so that a season
    // without them sends exactly what it always did.
    let mut mode = if shared.limits.is_empty() {
        shared.mode.to_owned()
    } else {
        let l = &shared.limits;
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        format!(
            "{} {} {} {} {}",
            shared.mode,
            opt(l.max_value.map(|v| v.min(EXACT_LIMIT))),
            opt(l.max_period_score),
            opt(l.rate.map(|r| r.count)),
            opt(l.rate.map(|r| r.window_ms())),
        )
    };
    if let Some(spec) = shared.overtakes {
        mode.push('|');
        mode.push_str(&spec.arg());
    }
    let rated = shared.limits.rate.is_some();
    inv.arg(mode)
        .arg(shared.max.to_string())
        .arg(shared.span)
        .arg(match (shared.store_clock, clock) {
            (None, Some(ms)) => ms.to_string(),
            (Some(offset), _) if offset != 0 => super::now_arg(Now::Travel(offset)),
            _ => String::new(),
        })
        .arg(shared.start)
        .arg(shared.closes)
        .arg(shared.skew);
    let limit = EXACT_LIMIT as i64;
    for (keys, update, token) in items {
        inv.key(&keys.board).key(&keys.meta).key(&keys.pages);
        let window = match &update.request {
            Some((key, window)) => {
                inv.key(key);
                (*window).min(MAX_WINDOW_SECS).to_string()
            }
            // Not touched: any key of the bracket's slot keeps the four keys a call.
            None => {
                inv.key(&keys.meta);
                String::new()
            }
        };
        if rated {
            inv.key(keys.rate());
        }
        let overtakes = update
            .overtakes
            .as_ref()
            .filter(|_| shared.overtakes.is_some());
        if overtakes.is_some() {
            inv.key(keys.events());
        }
        inv.arg(update.player)
            .arg(update.value.clamp(-limit, limit))
            .arg(if valid {
                update.tick.min(update.span - 2)
            } else {
                0
            })
            .arg(window)
            .arg(*token)
            .arg(update.time.at_ms)
            .arg(if update.rank { "1" } else { "" });
        if let Some(o) = overtakes {
            inv.arg(&o.head).arg(&o.tail);
        }
    }
    inv
}

/// The replies of one `update.lua` call to its updates, one each, in order.
fn parse_updates(
    reply: Value,
    tokens: &[&str],
) -> Result<Vec<Result<UpdateReply, StoreError>>, StoreError> {
    let items = array(reply, "update replies")?;
    if items.len() != tokens.len() {
        return Err(protocol(format!(
            "update: {} replies for {} updates",
            items.len(),
            tokens.len()
        )));
    }
    Ok(items
        .into_iter()
        .zip(tokens)
        .map(|(item, token)| match item {
            Value::ServerError(e) => Err(super::failure::backend(e.into())),
            item => update_reply(item, token),
        })
        .collect())
}

/// The reply of `update.lua` to one update, given its attempt token.
fn update_reply(v: Value, token: &str) -> Result<UpdateReply, StoreError> {
    // An applied update is answered "packed:rank" (rank "" when not asked for).
    if let Value::BulkString(_) = &v {
        let answer = text(&v, "update answer")?;
        let (packed, rank) = answer
            .split_once(':')
            .ok_or_else(|| protocol(format!("update answer {answer:?} without ':'")))?;
        let number = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| protocol(format!("update answer {answer:?}: bad {what}")))
        };
        return Ok(UpdateReply {
            status: UpdateStatus::Applied,
            packed: number(packed, "packed value")?,
            rank: match rank {
                "" => None,
                r => Some(number(r, "rank")?),
            },
        });
    }
    let items = array(v, "update reply")?;
    let status = items
        .first()
        .ok_or_else(|| protocol("empty update reply"))
        .and_then(|s| text(s, "update status"))?;
    let number = |i: usize, what: &str| -> Result<u64, StoreError> {
        items
            .get(i)
            .ok_or_else(|| protocol(format!("update reply without {what}")))
            .and_then(|v| uint(v, what))
    };
    // A text item that may be missing (older replies): `absent` then.
    let detail = |i: usize, what: &str, absent: &'static str| -> Result<String, StoreError> {
        Ok(items
            .get(i)
            .map(|v| text(v, what))
            .transpose()?
            .unwrap_or(absent)
            .to_owned())
    };
    // The rank: "" when the update did not ask for it (or, for a duplicate, the
    // first one did not).
    let rank = |i: usize| -> Result<Option<u64>, StoreError> {
        match items.get(i) {
            Some(Value::BulkString(b)) if b.is_empty() => Ok(None),
            Some(v) => uint(v, "rank").map(Some),
            None => Err(protocol("update reply without rank")),
        }
    };
    let (status, packed, rank) = match status {
        "applied" => (UpdateStatus::Applied, number(1, "packed")?, rank(2)?),
        "duplicate" => {
            let first = detail(3, "attempt token", "")?;
            // Our own earlier attempt, applied before its reply was lost: this call
            // applied the update, so it answers as the first attempt would have.
            let status = if first == token {
                UpdateStatus::Applied
            } else {
                UpdateStatus::Duplicate
            };
            (status, number(1, "packed")?, rank(2)?)
        }
        "out_of_range" => {
            let current = number(1, "packed")?;
            (UpdateStatus::OutOfRange { current }, current, None)
        }
        "closed" => (UpdateStatus::Closed, 0, None),
        "limited" => {
            let limit = match detail(1, "limit", "")?.as_str() {
                "max_value" => Limit::MaxValue,
                "max_period_score" => Limit::MaxPeriodScore,
                "rate" => Limit::Rate,
                other => return Err(protocol(format!("unknown limit {other:?}"))),
            };
            let retry_after_ms = number(2, "retry")?;
            (
                UpdateStatus::Limited {
                    limit,
                    retry_after_ms,
                },
                number(3, "packed")?,
                None,
            )
        }
        "not_placed" => (UpdateStatus::NotPlaced, 0, None),
        "not_yet" | "future" => match time_refusal(&items)? {
            Some(why) => (UpdateStatus::Refused(why), 0, None),
            None => return Err(protocol("bad time refusal")),
        },
        "malformed" => {
            let what = detail(1, "detail", "?")?;
            return Err(protocol(format!(
                "update found data it did not write: {what}"
            )));
        }
        "refused" => {
            return Err(refused(&detail(1, "error", "ERR")?));
        }
        other => return Err(protocol(format!("unknown update status {other:?}"))),
    };
    Ok(UpdateReply {
        status,
        packed,
        rank,
    })
}

/// The error of an update the server refused inside a call that ran (`update.lua`
/// answers `{"refused", error}` in its place): the server's error, as a lone command
/// would have met it, so that its code (WRONGTYPE, OOM, ...) is kept.
pub(super) fn refused(error: &str) -> StoreError {
    let line = format!("-{}\r\n", error.replace(['\r', '\n'], " "));
    match ::redis::parse_redis_value(line.as_bytes()) {
        Ok(Value::ServerError(e)) => super::failure::backend(e.into()),
        Err(e) => super::failure::backend(e),
        Ok(_) => protocol(format!("update refused: {error}")),
    }
}

/// How a call of these updates may be retried: as an idempotent write only if every
/// update carries a request id (a second run finds the first one's record and its
/// token); otherwise only when the server certainly did not run it.
fn retry_of<'a>(mut updates: impl Iterator<Item = &'a Update<'a>>) -> Retry {
    if updates.all(|u| u.request.is_some()) {
        Retry::Idempotent
    } else {
        Retry::NotExecuted
    }
}

impl RedisStore {
    /// One update, one call.
    pub(super) async fn update_alone(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> Result<UpdateReply, StoreError> {
        let token = attempt_token();
        let inv = update_call(&[(bracket, update, &token)]);
        let reply = self
            .invoke_write("update", retry_of(std::iter::once(update)), &inv)
            .await?;
        parse_updates(reply, &[&token])?
            .pop()
            .unwrap_or_else(|| Err(protocol("update: no reply")))
    }

    /// Applies `updates` in order in `update.lua` calls: one per [`Shared`] group of
    /// up to [`UPDATES_AT_ONCE`] updates (of one slot on a cluster), the calls
    /// pipelined. One result per update, in order.
    pub(super) async fn updates(
        &self,
        op: &'static str,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> Vec<Result<UpdateReply, StoreError>> {
        if updates.is_empty() {
            return Vec::new();
        }
        // One token per update: two updates of one batch may share a request id, and
        // the second must still see the first as a different request.
        let base = attempt_token();
        let tokens: Vec<String> = (0..updates.len())
            .map(|i| format!("{base}.{i:x}"))
            .collect();
        let items: Vec<Item<'_, '_>> = updates
            .iter()
            .zip(&tokens)
            .map(|((keys, update), token)| (*keys, update, token.as_str()))
            .collect();
        // Groups by shared arguments, in order of first appearance (almost always one:
        // a league's updates of one period).
        let mut index: HashMap<Shared, usize> = HashMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, (_, update, _)) in items.iter().enumerate() {
            let g = *index.entry(Shared::of(update)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        let runs = groups.into_iter().map(|group| {
            let items = &items;
            async move {
                let of_group: Vec<Item<'_, '_>> = group.iter().map(|&i| items[i]).collect();
                (group, self.update_calls(op, &of_group).await)
            }
        });
        let mut results: Vec<Option<Result<UpdateReply, StoreError>>> =
            updates.iter().map(|_| None).collect();
        for (group, answers) in futures::future::join_all(runs).await {
            for (i, answer) in group.into_iter().zip(answers) {
                results[i] = Some(answer);
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(protocol(format!("{op}: an update got no reply")))))
            .collect()
    }

    /// Updates sharing their [`Shared`] arguments, in as few calls as the server
    /// takes ([`RedisStore::pipelined_items`]: on one server one call for up to
    /// [`UPDATES_AT_ONCE`] updates of any brackets, on a cluster one per slot).
    async fn update_calls(
        &self,
        op: &'static str,
        items: &[Item<'_, '_>],
    ) -> Vec<Result<UpdateReply, StoreError>> {
        let tokens: Vec<&str> = items.iter().map(|(_, _, t)| *t).collect();
        let tags: Vec<&str> = items.iter().map(|(k, _, _)| hash_tag(&k.board)).collect();
        let answered = self
            .pipelined_items(
                op,
                &SCRIPTS.update,
                &tags,
                UPDATES_AT_ONCE,
                |call| {
                    let of_call: Vec<Item<'_, '_>> = call.iter().map(|&i| items[i]).collect();
                    update_call(&of_call)
                },
                |call| retry_of(call.iter().map(|&i| items[i].1)),
            )
            .await;
        spread(
            items.len(),
            answered,
            |answer, call| {
                let of_call: Vec<&str> = call.iter().map(|&i| tokens[i]).collect();
                parse_updates(answer??, &of_call)
            },
            op,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_applied_update_is_read_from_its_one_string() {
        let r = update_reply(bulk("4200017:3"), "t").expect("ranked");
        assert_eq!(
            (r.status, r.packed, r.rank),
            (UpdateStatus::Applied, 4200017, Some(3))
        );
        let r = update_reply(bulk("4200017:"), "t").expect("unranked");
        assert_eq!(
            (r.status, r.packed, r.rank),
            (UpdateStatus::Applied, 4200017, None)
        );
        for bad in ["4200017", "x:1", "1:y", "-1:0", ""] {
            assert!(
                matches!(update_reply(bulk(bad), "t"), Err(StoreError::Protocol(_))),
                "{bad:?}"
            );
        }
    }
}
