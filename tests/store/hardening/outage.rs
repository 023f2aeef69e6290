//! Redis down under a running league: a call whose request cannot have reached Redis
//! is answered at once that nothing was written (`StoreError::Unreachable`, with a
//! wait), and one whose reply was lost stays "unknown", saying which `at` a resend
//! must carry.

use std::time::Instant;

use leaguekit::StoreError;

use super::*;

/// Asserts that `result` says "not sent, nothing written, retry after a wait", and
/// that it came in well under a second (`began` is when the call started).
fn unreachable<T: std::fmt::Debug>(what: &str, began: Instant, result: Result<T, Error>) {
    let took = began.elapsed();
    match &result {
        Err(e) if e.is_unreachable() => {
            let wait = e
                .retry_after()
                .expect("an unreachable store says when to retry");
            assert!(
                wait > Duration::ZERO && wait <= Duration::from_secs(5),
                "{what}: wait {wait:?}"
            );
            let text = e.to_string();
            assert!(
                text.contains("not sent") && text.contains("nothing was written"),
                "{what}: {text}"
            );
        }
        other => panic!("{what}: expected unreachable, got {other:?}"),
    }
    assert!(took < Duration::from_millis(500), "{what} took {took:?}");
}

/// Whether the server on `port` answers PING.
fn answers(port: u16) -> bool {
    common::command(port, &["PING"]).is_ok_and(|r| r.starts_with("+PONG"))
}

