//! The season's limits and operators' adjustments over HTTP: a refused update's error
//! shape (422 `limit_exceeded`, 429 `rate_limited` with `Retry-After`), and the admin
//! route `POST /v1/players/{player}/adjust` (403 for server and viewer tokens, the
//! audit log holding what an admin did).

use crate::serving;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use serving::{SERVER, Start, VIEWER, now};

const ADMIN: &str = "admin-token-for-tests-0001";

async fn call(
    http: &reqwest::Client,
    served: &serving::Served,
    method: Method,
    path: &str,
    token: &str,
    body: Value,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let r = http
        .request(method, served.url(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("send");
    let status = r.status();
    let headers = r.headers().clone();
    let body = r.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_answer_422_and_429_and_adjust_is_admin_only() {
    let config = serving::season(
        "http_limits",
        now() + chrono::Duration::hours(12),
        "1s",
        &format!(
            "\n[limits]\nmax_value = 1000\nrate = \"2/1h\"\n\n[server]\nadmin_tokens = [\"ops:{ADMIN}\"]\n"
        ),
    );
    let served = Start::new(config.path()).spawn();
    let http = reqwest::Client::new();
    let post = |path: &'static str, token: &'static str, body: Value| {
        call(&http, &served, Method::POST, path, token, body)
    };

    let (status, _, body) = post("/v1/players/ana/scores", SERVER, json!({"value": 1001})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "limit_exceeded");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("limits.max_value = 1000")),
        "{body}"
    );
    for v in [10, 20] {
        let (status, _, body) = post("/v1/players/ana/scores", SERVER, json!({"value": v})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, headers, body) = post("/v1/players/ana/scores", SERVER, json!({"value": 5})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "rate_limited");
    let wait_ms = body["error"]["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!((1_700_000..=1_800_000).contains(&wait_ms), "{body}");
    let secs: u64 = headers["retry-after"]
        .to_str()
        .expect("header")
        .parse()
        .expect("seconds");
    assert_eq!(secs, wait_ms.div_ceil(1000));
    // A batch answers it per item.
    let (status, _, body) = post(
        "/v1/scores:batch",
        SERVER,
        json!([{"player": "ana", "value": 1}, {"player": "bo", "value": 1}]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body[0]["error"]["code"], "rate_limited", "{body}");
    assert_eq!(body[1]["status"], "applied", "{body}");
    // Each refusal is counted by its limit.
    let metrics = served.metrics(&http, VIEWER).await;
    for line in [
        "leaguekit_limited_total{limit=\"max_value\"} 1",
        "leaguekit_limited_total{limit=\"rate\"} 2",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "{line} missing:\n{metrics}"
        );
    }

    // Adjusting is for admin tokens only; limits do not apply to it.
    let adjust = json!({"by": 5000, "reason": "tournament prize"});
    for token in [SERVER, VIEWER] {
        let (status, _, body) = post("/v1/players/ana/adjust", token, adjust.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body["error"]["code"], "forbidden");
    }
    let (status, _, body) = post("/v1/players/ana/adjust", ADMIN, adjust).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["before"].clone(), body["after"].clone()),
        (json!(30), json!(5030))
    );
    assert_eq!(body["tier"], "bronze");
    let (status, _, body) = post(
        "/v1/players/ana/adjust",
        ADMIN,
        json!({"by": 1, "set": 2, "reason": "x"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _, body) = post(
        "/v1/players/nobody/adjust",
        ADMIN,
        json!({"set": 2, "reason": "x"}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["code"], "not_placed");
    let (_, _, body) = call(
        &http,
        &served,
        Method::GET,
        "/v1/players/ana",
        VIEWER,
        Value::Null,
    )
    .await;
    assert_eq!(body["score"], 5030, "{body}");

    // The audit log holds the admin's adjustment, named by the token's name.
    let league = leaguekit::League::new(
        leaguekit::Season::load(config.path()).expect("season"),
        crate::common::redis_store().await,
    );
    let audit = league
        .operator()
        .audit(&leaguekit::operator::AuditQuery::default())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].actor, "ops");
    assert_eq!(audit[0].action, "adjust");
    assert_eq!(audit[0].player.as_deref(), Some("ana"));
    assert_eq!(audit[0].reason.as_deref(), Some("tournament prize"));
    assert_eq!(
        (
            audit[0].details["before"].clone(),
            audit[0].details["after"].clone()
        ),
        (json!(30), json!(5030))
    );
}
