//! The staging clock's offset in memory: a field of the season's record.

use super::MemoryStore;
use crate::error::StoreError;
use crate::store::ClockStore;
use crate::store::keys::SeasonKeys;

/// The season record's field holding the offset (as on Redis).
const FIELD: &str = "clock_offset";

impl ClockStore for MemoryStore {
    async fn clock_offset(&self, season: &SeasonKeys) -> Result<i64, StoreError> {
        let data = self.data();
        offset_of(
            data.season_fields
                .get(&season.base)
                .and_then(|f| f.get(FIELD)),
        )
    }

    async fn move_clock(&self, season: &SeasonKeys, from: i64, to: i64) -> Result<i64, StoreError> {
        let mut data = self.data();
        let fields = data.season_fields.entry(season.base.clone()).or_default();
        let current = offset_of(fields.get(FIELD))?;
        if current == from && to > from {
            fields.insert(FIELD.to_owned(), to.to_string());
            return Ok(to);
        }
        Ok(current)
    }
}

fn offset_of(field: Option<&String>) -> Result<i64, StoreError> {
    match field {
        None => Ok(0),
        Some(v) => v
            .parse()
            .map_err(|_| StoreError::Protocol(format!("clock offset {v:?} is not a number"))),
    }
}
