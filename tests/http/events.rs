//! The live event streams of `leaguekit serve` on a real Redis: a player's stream
//! across a rollover (the staging clock moved, the service's own scheduler closing the
//! period), disconnected and resumed with its last id; a bracket's log events and
//! their resume; who may read which stream, with the token as a header or as
//! `?access_token=`; malformed ids; a season without `[events]`.

use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::serving::{self, ADMIN, ADMIN_ENTRY, SERVER, Served, Start, VIEWER, call};

/// The player token secret of these servers.
pub(crate) const SECRET: &str = "player-token-secret-for-events-0123456789";

/// The server ended the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended;

/// One server-sent event.
#[derive(Debug, Clone)]
pub(crate) struct Sse {
    pub(crate) event: String,
    pub(crate) id: Option<String>,
    pub(crate) data: Value,
}

/// An open event stream, read event by event.
pub(crate) struct Stream {
    body: BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

impl Stream {
    /// Opens `path` with these headers; panics unless it answers 200 as a stream.
    pub(crate) async fn open(served: &Served, path: &str, headers: &[(&str, &str)]) -> Stream {
        let (status, r) = request(served, path, headers).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let r = r.expect("a stream");
        let kind = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        assert!(kind.starts_with("text/event-stream"), "{path}: {kind}");
        Stream {
            body: r.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed(),
            buf: String::new(),
        }
    }

    /// The next event (keep-alive comments skipped), within `limit`.
    pub(crate) async fn next(&mut self, limit: Duration) -> Option<Sse> {
        match self.read(limit).await {
            Ok(e) => e,
            Err(Ended) => panic!("the stream ended"),
        }
    }

    /// The next event (keep-alive comments skipped) within `limit`, or `Err(Ended)`
    /// once the server ended the stream.
    pub(crate) async fn read(&mut self, limit: Duration) -> Result<Option<Sse>, Ended> {
        let deadline = Instant::now() + limit;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut event, mut id, mut data) = ("message".to_owned(), None, String::new());
                for line in block.lines() {
                    if line.starts_with(':') {
                        continue;
                    }
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "event" => event = value.to_owned(),
                        "id" => id = Some(value.to_owned()),
                        "data" => {
                            if !data.is_empty() {
                                data.push('\n');
                            }
                            data.push_str(value);
                        }
                        _ => {}
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let data = serde_json::from_str(&data).expect("JSON data");
                return Ok(Some(Sse { event, id, data }));
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Ok(None);
            };
            match tokio::time::timeout(left, self.body.next()).await {
                Ok(Some(Ok(chunk))) => self.buf.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => return Err(Ended),
                Err(_) => return Ok(None),
            }
        }
    }

    /// The log events (those with an id) up to and with the first that `done` takes,
    /// within `limit`.
    pub(crate) async fn until(&mut self, limit: Duration, done: impl Fn(&Sse) -> bool) -> Vec<Sse> {
        let deadline = Instant::now() + limit;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(e) = self.next(left).await else {
                panic!(
                    "no such event within {limit:?}; got {:?}",
                    out.iter()
                        .map(|e: &Sse| (e.event.clone(), e.id.clone()))
                        .collect::<Vec<_>>()
                );
            };
            if e.id.is_none() {
                continue;
            }
            let stop = done(&e);
            out.push(e);
            if stop {
                return out;
            }
        }
    }

    /// The log events that arrive within `wait` (none expected to be missing).
    pub(crate) async fn drain(&mut self, wait: Duration) -> Vec<Sse> {
        let mut out = Vec::new();
        while let Some(e) = self.next(wait).await {
            if e.id.is_some() {
                out.push(e);
            }
        }
        out
    }
}

/// A GET of `path` with these headers: its status, and the response when it is 200.
pub(crate) async fn request(
    served: &Served,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, Option<reqwest::Response>) {
    let mut r = reqwest::Client::new().get(served.url(path));
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let r = r.send().await.expect("send");
    let status = r.status();
    (status, (status == StatusCode::OK).then_some(r))
}

/// A GET of `path` expected to be refused: asserts its status and code.
pub(crate) async fn refused(
    served: &Served,
    path: &str,
    headers: &[(&str, &str)],
    status: u16,
    code: &str,
) {
    let mut r = reqwest::Client::new().get(served.url(path));
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let r = r.send().await.expect("send");
    let got = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(
        (got, body["error"]["code"].as_str()),
        (status, Some(code)),
        "{path}: {body}"
    );
}

