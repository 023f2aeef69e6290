//! A game server in any language calls `leaguekit serve` over HTTP with JSON. This is
//! the same call sequence from Rust with reqwest: place a player, record a match's
//! points with a request id (a retry is answered as the first call was, and counts
//! nothing twice), and read the standings around the player.
//!
//! ```text
//! LEAGUEKIT_SERVER_TOKENS=change-me-0123456789 leaguekit serve &
//! LEAGUEKIT_TOKEN=change-me-0123456789 cargo run --example http_client
//! LEAGUEKIT_URL=http://host:8080 LEAGUEKIT_TOKEN=... cargo run --example http_client
//! ```
//!
//! The same calls with curl:
//!
//! ```text
//! curl -H "Authorization: Bearer $TOKEN" -X POST localhost:8080/v1/players/ana/join -d '{}'
//! curl -H "Authorization: Bearer $TOKEN" -X POST localhost:8080/v1/players/ana/scores \
//!      -d '{"value": 120, "request_id": "ana:match-1"}'
//! curl -H "Authorization: Bearer $TOKEN" localhost:8080/v1/players/ana/around?radius=3
//! ```

use serde::Deserialize;
use serde_json::json;

/// `POST /v1/players/{player}/scores`'s answer.
#[derive(Debug, Deserialize)]
struct Submission {
    tier: String,
    bracket: u32,
    score: u64,
    /// Absent when the update was sent with `"rank": false`.
    rank: Option<u64>,
    /// False when the request id had been seen: nothing changed.
    applied: bool,
}

/// `GET /v1/players/{player}/around`'s answer (and a bracket's standings).
#[derive(Debug, Deserialize)]
struct Standings {
    period: u64,
    tier: String,
    bracket: u32,
    entries: Vec<Row>,
}

#[derive(Debug, Deserialize)]
struct Row {
    rank: u64,
    player: String,
    score: u64,
}

/// Every error answer: `{"error": {"code", "message", ...}}`, with a status.
async fn checked(response: reqwest::Response) -> Result<reqwest::Response, String> {
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    Err(format!("{status}: {body}"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::var("LEAGUEKIT_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let token = std::env::var("LEAGUEKIT_TOKEN")
        .map_err(|_| "set LEAGUEKIT_TOKEN to one of the server's `server` tokens")?;
    let http = reqwest::Client::new();
    let player = "ana";
    // A new request id each run, so that a second run counts its points too.
    let request_id = format!("{player}:match-{}", chrono::Utc::now().timestamp_millis());

    let placed: serde_json::Value = checked(
        http.post(format!("{base}/v1/players/{player}/join"))
            .bearer_auth(&token)
            .json(&json!({}))
            .send()
            .await?,
    )
    .await?
    .json()
    .await?;
    println!("joined: {placed}");

    for attempt in 1..=2 {
        // The second attempt is a retry of the first (same request id).
        let s: Submission = checked(
            http.post(format!("{base}/v1/players/{player}/scores"))
                .bearer_auth(&token)
                .json(&json!({"value": 120, "request_id": request_id}))
                .send()
                .await?,
        )
        .await?
        .json()
        .await?;
        println!(
            "attempt {attempt}: {} #{} score {} rank {:?} applied {}",
            s.tier, s.bracket, s.score, s.rank, s.applied
        );
    }

    let page: Standings = checked(
        http.get(format!("{base}/v1/players/{player}/around"))
            .bearer_auth(&token)
            .query(&[("radius", "3")])
            .send()
            .await?,
    )
    .await?
    .json()
    .await?;
    println!("period {} {} #{}:", page.period, page.tier, page.bracket);
    for r in page.entries {
        println!("  {:>3}. {:<6} {:>6}", r.rank, r.player, r.score);
    }
    Ok(())
}
