//! The layout of the code holds its promises (docs/architecture.md): the
//! season module is pure, the modules depend on each other in one direction only, and
//! no source file outgrows a screenful of concerns.
//!
//! The dependency graph is derived from the source: every top-level module of `src/`
//! (each `src/X.rs` and `src/X/`, none left out, `lib.rs` and the binaries aside) is a
//! node, and `X -> Y` when a file of X names `crate::Y` outside comments (`crate::{Y,
//! ...}` groups included). The pure outcome rule (`rollover::outcome`: who moves
//! where, and the records of it) is a node of its own: the league needs it to place a
//! returning player, and it needs only the season. The graph must have no cycle, and
//! its direction is:
//!
//! - leaves, importing nothing of the crate: `clock`, `error` (the typed errors,
//!   backend-neutral: no redis-rs type), `metrics` (takes plain values), `gather`;
//! - `season` (pure) -> `error`; `rollover::outcome` -> `season`;
//! - `store` (the `Store` contract and its backends) -> the leaves and `season`,
//!   never the league's rules;
//! - `context` (what the league's parts share: the season, the store, the keys, the
//!   league clock) -> the store and below;
//! - the league's parts build on the context, each on the ones before it: `ranking`
//!   (the boards), then `rollover` (which merges the boards' tier lists), then
//!   `operator` (the operator's tools and the audit log), then `league` (the facade, and the placements, which may close a returning player's
//!   last bracket); `sim` and `server` sit on top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The pure outcome rule, a node of its own inside `rollover`.
const OUTCOME: &str = "rollover::outcome";

/// The crate's top-level modules, read from `src/`, and the outcome rule.
fn modules() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("src").expect("read src") {
        let path = entry.expect("dir entry").path();
        let name = path.file_stem().and_then(|n| n.to_str()).expect("a name");
        let module = if path.is_dir() {
            name != "bin"
        } else {
            path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main"
        };
        if module {
            found.push(name.to_owned());
        }
    }
    if Path::new("src/rollover/outcome.rs").exists() {
        found.push(OUTCOME.to_owned());
    }
    found.sort();
    found
}

/// The files of a module (a `rollover` that leaves out its pure `outcome.rs`).
fn files_of(module: &str) -> Vec<PathBuf> {
    if module == OUTCOME {
        return vec![PathBuf::from("src/rollover/outcome.rs")];
    }
    let dir = Path::new("src").join(module);
    let mut files = Vec::new();
    if dir.is_dir() {
        sources(&dir, &mut files);
    } else {
        files.push(dir.with_extension("rs"));
    }
    files.retain(|f| !(module == "rollover" && f.ends_with("outcome.rs")));
    files
}

/// Most lines a source file may have before its unit tests.
const MAX_LINES: usize = 650;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {dir:?}: {e}"));
    for entry in entries {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path:?}: {e}"))
}