pub(crate) fn bearer(token: &str) -> (&'static str, String) {
    ("authorization", format!("Bearer {token}"))
}

/// The example season (daily periods, the first ending in 12 hours) with a staging
/// clock and, with `events`, an event log.
pub(crate) fn events_season(tag: &str, events: bool) -> tempfile::NamedTempFile {
    let file = serving::season(tag, serving::now() + chrono::Duration::hours(12), "1s", "");
    let mut text = std::fs::read_to_string(file.path()).expect("season");
    text = text.replacen("max_skew = \"1s\"", "max_skew = \"1s\"\ntravel = true", 1);
    if events {
        text.push_str("\n[events]\nkeep = \"1d\"\n");
    }
    std::fs::write(file.path(), text).expect("write season");
    file
}

pub(crate) fn start(config: &std::path::Path) -> Served {
    start_with(config, Vec::new())
}

/// [`start`] with more environment variables.
pub(crate) fn start_with(config: &std::path::Path, env: Vec<(&str, String)>) -> Served {
    Start {
        player_secret: Some(SECRET),
        admin_tokens: Some(ADMIN_ENTRY),
        // With the scheduler: moving the clock closes the period.
        args: vec![],
        log: "info,tower_http=debug",
        env,
        ..Start::new(config)
    }
    .spawn()
}

pub(crate) async fn post(served: &Served, path: &str, token: &str, body: Value) -> Value {
    let http = reqwest::Client::new();
    let (s, b) = call(
        &http,
        served,
        reqwest::Method::POST,
        path,
        token,
        Some(body),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{path}: {b}");
    b
}

pub(crate) async fn token_of(served: &Served, player: &str) -> String {
    let minted = post(
        served,
        &format!("/v1/players/{player}/token"),
        SERVER,
        json!({}),
    )
    .await;
    minted["token"].as_str().expect("token").to_owned()
}

pub(crate) fn ids(events: &[Sse]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.data["id"].as_str().unwrap_or("").to_owned())
        .collect()
}

