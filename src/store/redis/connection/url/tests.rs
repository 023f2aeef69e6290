//! The URL forms, the errors for bad URLs, and that the password never shows.

use super::*;

pub(crate) fn parse(s: &str) -> RedisUrl {
    match RedisUrl::parse(s) {
        Ok(url) => url,
        Err(e) => panic!("{s}: {e}"),
    }
}

pub(crate) fn password(url: &RedisUrl) -> Option<&str> {
    url.password()
}

#[test]
pub(crate) fn single_node_forms() {
    let url = parse("redis://127.0.0.1:6390/");
    assert_eq!(url.scheme(), Scheme::Redis);
    assert_eq!(url.nodes(), &[NodeAddr::new("127.0.0.1", 6390)]);
    assert_eq!(
        (url.db(), url.username(), url.has_password()),
        (0, None, false)
    );
    let url = parse("redis://localhost");
    assert_eq!(url.nodes(), &[NodeAddr::new("localhost", 6379)]);
    let url = parse("rediss://app:pw@redis.example.com:6380/3?protocol=resp3");
    assert_eq!(url.scheme(), Scheme::Rediss);
    assert!(url.scheme().is_tls() && !url.scheme().is_cluster());
    assert_eq!(
        (url.db(), url.username(), password(&url)),
        (3, Some("app"), Some("pw"))
    );
    assert!(url.resp3());
    let url = parse("redis://:only-pw@h:1");
    assert_eq!((url.username(), password(&url)), (None, Some("only-pw")));
    let url = parse("REDIS://[::1]:7000/2");
    assert_eq!(url.nodes(), &[NodeAddr::new("::1", 7000)]);
    assert_eq!(url.nodes()[0].to_string(), "[::1]:7000");
    assert_eq!(url.db(), 2);
    let url = parse("  redis://h:1/  ");
    assert_eq!(url.nodes(), &[NodeAddr::new("h", 1)]);
}

#[test]
pub(crate) fn cluster_forms() {
    let url = parse("redis+cluster://10.0.0.1:7000,10.0.0.2:7001,node-3.internal");
    assert_eq!(url.scheme(), Scheme::RedisCluster);
    assert_eq!(
        url.nodes(),
        &[
            NodeAddr::new("10.0.0.1", 7000),
            NodeAddr::new("10.0.0.2", 7001),
            NodeAddr::new("node-3.internal", 6379)
        ]
    );
    let url = parse("rediss+cluster://u:p@a:1,[::1]:2/");
    assert!(url.scheme().is_tls() && url.scheme().is_cluster());
    assert_eq!((url.username(), password(&url)), (Some("u"), Some("p")));
    assert_eq!(url.nodes().len(), 2);
    assert_eq!(parse("redis+cluster://a:1/0").db(), 0);
    assert_eq!(
        RedisUrl::parse("redis+cluster://a:1/1"),
        Err(UrlError::ClusterDatabase { db: 1 })
    );
}

#[test]
pub(crate) fn credentials_are_percent_decoded_and_end_at_the_last_at() {
    let url = parse("redis://us%65r:p%40ss%3Aw%2Frd%25@h:1/");
    assert_eq!(
        (url.username(), password(&url)),
        (Some("user"), Some("p@ss:w/rd%"))
    );
    // Unescaped '@', '/', '?', '#' and ':' in the password.
    let url = parse("redis://u:a@b/c?d#e:f@h:1/2");
    assert_eq!(password(&url), Some("a@b/c?d#e:f"));
    assert_eq!(url.nodes(), &[NodeAddr::new("h", 1)]);
    assert_eq!(url.db(), 2);
    let url = parse("redis+cluster://u:p@w,x@a:1,b:2");
    assert_eq!(password(&url), Some("p@w,x"));
    assert_eq!(url.nodes().len(), 2);
    // Multi-byte UTF-8.
    let url = parse("redis://u:%C3%A9t%C3%A9@h");
    assert_eq!(password(&url), Some("été"));
    // Empty credentials are none.
    let url = parse("redis://:@h");
    assert!(!url.has_password());
    let url = parse("redis://@h");
    assert!(!url.has_password());
}

