//! The live streams under abuse, against the real `leaguekit serve` on a real Redis:
//! one client's streams never lock out another's (per-token and global limits, set
//! with `LEAGUEKIT_STREAMS_PER_TOKEN` and `LEAGUEKIT_STREAMS_MAX`, bad values refused
//! at start); a `Last-Event-ID` from the future, at the largest id, or of another
//! player's stream is refused (400 `invalid_event_id`), and never moves what another
//! stream of the same bracket sees, whether the bad stream leaves or stays; a stream
//! ends (`event: end`, then the end of the body) when its player token expires or its
//! player is banned, by this server or by another process; and ids still resume on a
//! restarted server.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common;
use crate::events::{
    Ended, SECRET, Sse, Stream, WAIT, bearer, events_season, post, request, start, start_with,
    token_of,
};
use crate::serving::{ADMIN, SERVER, Served, VIEWER, call};

/// A GET of `path` expected to be refused: its status, code and `Retry-After`.
async fn refusal(
    served: &Served,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, Option<String>) {
    let mut r = reqwest::Client::new().get(served.url(path));
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let r = r.send().await.expect("send");
    let status = r.status().as_u16();
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if status == 200 {
        // A stream: its body never ends.
        return (status, String::new(), retry);
    }
    let body: Value = r.json().await.unwrap_or(Value::Null);
    let code = body["error"]["code"].as_str().unwrap_or("").to_owned();
    (status, code, retry)
}

