//! Re-settlements on Redis: the correction record in the bracket's slot, the players'
//! corrections in their bucket's slot (see [`CorrectionStore`] and the scripts
//! `correction_*.lua` and `player_fix.lua`).

use ::redis::Value;

use super::reply::{array, is_nil, pairs, protocol, text, uint};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PlayerKeys};
use crate::store::{
    Appends, Begun, CorrectionRecord, CorrectionStart, CorrectionStore, CorrectionVersion,
    Revocation,
};

/// The correction record's versions, marks and progress, from its hash's fields.
fn parse_record(
    record: &mut CorrectionRecord,
    fields: Vec<(String, String)>,
) -> Result<(), StoreError> {
    let bad = |f: &str, v: &str| protocol(format!("malformed correction field {f:?} = {v:?}"));
    let mut by_field = std::collections::HashMap::new();
    for (f, v) in fields {
        if let Some(player) = f.strip_prefix("m:") {
            let n = v.parse().map_err(|_| bad(&f, &v))?;
            record.marks.push((player.to_owned(), n));
        } else {
            by_field.insert(f, v);
        }
    }
    record.marks.sort();
    let number = |f: &str| -> Result<u64, StoreError> {
        by_field
            .get(f)
            .map_or(Ok(0), |v| v.parse().map_err(|_| bad(f, v)))
    };
    let versions = number("v")?;
    record.applied = number("applied")?;
    record.done = number("done")?;
    for v in 1..=versions {
        let field = |name: &str| {
            by_field
                .get(&format!("{name}:{v}"))
                .cloned()
                .unwrap_or_default()
        };
        let at = field("at");
        record.versions.push(CorrectionVersion {
            excluded: field("x")
                .split('\n')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            at_ms: at.parse().map_err(|_| bad("at", &at))?,
            actor: field("by"),
            reason: field("why"),
        });
    }
    Ok(())
}

impl RedisStore {
    /// One call of player_fix.lua.
    async fn player_fix(
        &self,
        op: &'static str,
        player: &PlayerKeys,
        args: [&str; 3],
        ttl_secs: u64,
    ) -> Result<Value, StoreError> {
        let mut inv = SCRIPTS.player_fix.prepare_invoke();
        inv.key(player.rewards())
            .key(player.corrections())
            .arg(args[0])
            .arg(args[1])
            .arg(args[2])
            .arg(ttl_secs.max(1));
        self.invoke_write(op, Retry::Idempotent, &inv).await
    }
}

impl CorrectionStore for RedisStore {
    async fn correction(&self, bracket: &BracketKeys) -> Result<CorrectionRecord, StoreError> {
        let mut inv = SCRIPTS.correction_read.prepare_invoke();
        inv.key(&bracket.meta)
            .key(&bracket.outcomes)
            .key(bracket.original_outcomes())
            .key(bracket.correction());
        let reply = self.invoke("correction", Retry::Idempotent, &inv).await?;
        let items = array(reply, "correction reply")?;
        let [done, outcomes, has, original, fields] = <[Value; 5]>::try_from(items)
            .map_err(|_| protocol("correction: a reply of the wrong length"))?;
        let mut record = CorrectionRecord {
            closed: uint(&done, "done")? == 1,
            outcomes: super::outcomes::decode(text(&outcomes, "outcomes")?)?,
            ..CorrectionRecord::default()
        };
        if uint(&has, "original")? == 1 {
            record.original = Some(super::outcomes::decode(text(&original, "original")?)?);
        }
        parse_record(&mut record, pairs(fields, "correction record")?)?;
        Ok(record)
    }

