//! `leaguekit serve` as a game server in another language sees it: the real binary on
//! a loopback port, a real Redis, plain HTTP. Every endpoint's shapes and errors,
//! authentication, limits, idempotent retries, live streams and graceful shutdown.

use crate::common;
use crate::serving;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use serving::{SERVER, Served, Start, VIEWER, now, rfc};

/// A client of one server.
struct Api {
    http: reqwest::Client,
    served: Served,
}

/// An answer: status, headers and body (JSON, or `Value::String` of the raw text).
struct Answer {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

impl Api {
    fn new(served: Served) -> Api {
        Api {
            http: reqwest::Client::new(),
            served,
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<String>,
    ) -> Answer {
        let mut r = self.http.request(method, self.served.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        if let Some(b) = body {
            r = r.header("content-type", "application/json").body(b);
        }
        let resp = r.send().await.expect("send");
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Answer {
            status,
            headers,
            body,
        }
    }

    /// A score submit of 300 KiB with its content length, over the default body
    /// limit of 256 KiB: refused before it is read, so the connection is closed.
    async fn post_over_limit(&self) {
        let big = format!("{{\"value\":1,\"at\":\"{}\"}}", "x".repeat(300 * 1024));
        let a = self
            .fails(
                Method::POST,
                "/v1/players/ana/scores",
                Some(&big),
                413,
                "payload_too_large",
            )
            .await;
        assert_eq!(a.headers["connection"], "close");
    }

    /// A score submit of 320 KiB sent without a content length (chunked), over the
    /// default body limit of 256 KiB.
    async fn post_chunked_over_limit(&self) -> reqwest::Response {
        let chunks = (0..40).map(|_| Ok::<_, std::io::Error>(vec![b' '; 8192]));
        self.http
            .post(self.served.url("/v1/players/ana/scores"))
            .bearer_auth(SERVER)
            .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
            .send()
            .await
            .expect("send")
    }

    async fn get(&self, path: &str) -> Answer {
        self.call(Method::GET, path, Some(VIEWER), None).await
    }

    async fn post(&self, path: &str, body: Value) -> Answer {
        self.call(Method::POST, path, Some(SERVER), Some(body.to_string()))
            .await
    }

    /// A 200 answer's body.
    async fn ok(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let token = if method == Method::GET {
            VIEWER
        } else {
            SERVER
        };
        let a = self
            .call(
                method.clone(),
                path,
                Some(token),
                body.map(|b| b.to_string()),
            )
            .await;
        assert_eq!(a.status, StatusCode::OK, "{method} {path}: {}", a.body);
        a.body
    }

    /// An error answer: checks the status, the code and the JSON shape.
    async fn fails(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
        status: u16,
        code: &str,
    ) -> Answer {
        let token = if method == Method::GET {
            VIEWER
        } else {
            SERVER
        };
        let a = self
            .call(method.clone(), path, Some(token), body.map(str::to_owned))
            .await;
        assert_eq!(a.status.as_u16(), status, "{method} {path}: {}", a.body);
        assert_eq!(a.code(), code, "{method} {path}: {}", a.body);
        assert_eq!(keys(&a.body), ["error"], "{}", a.body);
        assert!(
            a.body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.len() > 10)
        );
        a
    }
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect();
    k.sort();
    k
}

/// A minute ago: inside the open period, well within the league clock.
fn recent() -> String {
    rfc(now() - chrono::Duration::minutes(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_the_command_lines_shapes() {
    let config = serving::open_season("http_shapes");
    let api = Api::new(Served::start(config.path()));
    let at = recent();

    let j = api
        .ok(
            Method::POST,
            "/v1/players/ana/join",
            Some(json!({"at": at})),
        )
        .await;
    assert_eq!(
        keys(&j),
        [
            "bracket",
            "last",
            "pending_rewards",
            "period",
            "player",
            "tier"
        ]
    );
    assert_eq!(
        (j["tier"].as_str(), j["bracket"].as_u64()),
        (Some("bronze"), Some(1))
    );
    // The join that placed a new player: no last result, no rewards waiting.
    assert_eq!(
        (&j["last"], &j["pending_rewards"]),
        (&Value::Null, &json!([]))
    );
    let period = j["period"].as_u64().expect("period");
    // A join without a body uses the league clock; only the placing answer carries
    // the welcome.
    let again = api.ok(Method::POST, "/v1/players/ana/join", None).await;
    let mut placed = j.clone();
    placed["pending_rewards"] = Value::Null;
    assert_eq!(again, placed);

    let s = api
        .ok(
            Method::POST,
            "/v1/players/ana/scores",
            Some(json!({"value": 42, "request_id": "r1", "at": at})),
        )
        .await;
    assert_eq!(
        keys(&s),
        [
            "applied",
            "bracket",
            "last",
            "pending_rewards",
            "period",
            "player",
            "rank",
            "score",
            "tier"
        ]
    );
    assert_eq!(
        (s["score"].as_u64(), s["applied"].as_bool()),
        (Some(42), Some(true))
    );

    // A player id with a slash, a space and braces, percent-encoded in the path.
    let odd = api
        .ok(
            Method::POST,
            "/v1/players/b%2Fo%20%7Bx%7D/scores",
            Some(json!({"value": 7})),
        )
        .await;
    assert_eq!(odd["player"], "b/o {x}");
    // `"rank": false` leaves the rank out (the store skips its board scan).
    let unranked = api
        .ok(
            Method::POST,
            "/v1/players/ana/scores",
            Some(json!({"value": 1, "at": at, "rank": false})),
        )
        .await;
    assert_eq!(
        keys(&unranked),
        [
            "applied",
            "bracket",
            "last",
            "pending_rewards",
            "period",
            "player",
            "score",
            "tier"
        ]
    );
    assert_eq!(unranked["score"].as_u64(), Some(43));

    let batch = api
        .ok(
            Method::POST,
            "/v1/scores:batch",
            Some(json!([
                {"player": "cy", "value": 5, "at": at},
                {"player": "", "value": 1},
                {"player": "dee", "value": 3, "bogus": true},
                {"player": "cy", "value": 5, "request_id": "x", "at": at},
                {"player": "cy", "value": 5, "request_id": "x", "at": at},
                {"player": "cy", "value": 1, "at": at, "rank": false},
            ])),
        )
        .await;
    let statuses: Vec<&str> = batch
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["status"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        statuses,
        [
            "applied",
            "refused",
            "refused",
            "applied",
            "duplicate",
            "applied"
        ]
    );
    assert_eq!(
        (batch[5]["score"].as_u64(), batch[5].get("rank")),
        (Some(11), None)
    );
    // The first score of cy placed them: the item carries the welcome's rewards (no
    // last result for a new player).
    assert_eq!(
        keys(&batch[0]),
        [
            "applied",
            "bracket",
            "pending_rewards",
            "period",
            "player",
            "rank",
            "score",
            "status",
            "tier"
        ]
    );
    assert_eq!(batch[1]["error"]["code"], "invalid_player");
    assert_eq!(batch[2]["error"]["code"], "invalid_json");
    assert_eq!(batch[4]["score"].as_u64(), Some(10));

    let p = api
        .ok(
            Method::PUT,
            "/v1/players/ana/profile",
            Some(json!({"name": "Ana", "avatar": "a.png"})),
        )
        .await;
    assert_eq!(keys(&p), ["player", "profile"]);
    assert_eq!(p["profile"], json!({"avatar": "a.png", "name": "Ana"}));
    let p2 = api.ok(Method::GET, "/v1/players/ana/profile", None).await;
    assert_eq!(p2, p);

    let st = api
        .ok(
            Method::GET,
            &format!("/v1/tiers/bronze/brackets/1?period={period}&limit=10"),
            None,
        )
        .await;
    assert_eq!(
        keys(&st),
        ["bracket", "entries", "period", "players", "tier"]
    );
    assert_eq!(
        keys(&st["entries"][0]),
        ["player", "profile", "rank", "score"]
    );
    assert_eq!(st["entries"][0]["player"], "ana");
    assert_eq!(st["entries"][0]["profile"]["name"], "Ana");
    assert_eq!(st["players"].as_u64(), Some(3));
    let page2 = api
        .ok(
            Method::GET,
            "/v1/tiers/bronze/brackets/1?offset=1&limit=1",
            None,
        )
        .await;
    assert_eq!(page2["entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(page2["entries"][0]["rank"].as_u64(), Some(2));

    let me = api.ok(Method::GET, "/v1/players/ana", None).await;
    assert_eq!(
        keys(&me),
        [
            "bracket", "last", "period", "player", "rank", "score", "tier"
        ]
    );
    assert_eq!(
        (me["rank"].as_u64(), me["last"].clone()),
        (Some(1), Value::Null)
    );
    let ghost = api.ok(Method::GET, "/v1/players/ghost", None).await;
    assert!(ghost["bracket"].is_null() && ghost["rank"].is_null() && ghost["tier"] == "bronze");

    let around = api
        .ok(Method::GET, "/v1/players/cy/around?radius=1", None)
        .await;
    assert_eq!(
        keys(&around),
        ["bracket", "entries", "period", "players", "tier"]
    );
    assert_eq!(around["entries"].as_array().map(Vec::len), Some(3));

    let counts = api.ok(Method::GET, "/v1/counts", None).await;
    assert_eq!(keys(&counts), ["period", "tiers"]);
    assert_eq!(counts["period"].as_u64(), Some(period));
    assert_eq!(keys(&counts["tiers"][0]), ["brackets", "players", "tier"]);
    assert_eq!(counts["tiers"][0]["players"].as_u64(), Some(3));
    assert_eq!(counts["tiers"].as_array().map(Vec::len), Some(5));

    let rewards = api.ok(Method::GET, "/v1/players/ana/rewards", None).await;
    assert_eq!(rewards, json!({"player": "ana", "rewards": []}));
    let claim = api
        .ok(Method::POST, "/v1/players/ana/rewards:claim", None)
        .await;
    assert_eq!(claim, json!({"player": "ana", "granted": []}));

    let periods = api.ok(Method::GET, "/v1/periods", None).await;
    assert_eq!(
        keys(&periods),
        [
            "blocked_brackets",
            "blocked_rewards",
            "closed",
            "closed_through",
            "current",
            "next_boundary",
            "now",
            "pending",
            "season"
        ]
    );
    assert_eq!(
        keys(&periods["current"]),
        ["closes_at", "end", "id", "start"]
    );
    assert_eq!(periods["current"]["id"].as_u64(), Some(period));
    assert_eq!(periods["next_boundary"], periods["current"]["end"]);

    let season = api.ok(Method::GET, "/v1/season", None).await;
    assert_eq!(season["tiers"][0]["name"], "bronze");
    assert_eq!(season["bracket_size"].as_u64(), Some(100));
    // Quotas as the dashboard shows them: a count, or a percentage without quotes.
    assert_eq!(
        (
            &season["tiers"][0]["promote"],
            &season["tiers"][2]["demote"]
        ),
        (&json!("20"), &json!("10%"))
    );
    // Each tier's zone rule, resolved from [brackets] (the defaults here).
    assert_eq!(
        (
            &season["tiers"][1]["zones"],
            &season["tiers"][1]["min_players"]
        ),
        (&json!("players"), &json!(0))
    );

    // The OpenAPI document lists every API path with its method.
    let doc = api.ok(Method::GET, "/openapi.json", None).await;
    let paths: BTreeSet<String> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(p, ops)| {
            ops.as_object()
                .expect("ops")
                .keys()
                .map(move |m| format!("{} {p}", m.to_uppercase()))
        })
        .collect();
    let expected: BTreeSet<String> = [
        "POST /v1/players/{player}/join",
        "POST /v1/players/{player}/scores",
        "POST /v1/scores:batch",
        "GET /v1/players/{player}",
        "GET /v1/players/{player}/around",
        "PUT /v1/players/{player}/profile",
        "PATCH /v1/players/{player}/profile",
        "GET /v1/players/{player}/profile",
        "GET /v1/players/{player}/rewards",
        "GET /v1/players/{player}/events",
        "POST /v1/players/{player}/rewards:claim",
        "POST /v1/players/{player}/adjust",
        "POST /v1/players/{player}/token",
        "GET /v1/tiers/{tier}/brackets/{bracket}",
        "GET /v1/tiers/{tier}/brackets/{bracket}/events",
        "GET /v1/tiers/{tier}/top",
        "GET /v1/counts",
        "GET /v1/season",
        "GET /v1/periods",
        "GET /v1/periods/{period}/export",
        "GET /v1/clock",
        "POST /v1/clock",
        "POST /v1/players/{player}/ban",
        "POST /v1/players/{player}/unban",
        "GET /v1/bans",
        "GET /v1/audit",
        "POST /v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle",
        "GET /v1/webhooks/dead",
        "POST /v1/webhooks/dead:replay",
        "GET /metrics",
        "GET /healthz",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(paths, expected);
    for name in [
        "SubmissionOut",
        "StandingsOut",
        "ErrorBody",
        "PeriodsOut",
        "Event",
        "EventType",
    ] {
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "schema {name}"
        );
    }

    let health = api.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (health.status, health.body.clone()),
        (StatusCode::OK, json!({"status": "ok"}))
    );

    let metrics = api.get("/metrics").await;
    assert_eq!(metrics.status, StatusCode::OK);
    let text = metrics.body.as_str().expect("text");
    for needle in [
        "leaguekit_http_requests_total{method=\"POST\",route=\"/v1/players/{player}/scores\",status=\"200\"}",
        "leaguekit_http_request_duration_seconds_bucket{method=\"GET\"",
        "leaguekit_submits_total{result=\"applied\"}",
        "leaguekit_submits_total{result=\"duplicate\"} 1",
        "leaguekit_submits_total{result=\"refused\"}",
        "leaguekit_joins_total{tier=\"bronze\"}",
        "leaguekit_players{tier=\"bronze\"} 3",
        "leaguekit_periods_closed_total",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from /metrics:\n{text}"
        );
    }

    // The dashboard and its files.
    let page = api.get("/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .as_str()
            .is_some_and(|t| t.contains("<title>leaguekit</title>"))
    );
    for (file, kind) in [
        ("app.js", "javascript"),
        ("style.css", "text/css"),
        ("icon.svg", "svg"),
    ] {
        let a = api.get(&format!("/assets/{file}")).await;
        assert_eq!(a.status, StatusCode::OK, "{file}");
        let ct = a.headers["content-type"].to_str().expect("ascii");
        assert!(ct.contains(kind), "{file}: {ct}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_json_with_the_right_status_and_write_nothing() {
    let config = serving::open_season("http_errors");
    let api = Api::new(Served::start(config.path()));
    let at = recent();
    let long = "x".repeat(65);
    let g = Method::GET;
    let p = Method::POST;

    // 400: bad input. Nothing is written.
    api.fails(
        p.clone(),
        &format!("/v1/players/{long}/scores"),
        Some(r#"{"value":1}"#),
        400,
        "invalid_player",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(r#"{"value":"#),
        400,
        "invalid_json",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(r#"{"value":1,"extra":2}"#),
        400,
        "invalid_json",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        None,
        400,
        "invalid_json",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(r#"{"value":1,"at":"yesterday"}"#),
        400,
        "invalid_time",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(r#"{"value":1,"at":"2020-01-01T00:00:00Z"}"#),
        400,
        "before_season",
    )
    .await;
    let ahead = rfc(now() + chrono::Duration::hours(2));
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(&json!({"value": 1, "at": ahead}).to_string()),
        400,
        "future_time",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/join",
        Some(&json!({"at": ahead}).to_string()),
        400,
        "future_time",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(&json!({"value": 99_999_999_999_i64, "at": at}).to_string()),
        400,
        "score_out_of_range",
    )
    .await;
    let long_id = "r".repeat(129);
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(&json!({"value": 1, "request_id": long_id}).to_string()),
        400,
        "invalid_request_id",
    )
    .await;
    api.fails(
        Method::PUT,
        "/v1/players/ana/profile",
        Some(r#"{"email":"x"}"#),
        400,
        "unknown_profile_field",
    )
    .await;
    api.fails(
        Method::PUT,
        "/v1/players/ana/profile",
        Some(&json!({"name": "n".repeat(600)}).to_string()),
        400,
        "profile_too_large",
    )
    .await;
    api.fails(
        Method::PUT,
        "/v1/players/ana/profile",
        Some(r#"{"name":5}"#),
        400,
        "invalid_json",
    )
    .await;
    // A profile write needs a body (`{}` is one: PUT clears, PATCH changes nothing);
    // PATCH checks its fields, a null one too.
    for m in [Method::PUT, Method::PATCH] {
        api.fails(
            m.clone(),
            "/v1/players/ana/profile",
            None,
            400,
            "bad_request",
        )
        .await;
        api.fails(
            m.clone(),
            "/v1/players/ana/profile",
            Some("  "),
            400,
            "bad_request",
        )
        .await;
    }
    api.fails(
        Method::PATCH,
        "/v1/players/ana/profile",
        Some(r#"{"email":null}"#),
        400,
        "unknown_profile_field",
    )
    .await;
    // This season declares no cohorts: a cohort is refused, and `tier@cohort` is no
    // tier.
    api.fails(
        p.clone(),
        "/v1/players/ana/join",
        Some(r#"{"cohort":"eu"}"#),
        400,
        "unknown_cohort",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/players/ana/scores",
        Some(r#"{"value":1,"cohort":"eu"}"#),
        400,
        "unknown_cohort",
    )
    .await;
    for path in [
        "/v1/tiers/bronze/brackets/1?cohort=eu",
        "/v1/tiers/bronze/top?cohort=eu",
        "/v1/counts?cohort=eu",
    ] {
        api.fails(g.clone(), path, None, 400, "unknown_cohort")
            .await;
    }
    for path in [
        "/v1/tiers/bronze@eu/brackets/1",
        "/v1/tiers/bronze@eu/top",
        "/v1/tiers/mithril/top",
        "/v1/tiers/mithril/top?cohort=eu",
    ] {
        api.fails(g.clone(), path, None, 404, "unknown_tier").await;
    }
    api.fails(
        g.clone(),
        "/v1/tiers/bronze/top?limit=0",
        None,
        400,
        "bad_limit",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/tiers/bronze/brackets/0",
        None,
        400,
        "bad_bracket",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/tiers/bronze/brackets/x",
        None,
        400,
        "bad_request",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/tiers/bronze/brackets/1?limit=0",
        None,
        400,
        "bad_limit",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/tiers/bronze/brackets/1?limit=abc",
        None,
        400,
        "bad_request",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/players/ana/around?radius=501",
        None,
        400,
        "bad_limit",
    )
    .await;
    api.fails(
        p.clone(),
        "/v1/scores:batch",
        Some(r#"{"player":"ana"}"#),
        400,
        "invalid_json",
    )
    .await;
    // 404.
    api.fails(
        g.clone(),
        "/v1/tiers/mithril/brackets/1",
        None,
        404,
        "unknown_tier",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/tiers/mithril/brackets/1/events",
        None,
        404,
        "unknown_tier",
    )
    .await;
    api.fails(
        g.clone(),
        "/v1/counts?period=0",
        None,
        404,
        "unknown_period",
    )
    .await;
    api.fails(g.clone(), "/v1/players/ana/around", None, 404, "not_placed")
        .await;
    api.fails(g.clone(), "/v1/nothing/here", None, 404, "not_found")
        .await;
    api.fails(g.clone(), "/assets/secret.txt", None, 404, "not_found")
        .await;
    // 405.
    let a = api
        .fails(
            Method::DELETE,
            "/v1/counts",
            None,
            405,
            "method_not_allowed",
        )
        .await;
    assert!(a.headers.contains_key("allow"));
    // 409: the current period is not closed, so it cannot be exported.
    let cur = api.ok(g.clone(), "/v1/counts", None).await["period"]
        .as_u64()
        .expect("period");
    api.fails(
        g.clone(),
        &format!("/v1/periods/{cur}/export"),
        None,
        409,
        "period_open",
    )
    .await;
    // 413: the body limit (default 256 KiB) and the batch limit (1000 items). The
    // server may not have read the body, so it ends the connection and says so.
    api.post_over_limit().await;
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"player": format!("p{i}"), "value": 1}))
        .collect();
    api.fails(
        p.clone(),
        "/v1/scores:batch",
        Some(&Value::from(many).to_string()),
        413,
        "too_many_items",
    )
    .await;

    // Nothing above was written: nobody is placed, ana has no profile.
    let counts = api.ok(g.clone(), "/v1/counts", None).await;
    assert!(
        counts["tiers"]
            .as_array()
            .expect("tiers")
            .iter()
            .all(|t| t["players"] == 0),
        "{counts}"
    );
    assert_eq!(
        api.ok(g.clone(), "/v1/players/ana/profile", None).await["profile"],
        json!({})
    );

    // A body over the limit sent without a content length (chunked) is refused too.
    let r = api.post_chunked_over_limit().await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["error"]["code"], "payload_too_large");
}

/// A client that keeps connections (every HTTP client does) can send its next request
/// right after an answer the server gave without reading the body: a 413 from the
/// body limit, a 401 from the token check, a 404 from the router. hyper drops such a
/// connection; before those answers said `Connection: close`, the client reused it,
/// and a few requests in a hundred (after a 413) to one in four (after a 401 or 404)
/// failed half-sent (`BrokenPipe` or an incomplete message): without the header, this
/// loop failed in each of five runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_body_does_not_break_the_next_request() {
    let config = serving::open_season("http_refused_body");
    let api = Api::new(Served::start(config.path()));
    // A request whose body is read whole (and refused: it writes nothing).
    async fn next(api: &Api) -> Answer {
        api.call(
            Method::POST,
            "/v1/players/ana/scores",
            Some(SERVER),
            Some(r#"{"value":-1}"#.to_owned()),
        )
        .await
    }
    for _ in 0..100 {
        // Over the limit by its length: refused before it is read.
        api.post_over_limit().await;
        assert_eq!(next(&api).await.status, StatusCode::BAD_REQUEST);
        // Sent without a length: refused part-way through.
        let r = api.post_chunked_over_limit().await;
        assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(r.headers()["connection"], "close");
        assert_eq!(next(&api).await.status, StatusCode::BAD_REQUEST);
        // Under the limit, but answered before it is read.
        let small = "{\"value\":1,\"at\":\"".to_owned() + &"x".repeat(200 * 1024) + "\"}";
        let a = api
            .call(
                Method::POST,
                "/v1/players/ana/scores",
                Some("not-a-token-the-server-knows-000"),
                Some(small.clone()),
            )
            .await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
        assert_eq!(a.headers["connection"], "close");
        assert_eq!(next(&api).await.status, StatusCode::BAD_REQUEST);
        let a = api
            .call(Method::POST, "/v1/no/such/path", Some(SERVER), Some(small))
            .await;
        assert_eq!(a.status, StatusCode::NOT_FOUND);
        assert_eq!(a.headers["connection"], "close");
        assert_eq!(next(&api).await.status, StatusCode::BAD_REQUEST);
    }
    // An answer after the whole body was read keeps the connection.
    let a = next(&api).await;
    assert_eq!(a.code(), "score_out_of_range");
    assert!(!a.headers.contains_key("connection"), "{:?}", a.headers);
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"player": format!("p{i}"), "value": 1}))
        .collect();
    let a = api
        .fails(
            Method::POST,
            "/v1/scores:batch",
            Some(&Value::from(many).to_string()),
            413,
            "too_many_items",
        )
        .await;
    assert!(!a.headers.contains_key("connection"), "{:?}", a.headers);
}

/// A connection that does not send a whole request head within `[server]
/// idle_timeout` is closed: one that sent half a head, one left idle after an answer,
/// one that trickles its head a byte at a time. Before the server set hyper's timer,
/// the first two were still open after 70 s. A write whose body does not finish
/// arriving within `request_timeout` is answered 408 `body_timeout` (it was 503
/// `unknown`, though such a write never runs).
#[test]
fn slow_or_idle_connections_are_closed() {
    let config = serving::season(
        "http_idle",
        now() + chrono::Duration::hours(12),
        "1s",
        "\n[server]\nidle_timeout = \"2s\"\nrequest_timeout = \"1s\"\n",
    );
    let served = Served::start(config.path());
    let addr = served.base.trim_start_matches("http://").to_owned();
    let connect = || {
        let s = std::net::TcpStream::connect(&addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        s
    };
    // Reads until the server closes the connection; returns what it sent and when.
    let until_closed = |s: &mut std::net::TcpStream| {
        let began = Instant::now();
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return (String::from_utf8_lossy(&all).into_owned(), began.elapsed()),
                Ok(n) => all.extend_from_slice(&buf[..n]),
                // A reset is a close too.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    return (String::from_utf8_lossy(&all).into_owned(), began.elapsed());
                }
                Err(e) => panic!("still open after {:?}: {e}", began.elapsed()),
            }
        }
    };

    // Half a head.
    let mut half = connect();
    half.write_all(b"POST /v1/players/ana/scores HTTP/1.1\r\nHost: x\r\n")
        .expect("write");
    let (_, took) = until_closed(&mut half);
    assert!(took < Duration::from_secs(10), "closed after {took:?}");

    // Idle after an answer: the answer comes, then the close.
    let mut idle = connect();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let (answer, took) = until_closed(&mut idle);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(10),
        "closed after {took:?}"
    );

    // A head trickled a byte every 300 ms (for at most 6 s, well short of the whole
    // head): closed about 2 s in, though bytes keep coming.
    let mut slow = connect();
    let began = Instant::now();
    for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaa\r\n" {
        if slow.write_all(&[*b]).is_err() || began.elapsed() > Duration::from_secs(6) {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let (answer, _) = until_closed(&mut slow);
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );

    // A whole head, then half a body: the request timeout answers 408, not
    // `unknown` (the write never reached the league), and closes the connection.
    let mut half_body = connect();
    half_body
        .write_all(
            format!(
                "POST /v1/players/ana/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \
                 {SERVER}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n\
                 {{\"value\":"
            )
            .as_bytes(),
        )
        .expect("write");
    let (answer, took) = until_closed(&mut half_body);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"body_timeout\""), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");

    // A connection in use is not cut: two requests 1 s apart on one connection.
    let mut used = connect();
    for _ in 0..2 {
        used.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("write");
        let mut buf = [0u8; 4096];
        let n = used.read(&mut buf).expect("answer");
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_roles() {
    let config = serving::open_season("http_auth");
    let start = Start {
        log: "trace",
        ..Start::new(config.path())
    };
    let api = Api::new(start.spawn());
    let reads = [
        "/v1/players/ana",
        "/v1/players/ana/around",
        "/v1/players/ana/profile",
        "/v1/players/ana/rewards",
        "/v1/tiers/bronze/brackets/1",
        "/v1/tiers/bronze/brackets/1/events",
        "/v1/counts",
        "/v1/season",
        "/v1/periods",
        "/v1/periods/1/export",
        "/openapi.json",
        "/metrics",
        "/",
        "/assets/app.js",
        "/no/such/path",
    ];
    let writes = [
        (Method::POST, "/v1/players/ana/join"),
        (Method::POST, "/v1/players/ana/scores"),
        (Method::POST, "/v1/scores:batch"),
        (Method::PUT, "/v1/players/ana/profile"),
        (Method::POST, "/v1/players/ana/rewards:claim"),
    ];
    let wrong = "server-token-for-tests-0002";
    for path in reads {
        for token in [None, Some(wrong), Some("x")] {
            let a = api.call(Method::GET, path, token, None).await;
            assert_eq!(
                a.status,
                StatusCode::UNAUTHORIZED,
                "GET {path} with {token:?}"
            );
            assert_eq!(a.code(), "unauthorized");
            assert!(a.headers.contains_key("www-authenticate"));
        }
    }
    for (m, path) in &writes {
        let body = Some(r#"{"value":1}"#.to_owned());
        for token in [None, Some(wrong)] {
            let a = api.call(m.clone(), path, token, body.clone()).await;
            assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{m} {path}");
        }
        // A viewer only reads.
        let a = api.call(m.clone(), path, Some(VIEWER), body.clone()).await;
        assert_eq!(
            (a.status, a.code()),
            (StatusCode::FORBIDDEN, "forbidden"),
            "{m} {path}"
        );
    }
    // Only /healthz answers without a token.
    let h = api.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(h.status, StatusCode::OK);
    // A server token reads too; "bearer" is case-insensitive.
    let r = api
        .http
        .get(api.served.url("/v1/season"))
        .header("authorization", format!("bearer {SERVER}"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    // Nothing was written by the refused writes.
    let counts = api.ok(Method::GET, "/v1/counts", None).await;
    assert!(
        counts["tiers"]
            .as_array()
            .expect("tiers")
            .iter()
            .all(|t| t["players"] == 0)
    );

    // The dashboard's session cookie reads, never writes.
    let cookie = format!("leaguekit_token={VIEWER}");
    let r = api
        .http
        .get(api.served.url("/v1/counts"))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let server_cookie = format!("leaguekit_token={SERVER}");
    let r = api
        .http
        .post(api.served.url("/v1/players/ana/join"))
        .header("cookie", &server_cookie)
        .send()
        .await
        .expect("send");
    assert_eq!(
        r.status(),
        StatusCode::UNAUTHORIZED,
        "no writes with a cookie"
    );
    // A browser without a token gets the sign-in page, with 401.
    let r = api
        .http
        .get(api.served.url("/"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.text().await.expect("text").contains("viewer token"));

    // Tokens never reach the log, even at trace level.
    let log = api.served.stderr();
    assert!(
        log.contains("request"),
        "the trace layer logged nothing:\n{log}"
    );
    for secret in [SERVER, VIEWER, wrong] {
        assert!(!log.contains(secret), "a token reached the log");
    }
}

#[test]
fn serve_refuses_to_start_without_usable_tokens() {
    let config = serving::open_season("http_tokens");
    let none = Start {
        server_tokens: None,
        viewer_tokens: None,
        ..Start::new(config.path())
    };
    let (code, err) = none.refused();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("LEAGUEKIT_SERVER_TOKENS") && err.contains("openssl rand"),
        "{err}"
    );
    let short = Start {
        server_tokens: Some("tooshort"),
        ..Start::new(config.path())
    };
    let (code, err) = short.refused();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("LEAGUEKIT_SERVER_TOKENS") && err.contains("too short"),
        "{err}"
    );
    assert!(
        !err.contains("tooshort"),
        "the token is not repeated: {err}"
    );

    // Tokens and the body limit from the config's [server] section.
    let with_server = serving::season(
        "http_cfg",
        now() + chrono::Duration::hours(12),
        "1s",
        "\n[server]\nserver_tokens = [\"config-server-token-000001\"]\nviewer_tokens = [\"config-viewer-token-000001\"]\nbody_limit = 2048\n",
    );
    let from_config = Start {
        server_tokens: None,
        viewer_tokens: None,
        ..Start::new(with_server.path())
    }
    .spawn();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let http = reqwest::Client::new();
        let r = http
            .get(from_config.url("/v1/season"))
            .bearer_auth("config-viewer-token-000001")
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), StatusCode::OK);
        let r = http
            .post(from_config.url("/v1/players/ana/scores"))
            .bearer_auth("config-server-token-000001")
            .body(format!(
                "{{\"value\":1,\"request_id\":\"{}\"}}",
                "r".repeat(3000)
            ))
            .send()
            .await
            .expect("send");
        assert_eq!(
            r.status(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_limit = 2048"
        );
    });

    // A bad [server] section is a config error with file:line:col.
    let bad = serving::season(
        "http_badcfg",
        now() + chrono::Duration::hours(12),
        "1s",
        "\n[server]\nviewer_tokens = [\"has spaces in it, which is bad\"]\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .arg("--config")
        .arg(bad.path())
        .args(["check"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:", bad.path().display())) && err.contains("server.viewer_tokens"),
        "{err}"
    );
    assert!(
        !err.contains("which is bad"),
        "the token is not repeated: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_with_a_request_id_apply_once() {
    let config = serving::open_season("http_retry");
    let api = Api::new(Served::start(config.path()));
    let at = recent();
    let body = json!({"value": 10, "request_id": "match-1", "at": at});
    let first = api.post("/v1/players/ana/scores", body.clone()).await;
    assert_eq!(first.status, StatusCode::OK);
    // A game server that lost the answer resends, many times, at once.
    let resends = futures::future::join_all(
        (0..20).map(|_| api.post("/v1/players/ana/scores", body.clone())),
    )
    .await;
    for r in &resends {
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["applied"], false);
        assert_eq!(r.body["score"].as_u64(), Some(10));
        assert_eq!(r.body["rank"], first.body["rank"]);
    }
    // Twenty concurrent first sends of one new request id: exactly one applies.
    let body = json!({"value": 5, "request_id": "match-2", "at": at});
    let race = futures::future::join_all(
        (0..20).map(|_| api.post("/v1/players/ana/scores", body.clone())),
    )
    .await;
    let applied = race.iter().filter(|r| r.body["applied"] == true).count();
    assert_eq!(applied, 1, "exactly one of the racing sends applies");
    assert!(race.iter().all(|r| r.body["score"].as_u64() == Some(15)));
    // The same request id for another player is another request.
    let other = api
        .post(
            "/v1/players/bo/scores",
            json!({"value": 10, "request_id": "match-1", "at": at}),
        )
        .await;
    assert_eq!(other.body["applied"], true);
    // Through a batch, too.
    let b = api
        .post(
            "/v1/scores:batch",
            json!([{"player": "ana", "value": 10, "request_id": "match-1", "at": at}]),
        )
        .await;
    assert_eq!(b.body[0]["status"], "duplicate");
    assert_eq!(
        b.body[0]["score"].as_u64(),
        Some(10),
        "a duplicate answers like the first time"
    );
    // A claim with a request id answers the same twice.
    let c1 = api
        .post("/v1/players/ana/rewards:claim", json!({"request_id": "c1"}))
        .await;
    let c2 = api
        .post("/v1/players/ana/rewards:claim", json!({"request_id": "c1"}))
        .await;
    assert_eq!(c1.body, c2.body);
    let me = api.ok(Method::GET, "/v1/players/ana", None).await;
    assert_eq!(me["score"].as_u64(), Some(15));
}

/// Reads server-sent events from a response: (event, data) pairs.
struct Events {
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<Vec<u8>>> + Send>>,
    buffer: String,
}

impl Events {
    async fn open(http: &reqwest::Client, url: &str) -> Events {
        let r = http
            .get(url)
            .bearer_auth(VIEWER)
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), StatusCode::OK);
        assert!(
            r.headers()["content-type"]
                .to_str()
                .expect("ascii")
                .starts_with("text/event-stream")
        );
        Events {
            body: Box::pin(r.bytes_stream().map(|c| c.map(|b| b.to_vec()))),
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when the stream ended; panics after `limit`.
    async fn next(&mut self, limit: Duration) -> Option<(String, Value)> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim().to_owned();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some((
                    event,
                    serde_json::from_str(&data).expect("event data is JSON"),
                ));
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => panic!("no event within {limit:?}"),
                Ok(None) => return None,
                Ok(Some(chunk)) => {
                    let chunk = chunk.expect("stream chunk");
                    self.buffer.push_str(&String::from_utf8_lossy(&chunk));
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_standings_follow_writes_from_any_process() {
    let config = serving::open_season("http_live");
    let api = Api::new(Served::start(config.path()));
    let at = recent();
    api.post("/v1/players/ana/scores", json!({"value": 10, "at": at}))
        .await;
    let mut events = Events::open(
        &api.http,
        &api.served
            .url("/v1/tiers/bronze/brackets/1/events?limit=10"),
    )
    .await;
    let (kind, first) = events
        .next(Duration::from_secs(5))
        .await
        .expect("first event");
    assert_eq!(kind, "standings");
    assert_eq!(first["entries"][0]["score"].as_u64(), Some(10));

    // A write through this server is sent at once.
    let sent = Instant::now();
    api.post("/v1/players/bo/scores", json!({"value": 20, "at": at}))
        .await;
    let (_, next) = events.next(Duration::from_secs(2)).await.expect("event");
    assert_eq!(next["entries"][0]["player"], "bo", "{next}");
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "took {:?}",
        sent.elapsed()
    );

    // A write by another process (a game server embedding the library) shows up
    // within a second, through the poll.
    let season = leaguekit::Season::load(config.path()).expect("season");
    let league = leaguekit::League::new(season, common::redis_store().await);
    let sent = Instant::now();
    league
        .submit("cy", 30, leaguekit::SubmitOptions::default())
        .await
        .expect("submit");
    let (_, next) = events.next(Duration::from_secs(2)).await.expect("event");
    assert_eq!(next["entries"][0]["player"], "cy", "{next}");
    assert!(
        sent.elapsed() < Duration::from_millis(1500),
        "took {:?}",
        sent.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_requests_in_flight_and_ends_streams() {
    let config = serving::open_season("http_stop");
    let mut api = Api::new(Served::start(config.path()));
    let at = recent();
    api.post("/v1/players/ana/scores", json!({"value": 1, "at": at}))
        .await;
    let mut events = Events::open(
        &api.http,
        &api.served.url("/v1/tiers/bronze/brackets/1/events"),
    )
    .await;
    events
        .next(Duration::from_secs(5))
        .await
        .expect("first event");

    // A request in flight: its head is sent, its body is not finished yet.
    let addr = api.served.base.trim_start_matches("http://").to_owned();
    let body = json!({"value": 5, "request_id": "in-flight", "at": at}).to_string();
    let mut tcp = std::net::TcpStream::connect(&addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(
        tcp,
        "POST /v1/players/ana/scores HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {SERVER}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
        body.len(),
        &body[..5]
    )
    .expect("write head");
    tcp.flush().expect("flush");
    tokio::time::sleep(Duration::from_millis(300)).await;

    api.served.terminate();
    // The live stream ends cleanly (not reset) once shutdown starts.
    let end = events.next(Duration::from_secs(10)).await;
    assert!(end.is_none(), "the stream should end, got {end:?}");
    // The request in flight still gets its answer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    tcp.write_all(&body.as_bytes()[5..]).expect("write rest");
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).expect("read answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"score\":6"), "{answer}");
    // Then the process exits, successfully.
    let status = api
        .served
        .wait(Duration::from_secs(20))
        .expect("serve exits after SIGTERM");
    assert!(status.success(), "{status}: {}", api.served.stderr());
    assert!(api.served.stderr().contains("leaguekit: stopped"));
    assert!(
        std::net::TcpStream::connect(&addr).is_err(),
        "nothing listens any more"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_failures_are_503() {
    // A Redis of our own, to stop under the server.
    let redis = common::RedisServer::start(&[]);
    let config = serving::season(
        "http_down",
        now() + chrono::Duration::hours(12),
        "1s",
        "\n[server]\nrequest_timeout = \"2s\"\n",
    );
    let start = Start {
        redis: redis.url(),
        ..Start::new(config.path())
    };
    let api = Api::new(start.spawn());
    let at = recent();
    assert_eq!(
        api.post("/v1/players/ana/scores", json!({"value": 1, "at": at}))
            .await
            .status,
        StatusCode::OK
    );
    common::command(redis.port, &["SHUTDOWN", "NOSAVE"]).ok();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let h = api.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (h.status, h.code()),
        (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable"),
        "{}",
        h.body
    );
    // From then on nothing is sent: reads, submits (with or without a request id),
    // joins and batches are answered at once that nothing was written, with the wait.
    let unreachable = |what: &str, a: &Answer, took: Duration| {
        assert_eq!(
            (a.status, a.code()),
            (StatusCode::SERVICE_UNAVAILABLE, "store_unreachable"),
            "{what}: {}",
            a.body
        );
        let wait: u64 = a
            .headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{what}: no Retry-After: {:?}", a.headers));
        assert!((1..=5).contains(&wait), "{what}: Retry-After {wait}");
        assert!(
            a.body["error"]["retry_after_ms"].as_u64().is_some(),
            "{what}: {}",
            a.body
        );
        let message = a.body["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("nothing was written"), "{what}: {message}");
        assert!(took < Duration::from_millis(900), "{what} took {took:?}");
    };
    let sent = Instant::now();
    let r = api.get("/v1/tiers/bronze/brackets/1").await;
    unreachable("a read", &r, sent.elapsed());
    let sent = Instant::now();
    let w = api
        .post(
            "/v1/players/ana/scores",
            json!({"value": 1, "request_id": "r9", "at": at}),
        )
        .await;
    unreachable("a submit", &w, sent.elapsed());
    let sent = Instant::now();
    let w = api
        .post("/v1/players/ana/scores", json!({"value": 1}))
        .await;
    unreachable("a submit without a request id", &w, sent.elapsed());
    let sent = Instant::now();
    let j = api.post("/v1/players/cy/join", json!({})).await;
    unreachable("a join", &j, sent.elapsed());
    let message = j.body["error"]["message"].as_str().unwrap_or("");
    assert!(
        !message.contains("request id") && !message.contains("request_id"),
        "a join has no request id: {message}"
    );
    let sent = Instant::now();
    let b = api
        .post(
            "/v1/scores:batch",
            json!([{"player": "ana", "value": 1, "request_id": "r9", "at": at}]),
        )
        .await;
    let took = sent.elapsed();
    // The batch answers per item: refused, nothing written.
    assert_eq!(b.status, StatusCode::OK, "{}", b.body);
    assert_eq!(b.body[0]["status"], "refused", "{}", b.body);
    assert_eq!(
        b.body[0]["error"]["code"], "store_unreachable",
        "{}",
        b.body
    );
    assert!(took < Duration::from_millis(900), "the batch took {took:?}");
    // The metrics still answer while the store is down, and count the 503s.
    let sent = Instant::now();
    let metrics = api.get("/metrics").await;
    assert_eq!(
        metrics.status,
        StatusCode::OK,
        "{:?} {}",
        sent.elapsed(),
        metrics.body
    );
    assert!(
        sent.elapsed() < Duration::from_millis(1900),
        "{:?}",
        sent.elapsed()
    );
    let text = metrics.body.as_str().expect("text");
    assert!(
        text.contains("route=\"/v1/tiers/{tier}/brackets/{bracket}\",status=\"503\"}"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_season_over_http() {
    // Period 1 ends in 6 s; max_skew 3 s, so it closes at +9 s, and the service's own
    // scheduler closes it a moment later.
    let end = now() + chrono::Duration::seconds(6);
    let config = serving::season("http_season", end, "3s", "");
    let start = Start {
        args: vec![],
        ..Start::new(config.path())
    };
    let api = Api::new(start.spawn());

    // Period 1: three players join and play.
    for (p, v) in [("ana", 50), ("bo", 40), ("cy", 30)] {
        let j = api
            .ok(Method::POST, &format!("/v1/players/{p}/join"), None)
            .await;
        assert_eq!(
            (j["period"].as_u64(), j["tier"].as_str()),
            (Some(1), Some("bronze"))
        );
        let s = api
            .ok(
                Method::POST,
                &format!("/v1/players/{p}/scores"),
                Some(json!({"value": v, "request_id": format!("{p}-m1")})),
            )
            .await;
        assert_eq!(s["score"].as_u64(), Some(v));
    }
    let st = api
        .ok(Method::GET, "/v1/tiers/bronze/brackets/1", None)
        .await;
    let order: Vec<&str> = st["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["player"].as_str())
        .collect();
    assert_eq!(order, ["ana", "bo", "cy"]);

    // A fast game server's clock stamps period 2 before it starts: 409 with Retry-After.
    let wait = (end - chrono::Duration::milliseconds(2500) - chrono::Utc::now())
        .to_std()
        .unwrap_or_default();
    tokio::time::sleep(wait).await;
    let early = (end + chrono::Duration::milliseconds(500)).to_rfc3339();
    let a = api
        .call(
            Method::POST,
            "/v1/players/dee/scores",
            Some(SERVER),
            Some(json!({"value": 1, "at": early}).to_string()),
        )
        .await;
    assert_eq!(
        (a.status, a.code()),
        (StatusCode::CONFLICT, "not_started"),
        "{}",
        a.body
    );
    assert!(a.headers.contains_key("retry-after"));
    assert!(a.body["error"]["retry_after_ms"].as_u64().is_some());

    // Period 2 has started, period 1 still takes late events: a returning player must
    // wait for their outcome: 409 still_closing with Retry-After.
    let wait = (end + chrono::Duration::milliseconds(300) - chrono::Utc::now())
        .to_std()
        .unwrap_or_default();
    tokio::time::sleep(wait).await;
    let a = api
        .call(Method::POST, "/v1/players/ana/join", Some(SERVER), None)
        .await;
    assert_eq!(
        (a.status, a.code()),
        (StatusCode::CONFLICT, "still_closing"),
        "{}",
        a.body
    );
    let retry: u64 = a.headers["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=4).contains(&retry), "Retry-After {retry}");

    // The service's own scheduler closes period 1 (no rollover call from us).
    let deadline = Instant::now() + Duration::from_secs(30);
    let periods = loop {
        let p = api.ok(Method::GET, "/v1/periods", None).await;
        if p["closed_through"].as_u64() >= Some(1) {
            break p;
        }
        assert!(
            Instant::now() < deadline,
            "the scheduler did not close period 1: {p}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(periods["current"]["id"].as_u64(), Some(2));
    let report = &periods["closed"][0];
    assert_eq!(
        (
            report["period"].as_u64(),
            report["players"].as_u64(),
            report["promoted"].as_u64()
        ),
        (Some(1), Some(3), Some(3)),
        "{periods}"
    );
    assert_eq!(report["tiers"]["bronze"]["players"].as_u64(), Some(3));

    // Rewards, claimed once.
    let r = api.ok(Method::GET, "/v1/players/ana/rewards", None).await;
    assert_eq!(
        r["rewards"],
        json!([{"source": "1/bronze/1", "grant": "gems:100"}])
    );
    let c1 = api
        .ok(
            Method::POST,
            "/v1/players/ana/rewards:claim",
            Some(json!({"request_id": "claim-1"})),
        )
        .await;
    let c2 = api
        .ok(
            Method::POST,
            "/v1/players/ana/rewards:claim",
            Some(json!({"request_id": "claim-1"})),
        )
        .await;
    assert_eq!(
        c1["granted"],
        json!([{"source": "1/bronze/1", "grant": "gems:100"}])
    );
    assert_eq!(c1, c2);
    assert_eq!(
        api.ok(Method::GET, "/v1/players/ana/rewards", None).await["rewards"],
        json!([])
    );

    // The export, as JSON lines.
    let text = api
        .http
        .get(api.served.url("/v1/periods/1/export"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .expect("send");
    assert_eq!(text.headers()["content-type"], "application/x-ndjson");
    let text = text.text().await.expect("text");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        keys(&lines[0]),
        [
            "bracket",
            "next_tier",
            "outcome",
            "period",
            "player",
            "rank",
            "reward",
            "score",
            "tier"
        ]
    );
    assert_eq!(
        (lines[0]["player"].as_str(), lines[0]["outcome"].as_str()),
        (Some("ana"), Some("promoted"))
    );

    // Period 2: ana plays in silver; her last period shows the promotion.
    let s = api
        .ok(
            Method::POST,
            "/v1/players/ana/scores",
            Some(json!({"value": 5})),
        )
        .await;
    assert_eq!(
        (s["period"].as_u64(), s["tier"].as_str()),
        (Some(2), Some("silver"))
    );
    let me = api.ok(Method::GET, "/v1/players/ana", None).await;
    assert_eq!(me["last"]["outcome"], "promoted");
    assert_eq!(me["last"]["next_tier"], "silver");
    assert_eq!(me["last"]["reward"], "gems:100");
    // A closed period refuses late events.
    let late = rfc(end - chrono::Duration::seconds(1));
    api.fails(
        Method::POST,
        "/v1/players/bo/scores",
        Some(&json!({"value": 1, "at": late}).to_string()),
        409,
        "period_closed",
    )
    .await;
    // The metrics saw the rollover.
    let m = api.get("/metrics").await;
    let m = m.body.as_str().expect("text");
    assert!(
        m.contains("leaguekit_brackets_closed_total{tier=\"bronze\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("leaguekit_rollover_duration_seconds_bucket"),
        "{m}"
    );
}

/// Redis full (maxmemory under noeviction): `/healthz` stays 200 but says `degraded`
/// with `store_refuses_writes`, the gauge says 1, reads answer and a write is 503
/// `store_full`. A Redis whose memory policy evicts keys is refused at start, unless
/// `--allow-evicting-redis` (or `LEAGUEKIT_ALLOW_EVICTING_REDIS`) opts in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_redis_is_degraded_and_still_reads() {
    let redis = common::RedisServer::start(&["--maxmemory-policy", "noeviction"]);
    let config = serving::open_season("http_full");
    let start = Start {
        redis: redis.url(),
        ..Start::new(config.path())
    };
    let api = Api::new(start.spawn());
    let at = recent();
    for (p, v) in [("ana", 50), ("bo", 40)] {
        api.ok(
            Method::PUT,
            &format!("/v1/players/{p}/profile"),
            Some(json!({"name": p.to_uppercase()})),
        )
        .await;
        api.ok(
            Method::POST,
            &format!("/v1/players/{p}/scores"),
            Some(json!({"value": v, "at": at})),
        )
        .await;
    }
    let h = api.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (h.status, &h.body),
        (StatusCode::OK, &json!({"status": "ok"}))
    );

    // A maxmemory below what the server uses: full at once.
    common::command(redis.port, &["CONFIG", "SET", "maxmemory", "1"]).expect("config set");
    let h = api.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(h.status, StatusCode::OK, "{}", h.body);
    assert_eq!(
        (h.body["status"].as_str(), h.body["code"].as_str()),
        (Some("degraded"), Some("store_refuses_writes")),
        "{}",
        h.body
    );
    assert!(
        h.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("maxmemory")),
        "{}",
        h.body
    );
    let metrics = api.get("/metrics").await;
    let text = metrics.body.as_str().expect("text");
    assert!(
        text.lines()
            .any(|l| l == "leaguekit_store_refuses_writes 1"),
        "{text}"
    );
    let st = api
        .ok(Method::GET, "/v1/tiers/bronze/brackets/1", None)
        .await;
    let names: Vec<&str> = st["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["profile"]["name"].as_str())
        .collect();
    assert_eq!(names, ["ANA", "BO"]);
    let p = api.ok(Method::GET, "/v1/players/bo", None).await;
    assert_eq!(p["rank"].as_u64(), Some(2), "{p}");
    api.ok(Method::GET, "/v1/players/ana/around", None).await;
    api.ok(Method::GET, "/v1/counts", None).await;
    api.ok(Method::GET, "/v1/periods", None).await;
    api.fails(
        Method::POST,
        "/v1/players/cy/scores",
        Some(&json!({"value": 5, "at": at}).to_string()),
        503,
        "store_full",
    )
    .await;

    // Room again: healthy again.
    common::command(redis.port, &["CONFIG", "SET", "maxmemory", "0"]).expect("config set");
    let h = api.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (h.status, &h.body),
        (StatusCode::OK, &json!({"status": "ok"}))
    );
    let metrics = api.get("/metrics").await;
    let text = metrics.body.as_str().expect("text");
    assert!(
        text.lines()
            .any(|l| l == "leaguekit_store_refuses_writes 0"),
        "{text}"
    );

    // An evicting policy: refused at start, saying why and how to opt in.
    common::command(
        redis.port,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    )
    .expect("config set");
    let (code, stderr) = start.refused();
    assert_eq!(code, Some(1), "{stderr}");
    for needed in [
        "maxmemory-policy allkeys-lru",
        "noeviction",
        "--allow-evicting-redis",
    ] {
        assert!(stderr.contains(needed), "{needed:?} missing from: {stderr}");
    }
    let allowed = Start {
        redis: redis.url(),
        args: vec!["--no-scheduler", "--allow-evicting-redis"],
        ..Start::new(config.path())
    };
    let api = Api::new(allowed.spawn());
    api.ok(Method::GET, "/v1/tiers/bronze/brackets/1", None)
        .await;
    // The same opt-in from the environment, on a one-shot command.
    for (value, code) in [("1", Some(0)), ("0", Some(1))] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .args(["--config"])
            .arg(config.path())
            .args(["--redis", &redis.url(), "counts"])
            .env_remove("LEAGUEKIT_REDIS")
            .env_remove("LEAGUEKIT_CONFIG")
            .env("LEAGUEKIT_ALLOW_EVICTING_REDIS", value)
            .output()
            .expect("leaguekit counts");
        assert_eq!(
            out.status.code(),
            code,
            "LEAGUEKIT_ALLOW_EVICTING_REDIS={value}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
