//! The event logs on Redis: one stream per log key, appended by the scripts that make
//! the changes (`lua/events.lua`), read here with XRANGE.

use ::redis::Value;

use super::reply::{array, protocol, text};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{SeasonKeys, hook_marks};
use crate::store::{EventStore, LogEntry, LogRead, Pos};

impl EventStore for RedisStore {
    async fn read_logs(&self, reads: &[LogRead<'_>]) -> Vec<Result<Vec<LogEntry>, StoreError>> {
        // A log's key is its own tag for grouping: its slot is its hash tag's.
        let tags: Vec<&str> = reads.iter().map(|r| r.log).collect();
        let replies = self
            .pipelined_commands("read_logs", &tags, 1, |i, pipe| {
                let r = &reads[i];
                pipe.cmd("XRANGE")
                    .arg(r.log)
                    .arg(format!("({}", r.after))
                    .arg("+")
                    .arg("COUNT")
                    .arg(r.limit.max(1));
            })
            .await;
        replies
            .into_iter()
            .zip(reads)
            .map(|(reply, r)| {
                let mut replies = reply?;
                let v = replies
                    .pop()
                    .ok_or_else(|| protocol("read_logs: no reply"))?;
                let mut out = entries(v, r.log)?;
                out.truncate(r.limit);
                Ok(out)
            })
            .collect()
    }

    async fn log_gap(&self, log: &str, after: Pos) -> Result<Option<Pos>, StoreError> {
        // A log is trimmed from its head: `after` is still there, or the entry after it
        // is, exactly when the first entry is not past the position right after it.
        let mut first = ::redis::cmd("XRANGE");
        first.arg(log).arg("-").arg("+").arg("COUNT").arg(1);
        let v = self.command("log_gap", Retry::Idempotent, &first).await?;
        Ok(entries(v, log)?
            .first()
            .map(|e| e.pos)
            .filter(|f| f.before() > after))
    }

    async fn mark_periods(
        &self,
        season: &SeasonKeys,
        periods: &[u64],
        until_ms: i64,
    ) -> Result<(), StoreError> {
        for chunk in periods.chunks(1000) {
            let mut inv = SCRIPTS.hook_mark.prepare_invoke();
            inv.key(hook_marks(season)).arg(until_ms);
            for p in chunk {
                inv.arg(*p);
            }
            // Idempotent: each period keeps the larger mark.
            self.invoke_write("hook_mark", Retry::Idempotent, &inv)
                .await?;
        }
        Ok(())
    }
}

/// An XRANGE reply: `[[id, [field, value, ...]], ...]`; the body is field `e`.
fn entries(v: Value, log: &str) -> Result<Vec<LogEntry>, StoreError> {
    let what = format!("event log {log}");
    let mut out = Vec::new();
    for item in array(v, &what)? {
        let mut pair = array(item, &what)?.into_iter();
        let (Some(id), Some(fields)) = (pair.next(), pair.next()) else {
            return Err(protocol(format!(
                "{what}: an entry without its id and fields"
            )));
        };
        let pos: Pos = text(&id, &what)?
            .parse()
            .map_err(|e| protocol(format!("{what}: {e}")))?;
        let fields = match fields {
            Value::Map(m) => m.into_iter().flat_map(|(k, v)| [k, v]).collect(),
            other => array(other, &what)?,
        };
        let mut it = fields.iter();
        let mut body = None;
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            if text(k, &what)? == "e" {
                body = Some(text(v, &what)?.to_owned());
            }
        }
        let body = body.ok_or_else(|| protocol(format!("{what}: entry {pos} has no field e")))?;
        out.push(LogEntry { pos, body });
    }
    Ok(out)
}
