//! The layout of the code holds its promises (README, "Layout of the code"): the
//! season module is pure and imports nothing else of the crate, the modules depend on
//! each other in one direction only, and no source file outgrows a screenful of
//! concerns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate's modules as the design names them. The pure outcome rule
/// (`rollover::outcome`: who moves where, and the records of it) is a node of its own:
/// the league needs it to place a returning player, and it needs only the season.
const MODULES: [&str; 7] = [
    "season",
    "store",
    "league",
    "ranking",
    "rollover::outcome",
    "rollover",
    "sim",
];

/// The files of a module (a `rollover` that leaves out its pure `outcome.rs`).
fn files_of(module: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if module == "rollover::outcome" {
        return vec![PathBuf::from("src/rollover/outcome.rs")];
    }
    sources(&Path::new("src").join(module), &mut files);
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

/// Which of the other top modules `module` names as `crate::X`, outside comments.
fn uses(module: &str) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    for file in files_of(module) {
        for line in text(&file).lines() {
            let code = line.split("//").next().unwrap_or("");
            for other in MODULES {
                let path = format!("crate::{other}");
                // `crate::rollover::outcome` names the outcome rule, not the rollover.
                let named = code.match_indices(&path).any(|(at, _)| {
                    other != "rollover" || !code[at + path.len()..].starts_with("::outcome")
                });
                if other != module && named {
                    found.insert(other);
                }
            }
        }
    }
    found
}

#[test]
fn season_is_pure_and_imports_nothing_else_of_the_crate() {
    assert_eq!(uses("season"), BTreeSet::new());
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
fn modules_depend_on_each_other_in_one_direction() {
    let graph: BTreeMap<&str, BTreeSet<&str>> = MODULES.iter().map(|m| (*m, uses(m))).collect();
    // Depth-first search for a cycle, reporting its path.
    fn visit<'a>(
        m: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == m) {
            panic!("import circle: {} -> {m}", path[at..].join(" -> "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m);
        for next in &graph[m] {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in MODULES {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
    // The store knows the season's types and nothing of the league's rules; the
    // outcome rule is as pure as the season.
    assert_eq!(graph["store"], BTreeSet::from(["season"]), "{graph:?}");
    assert_eq!(
        graph["rollover::outcome"],
        BTreeSet::from(["season"]),
        "{graph:?}"
    );
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
