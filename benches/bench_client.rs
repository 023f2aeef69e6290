//! The client's side of a standings read and of a submit: this process's CPU a page
//! of 100 with profiles, and an idempotent submit, leaguekit's against redis-rs
//! doing the same raw, in the same run on the same server.
//!
//! ```text
//! redis-server --port 6390 --save '' --daemonize yes
//! cargo bench --bench bench_client -- redis://127.0.0.1:6390/ [READS [ROW]]
//! # instructions an operation of one row (kept, kept-raw, built, built-raw, submit,
//! # submit-raw, join, join-raw), repeatable on
//! # a noisy machine: two runs under callgrind, of N and 3N reads;
//! # (the second's total - the first's) / 2N
//! cargo bench --bench bench_client --no-run   # names the program: target/release/deps/bench_client-HASH
//! valgrind --tool=callgrind target/release/deps/bench_client-HASH redis://127.0.0.1:6390/ 1000 kept
//! valgrind --tool=callgrind target/release/deps/bench_client-HASH redis://127.0.0.1:6390/ 3000 kept
//! ```
//!
//! Why: in `bench`, reads are limited by the client, not by Redis (a kept page cost
//! this process three to four times what it cost Redis; the machine's two cores are
//! shared). Here 50 concurrent loops on a single-threaded runtime read one bracket of
//! 100 players with two-field profiles, so every instruction of the reads (the
//! library, redis-rs, tokio, the allocator) runs on one thread of this process, and
//! the connection carries many requests a write, as under load:
//! - a kept page (`League::standings`, one HGET of the page cache, parsed into 100
//!   `Standing`s), against redis-rs's HGET of the same page's bytes into a `Vec<u8>`
//!   (receiving the bytes, nothing parsed);
//! - a built page (a store with the page cache off: one MULTI of the count, the board
//!   and the profile cache, assembled), against redis-rs reading the board (ZRANGE …
//!   REV WITHSCORES into `(String, f64)` pairs) and the profiles (HGETALL into a
//!   `HashMap`) in one pipeline: what a hand-written reader would decode;
//! - an idempotent submit (`League::submit` with a request id, gathered by the store
//!   as concurrent submits are), against the seeds' update script by EVALSHA with
//!   redis-rs, one call an update (the client's side of `bench`'s submit baseline);
//! - a join of a new player (`League::join`, gathered as concurrent joins are),
//!   against `bench`'s raw join script (HINCRBY + HSET + ZADD) by EVALSHA.
//!
//! Each row prints µs of this process's CPU a read (`CLOCK_PROCESS_CPUTIME_ID`), ours
//! and raw, and raw / ours. The last line holds the
//! same as `key=value`.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::collections::HashMap;
use std::time::Duration;

use leaguekit::store::keys::Keys;
use leaguekit::{League, RedisOptions, RedisStore, SubmitOptions};

use common::{TASKS, bench_season, own_cpu};

