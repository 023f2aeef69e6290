//! join.lua's calls and replies on Redis: the period's counters (with reserved late
//! seats, three per tier) and assignments, sent for one join or a batch of them.

use ::redis::{ScriptInvocation, Value};

use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, now_arg, time_refusal};
use crate::error::StoreError;
use crate::store::keys::PeriodKeys;
use crate::store::*;

/// The join counters of a period from the fields of its joins hash (join.lua): a
/// group's early counter under the group's own name (every join, without late
/// seats), the early brackets fixed by its first late join under `<group>:n`, its late
/// counter under `<group>:late`. Group names never contain ':'.
pub(super) fn tally(fields: Vec<(String, String)>) -> Result<Vec<(String, TierJoins)>, StoreError> {
    let mut out: std::collections::BTreeMap<String, TierJoins> = Default::default();
    for (field, n) in fields {
        let value = n
            .parse::<u64>()
            .map_err(|_| protocol(format!("join counter {field:?} is {n:?}")))?;
        match field.rsplit_once(':') {
            None => out.entry(field).or_default().early = value,
            Some((group, "n")) => out.entry(group.to_owned()).or_default().fixed = Some(value),
            Some((group, "late")) => out.entry(group.to_owned()).or_default().late = value,
            Some(_) => return Err(protocol(format!("unknown join counter {field:?}"))),
        }
    }
    Ok(out.into_iter().collect())
}

