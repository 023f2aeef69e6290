//! Bans over HTTP: admin tokens only (403 `forbidden` for server and viewer tokens),
//! a banned player's join and score refused with 403 `banned`, every action in the
//! audit log under the token's name, which `GET /v1/audit` answers to admins only.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common;
use crate::serving::{self, ADMIN, ADMIN_ENTRY, SERVER, Start, VIEWER, call};

#[tokio::test]
async fn bans_are_for_admins_and_audited() {
    let config = serving::open_season("http_bans");
    let served = Start {
        admin_tokens: Some(ADMIN_ENTRY),
        ..Start::new(config.path())
    }
    .spawn();
    let http = reqwest::Client::new();
    let c = |m: Method, p: &'static str, t: &'static str, b: Option<Value>| {
        let (http, served) = (&http, &served);
        async move { call(http, served, m, p, t, b).await }
    };
    let (s, _) = c(
        Method::POST,
        "/v1/players/ana/scores",
        SERVER,
        Some(json!({"value": 50})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = c(
        Method::POST,
        "/v1/players/bo/scores",
        SERVER,
        Some(json!({"value": 10})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);

    // Server and viewer tokens may not use the operator's routes.
    let ban = json!({"reason": "aimbot"});
    for token in [SERVER, VIEWER] {
        for (m, p, b) in [
            (Method::POST, "/v1/players/ana/ban", Some(ban.clone())),
            (Method::POST, "/v1/players/ana/unban", None),
            (Method::GET, "/v1/bans", None),
            (Method::GET, "/v1/audit", None),
        ] {
            let (s, body) = c(m.clone(), p, token, b).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{m} {p}: {body}");
            assert_eq!(body["error"]["code"], "forbidden", "{body}");
        }
    }
    let (_, bans) = c(Method::GET, "/v1/bans", ADMIN, None).await;
    assert_eq!(bans, json!({"bans": []}), "a refused ban wrote nothing");

    // Bad input: typed errors, nothing written.
    let (s, body) = c(
        Method::POST,
        "/v1/players/ana/ban",
        ADMIN,
        Some(json!({"reason": "x", "until": "2020-01-01T00:00:00Z"})),
    )
    .await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("ban_in_past")),
        "{body}"
    );
    let (s, body) = c(
        Method::POST,
        "/v1/players/nobody/ban",
        ADMIN,
        Some(ban.clone()),
    )
    .await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_player")),
        "{body}"
    );
    let (s, _) = c(
        Method::POST,
        "/v1/players/ana/ban",
        ADMIN,
        Some(json!({"reason": ""})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (_, bans) = c(Method::GET, "/v1/bans", ADMIN, None).await;
    assert_eq!(bans, json!({"bans": []}));

    // An admin bans: the player leaves the board, and is refused with `banned`.
    let (s, body) = c(
        Method::POST,
        "/v1/players/ana/ban",
        ADMIN,
        Some(ban.clone()),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(
        (
            body["player"].as_str(),
            body["actor"].as_str(),
            body["until"].clone()
        ),
        (Some("ana"), Some("ops"), Value::Null)
    );
    let (_, bans) = c(Method::GET, "/v1/bans", ADMIN, None).await;
    assert_eq!(bans["bans"][0]["player"], "ana");
    let (_, page) = c(Method::GET, "/v1/tiers/bronze/brackets/1", VIEWER, None).await;
    let players: Vec<&str> = page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["player"].as_str())
        .collect();
    assert_eq!(players, ["bo"], "{page}");
    for (p, b) in [
        ("/v1/players/ana/scores", json!({"value": 1})),
        ("/v1/players/ana/join", json!({})),
    ] {
        let (s, body) = c(Method::POST, p, SERVER, Some(b)).await;
        assert_eq!(
            (s, body["error"]["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("banned")),
            "{p}: {body}"
        );
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("with no end") && message.contains("unban"),
            "{message}"
        );
    }

    // Unban: the player plays again, from no score.
    let (s, body) = c(
        Method::POST,
        "/v1/players/ana/unban",
        ADMIN,
        Some(json!({"reason": "appeal"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["lifted"]["reason"], "aimbot");
    let (s, body) = c(
        Method::POST,
        "/v1/players/ana/scores",
        SERVER,
        Some(json!({"value": 3})),
    )
    .await;
    assert_eq!(
        (s, body["score"].as_u64()),
        (StatusCode::OK, Some(3)),
        "{body}"
    );

    // Both actions are audited under the token's name.
    let season = leaguekit::Season::load(config.path()).expect("season");
    let league = leaguekit::League::new(season, common::redis_store().await);
    let audit: Vec<(String, String, Option<String>)> = league
        .operator()
        .audit(&leaguekit::operator::AuditQuery::default().player("ana"))
        .await
        .expect("audit")
        .into_iter()
        .map(|e| (e.action, e.actor, e.reason))
        .collect();
    assert_eq!(
        audit,
        [
            (
                "ban".to_owned(),
                "ops".to_owned(),
                Some("aimbot".to_owned())
            ),
            (
                "unban".to_owned(),
                "ops".to_owned(),
                Some("appeal".to_owned())
            ),
        ]
    );
    // The same entries over HTTP, for admins only.
    let (s, body) = c(Method::GET, "/v1/audit?player=ana", ADMIN, None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let entries = body["entries"].as_array().expect("entries");
    let seen: Vec<(&str, &str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap_or_default(),
                e["actor"].as_str().unwrap_or_default(),
                e["player"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(seen, [("ban", "ops", "ana"), ("unban", "ops", "ana")]);
    let (s, body) = c(Method::GET, "/v1/audit?limit=0", ADMIN, None).await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_limit")),
        "{body}"
    );
}