/// µs of this process's CPU a call of `op`, over `n` calls from [`TASKS`] concurrent
/// loops on this thread (so that, as under a game server's load, the connection
/// carries many requests a write and a read, and the syscalls are shared); 0 for no
/// calls (a row not run).
async fn per_op<F, Fut>(n: usize, op: F) -> Result<f64, Box<dyn std::error::Error>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>,
{
    if n == 0 {
        return Ok(0.0);
    }
    let start = own_cpu();
    let each = n.div_ceil(TASKS);
    let loops = (0..TASKS).map(|_| async {
        for _ in 0..each {
            op().await?;
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    });
    for done in futures::future::join_all(loops).await {
        done?;
    }
    Ok((own_cpu() - start) * 1e6 / (each * TASKS) as f64)
}

/// One read of the bracket's first page of 100, through the library.
async fn read_page(league: &League<RedisStore>) -> Result<(), Box<dyn std::error::Error>> {
    let page = league.standings("bronze", 1, None, 0, 100).await?;
    std::hint::black_box(page);
    Ok(())
}

/// One raw script call by redis-rs, its answer dropped.
async fn run_raw(
    call: redis::ScriptInvocation<'_>,
    mut raw: redis::aio::MultiplexedConnection,
) -> Result<(), Box<dyn std::error::Error>> {
    let answer: redis::Value = call.invoke_async(&mut raw).await?;
    std::hint::black_box(answer);
    Ok(())
}

/// raw / ours; 0 for a row not run.
fn ratio(ours: f64, raw: f64) -> f64 {
    if ours > 0.0 { raw / ours } else { 0.0 }
}

fn row(what: &str, ours: f64, raw: f64) {
    println!(
        "{what:<44} {ours:>9.1} us {raw:>9.1} us   x{:.2}",
        ratio(ours, raw)
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .ok_or("usage: bench_client REDIS_URL [READS [ROW]]")?;
    let reads: usize = match std::env::args().filter(|a| a != "--bench").nth(2) {
        Some(n) => n
            .parse()
            .map_err(|_| format!("READS {n:?} is not a count"))?,
        None => 20_000,
    };
    // One row only (each row's reads are READS then; all rows by default).
    let only = std::env::args().filter(|a| a != "--bench").nth(3);
    const ROWS: [&str; 8] = [
        "kept",
        "kept-raw",
        "built",
        "built-raw",
        "submit",
        "submit-raw",
        "join",
        "join-raw",
    ];
    if let Some(row) = &only
        && !ROWS.contains(&row.as_str())
    {
        return Err(format!("ROW {row:?} is none of {ROWS:?}").into());
    }
    let runs = |row: &str| only.as_deref().is_none_or(|o| o == row);
    let season = bench_season(&format!(
        "bc{}",
        chrono::Utc::now().timestamp_millis() % 1_000_000
    ));
    let keys = Keys::of(&season);
    let kept = League::new(
        season.clone(),
        RedisStore::connect(&url, RedisOptions::default()).await?,
    );
    let built = League::new(
        season,
        RedisStore::connect(
            &url,
            RedisOptions::default().with_page_cache(Duration::ZERO),
        )
        .await?,
    );

    // One bracket of 100 players, each with a two-field profile and a score.
    for i in 0..100 {
        let p = format!("p{i:07}");
        let profile = [
            ("name".to_owned(), format!("Player {i}")),
            ("avatar".to_owned(), format!("avatar-{i:03}")),
        ];
        kept.set_profile(&p, &profile).await?;
        kept.join(&p, None).await?;
        kept.submit(&p, i * 7, SubmitOptions::default()).await?;
    }
    let first = kept.standings("bronze", 1, None, 0, 100).await?;
    if first.entries.len() != 100 || first.entries.iter().any(|e| e.profile.is_empty()) {
        return Err("the bracket does not hold 100 players with profiles".into());
    }
    // The second read finds the page the first kept.
    kept.standings("bronze", 1, None, 0, 100).await?;
    let bracket = keys.bracket(first.period, "bronze", 1);
    let client = redis::Client::open(url.as_str())?;
    let mut raw = client.get_multiplexed_async_connection().await?;
    let page: Option<Vec<u8>> = redis::cmd("HGET")
        .arg(&bracket.pages)
        .arg("0:99")
        .query_async(&mut raw)
        .await?;
    let page_bytes = page.map_or(0, |p| p.len());
    if page_bytes == 0 {
        return Err(format!("no kept page at {} 0:99", bracket.pages).into());
    }
    // A build costs about five kept reads: a quarter as many (all READS of one row).
    let builds = if only.is_some() { reads } else { reads / 4 };
    println!(
        "bench_client: {reads} kept and {builds} built reads of one bracket of 100 with \
         profiles (a kept page is {page_bytes} bytes), {TASKS} concurrent loops on one thread{}",
        only.as_deref()
            .map(|row| format!("; row {row} only"))
            .unwrap_or_default()
    );
    println!(
        "{:<44} {:>12} {:>12}   raw / ours",
        "this process's CPU an operation", "leaguekit", "redis-rs"
    );

    let n = |row: &str, n: usize| if runs(row) { n } else { 0 };
    let kept_us = per_op(n("kept", reads), || read_page(&kept)).await?;
    let kept_raw_us = per_op(n("kept-raw", reads), || {
        let mut raw = raw.clone();
        let pages = bracket.pages.clone();
        async move {
            let page: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(pages)
                .arg("0:99")
                .query_async(&mut raw)
                .await?;
            std::hint::black_box(page);
            Ok(())
        }
    })
    .await?;
    row("a kept page (HGET of its bytes)", kept_us, kept_raw_us);

    let built_us = per_op(n("built", builds), || read_page(&built)).await?;
    let built_raw_us = per_op(n("built-raw", builds), || {
        let mut raw = raw.clone();
        let (board, profiles) = (bracket.board.clone(), bracket.profiles.clone());
        async move {
            let (board, profiles): (Vec<(String, f64)>, HashMap<String, String>) = redis::pipe()
                .cmd("ZRANGE")
                .arg(board)
                .arg(0)
                .arg(99)
                .arg("REV")
                .arg("WITHSCORES")
                .cmd("HGETALL")
                .arg(profiles)
                .query_async(&mut raw)
                .await?;
            std::hint::black_box((board, profiles));
            Ok(())
        }
    })
    .await?;
    row(
        "a built page (ZRANGE WITHSCORES + HGETALL)",
        built_us,
        built_raw_us,
    );
    // Submits: each of the 100 players a point at a time, a fresh request id each.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let submit_us = per_op(n("submit", reads), || async {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let options = SubmitOptions::default().request_id(format!("rq{i}"));
        let done = kept.submit(&format!("p{:07}", i % 100), 1, options).await?;
        std::hint::black_box(done);
        Ok(())
    })
    .await?;
    // The seeds' board beside ours (its fractional scores must not land on our board).
    let seed_board = format!("{}:seeds", bracket.board);
    let seed = redis::Script::new(common::SEED_UPDATE);
    let submit_raw_us = per_op(n("submit-raw", reads), || {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut call = seed.key(&seed_board);
        call.arg(format!("rq{i}"))
            .arg(format!("p{:07}", i % 100))
            .arg(1)
            .arg(1_767_225_600);
        run_raw(call, raw.clone())
    })
    .await?;
    row(
        "an idempotent submit (the seeds' script)",
        submit_us,
        submit_raw_us,
    );
    let joined = std::sync::atomic::AtomicUsize::new(0);
    let join_us = per_op(n("join", reads), || async {
        let i = joined.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let placed = kept.join(&format!("j{i:07}"), None).await?;
        std::hint::black_box(placed);
        Ok(())
    })
    .await?;
    let raw_join = redis::Script::new(common::RAW_JOIN);
    let (joins, assign, boards) = (
        format!("{}:rawjoins", bracket.board),
        format!("{}:rawassign", bracket.board),
        format!("{}:rawboard:", bracket.board),
    );
    let join_raw_us = per_op(n("join-raw", reads), || {
        let i = joined.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut call = raw_join.key(&joins);
        call.key(&assign).key(&boards).arg(format!("j{i:07}"));
        run_raw(call, raw.clone())
    })
    .await?;
    row(
        "a join of a new player (raw join script)",
        join_us,
        join_raw_us,
    );
    println!(
        "kept_client_us={kept_us:.1} kept_raw_us={kept_raw_us:.1} kept_client_ratio={:.2} \
         built_client_us={built_us:.1} built_raw_us={built_raw_us:.1} built_client_ratio={:.2} \
         submit_client_us={submit_us:.1} submit_raw_us={submit_raw_us:.1} \
         submit_client_ratio={:.2} join_client_us={join_us:.1} join_raw_us={join_raw_us:.1} \
         join_client_ratio={:.2}",
        ratio(kept_us, kept_raw_us),
        ratio(built_us, built_raw_us),
        ratio(submit_us, submit_raw_us),
        ratio(join_us, join_raw_us),
    );
    Ok(())
}