/// Redis stopped (its port refuses connections) under a league that has placed and
/// scored two players. After the first call has met the connections the server
/// closed, a read, a submit with and without a request id, a join and a batch are
/// each answered "unreachable" within milliseconds. Redis restarted from the data it
/// saved when it stopped shows that none of them wrote anything (the request id of
/// the outage's submit is new, the joining player is not placed), and the same
/// store works again without being reconnected.
#[tokio::test]
async fn a_stopped_redis_is_answered_at_once_and_nothing_is_written() {
    let data = tempfile::tempdir().expect("data dir");
    let dir = data.path().to_string_lossy().into_owned();
    let server = RedisServer::start(&["--dir", &dir]);
    let port = server.port;
    let store = connect(&server).await;
    let clock = ManualClock::new(t("2026-01-05T10:00:00Z"));
    let league = League::with_clock(
        season("outage", "2026-01-05T00:00:00Z", 100, ""),
        store,
        Arc::new(clock),
    );
    submit_at(&league, "ana", 5, "2026-01-05T09:00:00Z").await;
    submit_at(&league, "bob", 7, "2026-01-05T09:00:00Z").await;

    let saved = common::command(port, &["SHUTDOWN", "SAVE"]);
    eprintln!("shutdown: {saved:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while common::listening(port) {
        assert!(Instant::now() < deadline, "redis did not stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Its watchdog ends with the server; the SHUTDOWN of its drop finds nobody.
    drop(server);

    // The first call meets the connections the server closed while they were idle,
    // which redis-rs cannot tell from a request lost in flight; a read, so it does not
    // matter. It is answered fast all the same.
    let began = Instant::now();
    let first = league.player("ana", Some(1)).await;
    eprintln!(
        "first read after the stop ({:?}): {first:?}",
        began.elapsed()
    );
    assert!(first.is_err(), "{first:?}");
    assert!(began.elapsed() < Duration::from_millis(500));

    let began = Instant::now();
    unreachable("a read", began, league.player("ana", Some(1)).await);
    let began = Instant::now();
    let with_id = SubmitOptions::default()
        .at(t("2026-01-05T09:30:00Z"))
        .request_id("outage-1");
    unreachable(
        "a submit with a request id",
        began,
        league.submit("ana", 1, with_id.clone()).await,
    );
    let began = Instant::now();
    unreachable(
        "a submit without a request id",
        began,
        league.submit("bob", 1, SubmitOptions::default()).await,
    );
    let began = Instant::now();
    unreachable("a join", began, league.join("cy", None).await);
    let began = Instant::now();
    let batch = league
        .submit_many(&[
            BatchItem::new("ana", 1).with_options(
                SubmitOptions::default()
                    .at(t("2026-01-05T09:30:00Z"))
                    .request_id("outage-2"),
            ),
            BatchItem::new("bob", 1),
        ])
        .await;
    let took = began.elapsed();
    assert_eq!(batch.len(), 2);
    for (i, r) in batch.into_iter().enumerate() {
        unreachable(&format!("batch item {i}"), began, r);
    }
    eprintln!("the batch was answered in {took:?}");
    // The error itself, as a library caller matches it.
    match league.player("ana", Some(1)).await {
        Err(Error::Store(StoreError::Unreachable { reason, .. })) => {
            assert!(reason.contains("not sent"), "{reason}");
        }
        other => panic!("{other:?}"),
    }

    // Redis comes back on the same port with what it saved when it stopped.
    let back = RedisServer::launch(
        "redis",
        || port,
        |_| {},
        |port, _| {
            let mut args = common::base_args(std::path::Path::new(&dir));
            args.splice(0..0, ["--port".to_owned(), port.to_string()]);
            args
        },
        answers,
        true,
    );
    // The store checks the server again within its longest delay (5 s by default).
    let deadline = Instant::now() + Duration::from_secs(8);
    let ana = loop {
        match league.player("ana", Some(1)).await {
            Ok(view) => break view,
            Err(e) => {
                assert!(e.is_unreachable(), "{e}");
                assert!(Instant::now() < deadline, "the store did not recover: {e}");
                tokio::time::sleep(e.retry_after().unwrap_or(Duration::from_millis(100))).await;
            }
        }
    };
    assert_eq!(ana.score, Some(5), "{ana:?}");
    let bob = league.player("bob", Some(1)).await.expect("bob");
    assert_eq!(bob.score, Some(7), "{bob:?}");
    let cy = league.player("cy", Some(1)).await.expect("cy");
    assert_eq!(cy.bracket, None, "the outage's join placed cy: {cy:?}");
    // The outage's request id was never recorded: the same submit now applies.
    let again = league.submit("ana", 1, with_id).await.expect("resend");
    assert!(again.applied, "{again:?}");
    assert_eq!(again.score, 6);
    drop(back);
}

/// A score update whose reply is lost (the server stalls past the response timeout,
/// then runs it) is still "unknown", never "not sent", and says which `at` it was
/// stamped with when the caller gave none: resent with its request id and that `at`,
/// it is recognised and changes nothing. An unknown join speaks of no request id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_reply_stays_unknown_and_names_the_at_to_resend() {
    let (server, league) = stalling_league("lostat").await;
    stall(&server);
    let began = Instant::now();
    let lost = league
        .submit("p1", 1, SubmitOptions::default().request_id("lost-1"))
        .await;
    eprintln!("lost reply after {:?}: {lost:?}", began.elapsed());
    let at = match &lost {
        Err(Error::Store(StoreError::Unknown { at: Some(at), .. })) => *at,
        other => panic!("expected unknown with its at, got {other:?}"),
    };
    // No `at` was given: the league clock's was stamped.
    assert_eq!(at, t("2026-01-05T10:00:00Z"));
    let text = lost.as_ref().unwrap_err().to_string();
    assert!(
        text.contains("same request id") && text.contains("2026-01-05T10:00:00.000Z"),
        "{text}"
    );
    let join = league.join("newcomer", None).await;
    eprintln!("join during the stall: {join:?}");
    if let Err(e) = &join {
        let text = e.to_string();
        assert!(!text.contains("request id"), "{text}");
    }
    each_ran_at_most_once(&league).await;
    let resent = league
        .submit(
            "p1",
            1,
            SubmitOptions::default().request_id("lost-1").at(at),
        )
        .await
        .expect("resend");
    assert!(!resent.applied, "the resend applied again: {resent:?}");
    assert_eq!(resent.score, 2, "{resent:?}");
}
