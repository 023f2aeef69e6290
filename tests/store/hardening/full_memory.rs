//! Redis full, or evicting: reads keep working when Redis refuses writes for memory
//! (`maxmemory` reached under `noeviction`), the store says that it refuses them, and
//! a server whose memory policy evicts keys is refused at connect unless the operator
//! opts in.

use super::*;

/// Fills the server with `fill:N` strings until it refuses a write for memory.
async fn fill_to_maxmemory(con: &mut redis::aio::MultiplexedConnection) {
    let value = "x".repeat(8 * 1024);
    for i in 0..100_000 {
        let set: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("fill:{i}"))
            .arg(&value)
            .query_async(con)
            .await;
        match set {
            Ok(()) => {}
            Err(e) if e.to_string().contains("OOM") => return,
            Err(e) => panic!("filling: {e}"),
        }
    }
    panic!("the server never reached its maxmemory");
}

/// With `maxmemory` reached under `noeviction`: standings (pages never kept, so they
/// must be built, of the running and of a closed period), a player and their last
/// outcome, a tier's top and the entries around a player still answer; the store says
/// that it refuses writes; and a write is refused with an error that says why.
#[tokio::test]
async fn reads_answer_when_redis_is_full() {
    let server = RedisServer::start(&["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]);
    let prefix = common::unique_prefix("full");
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let league = League::with_clock(
        season(&prefix, "2026-01-05T00:00:00Z", 100, ""),
        connect(&server).await,
        Arc::new(clock.clone()),
    );
    for (i, p) in ["ana", "bo", "cy"].iter().enumerate() {
        league
            .set_profile(p, &[("name".into(), p.to_uppercase())])
            .await
            .expect("profile");
        submit_at(&league, p, 10 * (i as i64 + 1), "2026-01-05T11:00:00Z").await;
    }
    clock.set(t("2026-01-06T00:00:05Z"));
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(report.closed.len(), 1);
    clock.set(t("2026-01-06T02:00:00Z"));
    submit_at(&league, "ana", 7, "2026-01-06T01:00:00Z").await;
    submit_at(&league, "bo", 9, "2026-01-06T01:00:00Z").await;
    assert_eq!(league.store().write_refusal().await.expect("probe"), None);
    fill_to_maxmemory(&mut raw(&server).await).await;

    // A league of its own, so that nothing is cached in this process either.
    let league = League::with_clock(
        season(&prefix, "2026-01-05T00:00:00Z", 100, ""),
        connect(&server).await,
        Arc::new(clock.clone()),
    );
    let page = league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("standings while full");
    let order: Vec<&str> = page.entries.iter().map(|e| e.player.as_str()).collect();
    assert_eq!(order, ["bo", "ana"]);
    let names: Vec<Option<String>> = page.entries.iter().map(|e| e.profile.get("name")).collect();
    assert_eq!(names, [Some("BO".into()), Some("ANA".into())]);
    // Built again (nothing was kept), and a closed period's.
    let again = league
        .standings("bronze", 1, None, 1, 1)
        .await
        .expect("standings again while full");
    assert_eq!(again.entries[0].player, "ana");
    let closed = league
        .standings("bronze", 1, Some(1), 0, 10)
        .await
        .expect("a closed period's standings while full");
    let order: Vec<&str> = closed.entries.iter().map(|e| e.player.as_str()).collect();
    assert_eq!(order, ["cy", "bo", "ana"]);
    let view = league.player("bo", None).await.expect("player while full");
    assert_eq!((view.rank, view.score), (Some(1), Some(9)));
    let last = league
        .last_outcome("bo")
        .await
        .expect("last outcome while full")
        .expect("bo played period 1");
    assert_eq!(last.period, 1);
    let top = league.top("bronze", None, 2).await.expect("top while full");
    let order: Vec<&str> = top.entries.iter().map(|e| e.player.as_str()).collect();
    assert_eq!(order, ["bo", "ana"]);
    let top = league
        .top("bronze", Some(1), 2)
        .await
        .expect("a closed period's top while full");
    assert_eq!(top.entries.len(), 2);
    let around = league
        .around("ana", 1, None)
        .await
        .expect("around while full")
        .expect("placed");
    assert_eq!(around.entries.len(), 2);
    // The store says it refuses writes, and a write is refused saying why.
    let why = league
        .store()
        .write_refusal()
        .await
        .expect("probe")
        .expect("the store refuses writes");
    assert!(why.contains("maxmemory"), "{why}");
    let e = league
        .submit(
            "dee",
            5,
            SubmitOptions::default().at(t("2026-01-06T01:30:00Z")),
        )
        .await
        .expect_err("a write while full");
    assert!(!e.is_unknown(), "a refused write is not unknown: {e}");
    assert!(e.to_string().contains("memory is full"), "{e}");
}

/// A server whose `maxmemory-policy` evicts keys is refused at connect with a typed
/// error that says why and names the opt-in; with the opt-in it is accepted. A server
/// that refuses CONFIG (as managed Redis services do) is read through `INFO memory`.
#[tokio::test]
async fn an_evicting_policy_is_refused_at_connect_unless_allowed() {
    for policy in ["allkeys-lru", "volatile-ttl"] {
        let server = RedisServer::start(&["--maxmemory-policy", policy]);
        let e = RedisStore::connect(&server.url(), RedisOptions::default())
            .await
            .expect_err("an evicting policy");
        match leaguekit::ConnectError::of(&e) {
            Some(leaguekit::ConnectError::EvictingPolicy { policy: found, .. }) => {
                assert_eq!(found, policy)
            }
            other => panic!("{policy}: {other:?}"),
        }
        let message = e.to_string();
        for needed in [
            policy,
            "noeviction",
            "--allow-evicting-redis",
            "with_allow_evicting_policy",
        ] {
            assert!(
                message.contains(needed),
                "{needed:?} missing from: {message}"
            );
        }
        RedisStore::connect(
            &server.url(),
            RedisOptions::default().with_allow_evicting_policy(true),
        )
        .await
        .expect("an evicting policy, allowed");
    }
    let managed = RedisServer::start(&[
        "--maxmemory-policy",
        "allkeys-lfu",
        "--rename-command",
        "CONFIG",
        "",
    ]);
    let e = RedisStore::connect(&managed.url(), RedisOptions::default())
        .await
        .expect_err("an evicting policy behind a refused CONFIG");
    assert!(
        matches!(
            leaguekit::ConnectError::of(&e),
            Some(leaguekit::ConnectError::EvictingPolicy { policy, .. }) if policy == "allkeys-lfu"
        ),
        "{e:?}"
    );
    let safe = RedisServer::start(&["--maxmemory-policy", "noeviction"]);
    RedisStore::connect(&safe.url(), RedisOptions::default())
        .await
        .expect("noeviction");
}

/// On a Redis Cluster every master's policy is read (one evicting master is enough to
/// refuse, and the error names it), and a full master makes the store refuse writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cluster_master_is_checked() {
    let cluster = common::cluster::Cluster::start_with_args(&["--maxmemory-policy", "noeviction"]);
    let ports = cluster.ports();
    let evicting = ports[1];
    cluster
        .command(
            evicting,
            &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
        )
        .expect("config set");
    let e = RedisStore::connect(&cluster.url(), RedisOptions::default())
        .await
        .expect_err("one evicting master");
    match leaguekit::ConnectError::of(&e) {
        Some(leaguekit::ConnectError::EvictingPolicy { target, policy }) => {
            assert_eq!(policy, "allkeys-lru");
            assert!(target.ends_with(&format!(":{evicting}")), "{target}");
        }
        other => panic!("{other:?}"),
    }
    cluster
        .command(
            evicting,
            &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
        )
        .expect("config set");
    let store = RedisStore::connect(&cluster.url(), RedisOptions::default())
        .await
        .expect("every master noeviction");
    assert_eq!(store.write_refusal().await.expect("probe"), None);
    // A maxmemory below what the node uses: full at once.
    let full = ports[2];
    cluster
        .command(full, &["CONFIG", "SET", "maxmemory", "1"])
        .expect("config set");
    let why = store
        .write_refusal()
        .await
        .expect("probe")
        .expect("a full master");
    assert!(why.contains(&format!(":{full}")), "{why}");
    assert!(!why.contains(&format!(":{}", ports[0])), "{why}");
}

/// Each read script with a cache write, run by itself on a full server: it answers,
/// and writes nothing. (The store's build sends `open_page.lua` in a MULTI, which a
/// full server refuses to queue, so these branches run only when memory fills between
/// the steps of a read; here they are run directly.)
#[tokio::test]
async fn read_scripts_skip_their_cache_writes_when_redis_is_full() {
    let server = RedisServer::start(&["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]);
    let mut con = raw(&server).await;
    let (board, profiles, pages, meta, text) =
        ("{b}:board", "{b}:prof", "{b}:pages", "{b}:meta", "{b}:text");
    let _: () = redis::cmd("ZADD")
        .arg(board)
        .arg(-2)
        .arg("ana")
        .arg(-1)
        .arg("bo")
        .query_async(&mut con)
        .await
        .expect("zadd");
    // A claim made before memory filled, for keep_page.lua to find.
    let _: () = redis::cmd("HSET")
        .arg(pages)
        .arg("?0:9")
        .arg("n1")
        .query_async(&mut con)
        .await
        .expect("hset");
    let _: () = redis::cmd("HSET")
        .arg(meta)
        .arg("texted")
        .arg("n1")
        .query_async(&mut con)
        .await
        .expect("hset");
    let _: () = redis::cmd("HSET")
        .arg(profiles)
        .arg("ana")
        .arg("{}")
        .query_async(&mut con)
        .await
        .expect("hset");
    fill_to_maxmemory(&mut con).await;
    let before: Vec<String> = all_keys(&mut con).await;
    let pages_before: Vec<String> = redis::cmd("HGETALL")
        .arg(pages)
        .query_async(&mut con)
        .await
        .expect("hgetall");

    let standings = redis::Script::new(concat!(
        include_str!("../../../src/store/redis/lua/cache_writes.lua"),
        include_str!("../../../src/store/redis/lua/page_expiry.lua"),
        include_str!("../../../src/store/redis/lua/standings.lua")
    ));
    let page: String = standings
        .key(board)
        .key(profiles)
        .key(pages)
        .key(meta)
        .arg(0)
        .arg(9)
        .arg("1")
        .arg(30_000)
        .invoke_async(&mut con)
        .await
        .expect("standings.lua while full");
    assert!(page.starts_with("2\u{1f}0\u{1f}ana"), "{page:?}");
    let open = redis::Script::new(concat!(
        include_str!("../../../src/store/redis/lua/cache_writes.lua"),
        include_str!("../../../src/store/redis/lua/page_expiry.lua"),
        include_str!("../../../src/store/redis/lua/open_page.lua")
    ));
    let total: i64 = open
        .key(board)
        .key(pages)
        .key(meta)
        .key(text)
        .arg("?0:4")
        .arg("n2")
        .arg(30_000)
        .invoke_async(&mut con)
        .await
        .expect("open_page.lua while full");
    assert_eq!(total, 2);
    let keep = redis::Script::new(concat!(
        include_str!("../../../src/store/redis/lua/cache_writes.lua"),
        include_str!("../../../src/store/redis/lua/page_expiry.lua"),
        include_str!("../../../src/store/redis/lua/keep_page.lua")
    ));
    for page_field in ["0:9", ""] {
        let kept: i64 = keep
            .key(pages)
            .key(meta)
            .key(text)
            .key(profiles)
            .arg("?0:9")
            .arg("n1")
            .arg(page_field)
            .arg(&page)
            .arg("ana\u{1f}{}")
            .arg(30_000)
            .invoke_async(&mut con)
            .await
            .expect("keep_page.lua while full");
        assert_eq!(kept, 0, "nothing kept while full");
    }
    assert_eq!(all_keys(&mut con).await.len(), before.len());
    let pages_after: Vec<String> = redis::cmd("HGETALL")
        .arg(pages)
        .query_async(&mut con)
        .await
        .expect("hgetall");
    assert_eq!(pages_after, pages_before, "the page cache is as it was");
}
