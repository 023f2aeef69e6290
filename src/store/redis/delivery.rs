//! Webhook delivery on Redis: a log's lease (`SET NX PX` in a script, renewed by its
//! holder) and cursor hash live in the log's slot; cursors move by a compare-and-set
//! script (`lua/hook_advance.lua`); dead letters are one hash in the season's slot.

use ::redis::Value;

use super::reply::{array, is_nil, pairs, protocol, text, uint};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{SeasonKeys, hook_dead, hook_done, hook_marks, hook_targets};
use crate::store::{DeadLetter, DeliveryStore, LogHead, Pos};

impl DeliveryStore for RedisStore {
    async fn take_lease(&self, lease: &str, owner: &str, ttl_ms: u64) -> Result<bool, StoreError> {
        let mut inv = SCRIPTS.hook_lease.prepare_invoke();
        inv.key(lease).arg(owner).arg(ttl_ms.max(1));
        // Idempotent: taking again what the caller holds renews it.
        let v = self
            .invoke_write("hook_lease", Retry::Idempotent, &inv)
            .await?;
        Ok(uint(&v, "hook_lease")? == 1)
    }

    async fn drop_lease(&self, lease: &str, owner: &str) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.hook_release.prepare_invoke();
        inv.key(lease).arg(owner);
        self.invoke_write("hook_release", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn log_heads(
        &self,
        logs: &[(&str, &str)],
        targets: &[String],
    ) -> Vec<Result<LogHead, StoreError>> {
        let tags: Vec<&str> = logs.iter().map(|(log, _)| *log).collect();
        let replies = self
            .pipelined_commands("hook_heads", &tags, 2, |i, pipe| {
                let (log, cursors) = logs[i];
                pipe.cmd("XREVRANGE")
                    .arg(log)
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(1);
                if targets.is_empty() {
                    pipe.cmd("EXISTS").arg(cursors);
                } else {
                    pipe.cmd("HMGET").arg(cursors).arg(targets);
                }
            })
            .await;
        replies
            .into_iter()
            .zip(logs)
            .map(|(reply, (log, _))| {
                let mut it = reply?.into_iter();
                let (Some(last), Some(cursors)) = (it.next(), it.next()) else {
                    return Err(protocol("hook_heads: missing replies"));
                };
                let what = format!("event log {log}");
                let last = match array(last, &what)?.into_iter().next() {
                    Some(entry) => {
                        let id = array(entry, &what)?
                            .into_iter()
                            .next()
                            .ok_or_else(|| protocol(format!("{what}: an entry without id")))?;
                        position(&id, &what)?
                    }
                    None => Pos::START,
                };
                let cursors = if targets.is_empty() {
                    Vec::new()
                } else {
                    array(cursors, &what)?
                        .iter()
                        .map(|v| {
                            if is_nil(v) {
                                Ok(Pos::START)
                            } else {
                                position(v, &what)
                            }
                        })
                        .collect::<Result<_, _>>()?
                };
                Ok(LogHead { last, cursors })
            })
            .collect()
    }

    async fn advance_cursor(
        &self,
        lease: &str,
        owner: &str,
        cursors: &str,
        target: &str,
        to: Pos,
        ttl_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut inv = SCRIPTS.hook_advance.prepare_invoke();
        inv.key(lease)
            .key(cursors)
            .arg(owner)
            .arg(target)
            .arg(to.ms)
            .arg(to.seq)
            .arg(ttl_ms.max(1));
        // Idempotent: setting the same position twice leaves it there.
        let v = self
            .invoke_write("hook_advance", Retry::Idempotent, &inv)
            .await?;
        Ok(uint(&v, "hook_advance")? == 1)
    }

    async fn period_marks(&self, season: &SeasonKeys) -> Result<Vec<(u64, i64)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(hook_marks(season));
        let v = self.command("hook_marks", Retry::Idempotent, &cmd).await?;
        period_numbers(v, "webhook period marks")
    }

