//! Clocks that really step: a redis-server whose wall clock is moved forward or back
//! while leaguekit runs, as an NTP step or a virtual machine's resume moves it. The
//! step comes from an LD_PRELOAD shim (`clock_shim.c` beside this file) that adds an
//! offset, read from a file at every reading, to the server's wall clock: its `TIME`,
//! its scripts' clock and its key expiry all move with it.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;

/// The shim, compiled once per test process with the system's C compiler.
fn shim_library() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/store/hardening/clock_shim.c");
            let out = std::env::temp_dir().join(format!(
                "leaguekit-clock-shim-{}.so",
                std::process::id()
            ));
            let status = Command::new("cc")
                .args(["-shared", "-fPIC", "-O2", "-o"])
                .arg(&out)
                .arg(&source)
                .arg("-ldl")
                .status()
                .unwrap_or_else(|e| {
                    panic!("cannot run cc to build the clock shim: {e}; install gcc (apt-get install gcc)")
                });
            assert!(status.success(), "cc failed to build {}", source.display());
            out
        })
        .clone()
}

/// A redis-server whose wall clock runs `offset` milliseconds from the real one.
struct SteppedRedis {
    server: RedisServer,
    file: PathBuf,
    offset: std::sync::Mutex<i64>,
}

impl SteppedRedis {
    fn start(offset_ms: i64) -> SteppedRedis {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let file = std::env::temp_dir().join(format!(
            "leaguekit-clock-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        write_offset(&file, offset_ms);
        let env = [
            (
                "LD_PRELOAD".to_owned(),
                shim_library().to_string_lossy().into_owned(),
            ),
            (
                "LEAGUEKIT_CLOCK_SHIM".to_owned(),
                file.to_string_lossy().into_owned(),
            ),
        ];
        let server = RedisServer::start_with_env(&[], &env);
        SteppedRedis {
            server,
            file,
            offset: std::sync::Mutex::new(offset_ms),
        }
    }

    /// Steps the server's clock by `ms` (back when negative), at once.
    fn step(&self, ms: i64) {
        let mut offset = self.offset.lock().expect("offset");
        *offset += ms;
        write_offset(&self.file, *offset);
    }

    /// The server's clock, read with `TIME`.
    async fn time(&self) -> DateTime<Utc> {
        let mut con = raw(&self.server).await;
        let (secs, micros): (i64, i64) = redis::cmd("TIME")
            .query_async(&mut con)
            .await
            .expect("TIME");
        DateTime::from_timestamp_micros(secs * 1_000_000 + micros).expect("time")
    }
}

impl Drop for SteppedRedis {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

/// Replaces the offset file whole (a rename), so the shim never reads half a number.
fn write_offset(file: &std::path::Path, offset_ms: i64) {
    let tmp = file.with_extension("new");
    std::fs::write(&tmp, offset_ms.to_string()).expect("write the clock offset");
    std::fs::rename(&tmp, file).expect("replace the clock offset");
}

fn ms(d: chrono::TimeDelta) -> i64 {
    d.num_milliseconds()
}

#[tokio::test]
async fn the_shim_steps_the_servers_clock() {
    let redis = SteppedRedis::start(86_400_000);
    let ahead = redis.time().await - Utc::now();
    assert!((ms(ahead) - 86_400_000).abs() < 2_000, "{ahead}");
    redis.step(-90_000_000);
    let behind = redis.time().await - Utc::now();
    assert!((ms(behind) + 3_600_000).abs() < 2_000, "{behind}");
}

/// A process whose estimate of the league clock runs ahead of Redis's (Redis's clock
/// stepped back after the process measured it) must not close a period before its
/// end by Redis's clock, even one nobody joined yet: a player may still score in it,
/// and the period's close must count them.
#[tokio::test]
async fn an_empty_period_is_closed_only_by_the_redis_clock() {
    // Period 1 is the day 2030-03-01 (UTC), and closes 1 s after its end, at B + 1 s.
    let b = t("2030-03-02T00:00:00Z");
    let redis = SteppedRedis::start(ms(b + chrono::Duration::seconds(10) - Utc::now()));
    let prefix = common::unique_prefix("stepped");
    let season = season(
        &prefix,
        "2030-03-01T00:00:00Z",
        100,
        "[clock]\nmax_skew = \"1s\"",
    );
    // A process measures the league clock at B + 10 s...
    let ahead = League::new(season.clone(), connect(&redis.server).await);
    let now = ahead.now().await.expect("league clock");
    assert!(now > b + chrono::Duration::seconds(9), "{now}");
    // ...then Redis's clock steps back 30 s, to B - 20 s.
    redis.step(-30_000);
    assert!(redis.time().await < b - chrono::Duration::seconds(15));
    let r = ahead
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!((r.closed_through, r.empty), (0, 0), "closed early: {r:?}");
    // A process with a right estimate places a player in period 1 at B - 20 s.
    let right = League::new(season.clone(), connect(&redis.server).await);
    let s = right
        .submit("late", 7, SubmitOptions::default())
        .await
        .expect("period 1 still takes events");
    assert_eq!(s.period, 1);
    // Redis's clock reaches B + 20 s: period 1 closes, with its player.
    redis.step(40_000);
    let closer = League::new(season.clone(), connect(&redis.server).await);
    let r = closer
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(r.closed_through, 1, "{r:?}");
    assert_eq!(r.closed.len(), 1, "{r:?}");
    assert_eq!(
        (r.closed[0].totals.players, r.closed[0].totals.promoted),
        (1, 1)
    );
    let placed = closer.join("late", None).await.expect("join period 2");
    assert_eq!(placed.tier, "silver");
    assert_eq!(placed.last.expect("last").period, 1);
    // The process that was ahead sees the same, and closes nothing again.
    let again = ahead
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert!(again.closed.is_empty(), "{again:?}");
}

/// After Redis's clock steps back, writes without a time (stamped by this process's
/// estimate of the league clock, now ahead) are not refused as the caller's
/// `future_time`: the estimate is measured anew and the write stamped again.
#[tokio::test]
async fn writes_without_a_time_survive_a_step_back_of_the_redis_clock() {
    let redis = SteppedRedis::start(0);
    let start =
        (Utc::now() - chrono::Duration::hours(1)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let prefix = common::unique_prefix("stepback");
    let season = season(&prefix, &start, 100, "[clock]\nmax_skew = \"1s\"");
    let league = League::new(season, connect(&redis.server).await);
    league
        .submit("a", 1, SubmitOptions::default())
        .await
        .expect("submit");
    redis.step(-30_000);
    let s = league
        .submit("a", 2, SubmitOptions::default())
        .await
        .expect("a stepped server clock is not the caller's future time");
    assert_eq!(s.score, 3);
    league.join("b", None).await.expect("join");
    redis.step(-30_000);
    let batch = league
        .submit_many(&[BatchItem::new("a", 4), BatchItem::new("c", 5)])
        .await;
    for r in &batch {
        assert!(r.is_ok(), "{r:?}");
    }
    redis.step(-30_000);
    let joins = league
        .join_many(&[leaguekit::JoinItem::new("d"), leaguekit::JoinItem::new("e")])
        .await;
    for r in &joins {
        assert!(r.is_ok(), "{r:?}");
    }
    // A time the caller sent is still judged as sent: 30 s ahead is refused.
    let ahead = redis.time().await + chrono::Duration::seconds(30);
    let e = league
        .submit("a", 1, SubmitOptions::default().at(ahead))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::FutureTime { .. })),
        "{e:?}"
    );
}

/// A season that keeps fewer periods than its idempotency window spans answers a
/// retry within the window from its record, after the period's retention ran out by
/// Redis's own clock (stepped forward day by day, so its keys really expire; this
/// process's clock stays where it is, as a lagging one would).
#[tokio::test]
async fn a_retry_is_answered_for_the_whole_window_by_the_redis_clock() {
    let redis = SteppedRedis::start(0);
    let start =
        (Utc::now() - chrono::Duration::hours(1)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let prefix = common::unique_prefix("window");
    let season = Season::from_toml(
        &format!(
            r#"
name = "window"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "{start}"
[scoring]
max_score = 1_000_000
idempotency_window = "4d"
[retention]
periods = 1
[[tiers]]
name = "bronze"
promote = 1
demote = 0
[[tiers]]
name = "silver"
promote = 0
demote = 1
"#
        ),
        "window.toml",
    )
    .expect("season");
    let at = redis.time().await;
    let once = || SubmitOptions::default().request_id("q1").at(at);
    let first = League::new(season.clone(), connect(&redis.server).await)
        .submit("r", 5, once())
        .await
        .expect("first");
    assert!(first.applied);
    // Three days pass; every day's period is played and closed.
    for _ in 0..3 {
        redis.step(86_400_000);
        let day = League::new(season.clone(), connect(&redis.server).await);
        day.rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        day.submit("x", 1, SubmitOptions::default())
            .await
            .expect("play");
    }
    let later = League::new(season.clone(), connect(&redis.server).await);
    let again = later.submit("r", 5, once()).await.expect("retry answered");
    assert!(!again.applied);
    assert_eq!((again.period, again.score), (1, 5));
}
