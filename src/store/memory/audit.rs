//! The audit log in memory: per season, entries ordered by (time, text).

use super::MemoryStore;
use crate::error::StoreError;
use crate::store::AuditStore;
use crate::store::keys::SeasonKeys;

impl AuditStore for MemoryStore {
    async fn append_audit(
        &self,
        season: &SeasonKeys,
        at_ms: i64,
        entry: &str,
        keep_from_ms: i64,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let log = data.audit.entry(season.base.clone()).or_default();
        // As ZADD NX: an entry already logged keeps its first time.
        if !log.iter().any(|(_, e)| e == entry) {
            log.insert((at_ms, entry.to_owned()));
        }
        log.retain(|(at, _)| *at >= keep_from_ms);
        Ok(())
    }

    async fn audit_entries(
        &self,
        season: &SeasonKeys,
        since_ms: i64,
        limit: u64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let data = self.data();
        Ok(data
            .audit
            .get(&season.base)
            .map(|log| {
                log.range((since_ms, String::new())..)
                    .take(usize::try_from(limit).unwrap_or(usize::MAX))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }
}
