//! Webhook delivery on Redis: a log's lease (`SET NX PX` in a script, renewed by its
//! holder) and cursor hash live in the log's slot; cursors move by a compare-and-set
//! script (`lua/hook_advance.lua`); dead letters are one hash in the season's slot.

use ::redis::Value;

use super::reply::{array, is_nil, pairs, protocol, text, uint};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{
    SeasonKeys, hook_dead, hook_dead_at, hook_dead_replay, hook_dead_url, hook_done, hook_marks,
    hook_targets,
};
use crate::store::{DeadBounds, DeadLetter, DeliveryStore, LogHead, Pos, url_tag};

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

    async fn put_dead(
        &self,
        season: &SeasonKeys,
        letter: &DeadLetter,
        bounds: DeadBounds,
    ) -> Result<u64, StoreError> {
        let mut inv = SCRIPTS.hook_dead_put.prepare_invoke();
        inv.key(hook_dead(season))
            .key(hook_dead_at(season))
            .key(hook_dead_url(season, &url_tag(&letter.url)))
            .key(hook_dead_replay(season))
            .arg(letter.key())
            .arg(letter.to_json())
            .arg(letter.at_ms)
            .arg(if letter.replay { "1" } else { "0" })
            .arg(bounds.max_per_url)
            .arg(bounds.before_ms);
        // Idempotent: the same letter recorded twice is recorded once.
        let v = self
            .invoke_write("hook_dead_put", Retry::Idempotent, &inv)
            .await?;
        uint(&v, "hook_dead_put")
    }

    async fn dead_letters(
        &self,
        season: &SeasonKeys,
        after: Option<(i64, &str)>,
        limit: usize,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        // Letters recorded in the same millisecond as `after` come first in the
        // index's order; fetch past them, more each round while a whole round was
        // at or before `after`.
        let mut fetch = limit.saturating_add(64);
        loop {
            let mut cmd = ::redis::cmd("ZRANGE");
            cmd.arg(hook_dead_at(season))
                .arg(after.map_or("-inf".to_owned(), |(ms, _)| ms.to_string()))
                .arg("+inf")
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(0)
                .arg(fetch)
                .arg("WITHSCORES");
            let v = self
                .command("hook_dead_page", Retry::Idempotent, &cmd)
                .await?;
            let scored = pairs(v, "dead letters by time")?;
            let got = scored.len();
            let keys: Vec<String> = scored
                .into_iter()
                .filter_map(|(key, score)| {
                    let ms: i64 = score.parse::<f64>().ok()? as i64;
                    match after {
                        Some((a_ms, a_key)) if (ms, key.as_str()) <= (a_ms, a_key) => None,
                        _ => Some(key),
                    }
                })
                .take(limit)
                .collect();
            if keys.len() < limit && got == fetch {
                fetch = fetch.saturating_mul(4);
                continue;
            }
            return self.letters(season, &keys).await;
        }
    }

    async fn dead_of(&self, season: &SeasonKeys, id: &str) -> Result<Vec<DeadLetter>, StoreError> {
        let pattern = format!("{} *", glob_escape(id));
        let mut cursor = "0".to_owned();
        let mut out = Vec::new();
        loop {
            let mut cmd = ::redis::cmd("HSCAN");
            cmd.arg(hook_dead(season))
                .arg(&cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000);
            let v = self
                .command("hook_dead_of", Retry::Idempotent, &cmd)
                .await?;
            let mut parts = array(v, "HSCAN of dead letters")?.into_iter();
            let (Some(next), Some(found)) = (parts.next(), parts.next()) else {
                return Err(protocol("HSCAN of dead letters: no cursor and page"));
            };
            for (_, json) in pairs(found, "dead letters")? {
                if let Some(l) = DeadLetter::from_json(&json).filter(|l| l.id == id) {
                    out.push(l);
                }
            }
            cursor = text(&next, "HSCAN cursor")?.to_owned();
            if cursor == "0" {
                break;
            }
        }
        out.sort_by_key(|l| (l.at_ms, l.key()));
        Ok(out)
    }

    async fn marked_dead(
        &self,
        season: &SeasonKeys,
        limit: usize,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        let mut cmd = ::redis::cmd("SRANDMEMBER");
        cmd.arg(hook_dead_replay(season)).arg(limit.max(1));
        let v = self
            .command("hook_dead_marked", Retry::Idempotent, &cmd)
            .await?;
        let keys: Vec<String> = array(v, "dead letters marked")?
            .iter()
            .map(|k| text(k, "a dead letter's key").map(str::to_owned))
            .collect::<Result<_, _>>()?;
        self.letters(season, &keys).await
    }

    async fn remove_dead(
        &self,
        season: &SeasonKeys,
        letter: &DeadLetter,
        record: &str,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.hook_dead_remove.prepare_invoke();
        inv.key(hook_dead(season))
            .key(hook_dead_at(season))
            .key(hook_dead_url(season, &url_tag(&letter.url)))
            .key(hook_dead_replay(season))
            .arg(letter.key())
            .arg(record);
        self.invoke_write("hook_dead_remove", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn prune_dead(
        &self,
        season: &SeasonKeys,
        before_ms: i64,
        targets: &[String],
    ) -> Result<u64, StoreError> {
        let mut inv = SCRIPTS.hook_dead_prune.prepare_invoke();
        inv.key(hook_dead(season))
            .key(hook_dead_at(season))
            .key(hook_dead_replay(season));
        for t in targets {
            inv.key(hook_dead_url(season, t));
        }
        inv.arg(before_ms);
        let v = self
            .invoke_write("hook_dead_prune", Retry::Idempotent, &inv)
            .await?;
        uint(&v, "hook_dead_prune")
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

impl RedisStore {
    /// The dead letters of `keys`, in that order; a key without a letter (removed
    /// meanwhile) is passed over.
    async fn letters(
        &self,
        season: &SeasonKeys,
        keys: &[String],
    ) -> Result<Vec<DeadLetter>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = ::redis::cmd("HMGET");
        cmd.arg(hook_dead(season)).arg(keys);
        let v = self
            .command("hook_dead_read", Retry::Idempotent, &cmd)
            .await?;
        let mut out = Vec::new();
        for item in array(v, "dead letters")? {
            if is_nil(&item) {
                continue;
            }
            if let Some(l) = DeadLetter::from_json(text(&item, "dead letter")?) {
                out.push(l);
            }
        }
        Ok(out)
    }
}

/// `s` with glob characters escaped for a SCAN `MATCH` pattern.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
