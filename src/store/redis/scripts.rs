//! The Lua scripts the Redis store runs, from `lua/` beside this file, hashed once per
//! process; and the check that each one touches only the keys it declares.
//!
//! A rule that several scripts follow is written once, as a prelude: a file of `local
//! function`s that is assembled, at build time, in front of each script that uses it
//! (Redis runs each script as one chunk, with nothing shared between scripts). The
//! table below, in `scripts!`, is the one place that says which script gets which
//! preludes, in order; each prelude's header names its scripts, and the tests check
//! both.

use std::sync::LazyLock;

use redis::Script;

/// The source of `lua/<file>.lua`, included at build time.
macro_rules! lua {
    ($file:ident) => {
        include_str!(concat!("lua/", stringify!($file), ".lua"))
    };
}

/// The scripts and their preludes: each script's source is its preludes' sources, in
/// the order given, followed by its own file.
macro_rules! scripts {
    (
        preludes: $($known:ident),* ;
        $($name:ident: [$($prelude:ident),*],)*
    ) => {
        /// The scripts, hashed once per process (`Script::new` computes the SHA1).
        pub(super) struct Scripts {
            $(pub(super) $name: Script,)*
        }

        pub(super) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
            $($name: Script::new(concat!($(lua!($prelude),)* lua!($name))),)*
        });

        /// Every prelude, by name, with its source.
        #[cfg(test)]
        const PRELUDES: &[(&str, &str)] = &[$((stringify!($known), lua!($known)),)*];

        /// Every script, by name: its preludes in order, its own file and its source as
        /// assembled.
        #[cfg(test)]
        const ASSEMBLY: &[(&str, &[&str], &str, &str)] = &[$((
            stringify!($name),
            &[$(stringify!($prelude)),*],
            lua!($name),
            concat!($(lua!($prelude),)* lua!($name)),
        ),)*];
    };
}