    async fn begin_correction(
        &self,
        bracket: &BracketKeys,
        start: &CorrectionStart<'_>,
    ) -> Result<Begun, StoreError> {
        let mut inv = SCRIPTS.correction_begin.prepare_invoke();
        inv.key(&bracket.meta)
            .key(&bracket.outcomes)
            .key(bracket.original_outcomes())
            .key(bracket.correction())
            .arg(start.players)
            .arg(start.at_ms)
            .arg(start.actor)
            .arg(start.reason);
        for p in start.exclude {
            inv.arg(p);
        }
        let reply = self
            .invoke_write("begin_correction", Retry::Idempotent, &inv)
            .await?;
        let items = array(reply, "begin_correction reply")?;
        match items.as_slice() {
            [status] if text(status, "status")? == "not_closed" => Ok(Begun::NotClosed),
            [status] if text(status, "status")? == "everyone" => Ok(Begun::Everyone),
            [status, version, created] if text(status, "status")? == "ok" => Ok(Begun::Version {
                version: uint(version, "version")?,
                created: uint(created, "created")? == 1,
            }),
            _ => Err(protocol("begin_correction: an unexpected reply")),
        }
    }

    async fn apply_correction(
        &self,
        bracket: &BracketKeys,
        version: u64,
        outcomes: &[(&str, &str)],
        marks: &[(&str, u64)],
        events: Option<Appends<'_>>,
    ) -> Result<bool, StoreError> {
        let mut inv = SCRIPTS.correction_apply.prepare_invoke();
        inv.key(bracket.correction())
            .key(&bracket.outcomes)
            .arg("apply")
            .arg(version)
            .arg(super::outcomes::encode(outcomes));
        match events {
            Some(events) => {
                if events.bodies.len() != marks.len() {
                    return Err(StoreError::Protocol(format!(
                        "apply_correction: {} events for {} marks",
                        events.bodies.len(),
                        marks.len()
                    )));
                }
                inv.key(bracket.events()).arg(events.spec.arg());
                for ((p, v), body) in marks.iter().zip(events.bodies) {
                    inv.arg(*p).arg(*v).arg(body);
                }
            }
            None => {
                for (p, v) in marks {
                    inv.arg(*p).arg(*v);
                }
            }
        }
        let reply = self
            .invoke_write("apply_correction", Retry::Idempotent, &inv)
            .await?;
        Ok(uint(&reply, "apply_correction")? == 1)
    }

    async fn finish_correction(
        &self,
        bracket: &BracketKeys,
        version: u64,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.correction_apply.prepare_invoke();
        inv.key(bracket.correction())
            .key(&bracket.outcomes)
            .arg("finish")
            .arg(version);
        self.invoke_write("finish_correction", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn grant_corrected(
        &self,
        player: &PlayerKeys,
        source: &str,
        grant: &str,
        ttl_secs: u64,
    ) -> Result<bool, StoreError> {
        let reply = self
            .player_fix(
                "grant_corrected",
                player,
                ["grant", source, grant],
                ttl_secs,
            )
            .await?;
        Ok(uint(&reply, "grant_corrected")? == 1)
    }

    async fn revoke_reward(
        &self,
        player: &PlayerKeys,
        source: &str,
        ttl_secs: u64,
    ) -> Result<Revocation, StoreError> {
        let reply = self
            .player_fix("revoke_reward", player, ["revoke", source, ""], ttl_secs)
            .await?;
        match text(&reply, "revoke_reward")? {
            "revoked" => Ok(Revocation::Revoked),
            "claimed" => Ok(Revocation::Claimed),
            "absent" => Ok(Revocation::Absent),
            other => Err(protocol(format!("revoke_reward: unexpected {other:?}"))),
        }
    }

    async fn decide_credit(
        &self,
        player: &PlayerKeys,
        field: &str,
        value: &str,
        ttl_secs: u64,
    ) -> Result<String, StoreError> {
        let reply = self
            .player_fix("decide_credit", player, ["credit", field, value], ttl_secs)
            .await?;
        if is_nil(&reply) {
            return Err(protocol("decide_credit: no decision recorded"));
        }
        Ok(text(&reply, "decide_credit")?.to_owned())
    }

    async fn credits(&self, player: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(player.corrections());
        let reply = self.command("credits", Retry::Idempotent, &cmd).await?;
        let mut out: Vec<(String, String)> = pairs(reply, "credits")?
            .into_iter()
            .filter(|(f, _)| f.starts_with("t:"))
            .collect();
        out.sort();
        Ok(out)
    }
}
