//! A game server's match-result handler on Redis: place the player (a no-op when they
//! already have a bracket this period), record the match's points with a request id
//! so that a retry cannot count them twice, and answer the player with the standings
//! around them. Every game-server process builds one `League` at start and shares it
//! between its handlers (it is `Clone` and cheap to clone).
//!
//! ```text
//! cargo run --example redis_handler                               # redis://127.0.0.1:6379/
//! LEAGUEKIT_REDIS=redis://host:6379/ cargo run --example redis_handler
//! cargo run --example redis_handler -- rediss://user:pass@host:6380/
//! ```
//!
//! In a game server's Cargo.toml (the library alone, without the CLI's and the
//! simulator's dependencies):
//!
//! ```toml
//! leaguekit = { version = "0.3", default-features = false, features = ["redis"] }
//! ```

use leaguekit::{Error, League, RedisOptions, RedisStore, Season, Standings, SubmitOptions};

/// What the handler answers the game client.
struct MatchResult {
    /// The player's score in the period after this match.
    score: u64,
    /// Their rank in their bracket (1 = first).
    rank: Option<u64>,
    /// False when this match id had been recorded already (a retry): nothing changed.
    counted: bool,
    /// The bracket's rows around the player.
    around: Option<Standings>,
}

/// Called once per finished match. `match_id` is unique per match and player: the
/// game server's retry of the same call is answered as the first call was.
async fn on_match_finished(
    league: &League<RedisStore>,
    player: &str,
    match_id: &str,
    points: i64,
) -> Result<MatchResult, Error> {
    // Joining is optional (the first score places the player too); a game server
    // joins when the player opens the league screen, to show their bracket at once.
    let placement = league.join(player, None).await?;
    println!(
        "{player} plays in {} bracket #{} of period {}",
        placement.tier, placement.bracket, placement.period
    );
    let submission = league
        .submit(
            player,
            points,
            SubmitOptions::default().request_id(format!("{player}:{match_id}")),
        )
        .await?;
    let around = league.around(player, 3, None).await?;
    Ok(MatchResult {
        score: submission.score,
        rank: submission.rank,
        counted: submission.applied,
        around,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .unwrap_or_else(|| "redis://127.0.0.1:6379/".to_owned());
    let season = Season::load("config/season.toml")?;
    let store = RedisStore::connect(&url, RedisOptions::default()).await?;
    let league = League::new(season, store);

    // A new match id each run, so that a second run counts its points too.
    let match_id = format!("match-{}", chrono::Utc::now().timestamp_millis());
    for (player, points) in [("ana", 120), ("bo", 80), ("cy", 95)] {
        let r = on_match_finished(&league, player, &match_id, points).await?;
        let rank = r.rank.map_or("-".to_owned(), |r| r.to_string());
        println!(
            "{player}: score {} rank {rank} counted {}",
            r.score, r.counted
        );
    }
    // The game server retries a call whose answer it lost: nothing is counted twice.
    let retry = on_match_finished(&league, "bo", &match_id, 80).await?;
    assert!(!retry.counted);
    if let Some(page) = retry.around {
        for e in page.entries {
            println!("  {:>3}. {:<6} {:>6}", e.rank, e.player, e.score);
        }
    }
    Ok(())
}
