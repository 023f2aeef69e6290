//! The public paths of 0.1 still name the same items after the modules moved (see
//! CHANGELOG.md): game servers that import them keep compiling, with a deprecation
//! warning. Each line below fails to compile if an old path is gone or names a
//! different item than the new one.
#![allow(deprecated)]

use std::any::TypeId;

/// Both paths name one type.
fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

#[test]
fn old_module_paths_name_the_moved_items() {
    use leaguekit as lk;
    let pairs = [
        same::<lk::engine::SubmitOptions, lk::ranking::SubmitOptions>(),
        same::<lk::engine::BatchItem, lk::ranking::BatchItem>(),
        same::<lk::engine::Submission, lk::ranking::Submission>(),
        same::<lk::engine::Standings, lk::ranking::Standings>(),
        same::<lk::engine::Standing, lk::ranking::Standing>(),
        same::<lk::engine::Placement, lk::league::Placement>(),
        same::<lk::engine::PlayerView, lk::league::PlayerView>(),
        same::<lk::engine::TierCount, lk::league::TierCount>(),
        same::<lk::engine::League<lk::MemoryStore>, lk::League<lk::MemoryStore>>(),
        same::<lk::config::Season, lk::season::Season>(),
        same::<lk::config::Quota, lk::season::Quota>(),
        same::<lk::config::Schedule, lk::season::calendar::Schedule>(),
        same::<lk::calendar::Calendar, lk::season::calendar::Calendar>(),
        same::<lk::calendar::Period, lk::season::calendar::Period>(),
        same::<lk::score::Packing, lk::season::packing::Packing>(),
        same::<lk::keys::Keys, lk::store::keys::Keys>(),
        same::<lk::outcome::Outcome, lk::rollover::outcome::Outcome>(),
        same::<lk::scheduler::Scheduler, lk::rollover::scheduler::Scheduler>(),
        same::<lk::scheduler::SchedulerOptions, lk::SchedulerOptions>(),
        same::<lk::memory::MemoryStore, lk::store::memory::MemoryStore>(),
        same::<lk::memory::Footprint, lk::store::memory::Footprint>(),
        same::<lk::redis_store::RedisOptions, lk::store::redis::RedisOptions>(),
        same::<lk::redis_store::RedisStore, lk::RedisStore>(),
        same::<lk::connection::RedisUrl, lk::store::redis::connection::RedisUrl>(),
        same::<lk::chart::ChartError, lk::sim::chart::ChartError>(),
    ];
    assert!(pairs.iter().all(|same| *same), "{pairs:?}");
    assert_eq!(lk::engine::MAX_PAGE, lk::ranking::MAX_PAGE);
    assert_eq!(lk::score::EXACT_LIMIT, 1u64 << 53);
    assert_eq!(
        lk::calendar::MAX_CRON_PERIODS,
        lk::season::calendar::MAX_CRON_PERIODS
    );
    assert_eq!(
        lk::keys::hash_tag("a{b}c"),
        lk::store::keys::hash_tag("a{b}c")
    );
    // Functions keep their signatures.
    let validate: fn(&str) -> Result<(), lk::InputError> = lk::engine::validate_player;
    assert!(validate("alice").is_ok());
}
