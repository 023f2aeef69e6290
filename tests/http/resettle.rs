//! `POST /v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle`: the router
//! served on a loopback port, on the embedded store with a league clock the test
//! moves. Admin tokens only; the answer is the command line's report; bad input is a
//! typed error that writes nothing.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use leaguekit::server::{CancellationToken, ServerOptions, Tokens};
use leaguekit::{League, ManualClock, MemoryStore, Season, SubmitOptions};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SERVER: &str = "server-token-for-resettle-0001";
const VIEWER: &str = "viewer-token-for-resettle-0001";
const ADMIN: &str = "admin-token-for-resettle-00001";

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

const SEASON: &str = r#"
name = "fixhttp"
key_prefix = "fixhttp"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 100
[scoring]
mode = "best"
max_score = 1_000_000
[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{ ranks = "1", grant = "gems:100" }]
[[tiers]]
name = "silver"
promote = 0
demote = 1
"#;

async fn post(base: &str, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
    let r = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("send");
    let status = r.status();
    (status, r.json().await.expect("json"))
}

#[tokio::test]
async fn resettle_over_http_is_for_admins_and_changes_nothing_twice() {
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let season = Season::from_toml(SEASON, "fixhttp.toml").expect("season");
    let league = Arc::new(League::with_clock(season, store, Arc::new(clock.clone())));
    for (p, v) in [("cheat", 900), ("ana", 50), ("bo", 40)] {
        league
            .submit(p, v, SubmitOptions::default().at(t("2026-01-05T11:00:00Z")))
            .await
            .expect("submit");
    }
    let tokens = Tokens::new([SERVER], [VIEWER])
        .expect("tokens")
        .with_admin([format!("ops:{ADMIN}")])
        .expect("admin");
    let router = leaguekit::server::router(
        league.clone(),
        &ServerOptions::new(tokens),
        CancellationToken::new(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let stop = CancellationToken::new();
    tokio::spawn(leaguekit::server::serve(
        listener,
        router,
        stop.clone(),
        std::time::Duration::from_secs(1),
    ));

    let path = "/v1/periods/1/tiers/bronze/brackets/1/resettle";
    let body = json!({"exclude": ["cheat"], "reason": "speed hack"});
    // Not closed yet.
    let (s, a) = post(&base, path, ADMIN, body.clone()).await;
    assert_eq!(
        (s, a["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("bracket_not_closed"))
    );
    clock.set(t("2026-01-06T00:00:10Z"));
    league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
    // Server and viewer tokens are refused.
    for token in [SERVER, VIEWER] {
        let (s, a) = post(&base, path, token, body.clone()).await;
        assert_eq!(
            (s, a["error"]["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("forbidden"))
        );
    }
    // Bad input: typed errors, nothing written.
    for (p, b, status, code) in [
        (
            path,
            json!({"exclude": [], "reason": "x"}),
            400,
            "no_exclusions",
        ),
        (
            path,
            json!({"exclude": ["zed"], "reason": "x"}),
            400,
            "not_in_bracket",
        ),
        (
            path,
            json!({"exclude": ["cheat", "ana", "bo"], "reason": "x"}),
            400,
            "excludes_everyone",
        ),
        (path, json!({"exclude": ["cheat"]}), 400, "bad_request"),
        (
            path,
            json!({"exclude": ["cheat"], "reason": "x", "extra": 1}),
            400,
            "invalid_json",
        ),
        (
            "/v1/periods/1/tiers/bronze/brackets/2/resettle",
            body.clone(),
            404,
            "unknown_bracket",
        ),
        (
            "/v1/periods/1/tiers/gold/brackets/1/resettle",
            body.clone(),
            404,
            "unknown_tier",
        ),
        (
            "/v1/periods/0/tiers/bronze/brackets/1/resettle",
            body.clone(),
            404,
            "unknown_period",
        ),
        (
            "/v1/periods/1/tiers/bronze/brackets/0/resettle",
            body.clone(),
            400,
            "bad_bracket",
        ),
    ] {
        let (s, a) = post(&base, p, ADMIN, b.clone()).await;
        assert_eq!(
            (s.as_u16(), a["error"]["code"].as_str()),
            (status, Some(code)),
            "{p} {b}: {a}"
        );
    }
    assert!(
        league
            .operator()
            .audit(&Default::default())
            .await
            .expect("audit")
            .is_empty()
    );
    assert_eq!(league.rewards("ana").await.expect("rewards").len(), 0);

    let (s, report) = post(&base, path, ADMIN, body.clone()).await;
    assert_eq!(s, StatusCode::OK, "{report}");
    assert_eq!(
        (report["changed"].as_bool(), report["granted_now"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(report["players"][0]["player"], "ana");
    assert_eq!(report["players"][0]["after"]["outcome"], "promoted");
    assert_eq!(
        report["players"][0]["granted"],
        json!([{"source": "1/bronze/1/c1", "grant": "gems:100"}])
    );
    let audit = league
        .operator()
        .audit(&Default::default())
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].actor, "ops");
    let (s, again) = post(&base, path, ADMIN, body).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (again["changed"].as_bool(), again["granted_now"].as_u64()),
        (Some(false), Some(0))
    );
    assert_eq!(again["players"], report["players"]);
    assert_eq!(
        league
            .operator()
            .audit(&Default::default())
            .await
            .expect("audit")
            .len(),
        1
    );
    // The export shows the correction.
    let lines = reqwest::Client::new()
        .get(format!("{base}/v1/periods/1/export"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .expect("export")
        .text()
        .await
        .expect("text");
    let first: Value = serde_json::from_str(lines.lines().next().expect("a line")).expect("json");
    assert_eq!(
        (first["player"].as_str(), first["corrected"].as_bool()),
        (Some("ana"), Some(true))
    );
    assert_eq!(first["reason"], "speed hack");
    stop.cancel();
}