    async fn periods_done(
        &self,
        season: &SeasonKeys,
        target: &str,
    ) -> Result<Vec<(u64, i64)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(hook_done(season, target));
        let v = self
            .command("hook_done_read", Retry::Idempotent, &cmd)
            .await?;
        period_numbers(v, "webhook periods done")
    }

    async fn record_period_done(
        &self,
        season: &SeasonKeys,
        target: &str,
        period: u64,
        mark: i64,
        ttl_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut inv = SCRIPTS.hook_done.prepare_invoke();
        inv.key(hook_marks(season))
            .key(hook_done(season, target))
            .arg(period)
            .arg(mark)
            .arg(ttl_ms.max(1));
        // Idempotent: recording the same mark twice leaves it there.
        let v = self
            .invoke_write("hook_done", Retry::Idempotent, &inv)
            .await?;
        Ok(uint(&v, "hook_done")? == 1)
    }

    async fn prune_marks(
        &self,
        season: &SeasonKeys,
        before_ms: i64,
        targets: &[String],
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.hook_prune.prepare_invoke();
        inv.key(hook_marks(season));
        for t in targets {
            inv.key(hook_done(season, t));
        }
        inv.arg(before_ms);
        self.invoke_write("hook_prune", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn target_seen(
        &self,
        season: &SeasonKeys,
        target: &str,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(hook_targets(season)).arg(target);
        let v = self
            .command("hook_target_seen", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&v) {
            return Ok(None);
        }
        let what = "a webhook target's record";
        let t = text(&v, what)?;
        let parsed = t
            .split_once(' ')
            .and_then(|(f, l)| Some((f.parse().ok()?, l.parse().ok()?)));
        parsed
            .map(Some)
            .ok_or_else(|| protocol(format!("{what}: {t:?} is not \"<first> <last>\"")))
    }

    async fn register_target(
        &self,
        season: &SeasonKeys,
        target: &str,
        now_ms: i64,
        stale_ms: u64,
    ) -> Result<i64, StoreError> {
        let mut inv = SCRIPTS.hook_register.prepare_invoke();
        inv.key(hook_targets(season))
            .arg(target)
            .arg(now_ms)
            .arg(stale_ms);
        // Idempotent: registering again at the same time answers the same.
        let v = self
            .invoke_write("hook_register", Retry::Idempotent, &inv)
            .await?;
        let first = uint(&v, "hook_register")?;
        i64::try_from(first).map_err(|_| protocol(format!("hook_register: {first} out of range")))
    }

    async fn put_dead(&self, season: &SeasonKeys, letter: &DeadLetter) -> Result<(), StoreError> {
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(hook_dead(season))
            .arg(letter.key())
            .arg(letter.to_json());
        self.command("hook_put_dead", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn dead_letters(
        &self,
        season: &SeasonKeys,
        limit: usize,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(hook_dead(season));
        let reply = self
            .command("hook_dead_letters", Retry::Idempotent, &cmd)
            .await?;
        let flat: Vec<Value> = match reply {
            Value::Map(m) => m.into_iter().flat_map(|(k, v)| [k, v]).collect(),
            other => array(other, "dead letters")?,
        };
        let mut out = Vec::new();
        let mut it = flat.iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            let key = text(k, "dead letter key")?;
            if let Some(letter) = DeadLetter::from_json(text(v, "dead letter")?) {
                out.push((key.to_owned(), letter));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out.into_iter().take(limit).map(|(_, l)| l).collect())
    }

    async fn remove_dead(
        &self,
        season: &SeasonKeys,
        key: &str,
        record: &str,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.hook_dead_remove.prepare_invoke();
        inv.key(hook_dead(season)).arg(key).arg(record);
        self.invoke_write("hook_dead_remove", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }
}

fn position(v: &Value, what: &str) -> Result<Pos, StoreError> {
    text(v, what)?
        .parse()
        .map_err(|e| protocol(format!("{what}: {e}")))
}

/// A hash of period → unix ms, by period.
fn period_numbers(v: Value, what: &str) -> Result<Vec<(u64, i64)>, StoreError> {
    let mut out = pairs(v, what)?
        .into_iter()
        .map(|(p, at)| match (p.parse::<u64>(), at.parse::<i64>()) {
            (Ok(p), Ok(at)) => Ok((p, at)),
            _ => Err(protocol(format!(
                "{what}: {p:?} -> {at:?} is not period -> ms"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_unstable();
    Ok(out)
}
