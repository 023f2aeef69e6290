//! The outcome rule (pure): quotas, idle players, rewards.

use leaguekit::Season;
use leaguekit::rollover::outcome::{Movement, bracket_outcomes};

fn season(idle: &str) -> Season {
    let text = format!(
        r#"
name = "o"
key_prefix = "o"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 10
[scoring]
max_score = 1000
[idle]
policy = "{idle}"
[[tiers]]
name = "bronze"
promote = 3
demote = 0
rewards = [{{ ranks = "1", grant = "gold:10" }}, {{ ranks = "2-3", grant = "gold:5" }}]
[[tiers]]
name = "silver"
promote = "20%"
demote = 4
rewards = [{{ ranks = "1-10", grant = "badge" }}]
[[tiers]]
name = "gold"
promote = 0
demote = "50%"
"#
    );
    Season::from_toml(&text, "o.toml").expect("valid")
}

/// A board of `active` players who scored (best first) and `idle` who never did.
fn board(s: &Season, active: usize, idle: usize) -> Vec<(String, u64)> {
    let p = s.packing;
    let mut b: Vec<(String, u64)> = (0..active)
        .map(|i| (format!("a{i}"), p.pack(100 - i as u64, 5).expect("fits")))
        .collect();
    b.extend((0..idle).map(|i| (format!("z{i}"), p.idle())));
    b
}

fn moves(s: &Season, tier: usize, active: usize, idle: usize) -> Vec<(String, Movement, String)> {
    bracket_outcomes(s, tier, &board(s, active, idle))
        .into_iter()
        .map(|o| (o.player, o.outcome, o.next_tier))
        .collect()
}

#[test]
fn counts_and_percentages() {
    let s = season("stay");
    // silver, 10 players: promote 20% = 2, demote 4.
    let m = moves(&s, 1, 10, 0);
    let promoted: Vec<_> = m
        .iter()
        .filter(|x| x.1 == Movement::Promoted)
        .map(|x| x.0.as_str())
        .collect();
    let demoted: Vec<_> = m
        .iter()
        .filter(|x| x.1 == Movement::Demoted)
        .map(|x| x.0.as_str())
        .collect();
    assert_eq!(promoted, ["a0", "a1"]);
    assert_eq!(demoted, ["a6", "a7", "a8", "a9"]);
    assert!(m.iter().all(|x| match x.1 {
        Movement::Promoted => x.2 == "gold",
        Movement::Demoted => x.2 == "bronze",
        _ => x.2 == "silver",
    }));
    // 7 players: 20% of 7 rounds down to 1.
    assert_eq!(
        moves(&s, 1, 7, 0)
            .iter()
            .filter(|x| x.1 == Movement::Promoted)
            .count(),
        1
    );
    // gold: 50% of 5 = 2 demoted, nobody promoted from the top.
    let g = moves(&s, 2, 5, 0);
    assert_eq!(g.iter().filter(|x| x.1 == Movement::Demoted).count(), 2);
    assert_eq!(g.iter().filter(|x| x.1 == Movement::Promoted).count(), 0);
    // bronze: nobody demoted from the bottom.
    assert_eq!(
        moves(&s, 0, 10, 0)
            .iter()
            .filter(|x| x.1 == Movement::Demoted)
            .count(),
        0
    );
}

#[test]
fn small_bracket_promotion_first() {
    let s = season("stay");
    // silver with 5 players: promote 20% = 1, demote 4: only the 4 left are demoted.
    let m = moves(&s, 1, 5, 0);
    assert_eq!(m[0].1, Movement::Promoted);
    assert!(m[1..].iter().all(|x| x.1 == Movement::Demoted));
    // 3 players: promote 0 (20% of 3), demote min(4, 3) = 3.
    assert!(moves(&s, 1, 3, 0).iter().all(|x| x.1 == Movement::Demoted));
}

#[test]
fn idle_players_follow_the_policy() {
    let stay = season("stay");
    // silver, 4 active + 6 idle: promote 2, demote min(4, 4 - 2) = 2 of the active.
    let m = moves(&stay, 1, 4, 6);
    let tally = |m: &[(String, Movement, String)], mv| m.iter().filter(|x| x.1 == mv).count();
    assert_eq!(
        (tally(&m, Movement::Promoted), tally(&m, Movement::Demoted)),
        (2, 2)
    );
    assert!(
        m.iter()
            .filter(|x| x.0.starts_with('z'))
            .all(|x| x.1 == Movement::Stayed)
    );
    let drop = season("drop_one_tier");
    let m = moves(&drop, 1, 4, 6);
    assert!(
        m.iter()
            .filter(|x| x.0.starts_with('z'))
            .all(|x| x.1 == Movement::Demoted && x.2 == "bronze")
    );
    // Nobody drops below the bottom.
    assert!(
        moves(&drop, 0, 0, 3)
            .iter()
            .all(|x| x.1 == Movement::Stayed && x.2 == "bronze")
    );
    // Idle players are never promoted, even when no active player takes the places.
    assert!(
        moves(&drop, 0, 1, 5)
            .iter()
            .filter(|x| x.1 == Movement::Promoted)
            .count()
            == 1
    );
}

#[test]
fn rewards_by_rank_active_only() {
    let s = season("stay");
    let o = bracket_outcomes(&s, 0, &board(&s, 2, 3));
    let rewards: Vec<_> = o.iter().map(|x| x.reward.as_deref()).collect();
    assert_eq!(rewards, [Some("gold:10"), Some("gold:5"), None, None, None]);
    assert_eq!(
        o.iter().map(|x| x.rank).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
}

#[test]
fn order_of_input_does_not_matter() {
    let s = season("stay");
    let mut b = board(&s, 8, 2);
    let first = bracket_outcomes(&s, 1, &b);
    b.reverse();
    assert_eq!(bracket_outcomes(&s, 1, &b), first);
}

#[test]
fn encoding_round_trips() {
    let s = season("stay");
    for o in bracket_outcomes(&s, 1, &board(&s, 6, 2)) {
        let back = leaguekit::rollover::outcome::decode(
            &o.player,
            &leaguekit::rollover::outcome::encode(&o),
        );
        assert_eq!(back.as_ref(), Some(&o));
        // The stored form, which records written by earlier versions share; appended
        // to what the buffer holds.
        let mut buf = String::from("x");
        leaguekit::rollover::outcome::encode_into(&mut buf, &o);
        let reward = o.reward.as_ref().map(|r| format!("+{r}"));
        assert_eq!(
            buf,
            format!(
                "x{}|{}|{}|{}|{}|{}",
                o.rank,
                o.score,
                u8::from(o.idle),
                o.outcome.as_str(),
                o.next_tier,
                reward.unwrap_or_default()
            )
        );
    }
}