/// Opens `path` as a stream, retrying for up to `limit` while it is refused (a closed
/// stream is counted until the server notices its client left).
async fn open_within(
    served: &Served,
    path: &str,
    headers: &[(&str, &str)],
    limit: Duration,
) -> Stream {
    let deadline = Instant::now() + limit;
    loop {
        let (status, _) = request(served, path, headers).await;
        if status == StatusCode::OK {
            return Stream::open(served, path, headers).await;
        }
        assert!(
            Instant::now() < deadline,
            "{path} still refused ({status}) after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Runs `leaguekit ARGS` against the season (another process than the server): its
/// stdout, asserting it succeeded.
fn cli(config: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .arg("--config")
        .arg(config)
        .arg("--redis")
        .arg(common::redis_url())
        .args(args)
        .env_remove("LEAGUEKIT_CONFIG")
        .env_remove("LEAGUEKIT_REDIS")
        .stdin(Stdio::null())
        .output()
        .expect("run leaguekit");
    assert!(
        out.status.success(),
        "leaguekit {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A player token for `player` of the season named `season` living `secs` seconds,
/// signed as a game server would sign it in its own code.
fn short_token(season: &str, player: &str, secs: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": player, "aud": format!("leaguekit:{season}"), "exp": now + secs, "iat": now}),
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .expect("encode")
}

async fn season_name(served: &Served) -> String {
    let (_, season) = call(
        &reqwest::Client::new(),
        served,
        reqwest::Method::GET,
        "/v1/season",
        SERVER,
        None,
    )
    .await;
    season["name"].as_str().expect("name").to_owned()
}

/// Places `players` (through the server) and returns the first one's bracket stream
/// path.
async fn placed(served: &Served, players: &[&str]) -> String {
    let mut path = String::new();
    for p in players {
        let sub = post(
            served,
            &format!("/v1/players/{p}/scores"),
            SERVER,
            json!({"value": 10}),
        )
        .await;
        if path.is_empty() {
            path = format!(
                "/v1/tiers/{}/brackets/{}/events",
                sub["tier"].as_str().expect("tier"),
                sub["bracket"].as_u64().expect("bracket")
            );
        }
    }
    path
}

/// Reads `s` until its `end` event, which it returns; then the body must end.
async fn ends(s: &mut Stream, limit: Duration) -> Sse {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match s.read(left).await {
            Ok(Some(e)) if e.event == "end" => {
                assert!(e.id.is_none(), "an end event has no id: {e:?}");
                let after = s.read(Duration::from_secs(5)).await;
                assert!(
                    matches!(after, Err(Ended)),
                    "the stream goes on after its end event: {after:?}"
                );
                return e;
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("the stream did not end within {limit:?}"),
            Err(Ended) => panic!("the stream ended without an end event"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_player_cannot_take_every_stream() {
    let config = events_season("http_streams_per_player", true);
    let served = start(config.path());
    let own = placed(&served, &["ana", "bo"]).await;
    let ana = token_of(&served, "ana").await;
    let bo = token_of(&served, "bo").await;
    let a = bearer(&ana);
    let me = [(a.0, a.1.as_str())];

    // By default a player holds 8 streams at once, whichever routes they are on and
    // however the token is sent.
    let mut held = Vec::new();
    for i in 0..8 {
        let path = match i % 3 {
            0 => "/v1/players/ana/events".to_owned(),
            1 => own.clone(),
            _ => format!("/v1/players/ana/events?access_token={ana}"),
        };
        let headers: &[(&str, &str)] = if i % 3 == 2 { &[] } else { &me };
        held.push(Stream::open(&served, &path, headers).await);
    }
    // The ninth is refused to ana only: 429 with Retry-After.
    for (path, headers) in [
        ("/v1/players/ana/events".to_owned(), &me[..]),
        (own.clone(), &me[..]),
        (format!("{own}?access_token={ana}"), &[][..]),
    ] {
        let (status, code, retry) = refusal(&served, &path, headers).await;
        assert_eq!((status, code.as_str()), (429, "too_many_streams"), "{path}");
        let retry: u64 = retry.expect("Retry-After").parse().expect("seconds");
        assert!((1..=60).contains(&retry), "Retry-After {retry}");
    }
    // A fresh token of the same player counts as the same player.
    let again = token_of(&served, "ana").await;
    let (status, _, _) = refusal(
        &served,
        "/v1/players/ana/events",
        &[("authorization", &format!("Bearer {again}"))],
    )
    .await;
    assert_eq!(status, 429, "a player's tokens share the player's streams");
    // Everyone else still opens theirs.
    let b = bearer(&bo);
    let mut others = vec![
        Stream::open(&served, "/v1/players/bo/events", &[(b.0, b.1.as_str())]).await,
        Stream::open(&served, &own, &[(b.0, b.1.as_str())]).await,
        Stream::open(
            &served,
            &own,
            &[("authorization", &format!("Bearer {VIEWER}"))],
        )
        .await,
        Stream::open(
            &served,
            "/v1/players/ana/events",
            &[("authorization", &format!("Bearer {SERVER}"))],
        )
        .await,
    ];
    for s in &mut others {
        assert!(
            s.next(WAIT).await.is_some(),
            "another client's stream serves"
        );
    }
    // Once ana closes one, she may open one again.
    drop(held.pop());
    let _back = open_within(
        &served,
        "/v1/players/ana/events",
        &me,
        Duration::from_secs(30),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_limits_are_configured_per_token_and_in_all() {
    let config = events_season("http_streams_limits", true);
    let served = start_with(
        config.path(),
        vec![
            ("LEAGUEKIT_STREAMS_MAX", "6".to_owned()),
            (
                "LEAGUEKIT_STREAMS_PER_TOKEN",
                "player=2,static=3".to_owned(),
            ),
        ],
    );
    let own = placed(&served, &["ana", "bo"]).await;
    let ana = token_of(&served, "ana").await;
    let bo = token_of(&served, "bo").await;
    let a = format!("Bearer {ana}");
    let b = format!("Bearer {bo}");
    let v = format!("Bearer {VIEWER}");
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(Stream::open(&served, &own, &[("authorization", &a)]).await);
    }
    let (status, code, _) = refusal(&served, &own, &[("authorization", &a)]).await;
    assert_eq!((status, code.as_str()), (429, "too_many_streams"));
    for _ in 0..3 {
        held.push(Stream::open(&served, &own, &[("authorization", &v)]).await);
    }
    let (status, code, _) = refusal(&served, &own, &[("authorization", &v)]).await;
    assert_eq!(
        (status, code.as_str()),
        (429, "too_many_streams"),
        "a static token has its own limit"
    );
    held.push(Stream::open(&served, &own, &[("authorization", &b)]).await);
    // Six streams: the server is full, for everyone (503, not the client's fault).
    for token in [&b, &format!("Bearer {SERVER}")] {
        let (status, code, retry) = refusal(&served, &own, &[("authorization", token)]).await;
        assert_eq!((status, code.as_str()), (503, "too_many_streams"));
        assert!(retry.is_some(), "Retry-After on a full server");
    }
}

#[test]
fn bad_stream_limits_refuse_to_start() {
    let config = events_season("http_streams_bad_limits", true);
    for (var, value) in [
        ("LEAGUEKIT_STREAMS_MAX", "0"),
        ("LEAGUEKIT_STREAMS_MAX", "lots"),
        ("LEAGUEKIT_STREAMS_MAX", "-5"),
        ("LEAGUEKIT_STREAMS_MAX", "99999999999999999999999"),
        ("LEAGUEKIT_STREAMS_PER_TOKEN", "0"),
        ("LEAGUEKIT_STREAMS_PER_TOKEN", "player="),
        ("LEAGUEKIT_STREAMS_PER_TOKEN", "players=3"),
        ("LEAGUEKIT_STREAMS_PER_TOKEN", "player=2,player=3"),
        ("LEAGUEKIT_STREAMS_PER_TOKEN", "static=0"),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .arg("--config")
            .arg(config.path())
            .arg("--redis")
            .arg(common::redis_url())
            .args(["serve", "--listen", "127.0.0.1:0", "--no-scheduler"])
            .env_remove("LEAGUEKIT_STREAMS_MAX")
            .env_remove("LEAGUEKIT_STREAMS_PER_TOKEN")
            .env("LEAGUEKIT_SERVER_TOKENS", SERVER)
            .env("LEAGUEKIT_LOG", "warn")
            .env(var, value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn leaguekit serve");
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break Some(s);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        let status = status.unwrap_or_else(|| panic!("{var}={value}: serve started anyway: {err}"));
        assert_eq!(status.code(), Some(2), "{var}={value}: {err}");
        assert!(
            err.contains(var),
            "{var}={value}: the message names it: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_past_the_end_or_of_another_stream_are_refused() {
    let config = events_season("http_streams_cursors", true);
    let served = start(config.path());
    let own = placed(&served, &["ana", "bo"]).await;
    let s = format!("Bearer {SERVER}");
    let h = [("authorization", s.as_str())];

    // Real ids of ana's stream and of the bracket's.
    let mut mine = Stream::open(&served, "/v1/players/ana/events", &h).await;
    let ana_id = mine.until(WAIT, |e| e.event == "player.placed").await[0]
        .id
        .clone()
        .expect("id");
    let mut board = Stream::open(&served, &own, &h).await;
    let board_id = board.until(WAIT, |e| e.data["player"] == "bo").await[1]
        .id
        .clone()
        .expect("id");

    let player_bad = [
        // From the future, in the bucket's log.
        "v1.9999999999999-0".to_owned(),
        // The largest id there is.
        "v1.18446744073709551615-18446744073709551615".to_owned(),
        // A period far ahead.
        "v1.0-0.999.0-0.0-0".to_owned(),
        // A position past the end of the bracket's log.
        "v1.0-0.1.9999999999999-0.0-0".to_owned(),
        // Not a cursor of this route.
        board_id.clone(),
    ];
    for bad in &player_bad {
        let (status, code, _) = refusal(
            &served,
            "/v1/players/ana/events",
            &[h[0], ("last-event-id", bad)],
        )
        .await;
        assert_eq!((status, code.as_str()), (400, "invalid_event_id"), "{bad}");
    }
    // Ana's id on bo's stream: another player's.
    let (status, code, _) = refusal(
        &served,
        "/v1/players/bo/events",
        &[h[0], ("last-event-id", &ana_id)],
    )
    .await;
    assert_eq!(
        (status, code.as_str()),
        (400, "invalid_event_id"),
        "ana's id on bo's stream"
    );
    let q = format!("/v1/players/bo/events?last_event_id={ana_id}");
    let (status, code, _) = refusal(&served, &q, &h).await;
    assert_eq!((status, code.as_str()), (400, "invalid_event_id"));

    for bad in [
        "v1.1.9999999999999-0",
        "v1.1.18446744073709551615-18446744073709551615",
        "v1.999.0-0",
        ana_id.as_str(),
    ] {
        let (status, code, _) = refusal(&served, &own, &[h[0], ("last-event-id", bad)]).await;
        assert_eq!((status, code.as_str()), (400, "invalid_event_id"), "{bad}");
    }
    // Another bracket's id (the same bracket number in the next tier up).
    let other = own.replacen("/bronze/", "/silver/", 1);
    assert_ne!(other, own);
    let (status, code, _) = refusal(&served, &other, &[h[0], ("last-event-id", &board_id)]).await;
    assert_eq!(
        (status, code.as_str()),
        (400, "invalid_event_id"),
        "another bracket's id"
    );

    // Their own ids still resume, and so does the form before 0.4 (no owner).
    let mut again = Stream::open(
        &served,
        "/v1/players/ana/events",
        &[h[0], ("last-event-id", &ana_id)],
    )
    .await;
    assert!(
        again.drain(Duration::from_secs(1)).await.is_empty(),
        "nothing after it yet"
    );
    let mut again = Stream::open(&served, &own, &[h[0], ("last-event-id", &board_id)]).await;
    assert!(
        again.drain(Duration::from_secs(1)).await.is_empty(),
        "nothing after it yet"
    );
    if let Some(rest) = ana_id.strip_prefix("v2.").and_then(|r| r.split_once('.')) {
        let legacy = format!("v1.{}", rest.1);
        let mut old = Stream::open(
            &served,
            "/v1/players/ana/events",
            &[h[0], ("last-event-id", &legacy)],
        )
        .await;
        assert!(
            old.drain(Duration::from_secs(1)).await.is_empty(),
            "{legacy}"
        );
    }
    // A stream that started from the beginning is served as before.
    let mut fresh = Stream::open(&served, "/v1/players/ana/events", &h).await;
    let all = fresh.until(WAIT, |e| e.event == "player.placed").await;
    assert_eq!(all[0].id.as_deref(), Some(ana_id.as_str()));
    // Nothing of that went into the log as an error.
    assert!(
        !served.stderr().contains("invalid start ID"),
        "{}",
        served.stderr()
    );
}

/// The reproduction: A opens the bracket stream with a cursor from the future,
/// B opens it normally 0.7 s later, three players join from another process: B sees
/// the three joins, whether A left after a second or stays.
async fn a_bad_cursor_never_blinds_another_stream(a_stays: bool) {
    let tag = if a_stays {
        "http_streams_blind_held"
    } else {
        "http_streams_blind_left"
    };
    let config = events_season(tag, true);
    let served = start(config.path());
    let own = placed(&served, &["ana", "bo"]).await;
    let v = format!("Bearer {VIEWER}");
    let future = "v1.1.9999999999999-0";
    let (a_status, a) = request(
        &served,
        &own,
        &[("authorization", &v), ("last-event-id", future)],
    )
    .await;
    let a_left = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if a_stays {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        drop(a);
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut b = Stream::open(&served, &own, &[("authorization", &v)]).await;
    b.until(WAIT, |e| e.data["player"] == "bo").await;
    if !a_stays {
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    for p in ["cy", "di", "ed"] {
        cli(config.path(), &["join", p]);
    }
    let joins = b.until(WAIT, |e| e.data["player"] == "ed").await;
    let who: Vec<&str> = joins
        .iter()
        .filter_map(|e| e.data["player"].as_str())
        .collect();
    assert_eq!(who, ["cy", "di", "ed"]);
    assert_eq!(
        a_status,
        StatusCode::BAD_REQUEST,
        "a cursor from the future"
    );
    a_left.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_cursor_that_left_never_blinds_another_stream() {
    a_bad_cursor_never_blinds_another_stream(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_cursor_held_open_never_blinds_another_stream() {
    a_bad_cursor_never_blinds_another_stream(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ends_when_its_player_token_expires() {
    let config = events_season("http_streams_expiry", true);
    let served = start(config.path());
    let own = placed(&served, &["ana", "bo"]).await;
    let season = season_name(&served).await;
    let token = short_token(&season, "ana", 3);
    let t = format!("Bearer {token}");
    let opened = Instant::now();
    let mut player =
        Stream::open(&served, "/v1/players/ana/events", &[("authorization", &t)]).await;
    let mut bracket = Stream::open(&served, &format!("{own}?access_token={token}"), &[]).await;
    // The server token's stream of the same player is not the player's: it goes on.
    let s = format!("Bearer {SERVER}");
    let mut server =
        Stream::open(&served, "/v1/players/ana/events", &[("authorization", &s)]).await;
    for stream in [&mut player, &mut bracket] {
        let end = ends(stream, Duration::from_secs(20)).await;
        assert_eq!(end.data["reason"], "token_expired", "{:?}", end.data);
        assert!(
            end.data["message"]
                .as_str()
                .is_some_and(|m| m.contains("token")),
            "{:?}",
            end.data
        );
    }
    let took = opened.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took <= Duration::from_secs(15),
        "ended after {took:?}, not at the token's exp (3 s, 5 s leeway)"
    );
    assert!(
        server.read(Duration::from_secs(2)).await.is_ok(),
        "a server token's stream goes on"
    );
    // Reconnecting with the same token: 401 token_expired.
    let (status, code, _) =
        refusal(&served, "/v1/players/ana/events", &[("authorization", &t)]).await;
    assert_eq!((status, code.as_str()), (401, "token_expired"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_banned_players_streams_end() {
    let config = events_season("http_streams_ban", true);
    let served = start(config.path());
    let own = placed(&served, &["ana", "bo", "cy"]).await;
    let ana = token_of(&served, "ana").await;
    let bo = token_of(&served, "bo").await;
    let a = format!("Bearer {ana}");
    let mut player =
        Stream::open(&served, "/v1/players/ana/events", &[("authorization", &a)]).await;
    let mut bracket = Stream::open(&served, &own, &[("authorization", &a)]).await;
    let mut bos = Stream::open(
        &served,
        "/v1/players/bo/events",
        &[("authorization", &format!("Bearer {bo}"))],
    )
    .await;
    let s = format!("Bearer {SERVER}");
    let mut server =
        Stream::open(&served, "/v1/players/ana/events", &[("authorization", &s)]).await;
    player.until(WAIT, |e| e.event == "player.placed").await;

    // Banned through this server: at once.
    let banned_at = Instant::now();
    post(
        &served,
        "/v1/players/ana/ban",
        ADMIN,
        json!({"reason": "aimbot"}),
    )
    .await;
    for stream in [&mut player, &mut bracket] {
        let end = ends(stream, Duration::from_secs(10)).await;
        assert_eq!(end.data["reason"], "banned", "{:?}", end.data);
    }
    assert!(
        banned_at.elapsed() < Duration::from_secs(8),
        "{:?}",
        banned_at.elapsed()
    );
    let (status, code, _) =
        refusal(&served, "/v1/players/ana/events", &[("authorization", &a)]).await;
    assert_eq!((status, code.as_str()), (403, "banned"));
    let (status, code, _) = refusal(&served, &own, &[("authorization", &a)]).await;
    assert_eq!((status, code.as_str()), (403, "banned"));
    // Others' streams, and the game server's stream of ana, go on.
    assert!(
        bos.read(Duration::from_secs(1)).await.is_ok(),
        "bo's stream goes on"
    );
    assert!(
        server.read(Duration::from_secs(1)).await.is_ok(),
        "the game server's stream of ana goes on"
    );

    // Banned by another process (the command line): within a few seconds.
    let banned_at = Instant::now();
    cli(config.path(), &["ban", "bo", "--reason", "smurf"]);
    let end = ends(&mut bos, Duration::from_secs(20)).await;
    assert_eq!(end.data["reason"], "banned", "{:?}", end.data);
    assert!(
        banned_at.elapsed() < Duration::from_secs(10),
        "{:?}",
        banned_at.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_resume_on_a_restarted_server() {
    let config = events_season("http_streams_restart", true);
    let mut served = start(config.path());
    let own = placed(&served, &["ana"]).await;
    let s = format!("Bearer {SERVER}");
    let mut board = Stream::open(&served, &own, &[("authorization", &s)]).await;
    let first = board.until(WAIT, |e| e.data["player"] == "ana").await[0]
        .id
        .clone()
        .expect("id");
    let mut mine = Stream::open(&served, "/v1/players/ana/events", &[("authorization", &s)]).await;
    let ana_first = mine.until(WAIT, |e| e.event == "player.placed").await[0]
        .id
        .clone()
        .expect("id");
    drop((board, mine));
    served.terminate();
    served.wait(Duration::from_secs(30)).expect("serve stops");
    // While no server runs, two players join from the command line.
    for p in ["bo", "cy"] {
        cli(config.path(), &["join", p]);
    }
    let served = start(config.path());
    let mut resumed = Stream::open(
        &served,
        &own,
        &[("authorization", &s), ("last-event-id", &first)],
    )
    .await;
    let after = resumed.until(WAIT, |e| e.data["player"] == "cy").await;
    let who: Vec<&str> = after
        .iter()
        .filter_map(|e| e.data["player"].as_str())
        .collect();
    assert_eq!(who, ["bo", "cy"], "exactly what came after the id");
    let mut again = Stream::open(
        &served,
        "/v1/players/ana/events",
        &[("authorization", &s), ("last-event-id", &ana_first)],
    )
    .await;
    assert!(
        again.drain(Duration::from_secs(2)).await.is_empty(),
        "nothing after ana's placement is hers"
    );
}
