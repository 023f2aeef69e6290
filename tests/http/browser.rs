//! The dashboard in a real browser: Debian's Chromium, headless, driven through
//! chromedriver (WebDriver) with fantoccini, against the real `leaguekit serve` on a
//! real Redis, with the service's own scheduler turning a period over.
//!
//! It signs in with a viewer token (a wrong token first), sees the tiers and their
//! brackets, watches a bracket, submits a score through the API and sees the
//! standings change without a reload within a second, looks a player up (placement,
//! last period, pending rewards), and saves screenshots at a laptop's and a phone's
//! size under `target/tmp/browser/` (the path is printed).
//!
//! It never skips: without chromium and chromedriver (`apt-get install chromium
//! chromium-driver`, which `scripts/test` does), or when Chromium cannot start, it
//! fails and says why. `LEAGUEKIT_TEST_CHROMIUM` and `LEAGUEKIT_TEST_CHROMEDRIVER`
//! name other binaries.

use crate::common;
use crate::serving;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use serving::{ADMIN, ADMIN_ENTRY, SERVER, Served, Start, VIEWER, now, rfc};

const HOW_TO_GET_CHROMIUM: &str = "the browser test needs Debian's chromium and \
     chromium-driver: apt-get install chromium chromium-driver (scripts/test installs \
     them), or set LEAGUEKIT_TEST_CHROMIUM and LEAGUEKIT_TEST_CHROMEDRIVER to the binaries";

/// A binary from `var`, else the first of `names` on PATH; panics with instructions.
fn binary(var: &str, names: &[&str]) -> PathBuf {
    if let Ok(p) = std::env::var(var)
        && !p.trim().is_empty()
    {
        return PathBuf::from(p);
    }
    let paths = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&paths) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!("no {} on PATH: {HOW_TO_GET_CHROMIUM}", names.join(" or "));
}