scripts! {
    preludes: clock, deadlines, numbers, foreign_keys, cache_writes, page_expiry, events;
    join: [clock, numbers],
    enter: [events],
    update: [clock, numbers, events],
    standings: [cache_writes, page_expiry],
    open_page: [cache_writes, page_expiry],
    keep_page: [cache_writes, page_expiry],
    around: [numbers],
    entry: [],
    cache_profile: [],
    record_state: [clock, deadlines],
    raise_mark: [],
    season_field: [],
    begin_close: [clock],
    finish_period: [events],
    claim_bracket: [foreign_keys, clock],
    outcome: [],
    finish_bracket: [foreign_keys, page_expiry, events],
    claim_rewards: [events],
    set_profile: [clock, deadlines],
    snapshot: [clock],
    grant: [events],
    append_audit: [],
    move_clock: [],
    ban_period: [],
    ban_bracket: [],
    unmark_ban: [],
    correction_read: [],
    correction_begin: [],
    correction_apply: [events],
    player_fix: [],
    adjust: [clock, numbers, page_expiry, events],
    hook_lease: [],
    hook_release: [],
    hook_advance: [],
    hook_dead_remove: [],
    hook_dead_put: [],
    hook_dead_prune: [],
    hook_mark: [],
    hook_done: [],
    hook_prune: [],
    hook_register: [],
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{ASSEMBLY, PRELUDES};

    /// A source without its comments.
    fn code(source: &str) -> String {
        source
            .lines()
            .map(|l| l.split("--").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The names of the `local function`s that `code` defines.
    fn defined(code: &str) -> Vec<&str> {
        code.split("local function ")
            .skip(1)
            .filter_map(|rest| rest.split_once('(').map(|(name, _)| name.trim()))
            .collect()
    }

    /// Whether `code` calls the function `name` (not a field or a longer name).
    fn calls(code: &str, name: &str) -> bool {
        let call = format!("{name}(");
        code.match_indices(&call).any(|(at, _)| {
            !code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
    }

    /// The source of a prelude, by name.
    fn prelude(name: &str) -> &'static str {
        PRELUDES
            .iter()
            .find(|(p, _)| *p == name)
            .unwrap_or_else(|| panic!("{name}.lua is not a prelude"))
            .1
    }

    /// Each rule is written once: a prelude's function is defined in no other prelude
    /// and in no script's own file (a copy pasted back fails here), each assembled
    /// script defines it at most once, every script that calls it is assembled with
    /// its prelude, ahead of the call, and no script is assembled with a prelude it
    /// does not use.
    #[test]
    fn each_rule_is_written_once() {
        let mut home: BTreeMap<&str, &str> = BTreeMap::new();
        for (name, source) in PRELUDES {
            let functions = defined(source);
            assert!(!functions.is_empty(), "{name}.lua defines no function");
            for f in functions {
                if let Some(other) = home.insert(f, name) {
                    panic!("{f} is defined in both {other}.lua and {name}.lua");
                }
            }
        }
        for (name, preludes, own, assembled) in ASSEMBLY {
            for f in defined(&code(own)) {
                assert!(
                    !home.contains_key(f),
                    "{name}.lua defines {f} again: it is {}.lua's",
                    home[f]
                );
            }
            let assembled = code(assembled);
            for f in home.keys() {
                let copies = assembled.matches(&format!("local function {f}(")).count();
                assert!(copies <= 1, "{name}: {f} is defined {copies} times");
            }
            // The script's parts in order: its preludes, then its own file.
            let parts: Vec<(&str, String)> = preludes
                .iter()
                .map(|p| (*p, code(prelude(p))))
                .chain(std::iter::once((*name, code(own))))
                .collect();
            for (i, (part, text)) in parts.iter().enumerate() {
                for (f, at) in &home {
                    if at != part && calls(text, f) {
                        assert!(
                            parts[..i].iter().any(|(p, _)| p == at),
                            "{name}: {part}.lua calls {f}, but {at}.lua is not assembled before it"
                        );
                    }
                }
            }
            for (i, (part, _)) in parts[..preludes.len()].iter().enumerate() {
                let used = parts[i + 1..]
                    .iter()
                    .any(|(_, text)| home.iter().any(|(f, at)| at == part && calls(text, f)));
                assert!(
                    used,
                    "{name} is assembled with {part}.lua but uses none of it"
                );
            }
        }
    }

    /// The commands of a rule written once run in its prelude only: a script that read
    /// the clock (TIME) or an expiry time (PEXPIRETIME), or sampled a bucket
    /// (HRANDFIELD), by itself would be a second copy of the rule.
    #[test]
    fn rule_commands_run_in_their_preludes_only() {
        let rules = [
            ("'TIME'", "clock"),
            ("'PEXPIRETIME'", "page_expiry"),
            ("'HRANDFIELD'", "deadlines"),
        ];
        let files = PRELUDES
            .iter()
            .copied()
            .chain(ASSEMBLY.iter().map(|(name, _, own, _)| (*name, *own)));
        for (name, source) in files {
            let code = code(source);
            for (command, at) in rules {
                assert!(
                    name == at || !code.contains(command),
                    "{name}.lua runs {command}, which is {at}.lua's rule"
                );
            }
        }
    }

    /// Each prelude's header names exactly the scripts assembled with it.
    #[test]
    fn prelude_headers_name_their_scripts() {
        for (name, source) in PRELUDES {
            let header: String = source
                .lines()
                .map_while(|l| l.strip_prefix("--"))
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join(" ");
            let (_, listed) = header
                .split_once("Included by:")
                .unwrap_or_else(|| panic!("{name}.lua's header says no \"Included by:\""));
            let listed = listed.split('(').next().unwrap_or("");
            let mut listed: Vec<&str> = listed.split(',').map(str::trim).collect();
            listed.sort_unstable();
            let mut assembled: Vec<&str> = ASSEMBLY
                .iter()
                .filter(|(_, preludes, _, _)| preludes.contains(name))
                .map(|(script, _, _, _)| *script)
                .collect();
            assembled.sort_unstable();
            assert_eq!(listed, assembled, "{name}.lua's header");
        }
    }

    /// Redis Cluster only checks the keys a script declares; a key a script touches
    /// without declaring it could live on another node. So every `redis.call` and
    /// `redis.pcall` in every script must name its key as `KEYS[n]` (or a local bound
    /// to one).
    #[test]
    fn scripts_touch_only_declared_keys() {
        let sources: Vec<(&str, &str)> = PRELUDES
            .iter()
            .copied()
            .chain(ASSEMBLY.iter().map(|(name, _, own, _)| (*name, *own)))
            .collect();
        // The lists above must name every script and prelude in lua/.
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
            // cache_writes.lua only judges the answers of its scripts' calls, and
            // numbers.lua only prints them.
            assert!(
                calls > 0 || name == "cache_writes" || name == "numbers",
                "{name}.lua makes no calls?"
            );
        }
    }
}
