//! The two scripts that close a bracket, as the Redis store calls them: the claim
//! and freeze (`claim_bracket.lua`) and the finish (`finish_bracket.lua`), with their
//! answers, a key of the wrong type among them.

use ::redis::Value;

use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, RedisStore, Retry, now_arg, time_refusal};
use crate::error::StoreError;
use crate::store::keys::BracketKeys;
use crate::store::*;

/// What a `claim_bracket.lua` call does.
#[derive(Clone, Copy)]
pub(super) enum Claiming {
    Claim,
    Freeze,
    Both,
}

/// A `claim_bracket.lua` answer other than a time refusal.
pub(super) enum Claimed {
    Done(String),
    Busy,
    /// The lease is the caller's; with the board when it was frozen too.
    Mine(Option<Vec<(String, u64)>>),
    /// Frozen without a claim.
    Frozen(Vec<(String, u64)>),
}

/// What a `finish_bracket.lua` call does.
pub(super) enum Finishing<'a> {
    Record {
        outcomes: &'a [(&'a str, &'a str)],
        ttl_secs: u64,
    },
    Finish {
        tally: &'a str,
    },
    Both {
        outcomes: &'a [(&'a str, &'a str)],
        ttl_secs: u64,
        tally: &'a str,
        events: Option<Appends<'a>>,
    },
}

impl RedisStore {
    /// Runs `claim_bracket.lua` (a claim, a freeze or both) and reads its answer.
    pub(super) async fn claim(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
        what: Claiming,
    ) -> Result<Claimed, StoreError> {
        let (mode, op) = match what {
            Claiming::Claim => ("claim", "claim_bracket"),
            Claiming::Freeze => ("freeze", "freeze"),
            Claiming::Both => ("both", "claim_and_freeze"),
        };
        let mut inv = SCRIPTS.claim_bracket.prepare_invoke();
        inv.key(&bracket.meta)
            .key(&bracket.lease)
            .key(&bracket.board)
            .arg(owner)
            .arg(lease_ms.max(1))
            .arg(now_arg(check.now))
            .arg(check.closes_ms)
            .arg(mode);
        // Renewing one's own lease is harmless and a freeze only marks what is marked,
        // so a retry is safe.
        let items = array(
            self.invoke(op, Retry::Idempotent, &inv).await?,
            "claim_bracket reply",
        )?;
        if let Some(why) = time_refusal(&items)? {
            return Err(StoreError::Time(why));
        }
        if let Some(planted) = wrong_type(&items)? {
            return Err(planted);
        }
        match items.as_slice() {
            [status, rest] => match text(status, "claim status")? {
                "done" => Ok(Claimed::Done(text(rest, "bracket tally")?.to_owned())),
                "mine" => Ok(Claimed::Mine(Some(board_from_text(text(
                    rest,
                    "frozen board",
                )?)?))),
                "ok" => Ok(Claimed::Frozen(board_from_text(text(
                    rest,
                    "frozen board",
                )?)?)),
                other => Err(protocol(format!("unknown claim status {other:?}"))),
            },
            [status] => match text(status, "claim status")? {
                "mine" => Ok(Claimed::Mine(None)),
                "busy" => Ok(Claimed::Busy),
                other => Err(protocol(format!("unknown claim status {other:?}"))),
            },
            other => Err(protocol(format!("claim_bracket: {} items", other.len()))),
        }
    }

    /// Runs `finish_bracket.lua`: records outcomes, marks the bracket done, or both.
    pub(super) async fn finish(
        &self,
        bracket: &BracketKeys,
        what: Finishing<'_>,
    ) -> Result<(), StoreError> {
        let (mode, op, outcomes, ttl_secs, tally, events) = match what {
            Finishing::Record { outcomes, ttl_secs } => (
                "record",
                "record_outcomes",
                Some(outcomes),
                ttl_secs,
                "",
                None,
            ),
            Finishing::Finish { tally } => ("finish", "finish_bracket", None, 1, tally, None),
            Finishing::Both {
                outcomes,
                ttl_secs,
                tally,
                events,
            } => (
                "both",
                "finish_with_outcomes",
                Some(outcomes),
                ttl_secs,
                tally,
                events,
            ),
        };
        let mut inv = SCRIPTS.finish_bracket.prepare_invoke();
        inv.key(&bracket.meta)
            .key(&bracket.lease)
            .key(&bracket.board)
            .key(&bracket.profiles)
            .key(&bracket.outcomes)
            .key(&bracket.pages)
            .key(bracket.profiles_text())
            .arg(mode)
            .arg(tally)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(outcomes.map(super::outcomes::encode).unwrap_or_default());
        if let Some(events) = events {
            inv.key(bracket.events()).arg(events.spec.arg());
            for body in events.bodies {
                inv.arg(body);
            }
        }
        let reply = self.invoke(op, Retry::Idempotent, &inv).await?;
        if let Value::Array(items) = &reply
            && let Some(planted) = wrong_type(items)?
        {
            return Err(planted);
        }
        if outcomes.is_some() {
            self.keep_bracket(bracket, ttl_secs);
        }
        Ok(())
    }
}

/// A script's `{"wrong_type", key, found, expected}` answer (foreign_keys.lua).
fn wrong_type(items: &[Value]) -> Result<Option<StoreError>, StoreError> {
    match items {
        [status, key, found, expected] if text(status, "status")? == "wrong_type" => {
            Ok(Some(StoreError::WrongType {
                key: text(key, "key")?.to_owned(),
                found: text(found, "type")?.to_owned(),
                expected: text(expected, "type")?.to_owned(),
            }))
        }
        _ => Ok(None),
    }
}

/// A frozen board as `claim_bracket.lua` answers it: one string, player and score
/// alternating, joined by byte 31.
fn board_from_text(board: &str) -> Result<Vec<(String, u64)>, StoreError> {
    if board.is_empty() {
        return Ok(Vec::new());
    }
    let mut items = super::reply::fields(board);
    let mut entries = Vec::with_capacity(super::reply::separators(board) / 2 + 1);
    while let Some(player) = items.next() {
        let Some(score) = items.next() else {
            return Err(protocol("freeze: odd number of board items"));
        };
        entries.push((player.to_owned(), packed_from_text(score, "board score")?));
    }
    Ok(entries)
}
