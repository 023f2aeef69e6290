//! Player tokens: a game server mints a short-lived JWT for one player, whose client
//! then reads only its own player and follows only its own bracket. The real `serve`
//! on a real Redis, with `LEAGUEKIT_PLAYER_TOKEN_SECRET`.

use crate::serving;

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use serving::{ADMIN, ADMIN_ENTRY, SERVER, Start, VIEWER, call};

/// The player token secret of the test servers.
const SECRET: &str = "player-token-secret-for-tests-0123456789";

/// Asserts an error answer's status and code.
fn refused(answer: &(StatusCode, Value), status: u16, code: &str, what: &str) {
    assert_eq!(answer.0.as_u16(), status, "{what}: {}", answer.1);
    assert_eq!(answer.1["error"]["code"], code, "{what}: {}", answer.1);
}

/// Now in unix seconds.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// A token made in the test's own code, as a game server would mint one.
fn hand_made(secret: &str, sub: &str, aud: &str, exp: u64) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": sub, "aud": aud, "exp": exp, "iat": unix_now()}),
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .expect("encode")
}

/// An unsigned token (`alg: none`).
fn unsigned(sub: &str, aud: &str) -> String {
    let part = |v: Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.",
        part(json!({"alg": "none", "typ": "JWT"})),
        part(json!({"sub": sub, "aud": aud, "exp": unix_now() + 600}))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_tokens_read_only_their_own_player_and_bracket() {
    let config = serving::open_season("http_player_tokens");
    let served = Start {
        player_secret: Some(SECRET),
        admin_tokens: Some(ADMIN_ENTRY),
        log: "info,tower_http=debug",
        ..Start::new(config.path())
    }
    .spawn();
    let http = reqwest::Client::new();
    let c = |m: Method, p: String, t: String, b: Option<Value>| {
        let (http, served) = (&http, &served);
        async move { call(http, served, m, &p, &t, b).await }
    };
    for p in ["ana", "bo"] {
        let (s, b) = c(
            Method::POST,
            format!("/v1/players/{p}/scores"),
            SERVER.into(),
            Some(json!({"value": 10})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    let (_, season) = c(Method::GET, "/v1/season".into(), SERVER.into(), None).await;
    let audience = format!("leaguekit:{}", season["name"].as_str().expect("name"));

    // Minting: a server or admin token; 15 minutes by default; ttl in range.
    let before = unix_now();
    let (s, minted) = c(
        Method::POST,
        "/v1/players/ana/token".into(),
        SERVER.into(),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{minted}");
    assert_eq!(minted["player"], "ana");
    let token = minted["token"].as_str().expect("token").to_owned();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let expires = chrono::DateTime::parse_from_rfc3339(minted["expires_at"].as_str().expect("at"))
        .expect("RFC 3339")
        .timestamp();
    let expires = u64::try_from(expires).expect("positive");
    assert!(
        (before + 900..=unix_now() + 900).contains(&expires),
        "{minted}"
    );
    let (s, b) = c(
        Method::POST,
        "/v1/players/ana/token?ttl=60".into(),
        ADMIN.into(),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = c(
        Method::POST,
        "/v1/players/ana/token".into(),
        SERVER.into(),
        Some(json!({"ttl": 86_400})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    // A JSON Schema integer may be written as an integral float; a fraction is not
    // an integer.
    let (s, b) = c(
        Method::POST,
        "/v1/players/ana/token".into(),
        SERVER.into(),
        Some(json!({"ttl": 801.0})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let a = c(
        Method::POST,
        "/v1/players/ana/token".into(),
        SERVER.into(),
        Some(json!({"ttl": 801.5})),
    )
    .await;
    refused(&a, 400, "invalid_json", "ttl 801.5");
    for (path, body) in [
        ("/v1/players/ana/token?ttl=59", None),
        ("/v1/players/ana/token", Some(json!({"ttl": 86_401}))),
    ] {
        let a = c(Method::POST, path.into(), SERVER.into(), body).await;
        refused(&a, 422, "ttl_out_of_range", path);
        let message = a.1["error"]["message"].as_str().expect("message");
        assert!(
            message.contains("60") && message.contains("86400"),
            "{message}"
        );
    }
    let long = "x".repeat(65);
    let a = c(
        Method::POST,
        format!("/v1/players/{long}/token"),
        SERVER.into(),
        None,
    )
    .await;
    refused(&a, 400, "invalid_player", "a 65-byte id");
    let a = c(
        Method::POST,
        "/v1/players/ana/token".into(),
        VIEWER.into(),
        None,
    )
    .await;
    refused(&a, 403, "forbidden", "a viewer mints");
    let a = c(
        Method::POST,
        "/v1/players/ana/token".into(),
        token.clone(),
        None,
    )
    .await;
    refused(&a, 403, "forbidden", "a player mints");

    // What the player token reads: its own player, the season, its own bracket.
    let (_, me) = c(Method::GET, "/v1/players/ana".into(), SERVER.into(), None).await;
    let (tier, bracket, period) = (
        me["tier"].as_str().expect("tier").to_owned(),
        me["bracket"].as_u64().expect("placed"),
        me["period"].as_u64().expect("period"),
    );
    let own = format!("/v1/tiers/{tier}/brackets/{bracket}");
    for path in [
        "/v1/players/ana".to_owned(),
        "/v1/players/ana/around".to_owned(),
        "/v1/players/ana/rewards".to_owned(),
        "/v1/season".to_owned(),
        own.clone(),
        format!("{own}?period={period}&limit=5"),
    ] {
        let (s, b) = c(Method::GET, path.clone(), token.clone(), None).await;
        assert_eq!(s, StatusCode::OK, "{path}: {b}");
    }
    let (_, standings) = c(Method::GET, own.clone(), token.clone(), None).await;
    assert_eq!(standings["players"].as_u64(), Some(2), "{standings}");
    let r = http
        .get(served.url(&format!("{own}/events")))
        .bearer_auth(&token)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let mut body = r.bytes_stream();
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .expect("an event within 5 s")
            .expect("the stream is open")
            .expect("a chunk");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.contains("event: standings"), "{text}");
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .expect("data");
    let first: Value = serde_json::from_str(data.trim()).expect("JSON");
    assert_eq!(first["players"].as_u64(), Some(2), "{first}");
    drop(body);

    // Everything else: 403.
    let other_tier = if tier == "silver" { "gold" } else { "silver" };
    for path in [
        "/v1/players/bo".to_owned(),
        "/v1/players/bo/around".to_owned(),
        "/v1/players/bo/rewards".to_owned(),
        "/v1/players/ana/profile".to_owned(),
        format!("/v1/tiers/{tier}/brackets/{}", bracket + 1),
        format!("/v1/tiers/{tier}/brackets/{}/events", bracket + 1),
        format!("/v1/tiers/{other_tier}/brackets/{bracket}"),
        format!("{own}?period={}", period + 1),
        format!("{own}/events?period={}", period.saturating_sub(1)),
        format!("/v1/tiers/{tier}/top"),
        "/v1/counts".to_owned(),
        "/v1/periods".to_owned(),
        format!("/v1/periods/{period}/export"),
        "/v1/audit".to_owned(),
        "/v1/bans".to_owned(),
        "/v1/clock".to_owned(),
        "/metrics".to_owned(),
        "/openapi.json".to_owned(),
        "/".to_owned(),
        "/v1/no/such/path".to_owned(),
    ] {
        let a = c(Method::GET, path.clone(), token.clone(), None).await;
        refused(&a, 403, "forbidden", &path);
    }
    for (method, path, body) in [
        (Method::POST, "/v1/players/ana/join", json!({})),
        (Method::POST, "/v1/players/ana/scores", json!({"value": 5})),
        (Method::POST, "/v1/players/ana/rewards:claim", json!({})),
        (
            Method::PATCH,
            "/v1/players/ana/profile",
            json!({"name": "A"}),
        ),
        (
            Method::POST,
            "/v1/players/ana/ban",
            json!({"reason": "x", "until": "2099-01-01T00:00:00Z"}),
        ),
        (
            Method::POST,
            "/v1/players/ana/adjust",
            json!({"by": 5, "reason": "x"}),
        ),
    ] {
        let a = c(method.clone(), path.into(), token.clone(), Some(body)).await;
        refused(&a, 403, "forbidden", &format!("{method} {path}"));
    }
    let (_, me_after) = c(Method::GET, "/v1/players/ana".into(), SERVER.into(), None).await;
    assert_eq!(me_after["score"], me["score"], "no write went through");

    // Never the cookie.
    let r = http
        .get(served.url("/v1/season"))
        .header("cookie", format!("leaguekit_token={token}"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    // Expired, forged, for another league, unsigned, garbled.
    let expired = hand_made(SECRET, "ana", &audience, unix_now() - 120);
    let a = c(Method::GET, "/v1/players/ana".into(), expired, None).await;
    refused(&a, 401, "token_expired", "expired");
    let fresh = hand_made(SECRET, "ana", &audience, unix_now() + 600);
    let (s, b) = c(Method::GET, "/v1/players/ana".into(), fresh, None).await;
    assert_eq!(s, StatusCode::OK, "a token minted offline: {b}");
    let other_secret = "another-secret-of-at-least-32-bytes-xyz";
    for (what, bad) in [
        (
            "another secret",
            hand_made(other_secret, "ana", &audience, unix_now() + 600),
        ),
        (
            "an expired token of another secret",
            hand_made(other_secret, "ana", &audience, unix_now() - 600),
        ),
        (
            "another league",
            hand_made(SECRET, "ana", "leaguekit:another-season", unix_now() + 600),
        ),
        (
            "no audience",
            jsonwebtoken::encode(
                &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
                &json!({"sub": "ana", "exp": unix_now() + 600}),
                &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
            )
            .expect("encode"),
        ),
        ("alg none", unsigned("ana", &audience)),
        ("garbled", format!("{token}x")),
        ("not a JWT", "abc.def.ghi".to_owned()),
    ] {
        let a = c(Method::GET, "/v1/players/ana".into(), bad, None).await;
        refused(&a, 401, "unauthorized", what);
    }

    // Tokens never reach the logs.
    let logged = served.stderr();
    assert!(
        logged.contains("/v1/players/ana"),
        "the trace is on: {logged}"
    );
    assert!(!logged.contains(&token), "a token was logged");
    assert!(!logged.contains(SECRET), "the secret was logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_secret_player_tokens_are_off() {
    let config = serving::open_season("http_player_tokens_off");
    let served = Start::new(config.path()).spawn();
    let http = reqwest::Client::new();
    let a = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/ana/token",
        SERVER,
        None,
    )
    .await;
    refused(&a, 404, "player_tokens_disabled", "mint without a secret");
    let (_, season) = call(&http, &served, Method::GET, "/v1/season", SERVER, None).await;
    let audience = format!("leaguekit:{}", season["name"].as_str().expect("name"));
    let token = hand_made(SECRET, "ana", &audience, unix_now() + 600);
    let a = call(&http, &served, Method::GET, "/v1/season", &token, None).await;
    refused_saying(
        &a,
        "unauthorized",
        &["player tokens are off", "LEAGUEKIT_PLAYER_TOKEN_SECRET"],
        "a player token without a secret",
    );

    // A secret too short: the server refuses to start, without repeating it.
    let short = Start {
        player_secret: Some("short-player-secret"),
        ..Start::new(config.path())
    };
    let (code, err) = short.refused();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("LEAGUEKIT_PLAYER_TOKEN_SECRET") && err.contains("32 bytes"),
        "{err}"
    );
    assert!(!err.contains("short-player-secret"), "{err}");
}

/// A token signed with `secret` (HS256) with this header and these claims: what a
/// game server's own JWT library would make.
fn signed(secret: &str, header: &jsonwebtoken::Header, claims: &Value) -> String {
    jsonwebtoken::encode(
        header,
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .expect("encode")
}

/// An HS256 header.
fn hs256() -> jsonwebtoken::Header {
    jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256)
}

/// Asserts a 401 whose message says `says` and never points at the static tokens.
fn refused_saying(answer: &(StatusCode, Value), code: &str, says: &[&str], what: &str) {
    refused(answer, 401, code, what);
    let message = answer.1["error"]["message"].as_str().expect("message");
    for s in says {
        assert!(message.contains(s), "{what}: {message:?} should say {s:?}");
    }
    for static_tokens in [
        "LEAGUEKIT_SERVER_TOKENS",
        "LEAGUEKIT_VIEWER_TOKENS",
        "LEAGUEKIT_ADMIN_TOKENS",
    ] {
        assert!(
            !message.contains(static_tokens),
            "{what}: a JWT's refusal points at {static_tokens}: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_token_is_checked_for_nbf_lifetime_and_crit_and_told_why() {
    let config = serving::open_season("http_player_tokens_checks");
    let served = Start {
        player_secret: Some(SECRET),
        ..Start::new(config.path())
    }
    .spawn();
    let http = reqwest::Client::new();
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/ana/scores",
        SERVER,
        Some(json!({"value": 10})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (_, season) = call(&http, &served, Method::GET, "/v1/season", SERVER, None).await;
    let audience = format!("leaguekit:{}", season["name"].as_str().expect("name"));
    let now = unix_now();
    let claims = |extra: Value| {
        let mut c = json!({"sub": "ana", "aud": audience, "exp": now + 600, "iat": now});
        for (k, v) in extra.as_object().expect("object") {
            if v.is_null() {
                c.as_object_mut().expect("object").remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        c
    };
    let read = |token: String| {
        let (http, served) = (&http, &served);
        async move { call(http, served, Method::GET, "/v1/players/ana", &token, None).await }
    };

    // Accepted: the usual token, an nbf within the 5 s leeway, a day exactly, a
    // day from now without iat.
    for (what, c) in [
        ("a 10-minute token", claims(json!({}))),
        ("nbf now", claims(json!({"nbf": now}))),
        ("nbf 2 s ahead", claims(json!({"nbf": now + 2}))),
        ("a day", claims(json!({"exp": now + 86_400}))),
        (
            "a day from now, no iat",
            claims(json!({"exp": now + 86_400, "iat": null})),
        ),
    ] {
        let (s, b) = read(signed(SECRET, &hs256(), &c)).await;
        assert_eq!(s, StatusCode::OK, "{what}: {b}");
    }

    // Refused, each saying what failed.
    let mut crit = hs256();
    crit.crit = Some(vec!["exp".to_owned()]);
    let y3000 = 32_503_680_000_u64;
    let other_secret = "another-secret-of-at-least-32-bytes-xyz";
    let cases: Vec<(&str, String, &str, Vec<&str>)> = vec![
        (
            "a future nbf",
            signed(SECRET, &hs256(), &claims(json!({"nbf": now + 120}))),
            "unauthorized",
            vec!["not valid yet", "nbf"],
        ),
        (
            "a 30-day token",
            signed(SECRET, &hs256(), &claims(json!({"exp": now + 30 * 86_400}))),
            "unauthorized",
            vec![
                "2592000 s",
                "exp - iat",
                "86400 s",
                "LEAGUEKIT_PLAYER_TOKEN_MAX_TTL",
            ],
        ),
        (
            "a 30-day token without iat",
            signed(
                SECRET,
                &hs256(),
                &claims(json!({"exp": now + 30 * 86_400, "iat": null})),
            ),
            "unauthorized",
            vec!["exp - now", "86400 s"],
        ),
        (
            "a token until the year 3000",
            signed(SECRET, &hs256(), &claims(json!({"exp": y3000}))),
            "unauthorized",
            vec!["exp - iat", "86400 s"],
        ),
        (
            "a token until the year 3000 issued an hour before",
            signed(
                SECRET,
                &hs256(),
                &claims(json!({"exp": y3000, "iat": y3000 - 3600})),
            ),
            "unauthorized",
            vec!["exp - now", "86400 s"],
        ),
        (
            "a crit header",
            signed(SECRET, &crit, &claims(json!({}))),
            "unauthorized",
            vec!["crit"],
        ),
        (
            "expired",
            signed(
                SECRET,
                &hs256(),
                &claims(json!({"exp": now - 120, "iat": now - 720})),
            ),
            "token_expired",
            vec!["expired"],
        ),
        (
            "another league",
            signed(
                SECRET,
                &hs256(),
                &claims(json!({"aud": "leaguekit:another-season"})),
            ),
            "unauthorized",
            vec!["another league", &audience],
        ),
        (
            "no audience",
            signed(SECRET, &hs256(), &claims(json!({"aud": null}))),
            "unauthorized",
            vec!["aud"],
        ),
        (
            "another secret",
            signed(other_secret, &hs256(), &claims(json!({}))),
            "unauthorized",
            vec!["signature", "LEAGUEKIT_PLAYER_TOKEN_SECRET"],
        ),
        (
            "alg none",
            unsigned("ana", &audience),
            "unauthorized",
            vec!["HS256", "none"],
        ),
        (
            "no sub",
            signed(SECRET, &hs256(), &claims(json!({"sub": null}))),
            "unauthorized",
            vec!["sub"],
        ),
        (
            "a text iat",
            signed(SECRET, &hs256(), &claims(json!({"iat": "yesterday"}))),
            "unauthorized",
            vec!["iat"],
        ),
    ];
    for (what, token, code, says) in cases {
        let a = read(token.clone()).await;
        refused_saying(&a, code, &says, what);
        // The same on a live stream, with the token in the query.
        let r = http
            .get(served.url(&format!("/v1/players/ana/events?access_token={token}")))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{what} on a stream");
    }

    // A player token in the cookie: told to send it as a bearer token.
    let good = signed(SECRET, &hs256(), &claims(json!({})));
    let r = http
        .get(served.url("/v1/season"))
        .header("cookie", format!("leaguekit_token={good}"))
        .send()
        .await
        .expect("send");
    let status = r.status();
    let body: Value = r.json().await.expect("JSON");
    refused_saying(&(status, body), "unauthorized", &["Bearer"], "the cookie");

    // Not a JWT at all: the general answer, which names the static tokens.
    let a = read("not-a-jwt-and-not-a-token-0001".to_owned()).await;
    refused(
        &a,
        401,
        "unauthorized",
        "a static token the server does not know",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_banned_player_is_minted_no_token() {
    let config = serving::open_season("http_player_tokens_ban");
    let served = Start {
        player_secret: Some(SECRET),
        admin_tokens: Some(ADMIN_ENTRY),
        ..Start::new(config.path())
    }
    .spawn();
    let http = reqwest::Client::new();
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/cheater/scores",
        SERVER,
        Some(json!({"value": 10})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let mint = |token: &'static str| {
        let (http, served) = (&http, &served);
        async move {
            call(
                http,
                served,
                Method::POST,
                "/v1/players/cheater/token",
                token,
                None,
            )
            .await
        }
    };
    let (s, b) = mint(SERVER).await;
    assert_eq!(s, StatusCode::OK, "before the ban: {b}");
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/cheater/ban",
        ADMIN,
        Some(json!({"reason": "aimbot"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    for token in [SERVER, ADMIN] {
        let a = mint(token).await;
        refused(&a, 403, "banned", "a banned player's mint");
        let message = a.1["error"]["message"].as_str().expect("message");
        assert!(
            message.contains("cheater") && message.contains("banned") && message.contains("unban"),
            "{message}"
        );
        assert!(a.1.get("token").is_none(), "no token: {}", a.1);
    }
    // Another player still gets one; the lifted ban gives the player theirs back.
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/ana/token",
        SERVER,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/cheater/unban",
        ADMIN,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = mint(SERVER).await;
    assert_eq!(s, StatusCode::OK, "after the unban: {b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_lifetime_is_configured_and_checked_at_start() {
    let config = serving::open_season("http_player_tokens_max_ttl");
    let served = Start {
        player_secret: Some(SECRET),
        env: vec![("LEAGUEKIT_PLAYER_TOKEN_MAX_TTL", "3600".to_owned())],
        ..Start::new(config.path())
    }
    .spawn();
    let http = reqwest::Client::new();
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/ana/scores",
        SERVER,
        Some(json!({"value": 10})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (_, season) = call(&http, &served, Method::GET, "/v1/season", SERVER, None).await;
    let audience = format!("leaguekit:{}", season["name"].as_str().expect("name"));

    // The mint: up to the maximum.
    let (s, b) = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/ana/token?ttl=3600",
        SERVER,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let minted = b["token"].as_str().expect("token").to_owned();
    let (s, b) = call(
        &http,
        &served,
        Method::GET,
        "/v1/players/ana",
        &minted,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "a minted token of the maximum: {b}");
    let a = call(
        &http,
        &served,
        Method::POST,
        "/v1/players/ana/token?ttl=3601",
        SERVER,
        None,
    )
    .await;
    refused(&a, 422, "ttl_out_of_range", "above the maximum");
    let message = a.1["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("3600") && message.contains("LEAGUEKIT_PLAYER_TOKEN_MAX_TTL"),
        "{message}"
    );

    // A game server's own token: the same maximum.
    let now = unix_now();
    let own = |exp: u64| {
        signed(
            SECRET,
            &hs256(),
            &json!({"sub": "ana", "aud": audience, "exp": exp, "iat": now}),
        )
    };
    let (s, b) = call(
        &http,
        &served,
        Method::GET,
        "/v1/players/ana",
        &own(now + 3600),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "an hour: {b}");
    let a = call(
        &http,
        &served,
        Method::GET,
        "/v1/players/ana",
        &own(now + 7200),
        None,
    )
    .await;
    refused_saying(&a, "unauthorized", &["7200 s", "3600 s"], "two hours");

    // A bad maximum: serve refuses to start, exit 2, saying what to set.
    for bad in ["abc", "59", "604801", "-1", "1h"] {
        let (code, err) = Start {
            player_secret: Some(SECRET),
            env: vec![("LEAGUEKIT_PLAYER_TOKEN_MAX_TTL", bad.to_owned())],
            ..Start::new(config.path())
        }
        .refused();
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(
            err.contains("LEAGUEKIT_PLAYER_TOKEN_MAX_TTL") && err.contains("604800"),
            "{bad}: {err}"
        );
    }
}