pub(crate) const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_stream_follows_a_rollover_and_resumes_without_gaps_or_repeats() {
    let config = events_season("http_events_player", true);
    let served = start(config.path());
    post(
        &served,
        "/v1/players/ana/scores",
        SERVER,
        json!({"value": 30}),
    )
    .await;
    post(
        &served,
        "/v1/players/bo/scores",
        SERVER,
        json!({"value": 20}),
    )
    .await;
    let ana = token_of(&served, "ana").await;
    let auth = bearer(&ana);
    let me = [(auth.0, auth.1.as_str())];

    // The game's client reads ana's stream, gets her placement, and goes away.
    let mut first = Stream::open(&served, "/v1/players/ana/events", &me).await;
    let seen = first.until(WAIT, |e| e.event == "player.placed").await;
    let placed = seen.last().expect("placed").clone();
    assert_eq!(placed.data["type"], "player.placed");
    assert_eq!(placed.data["player"], "ana");
    assert_eq!(placed.data["period"], 1);
    let cursor = placed.id.clone().expect("an id");
    drop(first);

    // Another client stays connected across the rollover.
    let mut live = Stream::open(&served, "/v1/players/ana/events", &me).await;
    live.until(WAIT, |e| e.event == "player.placed").await;

    // While the first is away, the period closes (the staging clock moves a day and
    // the server's scheduler closes period 1).
    post(
        &served,
        "/v1/clock",
        ADMIN,
        json!({"advance": "1d", "reason": "events test"}),
    )
    .await;
    let closed = |e: &Sse| e.event == "period.closed" && e.data["period"] == 1;
    let through_rollover = live.until(Duration::from_secs(60), closed).await;

    // Resumed with the last id (here as the query parameter, with the token in the
    // query too, as a browser's EventSource would): exactly what came after it.
    let path = format!("/v1/players/ana/events?last_event_id={cursor}&access_token={ana}");
    let mut resumed = Stream::open(&served, &path, &[]).await;
    let after = resumed.until(WAIT, closed).await;
    assert_eq!(ids(&after), ids(&through_rollover), "the resumed stream");
    assert!(!ids(&after).contains(&placed.data["id"].as_str().unwrap_or("").to_owned()));
    let kinds: Vec<&str> = after.iter().map(|e| e.event.as_str()).collect();
    for kind in [
        "bracket.closed",
        "player.promoted",
        "reward.granted",
        "period.closed",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    for e in &after {
        assert_eq!(e.data["type"].as_str(), Some(e.event.as_str()));
        assert!(
            e.data["player"].is_null() || e.data["player"] == "ana",
            "{:?}",
            e.data
        );
    }

    // The next period: ana plays again, and the same stream follows her there.
    post(
        &served,
        "/v1/players/ana/scores",
        SERVER,
        json!({"value": 5}),
    )
    .await;
    let next = live
        .until(WAIT, |e| {
            e.event == "player.placed" && e.data["period"] == 2
        })
        .await;
    assert_eq!(
        next.last().map(|e| e.data["tier"].clone()),
        Some(json!("silver"))
    );

    // From the start, the whole log: what the streams saw, in order, each once.
    let mut whole = Stream::open(
        &served,
        "/v1/players/ana/events",
        &[("authorization", &format!("Bearer {SERVER}"))],
    )
    .await;
    let everything = whole
        .until(WAIT, |e| {
            e.event == "player.placed" && e.data["period"] == 2
        })
        .await;
    let mut expected = ids(&seen);
    expected.extend(ids(&through_rollover));
    expected.extend(ids(&next));
    assert_eq!(ids(&everything), expected);
    // Resuming from the id of each event gives exactly the events after it.
    let mid = &everything[everything.len() / 2];
    let mut from_mid = Stream::open(
        &served,
        "/v1/players/ana/events",
        &[
            ("authorization", &format!("Bearer {SERVER}")),
            ("last-event-id", mid.id.as_deref().expect("id")),
        ],
    )
    .await;
    let rest = from_mid
        .until(WAIT, |e| {
            e.event == "player.placed" && e.data["period"] == 2
        })
        .await;
    let k = everything.len() / 2 + 1;
    assert_eq!(ids(&rest), ids(&everything[k..]));
    assert!(
        from_mid.drain(Duration::from_secs(2)).await.is_empty(),
        "nothing twice"
    );

    // Tokens in the query never reach the logs.
    let logged = served.stderr();
    assert!(logged.contains("/v1/players/ana/events"), "the trace is on");
    assert!(!logged.contains(&ana), "a token was logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bracket_stream_carries_its_log_events_and_resumes() {
    let config = events_season("http_events_bracket", true);
    let served = start(config.path());
    let sub = post(
        &served,
        "/v1/players/ana/scores",
        SERVER,
        json!({"value": 10}),
    )
    .await;
    post(
        &served,
        "/v1/players/bo/scores",
        SERVER,
        json!({"value": 20}),
    )
    .await;
    let (tier, bracket) = (
        sub["tier"].as_str().expect("tier").to_owned(),
        sub["bracket"].as_u64().expect("bracket"),
    );
    let path = format!("/v1/tiers/{tier}/brackets/{bracket}/events");
    let viewer = format!("Bearer {VIEWER}");
    let mut s = Stream::open(&served, &path, &[("authorization", &viewer)]).await;
    // A standings snapshot (no id) and the two placements (with ids).
    let mut standings = false;
    let mut placed = Vec::new();
    while placed.len() < 2 || !standings {
        let e = s.next(WAIT).await.expect("an event");
        match (e.event.as_str(), &e.id) {
            ("standings", None) => standings = true,
            ("player.placed", Some(_)) => placed.push(e),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        placed
            .iter()
            .map(|e| e.data["player"].clone())
            .collect::<Vec<_>>(),
        [json!("ana"), json!("bo")]
    );
    // A new player's placement arrives live.
    post(
        &served,
        "/v1/players/cy/scores",
        SERVER,
        json!({"value": 5}),
    )
    .await;
    let cy = s.until(WAIT, |e| e.event == "player.placed").await;
    assert_eq!(
        cy.last().map(|e| e.data["player"].clone()),
        Some(json!("cy"))
    );

    // Resumed after the first placement: the two after it, once each.
    let first = placed[0].id.clone().expect("id");
    let mut resumed = Stream::open(
        &served,
        &path,
        &[("authorization", &viewer), ("last-event-id", &first)],
    )
    .await;
    let after = resumed.until(WAIT, |e| e.data["player"] == "cy").await;
    assert_eq!(ids(&after), [ids(&placed[1..]), ids(&cy)].concat());
    assert!(
        resumed.drain(Duration::from_secs(2)).await.is_empty(),
        "nothing twice"
    );

    // A malformed id: 400, on the bracket stream as on the player stream.
    let bad = [
        ("authorization", viewer.as_str()),
        ("last-event-id", "garbage"),
    ];
    refused(&served, &path, &bad, 400, "invalid_event_id").await;
    refused(
        &served,
        "/v1/players/ana/events",
        &bad,
        400,
        "invalid_event_id",
    )
    .await;
    let q = format!("{path}?last_event_id=v1.x");
    refused(&served, &q, &bad[..1], 400, "invalid_event_id").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_tokens_read_their_own_streams_only() {
    let config = events_season("http_events_tokens", true);
    let served = start(config.path());
    let sub = post(
        &served,
        "/v1/players/ana/scores",
        SERVER,
        json!({"value": 10}),
    )
    .await;
    post(
        &served,
        "/v1/players/bo/scores",
        SERVER,
        json!({"value": 20}),
    )
    .await;
    let own = format!(
        "/v1/tiers/{}/brackets/{}/events",
        sub["tier"].as_str().expect("tier"),
        sub["bracket"].as_u64().expect("bracket")
    );
    let ana = token_of(&served, "ana").await;
    let header = format!("Bearer {ana}");
    let h = [("authorization", header.as_str())];

    // Its own player's and bracket's streams: as a header, or in the query.
    for (path, headers) in [
        ("/v1/players/ana/events".to_owned(), &h[..]),
        (
            format!("/v1/players/ana/events?access_token={ana}"),
            &[][..],
        ),
        (own.clone(), &h[..]),
        (format!("{own}?access_token={ana}"), &[][..]),
    ] {
        let mut s = Stream::open(&served, &path, headers).await;
        assert!(s.next(WAIT).await.is_some(), "{path}");
    }
    // Another player's: 403, either way.
    refused(&served, "/v1/players/bo/events", &h, 403, "forbidden").await;
    let q = format!("/v1/players/bo/events?access_token={ana}");
    refused(&served, &q, &[], 403, "forbidden").await;
    // The query token is taken on the streams only.
    let q = format!("/v1/players/ana?access_token={ana}");
    refused(&served, &q, &[], 401, "unauthorized").await;
    // Any role's token may be in the query of a stream.
    let q = format!("/v1/players/bo/events?access_token={VIEWER}");
    let mut s = Stream::open(&served, &q, &[]).await;
    assert!(s.next(WAIT).await.is_some());
    refused(
        &served,
        "/v1/players/bo/events?access_token=nope-0123456789abcdef",
        &[],
        401,
        "unauthorized",
    )
    .await;

    // An expired token: 401 token_expired, as a header or in the query.
    let (_, season) = call(
        &reqwest::Client::new(),
        &served,
        reqwest::Method::GET,
        "/v1/season",
        SERVER,
        None,
    )
    .await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "ana", "aud": format!("leaguekit:{}", season["name"].as_str().unwrap_or("")),
                "exp": now - 120, "iat": now - 600}),
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .expect("encode");
    let eh = format!("Bearer {expired}");
    refused(
        &served,
        "/v1/players/ana/events",
        &[("authorization", &eh)],
        401,
        "token_expired",
    )
    .await;
    let q = format!("/v1/players/ana/events?access_token={expired}");
    refused(&served, &q, &[], 401, "token_expired").await;

    let logged = served.stderr();
    assert!(
        !logged.contains(&ana) && !logged.contains(&expired),
        "a token was logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_events_the_player_stream_says_how_to_turn_them_on() {
    let config = events_season("http_events_off", false);
    let served = start(config.path());
    let sub = post(
        &served,
        "/v1/players/ana/scores",
        SERVER,
        json!({"value": 10}),
    )
    .await;
    let server = format!("Bearer {SERVER}");
    let h = [("authorization", server.as_str())];
    let mut r = reqwest::Client::new()
        .get(served.url("/v1/players/ana/events"))
        .header("authorization", &server)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 404);
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], "events_disabled", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("[events]"),
        "{body}"
    );
    // The bracket stream keeps its standings.
    let own = format!(
        "/v1/tiers/{}/brackets/{}/events",
        sub["tier"].as_str().expect("tier"),
        sub["bracket"].as_u64().expect("bracket")
    );
    let mut s = Stream::open(&served, &own, &h).await;
    let e = s.next(WAIT).await.expect("standings");
    assert_eq!((e.event.as_str(), e.id), ("standings", None));
    r = reqwest::Client::new()
        .get(served.url("/v1/players/ana/events"))
        .header("authorization", &server)
        .header("last-event-id", "garbage")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 404, "the season decides first");
}
