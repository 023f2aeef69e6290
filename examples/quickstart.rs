//! A game server's view of leaguekit: load a season, place players, submit scores,
//! read standings. Runs on the embedded store; pass a Redis URL to run on Redis:
//!
//! ```text
//! cargo run --example quickstart
//! cargo run --example quickstart -- redis://127.0.0.1:6379/
//! ```

use leaguekit::SubmitOptions;
use leaguekit::{League, MemoryStore, RedisOptions, RedisStore, Season, Store};

async fn play<S: Store>(league: League<S>) -> Result<(), leaguekit::Error> {
    // The first score of a period places the player in a bracket of their tier.
    for (player, points) in [("ana", 120), ("bo", 80), ("cy", 120), ("dee", 15)] {
        league
            .set_profile(player, &[("name".into(), player.to_uppercase())])
            .await?;
        let s = league
            .submit(
                player,
                points,
                SubmitOptions::default().request_id(format!("{player}-match-1")),
            )
            .await?;
        // `rank` is `None` only for updates sent `without_rank()`.
        if let Some(rank) = s.rank {
            println!(
                "{player}: score {} rank {rank} in {} #{}",
                s.score, s.tier, s.bracket
            );
        }
    }
    // A retried request changes nothing and answers as the first time did.
    let retry = league
        .submit("bo", 80, SubmitOptions::default().request_id("bo-match-1"))
        .await?;
    assert!(!retry.applied);

    let table = league.standings("bronze", 1, None, 0, 10).await?;
    println!(
        "period {} bronze #1, {} players:",
        table.period, table.players
    );
    for e in table.entries {
        println!(
            "  {:>3}. {:<6} {:>6}  {}",
            e.rank, e.player, e.score, e.profile
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let season = Season::load("config/season.toml")?;
    match std::env::args().nth(1) {
        Some(url) => {
            let store = RedisStore::connect(&url, RedisOptions::default()).await?;
            play(League::new(season, store)).await?
        }
        None => play(League::new(season, MemoryStore::new())).await?,
    }
    Ok(())
}
