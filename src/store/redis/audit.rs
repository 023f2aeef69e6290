//! The audit log on Redis: one sorted set in the season's slot.

use ::redis::Value;

use super::reply::{array, protocol, text};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::AuditStore;
use crate::store::keys::SeasonKeys;

impl AuditStore for RedisStore {
    async fn append_audit(
        &self,
        season: &SeasonKeys,
        at_ms: i64,
        entry: &str,
        keep_from_ms: i64,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.append_audit.prepare_invoke();
        inv.key(&season.audit)
            .arg(at_ms)
            .arg(entry)
            .arg(keep_from_ms);
        // Idempotent: the entry is unique by its text, and ZADD NX keeps one.
        self.invoke_write("append_audit", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn audit_entries(
        &self,
        season: &SeasonKeys,
        since_ms: i64,
        limit: u64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let mut cmd = ::redis::cmd("ZRANGE");
        cmd.arg(&season.audit)
            .arg(since_ms)
            .arg("+inf")
            .arg("BYSCORE")
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .arg("WITHSCORES");
        let reply = self
            .command("audit_entries", Retry::Idempotent, &cmd)
            .await?;
        // RESP2 answers entry, score, entry, score...; RESP3 a pair per entry.
        let mut flat = Vec::new();
        for item in array(reply, "audit log")? {
            match item {
                Value::Array(pair) => flat.extend(pair),
                other => flat.push(other),
            }
        }
        let mut out = Vec::with_capacity(flat.len() / 2);
        let mut it = flat.into_iter();
        while let (Some(entry), Some(score)) = (it.next(), it.next()) {
            let entry = text(&entry, "audit entry")?.to_owned();
            let at = match &score {
                Value::Double(d) => *d,
                other => text(other, "audit entry time")?
                    .parse::<f64>()
                    .map_err(|e| protocol(format!("audit entry time: {e}")))?,
            };
            out.push((at as i64, entry));
        }
        Ok(out)
    }
}
