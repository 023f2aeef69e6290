//! Abuse: what a stranger (no token, a bad token) or a careless client can make the
//! real `serve` keep. Every HTTP metric label comes from a fixed set, so thousands of
//! requests with made-up methods and random paths add no series to `/metrics`.

use std::collections::BTreeSet;

use futures::StreamExt;
use reqwest::{Method, StatusCode};

use crate::serving;
use serving::{SERVER, Start, VIEWER};

/// How many abusive requests the test sends after its warm-up.
const REQUESTS: usize = 3_000;
/// How many requests are in flight at once.
const IN_FLIGHT: usize = 16;

/// A deterministic pseudo-random number generator (xorshift64*), so that a failure
/// can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `len` characters of `[A-Z0-9]`, which make a valid HTTP method token.
    fn word(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        (0..len)
            .map(|_| {
                let i = usize::try_from(self.next() % ALPHABET.len() as u64).unwrap_or(0);
                char::from(ALPHABET[i])
            })
            .collect()
    }
}

/// One abusive request: its method, path and token (`None`: no token).
#[derive(Debug, Clone)]
struct Abuse {
    method: Method,
    path: String,
    token: Option<&'static str>,
}

/// The tokens an abuser may send: none, a bad one, a valid one.
const TOKENS: [Option<&str>; 3] = [None, Some("not-a-token-of-this-server-000"), Some(SERVER)];

/// The `n`th request of a run: every kind of request (token × target × method) comes
/// round every 18 requests, each time with new random names.
fn abuse(rng: &mut Rng, n: usize) -> Abuse {
    let token = TOKENS[n % 3];
    let made_up = || -> Method {
        // A method token nobody defines, such as `X0001`.
        Method::from_bytes(format!("X{n:04}").as_bytes()).expect("a method token")
    };
    let word = rng.word(12);
    let (method, path) = match (n / 3) % 6 {
        // A made-up method on a route that answers without a token.
        0 => (made_up(), "/healthz".to_owned()),
        // A made-up method on a route template, with a random parameter.
        1 => (made_up(), format!("/v1/players/{word}")),
        // A made-up method on a path no route has.
        2 => (made_up(), format!("/{word}/{}", rng.word(6))),
        // A known method on a random path.
        3 => (Method::GET, format!("/no/such/{word}")),
        // A known method on a route template with a random parameter.
        4 => (Method::GET, format!("/v1/players/{word}/rewards")),
        // A known method a route does not take.
        _ => (Method::DELETE, format!("/v1/players/{word}")),
    };
    Abuse {
        method,
        path,
        token,
    }
}

/// Sends `requests` and checks that each got an answer that is not a server error
/// (the server must stay up and answer, not crash or hang).
async fn send(http: &reqwest::Client, served: &serving::Served, requests: Vec<Abuse>) {
    let answers: Vec<(Abuse, Result<StatusCode, String>)> =
        futures::stream::iter(requests.into_iter().map(|a| async move {
            let mut r = http.request(a.method.clone(), served.url(&a.path));
            if let Some(t) = a.token {
                r = r.bearer_auth(t);
            }
            let answer = match r.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    resp.bytes()
                        .await
                        .map(|_| status)
                        .map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            };
            (a, answer)
        }))
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    for (a, answer) in answers {
        let status = answer.unwrap_or_else(|e| panic!("{a:?}: no answer: {e}"));
        assert!(
            !status.is_server_error(),
            "{a:?}: an abusive request is not the server's failure, got {status}"
        );
    }
}

/// `/metrics` read with a viewer token: its text.
async fn metrics(http: &reqwest::Client, served: &serving::Served) -> String {
    let r = http
        .get(served.url("/metrics"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .expect("GET /metrics");
    assert_eq!(r.status(), StatusCode::OK);
    r.text().await.expect("the metrics' text")
}

/// The series of a Prometheus text: each sample line without its value.
fn series(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.rsplit_once(' ').map_or(l, |(name, _)| name).to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_methods_and_paths_add_no_metric_series() {
    let config = serving::open_season("http_abuse_metrics");
    let served = Start::new(config.path()).spawn();
    let http = reqwest::Client::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);

    // Warm up: every kind of request once (with its own random names), and two
    // scrapes, so that every bounded series exists before the measure.
    let warm: Vec<Abuse> = (0..36).map(|n| abuse(&mut rng, n)).collect();
    send(&http, &served, warm).await;
    metrics(&http, &served).await;
    let before = metrics(&http, &served).await;

    let abusive: Vec<Abuse> = (36..36 + REQUESTS).map(|n| abuse(&mut rng, n)).collect();
    send(&http, &served, abusive).await;
    let after = metrics(&http, &served).await;

    let (old, new) = (series(&before), series(&after));
    let added: Vec<&String> = new.difference(&old).collect();
    eprintln!(
        "/metrics: {} bytes and {} series before {REQUESTS} abusive requests, {} bytes and \
         {} series after",
        before.len(),
        old.len(),
        after.len(),
        new.len()
    );
    assert!(
        added.is_empty(),
        "{} series added by {REQUESTS} requests, such as {:?}",
        added.len(),
        added.iter().take(5).collect::<Vec<_>>()
    );
    assert_eq!(
        before.lines().count(),
        after.lines().count(),
        "the same lines (only counters' values change)"
    );
    // Counters' values grow by a few digits; nothing else may.
    assert!(
        after.len() <= before.len() + before.len() / 10 + 1024,
        "/metrics grew from {} to {} bytes",
        before.len(),
        after.len()
    );
    // The labels are the fixed ones: no request's own method or path.
    assert!(
        after.contains("method=\"other\"") && after.contains("route=\"unmatched\""),
        "made-up methods and unknown paths are counted under fixed labels:\n{after}"
    );
    assert!(!after.contains("X0001"), "a raw method became a label");
    assert!(!after.contains("/no/such/"), "a raw path became a label");
}
