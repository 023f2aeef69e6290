//! Helpers the benchmark examples share: the repository's example season under a
//! fresh key prefix, Redis's `used_memory`, and percentiles of latencies. Each
//! example declares `mod common;` and uses what it needs.

use std::time::Duration;

use leaguekit::Season;

/// `config/season.toml` with its key prefix replaced by `prefix` (run from the
/// repository root).
pub fn example_season(prefix: &str) -> Season {
    let text = std::fs::read_to_string("config/season.toml").expect("run from the repository root");
    let text = text.replacen(
        "key_prefix = \"lk\"",
        &format!("key_prefix = \"{prefix}\""),
        1,
    );
    Season::from_toml(&text, "config/season.toml").expect("valid season")
}

/// `used_memory` from `INFO memory` of the server behind `con` (0 if absent).
pub async fn used_memory(con: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(con)
        .await
        .expect("info");
    used_memory_in(&info)
}

/// `used_memory` from the text of `INFO memory` (0 if absent).
pub fn used_memory_in(info: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The `p` quantile (0 to 1) of `sorted` latencies, nearest rank (zero if empty).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}
