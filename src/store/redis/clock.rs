//! The staging clock's offset on Redis: the field `clock_offset` of the season's meta.

use super::reply::{is_nil, protocol, text};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::ClockStore;
use crate::store::keys::{LAYOUT, SeasonKeys};

impl ClockStore for RedisStore {
    async fn clock_offset(&self, season: &SeasonKeys) -> Result<i64, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(&season.meta).arg("clock_offset");
        let reply = self
            .command("clock_offset", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&reply) {
            return Ok(0);
        }
        number(text(&reply, "clock offset")?)
    }

    async fn move_clock(&self, season: &SeasonKeys, from: i64, to: i64) -> Result<i64, StoreError> {
        let mut inv = SCRIPTS.move_clock.prepare_invoke();
        inv.key(&season.meta).arg(from).arg(to).arg(LAYOUT);
        // Idempotent: a retry finds the offset at `to` and changes nothing.
        let reply = self
            .invoke_write("move_clock", Retry::Idempotent, &inv)
            .await?;
        number(text(&reply, "clock offset")?)
    }
}

fn number(s: &str) -> Result<i64, StoreError> {
    s.parse()
        .map_err(|_| protocol(format!("clock offset {s:?} is not a number")))
}
