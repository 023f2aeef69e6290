//! `leaguekit submit --batch`: JSON lines in, one result line out per input line, in
//! order; chunks go to the store pipelined, and a failing store is waited for.

use std::io::{BufRead, Write};

use leaguekit::{BatchItem, Error, League, RedisStore, SubmitOptions};
use serde::Deserialize;
use serde_json::json;

use crate::common::{Failure, parse_time, usage};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    player: String,
    value: i64,
    request_id: Option<String>,
    at: Option<String>,
    cohort: Option<String>,
}

/// Batch lines go to the store in chunks of this many, one pipelined round trip each.
const BATCH_CHUNK: usize = 1000;

/// What happened to the lines of a batch.
#[derive(Default)]
struct BatchCounts {
    applied: u64,
    duplicates: u64,
    refused: u64,
    unknown: u64,
}

/// Waits until the store answers (its clock), for at most `limit`. True if it did.
async fn store_answers(league: &League<RedisStore>, limit: std::time::Duration) -> bool {
    use leaguekit::store::LeagueStore as _;
    let deadline = std::time::Instant::now() + limit;
    let mut delay = std::time::Duration::from_millis(100);
    loop {
        if league.store().now().await.is_ok() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(std::time::Duration::from_secs(5));
    }
}

/// `submit --batch`: every input line gets exactly one output line, in order:
/// `{"line", "status": "applied" | "duplicate", ...the submission}`,
/// `{"line", "status": "refused", "error"}` (nothing was written), or
/// `{"line", "status": "unknown", "error"}` (the store failed after the update may have
/// been applied). After a store failure the run waits for the store to answer again
/// and goes on with the next chunk; lines it cannot try are refused as not attempted.
/// A summary goes to stderr; the exit code is 1 if any line is unknown, 2 if any was
/// refused, else 0.
pub(crate) async fn run(
    league: &League<RedisStore>,
    source: &str,
    wait: u64,
    no_rank: bool,
) -> Result<(), Failure> {
    let reader: Box<dyn BufRead> = if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(source)
            .map_err(|e| usage(format!("cannot open batch file {source:?}: {e}")))?;
        Box::new(std::io::BufReader::new(file))
    };
    let mut counts = BatchCounts::default();
    let mut chunk: Vec<(usize, Result<BatchItem, String>)> = Vec::new();
    let mut lines = reader.lines().enumerate().peekable();
    // Set when the store failed: the next chunk first waits for it.
    let mut troubled = false;
    // Set when the store stayed away longer than `wait`: the rest is not attempted.
    let mut gave_up = false;
    while lines.peek().is_some() {
        chunk.clear();
        for (i, line) in lines.by_ref().take(BATCH_CHUNK) {
            let item = line
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|l| serde_json::from_str::<BatchLine>(&l).map_err(|e| format!("invalid JSON line: {e}; expected {{\"player\",\"value\",\"request_id\"?,\"at\"?,\"cohort\"?}}")))
                .and_then(|l| {
                    let mut o = SubmitOptions::default();
                    if let Some(id) = l.request_id {
                        o = o.request_id(id);
                    }
                    if let Some(at) = l.at {
                        o = o.at(parse_time(&at).map_err(|f| f.message)?);
                    }
                    if let Some(c) = l.cohort {
                        o = o.cohort(c);
                    }
                    if no_rank {
                        o = o.without_rank();
                    }
                    Ok(BatchItem::new(l.player, l.value).with_options(o))
                });
            chunk.push((i + 1, item));
        }
        if troubled && !gave_up {
            eprintln!("leaguekit: the store failed; waiting up to {wait} s for it to answer");
            if store_answers(league, std::time::Duration::from_secs(wait)).await {
                eprintln!("leaguekit: the store answers again; going on");
                troubled = false;
            } else {
                gave_up = true;
            }
        }
        let items: Vec<BatchItem> = chunk
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok().cloned())
            .collect();
        let mut results = if gave_up {
            Vec::new().into_iter()
        } else {
            league.submit_many(&items).await.into_iter()
        };
        let mut out = std::io::stdout().lock();
        for (line, parsed) in &chunk {
            let value = match parsed {
                Err(e) => {
                    counts.refused += 1;
                    json!({"line": line, "status": "refused", "error": e})
                }
                Ok(_) if gave_up => {
                    counts.refused += 1;
                    json!({"line": line, "status": "refused",
                           "error": format!("not attempted: the store did not answer for {wait} s; nothing was written, resend this line")})
                }
                Ok(_) => match results.next() {
                    Some(Ok(s)) => {
                        let status = if s.applied {
                            counts.applied += 1;
                            "applied"
                        } else {
                            counts.duplicates += 1;
                            "duplicate"
                        };
                        let mut v = serde_json::to_value(&s).map_err(|e| usage(e.to_string()))?;
                        v["line"] = json!(line);
                        v["status"] = json!(status);
                        v
                    }
                    Some(Err(e)) if e.is_unknown() => {
                        counts.unknown += 1;
                        troubled = true;
                        json!({"line": line, "status": "unknown", "error": e.to_string()})
                    }
                    Some(Err(e)) => {
                        counts.refused += 1;
                        if matches!(e, Error::Store(_)) {
                            troubled = true;
                        }
                        json!({"line": line, "status": "refused", "error": e.to_string()})
                    }
                    None => {
                        counts.unknown += 1;
                        json!({"line": line, "status": "unknown", "error": "internal: missing result"})
                    }
                },
            };
            match writeln!(out, "{value}") {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(usage(format!("cannot write output: {e}"))),
            }
        }
    }
    let total = counts.applied + counts.duplicates + counts.refused + counts.unknown;
    eprintln!(
        "batch: {total} line(s): {} applied, {} duplicate(s), {} refused, {} unknown",
        counts.applied, counts.duplicates, counts.refused, counts.unknown
    );
    if counts.unknown > 0 {
        return Err(Failure {
            code: 1,
            message: format!(
                "{} line(s) have an unknown outcome: the store failed after they may have \
                 been applied; resend only those with a request id (a resend without one \
                 may count twice)",
                counts.unknown
            ),
        });
    }
    if counts.refused > 0 {
        return Err(Failure {
            code: 2,
            message: format!(
                "{} line(s) were refused and changed nothing; see their error lines",
                counts.refused
            ),
        });
    }
    Ok(())
}