/// `text` without its `//` comments (doc comments included); a `//` right after a
/// `:` is a URL's, not a comment.
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let cut = line
            .match_indices("//")
            .find(|(at, _)| !line[..*at].ends_with(':'))
            .map_or(line.len(), |(at, _)| at);
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// The path that follows `crate::` at the start of `rest`, for each name it brings in:
/// `a::b` gives `a::b`, `{a, b::c}` gives `a` and `b::c`.
fn named_paths(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(ident(group[start..i].trim()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(ident(group[start..i].trim()));
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// Which of the other modules `module` names as `crate::X`, outside comments.
fn uses(module: &str, all: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for file in files_of(module) {
        let code = code(&text(&file));
        for (at, _) in code.match_indices("crate::") {
            // `$crate::` (a macro's) and `leaguekit_crate::` are not this crate's paths.
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            for path in named_paths(&code[at + "crate::".len()..]) {
                let top = path.split("::").next().unwrap_or("");
                let node = if top == "rollover" && path.starts_with(OUTCOME) {
                    OUTCOME
                } else {
                    top
                };
                if node != module && all.iter().any(|m| m == node) {
                    found.insert(node.to_owned());
                }
            }
        }
    }
    found
}

/// The whole graph: each module and the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let all = modules();
    all.iter().map(|m| (m.clone(), uses(m, &all))).collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn season_is_pure_and_imports_only_the_errors() {
    assert_eq!(graph()["season"], set(&["error"]));
    for file in files_of("season") {
        let t = text(&file);
        // Types such as `std::net::SocketAddr` are data; sockets, runtimes and
        // writers are I/O.
        for io in [
            "redis::",
            "tokio::",
            "TcpStream",
            "TcpListener",
            "UdpSocket",
            "std::io::Write",
        ] {
            assert!(
                !t.contains(io),
                "{file:?} uses {io}: the season module does no I/O"
            );
        }
    }
}

#[test]
fn every_top_level_module_is_in_the_graph() {
    let all = modules();
    for expected in [
        "clock", "context", "error", "events", "league", "metrics", "operator", "ranking",
        "rollover", "season", "store", OUTCOME,
    ] {
        assert!(
            all.iter().any(|m| m == expected),
            "{expected} missing: {all:?}"
        );
    }
    // The grouped form of an import is read too.
    assert_eq!(
        named_paths("{error::Error, rollover::outcome::{A, B}, store};"),
        ["error::Error", "rollover::outcome::", "store"]
    );
}

#[test]
fn modules_depend_on_each_other_in_one_direction() {
    let graph = graph();
    // Depth-first search for a cycle, reporting its path.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(at) = path.iter().position(|p| p == m) {
            panic!("import circle: {} -> {m}", path[at..].join(" -> "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m.to_owned());
        for next in &graph[m] {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(m.to_owned());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
    // The leaves import nothing of the crate.
    for leaf in ["clock", "error", "metrics", "gather"] {
        assert_eq!(graph[leaf], set(&[]), "{leaf} is a leaf: {graph:?}");
    }
    // The store knows the season's types and the leaves, nothing of the league's
    // rules; the outcome rule is as pure as the season.
    let below_store = set(&["clock", "error", "gather", "metrics", "season"]);
    assert!(graph["store"].is_subset(&below_store), "{graph:?}");
    assert_eq!(graph[OUTCOME], set(&["season"]), "{graph:?}");
    // The league's parts, each below the next: the context knows none of them, the
    // boards know only the context, the rollover never the operator's tools or the
    // facade, the operator's tools never the facade.
    for (part, never) in [
        (
            "context",
            &["league", "operator", "ranking", "rollover", "server", "sim"][..],
        ),
        (
            "ranking",
            &["league", "operator", "rollover", "server", "sim"][..],
        ),
        ("rollover", &["league", "operator", "server", "sim"][..]),
        (
            "events",
            &["league", "operator", "ranking", "rollover", "server", "sim"][..],
        ),
        ("operator", &["league", "server", "sim"][..]),
        ("league", &["server", "sim"][..]),
    ] {
        for n in never {
            assert!(!graph[part].contains(*n), "{part} imports {n}: {graph:?}");
        }
    }
}

#[test]
fn no_source_file_outgrows_its_concern() {
    let mut files = Vec::new();
    sources(Path::new("src"), &mut files);
    let mut long = Vec::new();
    for file in files {
        let t = text(&file);
        // Unit tests (a `tests.rs`, or the `#[cfg(test)]` module at the end) aside.
        if file.ends_with("tests.rs") {
            continue;
        }
        let all: Vec<&str> = t.lines().collect();
        let lines = all
            .windows(2)
            .position(|w| w[0].starts_with("#[cfg(test)]") && w[1].starts_with("mod tests {"))
            .unwrap_or(all.len());
        if lines > MAX_LINES {
            long.push(format!("{} ({lines} lines)", file.display()));
        }
    }
    assert!(long.is_empty(), "split by concern: {long:?}");
}
