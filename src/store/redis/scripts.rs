//! The Lua scripts the Redis store runs, from `lua/` beside this file, hashed once per
//! process; and the check that each one touches only the keys it declares.

use std::sync::LazyLock;

use redis::Script;

/// The scripts, hashed once per process (`Script::new` computes the SHA1).
pub(super) struct Scripts {
    pub(super) join: Script,
    pub(super) enter: Script,
    pub(super) update: Script,
    pub(super) standings: Script,
    pub(super) open_page: Script,
    pub(super) keep_page: Script,
    pub(super) around: Script,
    pub(super) entry: Script,
    pub(super) cache_profile: Script,
    pub(super) record_state: Script,
    pub(super) raise_mark: Script,
    pub(super) season_field: Script,
    pub(super) begin_close: Script,
    pub(super) finish_period: Script,
    pub(super) claim_bracket: Script,
    pub(super) outcome: Script,
    pub(super) finish_bracket: Script,
    pub(super) claim_rewards: Script,
    pub(super) set_profile: Script,
    pub(super) snapshot: Script,
    pub(super) grant: Script,
}

pub(super) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    join: Script::new(include_str!("lua/join.lua")),
    enter: Script::new(include_str!("lua/enter.lua")),
    update: Script::new(include_str!("lua/update.lua")),
    standings: Script::new(concat!(
        include_str!("lua/cache_writes.lua"),
        include_str!("lua/standings.lua")
    )),
    open_page: Script::new(concat!(
        include_str!("lua/cache_writes.lua"),
        include_str!("lua/open_page.lua")
    )),
    keep_page: Script::new(concat!(
        include_str!("lua/cache_writes.lua"),
        include_str!("lua/keep_page.lua")
    )),
    around: Script::new(include_str!("lua/around.lua")),
    entry: Script::new(include_str!("lua/entry.lua")),
    cache_profile: Script::new(include_str!("lua/cache_profile.lua")),
    record_state: Script::new(include_str!("lua/record_state.lua")),
    raise_mark: Script::new(include_str!("lua/raise_mark.lua")),
    season_field: Script::new(include_str!("lua/season_field.lua")),
    begin_close: Script::new(include_str!("lua/begin_close.lua")),
    finish_period: Script::new(include_str!("lua/finish_period.lua")),
    claim_bracket: Script::new(concat!(
        include_str!("lua/foreign_keys.lua"),
        include_str!("lua/claim_bracket.lua")
    )),
    outcome: Script::new(include_str!("lua/outcome.lua")),
    finish_bracket: Script::new(concat!(
        include_str!("lua/foreign_keys.lua"),
        include_str!("lua/finish_bracket.lua")
    )),
    claim_rewards: Script::new(include_str!("lua/claim_rewards.lua")),
    set_profile: Script::new(include_str!("lua/set_profile.lua")),
    snapshot: Script::new(include_str!("lua/snapshot.lua")),
    grant: Script::new(include_str!("lua/grant.lua")),
});

#[cfg(test)]
mod tests {
    /// Redis Cluster only checks the keys a script declares; a key a script touches
    /// without declaring it could live on another node. So every `redis.call` and
    /// `redis.pcall` in every script must name its key as `KEYS[n]` (or a local bound
    /// to one).
    #[test]
    fn scripts_touch_only_declared_keys() {
        let sources = [
            ("join", include_str!("lua/join.lua")),
            ("enter", include_str!("lua/enter.lua")),
            ("update", include_str!("lua/update.lua")),
            ("standings", include_str!("lua/standings.lua")),
            ("open_page", include_str!("lua/open_page.lua")),
            ("keep_page", include_str!("lua/keep_page.lua")),
            ("around", include_str!("lua/around.lua")),
            ("entry", include_str!("lua/entry.lua")),
            ("cache_profile", include_str!("lua/cache_profile.lua")),
            ("record_state", include_str!("lua/record_state.lua")),
            ("raise_mark", include_str!("lua/raise_mark.lua")),
            ("season_field", include_str!("lua/season_field.lua")),
            ("begin_close", include_str!("lua/begin_close.lua")),
            ("finish_period", include_str!("lua/finish_period.lua")),
            ("claim_bracket", include_str!("lua/claim_bracket.lua")),
            ("foreign_keys", include_str!("lua/foreign_keys.lua")),
            ("cache_writes", include_str!("lua/cache_writes.lua")),
            ("outcome", include_str!("lua/outcome.lua")),
            ("finish_bracket", include_str!("lua/finish_bracket.lua")),
            ("claim_rewards", include_str!("lua/claim_rewards.lua")),
            ("set_profile", include_str!("lua/set_profile.lua")),
            ("snapshot", include_str!("lua/snapshot.lua")),
            ("grant", include_str!("lua/grant.lua")),
        ];
        // The list above must name every script the store runs.
        let listed: Vec<&str> = sources.iter().map(|(name, _)| *name).collect();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/store/redis/lua");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".lua").map(str::to_owned)
            })
            .collect();
        on_disk.sort();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, on_disk, "every script in lua/ must be checked here");
        for (name, source) in sources {
            let code: Vec<&str> = source
                .lines()
                .map(|l| l.split("--").next().unwrap_or(""))
                .collect();
            let aliases: Vec<&str> = code
                .iter()
                .filter_map(|l| l.trim().strip_prefix("local "))
                .filter_map(|l| l.split_once('='))
                .filter(|(_, rhs)| rhs.trim().starts_with("KEYS["))
                .map(|(lhs, _)| lhs.trim())
                .collect();
            let mut calls = 0;
            for line in &code {
                let calls_on_line = line
                    .split("redis.call(")
                    .skip(1)
                    .chain(line.split("redis.pcall(").skip(1));
                for call in calls_on_line {
                    calls += 1;
                    let mut args = call.splitn(3, ',');
                    let command = args.next().unwrap_or("").trim();
                    // TIME is the only command our scripts run without a key.
                    if command.trim_end_matches(')') == "'TIME'" {
                        continue;
                    }
                    let key = args.next().unwrap_or("").trim().trim_end_matches(')');
                    assert!(
                        key.starts_with("KEYS[") || aliases.contains(&key),
                        "{name}.lua: {command} on {key:?}, which is not a declared key"
                    );
                }
            }
            // cache_writes.lua only judges the answers of its scripts' calls.
            assert!(
                calls > 0 || name == "cache_writes",
                "{name}.lua makes no calls?"
            );
        }
    }
}