/// The call of join.lua for joins of one period: the period's keys and each join's
/// assign bucket, then the joins' arguments.
pub(super) fn join_invocation(
    period: &PeriodKeys,
    requests: &[&JoinRequest<'_>],
) -> ScriptInvocation<'static> {
    // Keys and arguments in the order join.lua declares them. The clock, the TTL, the
    // period's time bounds, the bracket size and the full bracket are the first
    // request's: the caller sends joins that share them (see [`shares_call`]), and a
    // join past a full bracket alone.
    let mut inv = SCRIPTS.join.prepare_invoke();
    inv.key(&period.joins).key(&period.meta);
    if let Some(first) = requests.first() {
        let time = &first.time;
        inv.arg(now_arg(time.now))
            .arg(first.ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(time.start_ms)
            .arg(time.closes_ms)
            .arg(time.skew_ms)
            .arg(match first.late {
                // "size" alone without late seats (as before them), else
                // "size/early_cap/late_from_ms".
                None => first.size.max(1).to_string(),
                Some(l) => format!("{}/{}/{}", first.size.max(1), l.early_cap, l.from_ms),
            })
            .arg(match (first.replace_full, first.skip) {
                (None, _) => String::new(),
                (Some(b), 0) => b.to_string(),
                (Some(b), skip) => format!("{b}+{skip}"),
            });
    }
    for request in requests {
        inv.key(period.assign(request.player))
            .arg(request.player)
            .arg(request.tier)
            .arg(request.time.at_ms);
    }
    inv
}

/// Whether `b` can go in the join.lua call of `a`: a call carries the clock, the TTL,
/// the period's time bounds and the bracket size once, for all its joins (a league's
/// batch always shares them), and a join past a full bracket goes alone.
pub(super) fn shares_call(a: &JoinRequest<'_>, b: &JoinRequest<'_>) -> bool {
    let (x, y) = (&a.time, &b.time);
    x.now == y.now
        && a.ttl_secs == b.ttl_secs
        && a.size == b.size
        && a.late == b.late
        && a.replace_full.is_none()
        && b.replace_full.is_none()
        && (x.start_ms, x.closes_ms, x.skew_ms) == (y.start_ms, y.closes_ms, y.skew_ms)
}

/// join.lua's reply: one answer per join of the call (`n`), in order.
pub(super) fn parse_join(
    reply: Value,
    n: usize,
) -> Result<Vec<Result<Joined, StoreError>>, StoreError> {
    let items = array(reply, "join reply")?;
    if let [status, what] = items.as_slice()
        && text(status, "join reply").is_ok_and(|s| s == "malformed")
    {
        return Err(protocol(format!(
            "join refused the call: {}",
            text(what, "detail")?
        )));
    }
    if items.len() != n {
        return Err(protocol(format!(
            "join reply: {} answers for {n} joins",
            items.len()
        )));
    }
    Ok(items.into_iter().map(parse_one_join).collect())
}

/// One join's answer in join.lua's reply.
fn parse_one_join(reply: Value) -> Result<Joined, StoreError> {
    // A placement: "new:tier:bracket" or "existing:tier:bracket" (tier names never
    // contain ':').
    if let Value::BulkString(_) = &reply {
        let answer = text(&reply, "join answer")?;
        let parts = answer
            .split_once(':')
            .and_then(|(status, rest)| Some((status, rest.rsplit_once(':')?)));
        let Some((status, (tier, bracket))) = parts else {
            return Err(protocol(format!("join answer {answer:?}")));
        };
        let new = match status {
            "new" => true,
            "existing" => false,
            other => return Err(protocol(format!("unknown join status {other:?}"))),
        };
        return Ok(Joined {
            tier: tier.to_owned(),
            bracket: bracket_number(bracket, "bracket")?,
            new,
        });
    }
    let items = array(reply, "join answer")?;
    if let Some(why) = time_refusal(&items)? {
        return Err(StoreError::Time(why));
    }
    let status = items
        .first()
        .ok_or_else(|| protocol("empty join reply"))
        .and_then(|s| text(s, "join status"))?;
    let placed = |new: bool| -> Result<Joined, StoreError> {
        let tier = items
            .get(1)
            .ok_or_else(|| protocol("join reply without tier"))
            .and_then(|v| text(v, "tier"))?;
        let bracket = items
            .get(2)
            .ok_or_else(|| protocol("join reply without bracket"))
            .and_then(|v| text(v, "bracket"))
            .and_then(|s| bracket_number(s, "bracket"))?;
        Ok(Joined {
            tier: tier.to_owned(),
            bracket,
            new,
        })
    };
    match status {
        "new" => placed(true),
        "existing" => placed(false),
        "closed" => Err(StoreError::PeriodClosed),
        "banned" => Err(super::bans::join_banned(&items)?),
        "malformed" => Err(protocol(format!(
            "join found data it did not write: {}",
            items
                .get(1)
                .map(|v| text(v, "detail"))
                .transpose()?
                .unwrap_or("?")
        ))),
        other => Err(protocol(format!("unknown join status {other:?}"))),
    }
}

/// The HGET of a player's assignment.
pub(super) fn placement_command(period: &PeriodKeys, player: &str) -> ::redis::Cmd {
    let mut cmd = ::redis::cmd("HGET");
    cmd.arg(period.assign(player)).arg(player);
    cmd
}

/// An assignment, `tier:bracket`, or nil.
pub(super) fn parse_assignment(reply: Value) -> Result<Option<(String, u32)>, StoreError> {
    if is_nil(&reply) {
        return Ok(None);
    }
    let placed = text(&reply, "assignment")?;
    // Tier names never contain ':', so the bracket follows the last one.
    let (tier, bracket) = placed
        .rsplit_once(':')
        .ok_or_else(|| protocol(format!("assignment {placed:?} is not tier:bracket")))?;
    Ok(Some((
        tier.to_owned(),
        bracket_number(bracket, "assigned bracket")?,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placement_is_read_from_its_one_string() {
        let j = parse_one_join(bulk("new:bronze:12")).expect("new");
        assert_eq!((j.tier.as_str(), j.bracket, j.new), ("bronze", 12, true));
        let j = parse_one_join(bulk("existing:gold:3")).expect("existing");
        assert_eq!((j.tier.as_str(), j.bracket, j.new), ("gold", 3, false));
        for bad in ["new:bronze", "new", "moved:bronze:1", "new:bronze:x", ""] {
            assert!(
                matches!(parse_one_join(bulk(bad)), Err(StoreError::Protocol(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_counters_are_read_per_tier() {
        let fields = [
            ("gold", "7"),
            ("gold:n", "2"),
            ("gold:late", "5"),
            ("bronze@eu", "3"),
        ];
        let got = tally(fields.map(|(f, n)| (f.to_owned(), n.to_owned())).to_vec()).expect("tally");
        assert_eq!(
            got,
            [
                (
                    "bronze@eu".to_owned(),
                    TierJoins {
                        early: 3,
                        fixed: None,
                        late: 0
                    }
                ),
                (
                    "gold".to_owned(),
                    TierJoins {
                        early: 7,
                        fixed: Some(2),
                        late: 5
                    }
                ),
            ]
        );
        for bad in [("gold:x", "1"), ("gold", "-1"), ("gold:n", "a")] {
            let fields = vec![(bad.0.to_owned(), bad.1.to_owned())];
            assert!(
                matches!(tally(fields), Err(StoreError::Protocol(_))),
                "{bad:?}"
            );
        }
    }
}