#[test]
pub(crate) fn unix_sockets() {
    let url = parse("unix:///run/redis.sock");
    assert_eq!(url.scheme(), Scheme::Unix);
    assert_eq!(url.socket(), Some(Path::new("/run/redis.sock")));
    let url = parse("redis+unix:///tmp/r.sock?db=4&user=u&pass=p%26w&protocol=resp3");
    assert_eq!(
        (url.db(), url.username(), password(&url)),
        (4, Some("u"), Some("p&w"))
    );
    assert!(url.resp3());
    assert_eq!(
        url.to_string(),
        "unix:///tmp/r.sock?db=4&user=u&pass=***&protocol=resp3"
    );
    assert_eq!(RedisUrl::parse("unix://relative"), Err(UrlError::BadSocket));
    assert_eq!(
        RedisUrl::parse("unix:///s?user=u"),
        Err(UrlError::UserWithoutPassword)
    );
}

/// Every bad URL is a typed error whose message names what to fix, and no message
/// repeats the password, wherever the mistake is.
#[test]
pub(crate) fn hostile_urls_are_refused_without_echoing_the_password() {
    const SECRET: &str = "S3CRET";
    type Expected = fn(&UrlError) -> bool;
    let cases: &[(&str, Expected)] = &[
        ("", |e| *e == UrlError::Empty),
        ("   ", |e| *e == UrlError::Empty),
        ("127.0.0.1:6379", |e| *e == UrlError::MissingScheme),
        ("u:S3CRET@h://x", |e| *e == UrlError::MissingScheme),
        ("://h", |e| *e == UrlError::MissingScheme),
        (
            "http://h",
            |e| matches!(e, UrlError::UnknownScheme { scheme } if scheme == "http"),
        ),
        ("redis://", |e| *e == UrlError::MissingHost),
        ("redis://u:S3CRET@", |e| *e == UrlError::MissingHost),
        ("redis://u:S3CRET@/0", |e| *e == UrlError::MissingHost),
        ("redis://u:S3CRET@a:1,b:2", |e| {
            matches!(
                e,
                UrlError::SeveralHosts {
                    scheme: Scheme::Redis
                }
            )
        }),
        ("redis+cluster://u:S3CRET@a:1,,b:2", |e| {
            *e == UrlError::EmptyHost { position: 2 }
        }),
        ("redis+cluster://a:1,", |e| {
            *e == UrlError::EmptyHost { position: 2 }
        }),
        ("redis://u:S3CRET@h:0", |e| {
            matches!(e, UrlError::BadPort { .. })
        }),
        ("redis://u:S3CRET@h:65536", |e| {
            matches!(e, UrlError::BadPort { .. })
        }),
        ("redis://u:S3CRET@h:+1", |e| {
            matches!(e, UrlError::BadPort { .. })
        }),
        ("redis://u:S3CRET@h:x", |e| {
            matches!(e, UrlError::BadPort { .. })
        }),
        ("redis://u:S3CRET@:1", |e| {
            *e == UrlError::EmptyHost { position: 1 }
        }),
        ("redis://u:S3CRET@::1:6379", |e| {
            matches!(e, UrlError::BadHost { .. })
        }),
        ("redis://u:S3CRET@[::1", |e| {
            matches!(e, UrlError::BadHost { .. })
        }),
        ("redis://u:S3CRET@[zz]:1", |e| {
            matches!(e, UrlError::BadHost { .. })
        }),
        ("redis://u:S3CRET@[::1]x", |e| {
            matches!(e, UrlError::BadHost { .. })
        }),
        ("redis://u:S3CRET@h h", |e| {
            matches!(e, UrlError::BadHost { .. })
        }),
        ("redis://u:S3CRET@h/x", |e| {
            matches!(e, UrlError::BadDatabase { .. })
        }),
        ("redis://u:S3CRET@h/-1", |e| {
            matches!(e, UrlError::BadDatabase { .. })
        }),
        ("redis://u:S3CRET@h/1/2", |e| {
            matches!(e, UrlError::BadDatabase { .. })
        }),
        ("redis://S3CRET@h", |e| *e == UrlError::UserWithoutPassword),
        ("redis://u:S3CRET%@h", |e| {
            *e == UrlError::BadEscape { part: "password" }
        }),
        ("redis://u:S3CRET%4@h", |e| {
            *e == UrlError::BadEscape { part: "password" }
        }),
        ("redis://u:S3CRET%zz@h", |e| {
            *e == UrlError::BadEscape { part: "password" }
        }),
        ("redis://u:S3CRET%FF@h", |e| {
            *e == UrlError::NotUtf8 { part: "password" }
        }),
        ("redis://u%:S3CRET@h", |e| {
            *e == UrlError::BadEscape { part: "user name" }
        }),
        (
            "redis://u:S3CRET@h?db=1",
            |e| matches!(e, UrlError::UnknownParameter { name, .. } if name == "db"),
        ),
        ("redis://u:S3CRET@h?protocol=resp4", |e| {
            matches!(e, UrlError::BadParameter { .. })
        }),
        // redis-rs's own refusal (a wildcard address), typed.
        ("redis://u:S3CRET@0.0.0.0:6379", |e| {
            matches!(e, UrlError::Unusable { .. })
        }),
        ("rediss://u:S3CRET@h/#insecure", |e| {
            *e == UrlError::Fragment
        }),
        ("unix:///s?pass=S3CRET%&user=u", |e| {
            *e == UrlError::BadEscape { part: "password" }
        }),
        (
            "unix:///s?pass=S3CRET&bogus=1",
            |e| matches!(e, UrlError::UnknownParameter { name, .. } if name == "bogus"),
        ),
    ];
    for (input, expected) in cases {
        match RedisUrl::parse(input) {
            Ok(url) => panic!("{input:?} parsed as {url:?}"),
            Err(e) => {
                assert!(expected(&e), "{input:?}: unexpected error {e:?}");
                let message = e.to_string();
                assert!(!message.contains(SECRET), "{input:?}: {message}");
                assert!(!format!("{e:?}").contains(SECRET), "{input:?}: {e:?}");
                assert!(message.len() > 30, "{input:?}: terse message {message}");
            }
        }
    }
}