/// chromedriver on a free loopback port, in a process group of its own so that it
/// and the browsers it started are stopped together, however the test ends.
struct Driver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Driver {
    fn start(dir: &Path) -> Driver {
        use std::os::unix::process::CommandExt;
        let bin = binary("LEAGUEKIT_TEST_CHROMEDRIVER", &["chromedriver"]);
        let log = dir.join("chromedriver.log");
        for _ in 0..5 {
            let port = common::free_port();
            let mut child = Command::new(&bin)
                .arg(format!("--port={port}"))
                .arg(format!("--log-path={}", log.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("cannot run {}: {e}; {HOW_TO_GET_CHROMIUM}", bin.display())
                });
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if common::listening(port) {
                    return Driver { child, port, log };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!(
            "chromedriver did not start; its log ({}):\n{}",
            log.display(),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// A headless Chromium session. The flags keep it off the network it must not
    /// reach (this machine has none) and out of any profile but a fresh one.
    async fn session(&self, profile: &Path) -> Client {
        let chromium = binary(
            "LEAGUEKIT_TEST_CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        );
        let args = [
            "--headless=new".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--window-size=1280,1000".to_owned(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"binary": chromium, "args": args}),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
        {
            Ok(c) => c,
            Err(e) => panic!(
                "Chromium ({}) could not start a session: {e}\nchromedriver's log ({}):\n{}\n{HOW_TO_GET_CHROMIUM}",
                chromium.display(),
                self.log.display(),
                tail(&std::fs::read_to_string(&self.log).unwrap_or_default(), 40)
            ),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The whole group: chromedriver and the browser processes it started.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The game server's side: the API with the server token.
struct Game {
    http: reqwest::Client,
    base: String,
}

impl Game {
    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let r = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(SERVER)
            .json(&body)
            .send()
            .await
            .expect("send");
        let status = r.status();
        let body: Value = r.json().await.expect("JSON answer");
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }

    async fn submit(&self, player: &str, value: i64) -> Value {
        self.send(
            reqwest::Method::POST,
            &format!("/v1/players/{player}/scores"),
            json!({"value": value}),
        )
        .await
    }

    async fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(SERVER)
            .send()
            .await
            .expect("send");
        r.json().await.expect("JSON answer")
    }
}

/// Runs `script` (a function body that returns a value) until it returns something
/// other than `null` or `false`, at most `limit`; returns it.
async fn until(c: &Client, limit: Duration, what: &str, script: &str) -> Value {
    let deadline = Instant::now() + limit;
    let mut last = Value::Null;
    while Instant::now() < deadline {
        last = c.execute(script, vec![]).await.expect("execute script");
        if !(last.is_null() || last == Value::Bool(false)) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let page = c
        .execute("return document.body.innerText", vec![])
        .await
        .unwrap_or_default();
    panic!("{what}: not seen within {limit:?} (last: {last}); the page shows:\n{page}");
}

async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .expect("text")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_signs_in_shows_the_league_and_follows_it_live() {
    let artifacts = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let work = tempfile::tempdir().expect("temp dir");
    // Start the browser side first: a machine without it fails here, at once.
    let driver = Driver::start(work.path());

    // A season whose first period ends in a few seconds (the service's own scheduler
    // closes it), with an event log (the live bracket's feed).
    let first_end = now() + chrono::Duration::seconds(6);
    let config = serving::season("browser", first_end, "1s", "\n[events]\n");
    let mut start = Start::new(config.path());
    start.args = vec![];
    start.admin_tokens = Some(ADMIN_ENTRY);
    let served: Served = start.spawn();
    let game = Game {
        http: reqwest::Client::new(),
        base: served.base.clone(),
    };

    // Period 1: twelve players in bronze, six of them with names.
    let names = ["Ana", "Bo", "Cy", "Dee", "Eli", "Fay"];
    for i in 1..=12 {
        let p = format!("p{i:02}");
        let at = rfc(now());
        let body = json!({"value": 1000 - 10 * i, "request_id": format!("m1-{p}"), "at": at});
        game.send(
            reqwest::Method::POST,
            &format!("/v1/players/{p}/scores"),
            body,
        )
        .await;
        if let Some(name) = names.get(i - 1) {
            game.send(
                reqwest::Method::PUT,
                &format!("/v1/players/{p}/profile"),
                json!({ "name": name }),
            )
            .await;
        }
    }
    assert!(
        now() < first_end,
        "period 1 ended before its players played"
    );
    // The scheduler of `serve` closes period 1 once it may (its end plus max_skew).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let p = game.get("/v1/periods").await;
        if p["closed_through"].as_u64() >= Some(1) {
            break;
        }
        assert!(Instant::now() < deadline, "period 1 was not closed: {p}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Period 2: six returning players (promoted to silver), three new ones in bronze.
    for (i, p) in ["p01", "p02", "p03", "p04", "p05", "p06"]
        .iter()
        .enumerate()
    {
        game.submit(p, 60 - 10 * i as i64).await;
    }
    for (i, p) in ["q01", "q02", "q03"].iter().enumerate() {
        game.submit(p, 5 + i as i64).await;
    }

    let c = driver.session(&work.path().join("profile")).await;

    // Without a token the page asks for one; a wrong token is refused there.
    c.goto(&served.base).await.expect("open the dashboard");
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#sign-in #token"))
        .await
        .expect("the sign-in form");
    let token = c.find(Locator::Css("#token")).await.expect("token input");
    token
        .send_keys("wrong-token-0123456789")
        .await
        .expect("type");
    c.find(Locator::Css("#sign-in button"))
        .await
        .expect("button")
        .click()
        .await
        .expect("click");
    let refused = until(
        &c,
        Duration::from_secs(5),
        "the refusal of a wrong token",
        "const e = document.getElementById('error'); return e && e.textContent || null;",
    )
    .await;
    assert!(
        refused.as_str().is_some_and(|t| t.contains("not valid")),
        "{refused}"
    );
    token.clear().await.expect("clear");
    token.send_keys(VIEWER).await.expect("type");
    c.find(Locator::Css("#sign-in button"))
        .await
        .expect("button")
        .click()
        .await
        .expect("click");

    // The tiers, top first, with their players and brackets.
    let tiers = until(
        &c,
        Duration::from_secs(10),
        "the tiers",
        "const t = [...document.querySelectorAll('#tier-list li.tier')];
         return t.length ? t.map(li => li.dataset.tier + ': ' + li.querySelector('.tier-count').textContent) : null;",
    )
    .await;
    assert_eq!(
        tiers,
        json!([
            "diamond: 0 players · 0 brackets",
            "platinum: 0 players · 0 brackets",
            "gold: 0 players · 0 brackets",
            "silver: 6 players · 1 bracket",
            "bronze: 3 players · 1 bracket"
        ])
    );
    assert!(
        text_of(&c, "#tiers-total")
            .await
            .contains("9 players in period 2")
    );
    assert_eq!(text_of(&c, "#period-id").await, "2");
    assert!(
        text_of(&c, "#rollover-status")
            .await
            .contains("Closed through period 1"),
        "rollover status"
    );
    let report = text_of(&c, "#reports tbody tr").await;
    assert!(
        report.starts_with("1 1 12 12 0 0 10"),
        "report row: {report}"
    );

    // Watch silver bracket 1: its standings, with profile names.
    c.find(Locator::Css(
        "#tier-list li[data-tier=silver] .chip[data-bracket='1']",
    ))
    .await
    .expect("silver bracket chip")
    .click()
    .await
    .expect("click");
    let rows = until(
        &c,
        Duration::from_secs(5),
        "silver bracket 1's standings",
        "if (!document.getElementById('bracket-title').textContent.startsWith('silver')) return null;
         const r = [...document.querySelectorAll('#standings tbody tr[data-player]')];
         return r.length === 6 ? r.map(tr => tr.dataset.player + ' ' + tr.querySelector('.pname').textContent + ' ' + tr.querySelector('.score').textContent) : null;",
    )
    .await;
    assert_eq!(
        rows,
        json!([
            "p01 Ana 60",
            "p02 Bo 50",
            "p03 Cy 40",
            "p04 Dee 30",
            "p05 Eli 20",
            "p06 Fay 10"
        ])
    );
    until(
        &c,
        Duration::from_secs(5),
        "the live stream",
        "return document.getElementById('live').dataset.state === 'live';",
    )
    .await;
    // The bracket's log events, from the same stream: its six placements, newest first.
    let feed = until(
        &c,
        Duration::from_secs(5),
        "the feed of the bracket's events",
        "const f = [...document.querySelectorAll('#feed li')];
         return f.length === 6 && f.every(li => li.dataset.type === 'player.placed')
             ? f.map(li => li.textContent) : null;",
    )
    .await;
    assert!(
        feed[0]
            .as_str()
            .is_some_and(|t| t.contains("p06 joined the bracket")),
        "{feed}"
    );

    // A score through the API shows in the standings within a second, no reload.
    c.execute("window.__leaguekitMarker = 42; return true;", vec![])
        .await
        .expect("mark the page");
    let sent = Instant::now();
    let s = game.submit("p06", 100).await;
    assert_eq!(
        (s["score"].as_u64(), s["rank"].as_u64()),
        (Some(110), Some(1))
    );
    until(
        &c,
        Duration::from_secs(3),
        "p06 on top after the submit",
        "const r = document.querySelector('#standings tbody tr[data-player]');
         return r && r.dataset.player === 'p06' && r.querySelector('.score').textContent === '110';",
    )
    .await;
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(1), "the change took {took:?}");
    let marker = c
        .execute("return window.__leaguekitMarker || null;", vec![])
        .await
        .expect("read the mark");
    assert_eq!(marker, json!(42), "the page was reloaded");
    assert_eq!(
        text_of(&c, "#standings tbody tr.changed .pname").await,
        "Fay",
        "the changed row is highlighted"
    );
    println!("live standings: the submit showed after {took:?}");

    // Player search: placement, last period and pending rewards.
    let input = c.find(Locator::Css("#player-input")).await.expect("search");
    input.send_keys("p01").await.expect("type");
    c.find(Locator::Css("#player-form button"))
        .await
        .expect("look up")
        .click()
        .await
        .expect("click");
    let found = until(
        &c,
        Duration::from_secs(5),
        "the player's card",
        "const h = document.querySelector('#player-result h3');
         return h && h.textContent === 'p01' ? document.getElementById('player-result').innerText : null;",
    )
    .await;
    let found = found.as_str().expect("text");
    for needle in [
        "silver",
        "Rank\n2",
        "Score\n60",
        "Period 1: bronze bracket 1, rank 1 with 990 → promoted to silver · reward gems:100",
        "gems:100 from 1/bronze/1",
    ] {
        assert!(found.contains(needle), "{needle:?} missing from:\n{found}");
    }

    // Screenshots, to look at: a laptop, then a phone.
    let laptop = artifacts.join("dashboard-laptop.png");
    std::fs::write(&laptop, c.screenshot().await.expect("screenshot")).expect("save");
    c.set_window_size(390, 844).await.expect("phone size");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let overflow = c
        .execute(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
            vec![],
        )
        .await
        .expect("measure");
    assert!(
        overflow.as_i64().is_some_and(|o| o <= 0),
        "the page scrolls sideways on a phone by {overflow} px"
    );
    let phone = artifacts.join("dashboard-phone.png");
    std::fs::write(&phone, c.screenshot().await.expect("screenshot")).expect("save");
    println!("screenshots: {} and {}", laptop.display(), phone.display());

    operate(&c, &game, &artifacts).await;
    c.close().await.expect("close the browser");
    drop(served);
}

/// Accepts the page's confirmation dialog once it is open.
async fn confirm(c: &Client) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.accept_alert().await.is_err() {
        assert!(Instant::now() < deadline, "no confirmation was asked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Looks a player up and applies one operator action from their card, confirmed.
async fn act(c: &Client, player: &str, action: &str, amount: &str, reason: &str) {
    let input = c.find(Locator::Css("#player-input")).await.expect("search");
    input.clear().await.expect("clear");
    input.send_keys(player).await.expect("type");
    c.find(Locator::Css("#player-form button"))
        .await
        .expect("look up")
        .click()
        .await
        .expect("click");
    until(
        c,
        Duration::from_secs(5),
        "the player's actions",
        &format!(
            "const h = document.querySelector('#player-result h3');
             return h && h.textContent === '{player}' && document.querySelector('#player-result .actions') !== null;"
        ),
    )
    .await;
    c.execute(
        "const f = document.querySelector('#player-result .actions');
         const s = f.querySelector('select');
         s.value = arguments[0];
         s.dispatchEvent(new Event('change'));
         f.querySelector('input[type=number]').value = arguments[1];
         f.querySelector('input[aria-label=reason]').value = arguments[2];
         return s.value === arguments[0];",
        vec![json!(action), json!(amount), json!(reason)],
    )
    .await
    .expect("fill the action");
    c.find(Locator::Css("#player-result .actions button"))
        .await
        .expect("apply")
        .click()
        .await
        .expect("click");
    confirm(c).await;
    let done = until(
        c,
        Duration::from_secs(5),
        "the action's result",
        "const n = document.querySelector('#player-result .notice');
         const r = document.querySelector('#player-result .actions .result');
         return n ? n.textContent : (r && r.textContent ? 'failed: ' + r.textContent : null);",
    )
    .await;
    assert!(
        done.as_str().is_some_and(|t| t.starts_with("Done")),
        "{player} {action}: {done}"
    );
}

/// The operator's side: a viewer sees none of it; an admin sees bans and the audit
/// log, and bans, adjusts and re-settles from a player's card.
async fn operate(c: &Client, game: &Game, artifacts: &Path) {
    c.set_window_size(1400, 1000).await.expect("laptop size");
    let viewer_sees = c
        .execute(
            "return [document.getElementById('operator').hidden,
                     document.querySelector('#player-result .actions') === null];",
            vec![],
        )
        .await
        .expect("read");
    assert_eq!(
        viewer_sees,
        json!([true, true]),
        "a viewer sees no operator tools"
    );

    c.find(Locator::Css("#sign-out"))
        .await
        .expect("sign out")
        .click()
        .await
        .expect("click");
    let token = c
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#sign-in #token"))
        .await
        .expect("the sign-in form");
    token.send_keys(ADMIN).await.expect("type");
    c.find(Locator::Css("#sign-in button"))
        .await
        .expect("button")
        .click()
        .await
        .expect("click");
    until(
        c,
        Duration::from_secs(10),
        "the operator's card",
        "const o = document.getElementById('operator');
         return o && !o.hidden && o.innerText.includes('No operator action yet');",
    )
    .await;

    act(c, "p03", "ban", "", "aimbot").await;
    let banned = until(
        c,
        Duration::from_secs(5),
        "the ban in the operator's card",
        "const b = document.querySelector('#bans tbody tr');
         const a = document.querySelector('#audit tbody tr');
         return b && a && b.innerText.includes('p03') ? [b.innerText, a.innerText] : null;",
    )
    .await;
    assert!(
        banned[0].as_str().is_some_and(|t| t.contains("aimbot"))
            && banned[1]
                .as_str()
                .is_some_and(|t| t.contains("ban") && t.contains("ops")),
        "{banned}"
    );
    let p03 = game.get("/v1/players/p03").await;
    assert!(
        p03["rank"].is_null(),
        "a banned player left the board: {p03}"
    );

    act(c, "p02", "adjust-by", "5", "support ticket 7").await;
    let p02 = game.get("/v1/players/p02").await;
    assert_eq!(p02["score"].as_u64(), Some(55), "{p02}");

    // p01 won bronze bracket 1 in period 1: settled again without them, p02 (second)
    // takes the winner's reward as well.
    let before = game.get("/v1/players/p02/rewards").await["rewards"]
        .as_array()
        .map_or(0, Vec::len);
    act(c, "p01", "resettle", "", "speed hack").await;
    let after = game.get("/v1/players/p02/rewards").await["rewards"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(after, before + 1, "p02 gained the winner's reward");
    until(
        c,
        Duration::from_secs(15),
        "the re-settlement in the audit log",
        "const a = document.querySelector('#audit tbody tr');
         return a && a.innerText.includes('resettle');",
    )
    .await;
    let admin = artifacts.join("dashboard-admin.png");
    std::fs::write(&admin, c.screenshot().await.expect("screenshot")).expect("save");
    println!("admin screenshot: {}", admin.display());
}