#[test]
pub(crate) fn display_and_debug_hide_the_password() {
    let url = parse("rediss://app:S3CRET@h:6380/2?protocol=resp3");
    assert_eq!(url.to_string(), "rediss://app:***@h:6380/2?protocol=resp3");
    assert!(!format!("{url:?}").contains("S3CRET"));
    assert_eq!(
        parse("redis://:S3CRET@h").to_string(),
        "redis://:***@h:6379/"
    );
    // Display round-trips (but for the password).
    for s in [
        "redis://h:1/",
        "redis+cluster://a:1,[::1]:2/",
        "rediss://u:***@h:6379/5",
    ] {
        assert_eq!(parse(s).to_string(), s);
    }
}

#[test]
pub(crate) fn connection_info_carries_everything() {
    let url = parse("rediss://app:pw@h:6380/3?protocol=resp3");
    let info = url.node_infos().remove(0).1;
    assert!(
        matches!(info.addr(), ConnectionAddr::TcpTls { host, port: 6380, insecure: false, .. } if host == "h")
    );
    let redis = info.redis_settings();
    assert_eq!(
        (redis.username(), redis.password(), redis.db()),
        (Some("app"), Some("pw"), 3)
    );
    assert_eq!(redis.protocol(), ProtocolVersion::RESP3);
    let url = parse("unix:///tmp/s.sock?db=1");
    assert!(
        matches!(url.node_infos().remove(0).1.addr(), ConnectionAddr::Unix(p) if p == Path::new("/tmp/s.sock"))
    );
    assert_eq!(url.node_infos()[0].1.redis_settings().db(), 1);
    // A cluster: one redis-rs URL per seed, each with the credentials.
    let url = parse("rediss+cluster://u:p%40w@a:1,[::1]:2");
    let infos = url.node_infos();
    assert_eq!(infos.len(), 2);
    assert_eq!(infos[1].0, "[::1]:2");
    assert!(
        matches!(infos[1].1.addr(), ConnectionAddr::TcpTls { host, port: 2, insecure: false, .. } if host == "::1")
    );
    assert_eq!(infos[1].1.redis_settings().password(), Some("p@w"));
}
