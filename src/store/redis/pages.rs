//! Standings pages on Redis: kept pages read with a plain HGET, the others built in
//! the client from one atomic snapshot and kept with a guarded fill.
//!
//! A page built by a script (`standings.lua`) costs Redis about 80 µs for 100
//! entries, most of it turning the board's and the profiles' 400 strings into Lua
//! strings and back. Here Redis does only what needs it:
//!
//! 1. **A kept page** is one `HGET` of the bracket's page cache: no script. It is
//!    safe without comparing the page with the board because every write that changes
//!    what a page shows deletes the page cache in its own atomic step, and the page
//!    cache never outlives the board (its expiry is capped at the board's, see
//!    `open_page.lua` and `finish_bracket.lua`).
//! 2. **A build** is one `MULTI`: `open_page.lua` (the count, and a claim on the
//!    page), `ZRANGE … WITHSCORES`, and the bracket's profiles: `HSCAN` of the
//!    profile cache, which a small hash answers whole in one call, or, for a bracket
//!    whose profiles this store lately kept as one string beside the cache
//!    ([`TextHints`]), `GET` of that string. A score update deletes the pages but
//!    not the string, so a build after one decodes about 200 reply items instead of
//!    about 400 (for the client, decoding is most of a build's cost) and costs Redis
//!    a GET instead of an HSCAN. The client assembles the page. A string expected
//!    and not found costs one more round trip, the HSCAN. A large profile cache (see
//!    [`PROFILES_AT_ONCE`]), which HSCAN answers in part, costs one more: `HMGET` of
//!    the page's players, which is cheap on a hash table. A read after the snapshot
//!    may show a profile newer than the board, as a read racing a write may; the
//!    fill below still keeps only a page, and a string, that is current.
//! 3. **The fill** (`keep_page.lua`) keeps the page only if the claim is still there:
//!    any change since the snapshot deleted it with the page cache. So a write
//!    between the read and the fill never leaves a stale page. It keeps the string of
//!    the profiles an HSCAN answered whole the same way, under a claim of its own
//!    that every change to the profile cache deletes.
//!
//! What the MULTI cannot do is left to `standings.lua`, which does everything in one
//! script: the count alone (a page of no entries), a build whose MULTI failed (a
//! slot being moved, a script not yet loaded on the node), and batches of reads
//! (`standings_many`), which it answers in one pipeline.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::Value;

use super::reply::*;
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry, attempt_token};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, hash_tag};
use crate::store::{Page, RawEntry, StoredText};

/// `COUNT` of the build's HSCAN. A listpack-encoded profile cache (with Redis's
/// defaults, at most 512 entries of at most 64 bytes) is answered whole by one HSCAN
/// whatever the count; so is a hash table of up to this many buckets (a bracket of
/// 100 whose profiles are longer than 64 bytes). A larger one costs about this much,
/// and an HMGET after.
const PROFILES_AT_ONCE: u64 = 128;

/// Most brackets [`TextHints`] remembers; past it, it starts again empty (a
/// forgotten hint costs one build the old way, nothing else).
const MAX_TEXT_HINTS: usize = 65_536;

/// What this store did lately with a bracket's profiles' string, by the string's
/// key. A bracket built once in a while (no hint) is built as before the string
/// existed, at the same cost: the profile cache in the MULTI (HSCAN). A bracket built
/// again within the keep time ([`Hint::Built`]: a bracket in play, its pages dropped
/// by score updates) has its string made and kept by that build; once kept
/// ([`Hint::Kept`]), its builds read the string (GET) instead of the cache. A hint is
/// only a guess (another process, or a profile change, may have dropped the string):
/// a GET that finds nothing costs the build one more round trip, the HSCAN, and the
/// string is kept again.
#[derive(Debug, Default)]
pub(super) struct TextHints(Mutex<HashMap<String, (Hint, Instant)>>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hint {
    /// A page of the bracket was built.
    Built,
    /// The bracket's string was kept (or asked to be).
    Kept,
}

impl TextHints {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Hint, Instant)>> {
        // A panic while holding the lock cannot leave the map inconsistent.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The hint of `key` from less than `keep` ago.
    fn of(&self, key: &str, keep: Duration) -> Option<Hint> {
        self.map()
            .get(key)
            .filter(|(_, at)| at.elapsed() < keep)
            .map(|(hint, _)| *hint)
    }

    fn forget(&self, key: &str) {
        self.map().remove(key);
    }

    fn set(&self, key: &str, hint: Hint) {
        let mut map = self.map();
        if map.len() >= MAX_TEXT_HINTS {
            map.clear();
        }
        map.insert(key.to_owned(), (hint, Instant::now()));
    }
}

/// One read: the bracket, the offset and limit asked for, and the first and last
/// 0-based rank they mean.
struct Read<'a> {
    bracket: &'a BracketKeys,
    offset: u64,
    limit: u64,
    first: u64,
    last: u64,
}

impl<'a> Read<'a> {
    fn new(bracket: &'a BracketKeys, offset: u64, limit: u64) -> Read<'a> {
        // Redis ranks are signed 64-bit; no board comes near the clamp.
        let top = i64::MAX as u64;
        let first = offset.min(top);
        let last = offset.saturating_add(limit.saturating_sub(1)).min(top);
        Read {
            bracket,
            offset,
            limit,
            first,
            last,
        }
    }

    /// The page's field in the page cache, `"first:last"` (only the single read's
    /// path needs it: a batch's reads leave it to standings.lua).
    fn field(&self) -> String {
        format!("{}:{}", self.first, self.last)
    }
}

impl RedisStore {
    /// Entries `offset..offset+limit` of the bracket: kept, or built and kept.
    pub(super) async fn read_page(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> Result<Page, StoreError> {
        if limit == 0 {
            return self.script_page(bracket, offset, limit).await;
        }
        let read = Read::new(bracket, offset, limit);
        let field = read.field();
        if self.page_cache_ms() > 0 {
            let mut hget = redis::cmd("HGET");
            hget.arg(&bracket.pages).arg(&field);
            let kept = self.command("standings", Retry::Idempotent, &hget).await?;
            if !is_nil(&kept) {
                return page_at(kept, offset, "kept page");
            }
        }
        self.build_page(&read, &field).await
    }

    /// Pages of many brackets, one `standings.lua` call each, pipelined (one pipeline
    /// per slot on a cluster): one round trip for them all.
    ///
    /// Not the single read's path: measured at 1M players, the rollover's tier-wide
    /// lists (thousands of pages at once, nearly all built) took 0.5 s longer with a
    /// MULTI and a fill per page than with one pipeline of scripts; a batch of reads
    /// is where the round trips, not Redis's CPU, are the cost.
    pub(super) async fn read_pages(
        &self,
        reads: &[(&BracketKeys, u64, u64)],
    ) -> Vec<Result<Page, StoreError>> {
        if reads.is_empty() {
            return Vec::new();
        }
        let keep_ms = self.page_cache_ms();
        let invocations: Vec<_> = reads
            .iter()
            .map(|(bracket, offset, limit)| {
                script_invocation(&Read::new(bracket, *offset, *limit), keep_ms)
            })
            .collect();
        let tags: Vec<&str> = reads.iter().map(|(b, _, _)| hash_tag(&b.board)).collect();
        self.pipelined(
            "standings_many",
            &SCRIPTS.standings,
            &invocations,
            &tags,
            |_| Retry::Idempotent,
        )
        .await
        .into_iter()
        .zip(reads)
        .map(|(reply, (_, offset, _))| page_at(reply??, *offset, "standings reply"))
        .collect()
    }

    /// Builds a page in the client from one MULTI, and keeps it under `field` if
    /// nothing changed.
    async fn build_page(&self, read: &Read<'_>, field: &str) -> Result<Page, StoreError> {
        let bracket = read.bracket;
        let keep_ms = self.page_cache_ms();
        let claim = (keep_ms > 0).then(|| (format!("?{field}"), attempt_token()));
        let text_key = bracket.profiles_text();
        let hint = claim.as_ref().and_then(|_| {
            self.text_hints
                .of(&text_key, Duration::from_millis(keep_ms))
        });
        let mut pipe = redis::pipe();
        pipe.atomic();
        match &claim {
            Some((claim, nonce)) => {
                let mut open = SCRIPTS.open_page.prepare_invoke();
                open.key(&bracket.board)
                    .key(&bracket.pages)
                    .key(&bracket.meta);
                // A bracket built again: a claim on its string, to keep it.
                if hint.is_some() {
                    open.key(&text_key);
                }
                open.arg(claim).arg(nonce).arg(keep_ms);
                pipe.invoke_script(&open);
            }
            None => {
                pipe.cmd("ZCARD").arg(&bracket.board);
            }
        }
        pipe.cmd("ZRANGE")
            .arg(&bracket.board)
            .arg(read.first)
            .arg(read.last)
            .arg("WITHSCORES");
        // The profiles' string when this store kept it lately, else the profile
        // cache; with the page cache off none is kept.
        let expect_text = hint == Some(Hint::Kept);
        if expect_text {
            pipe.cmd("GET").arg(&text_key);
        } else {
            pipe.add_command(profiles_scan(bracket));
        }
        pipe.ignore_errors();
        let pipe = &pipe;
        let mut loaded = false;
        let (total, board, kept_text, scan) = loop {
            let replies = self
                .run("standings", Retry::Idempotent, |mut con| async move {
                    pipe.query_async::<Vec<Value>>(&mut con).await
                })
                .await;
            let mut replies = match replies {
                Ok(replies) => replies.into_iter(),
                // EXECABORT (a redirection inside the MULTI while a slot moves):
                // standings.lua does it all in one step, and follows redirections as
                // every call does.
                Err(_) => return self.script_page(bracket, read.offset, read.limit).await,
            };
            let (first, board) = (replies.next(), replies.next());
            match (first, board, replies.next(), replies.next()) {
                // The count, the board, and the profiles' string or the HSCAN.
                (Some(Value::Int(total)), Some(board), Some(third), None) => {
                    let total =
                        u64::try_from(total).map_err(|_| protocol("negative board size"))?;
                    if !expect_text {
                        break (total, board, None, Some(third));
                    }
                    let text = match third {
                        Value::Nil => None,
                        Value::BulkString(text) => Some(text),
                        Value::SimpleString(text) => Some(text.into_bytes()),
                        Value::ServerError(e) => return Err(super::failure::backend(e.into())),
                        other => return Err(protocol(format!("cached profiles: {other:?}"))),
                    };
                    break (total, board, text, None);
                }
                // A node without open_page.lua (new, flushed, or a failover's): load
                // it (on a cluster, on every primary) and build again, once.
                (Some(Value::ServerError(e)), _, _, _) if e.code() == "NOSCRIPT" && !loaded => {
                    loaded = true;
                    let load = SCRIPTS.open_page.prepare_invoke();
                    let load = &load;
                    self.run("standings", Retry::Idempotent, |mut con| async move {
                        load.load_async(&mut con).await
                    })
                    .await?;
                }
                // A script still missing, or a reply of another shape: standings.lua.
                _ => return self.script_page(bracket, read.offset, read.limit).await,
            }
        };
        let board = scored_members(board)?;
        let mut new_text = None;
        let profiles = match (kept_text, scan) {
            (Some(text), _) => Profiles::Text(text),
            (None, Some(scan)) => {
                let profiles = self.scanned(bracket, scan, &board).await?;
                match (hint, &profiles) {
                    // Built again within the keep time: keep the string.
                    (Some(Hint::Built), Profiles::All(items)) => {
                        new_text = text_of_profiles(items);
                        if new_text.is_none() {
                            self.text_hints.forget(&text_key);
                        }
                    }
                    // Only a cache read whole and holding profiles makes a string:
                    // a bracket without profiles (or with too many to read whole)
                    // is never hinted, so its builds never claim or look for one.
                    (None, Profiles::All(items))
                        if claim.is_some() && total > 0 && holds_profiles(items) =>
                    {
                        self.text_hints.set(&text_key, Hint::Built)
                    }
                    _ => {}
                }
                profiles
            }
            // The string expected and not there: the profile cache by HSCAN, a round
            // trip of its own, and the string of it to keep.
            (None, None) => {
                let scan = self
                    .command("standings", Retry::Idempotent, &profiles_scan(bracket))
                    .await?;
                let profiles = self.scanned(bracket, scan, &board).await?;
                if let Profiles::All(items) = &profiles {
                    new_text = text_of_profiles(items);
                }
                // No string to keep (the profiles are gone, or too many): stop
                // expecting one, or every build would pay this round trip again.
                if new_text.is_none() {
                    self.text_hints.forget(&text_key);
                }
                profiles
            }
        };
        let (page, page_text) = assemble(total, read, &board, &profiles)?;
        if let Some((claim, nonce)) = &claim
            && total > 0
            && (page_text.is_some() || new_text.is_some())
        {
            let mut keep = SCRIPTS.keep_page.prepare_invoke();
            keep.key(&bracket.pages)
                .arg(claim)
                .arg(nonce)
                .arg(if page_text.is_some() { field } else { "" })
                .arg(page_text.as_ref().map_or("", |t| t.as_str()));
            let keeps_text = new_text.is_some();
            if let Some(text) = new_text {
                keep.key(&bracket.meta)
                    .key(&text_key)
                    .key(&bracket.profiles)
                    .arg(text)
                    .arg(keep_ms);
            }
            // A page that could not be kept is still the reader's answer.
            match self.invoke("keep_page", Retry::Idempotent, &keep).await {
                // Kept, or another build's string is there, or a profile changed
                // meanwhile: a wrong guess costs the next build one round trip.
                Ok(_) if keeps_text => self.text_hints.set(&text_key, Hint::Kept),
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "a built page was not kept"),
            }
        }
        Ok(page)
    }

    /// The profiles of an HSCAN of the profile cache: all of them when it answered
    /// whole, else the page's players' by HMGET (a hash table, where HMGET is cheap).
    async fn scanned(
        &self,
        bracket: &BracketKeys,
        scan: Value,
        board: &[(Value, Value)],
    ) -> Result<Profiles, StoreError> {
        match scan {
            Value::Array(mut scan) if scan.len() == 2 => {
                let items = scan.pop().unwrap_or(Value::Nil);
                let cursor = scan.pop().unwrap_or(Value::Nil);
                if text(&cursor, "HSCAN cursor")? == "0" {
                    Ok(Profiles::All(items))
                } else {
                    self.page_players_profiles(bracket, board).await
                }
            }
            Value::ServerError(e) => Err(super::failure::backend(e.into())),
            other => Err(protocol(format!("HSCAN reply: {other:?}"))),
        }
    }

    /// The cached profiles of a page's players, in board order, by HMGET: for a
    /// profile cache too large to read whole.
    async fn page_players_profiles(
        &self,
        bracket: &BracketKeys,
        board: &[(Value, Value)],
    ) -> Result<Profiles, StoreError> {
        if board.is_empty() {
            return Ok(Profiles::Some(Vec::new()));
        }
        let mut hmget = redis::cmd("HMGET");
        hmget.arg(&bracket.profiles);
        for (player, _) in board {
            hmget.arg(text(player, "board member")?);
        }
        Ok(Profiles::Some(array(
            self.command("standings", Retry::Idempotent, &hmget).await?,
            "profiles",
        )?))
    }

    /// The page built by `standings.lua` in one step.
    async fn script_page(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> Result<Page, StoreError> {
        let inv = script_invocation(&Read::new(bracket, offset, limit), self.page_cache_ms());
        let reply = self.invoke("standings", Retry::Idempotent, &inv).await?;
        page_at(reply, offset, "standings reply")
    }
}

/// `standings.lua` for one read; `keep_ms` as [`RedisStore::page_cache_ms`].
fn script_invocation(read: &Read<'_>, keep_ms: u64) -> redis::ScriptInvocation<'static> {
    let bracket = read.bracket;
    let mut inv = SCRIPTS.standings.prepare_invoke();
    inv.key(&bracket.board)
        .key(&bracket.profiles)
        .key(&bracket.pages)
        .key(&bracket.meta)
        .arg(read.first)
        .arg(read.last)
        .arg(if read.limit == 0 { "0" } else { "1" })
        .arg(keep_ms);
    inv
}

/// A page in `standings.lua`'s format (kept or built by it), read at `offset`.
fn page_at(v: Value, offset: u64, what: &str) -> Result<Page, StoreError> {
    let mut page = page(v, what)?;
    page.offset = offset;
    Ok(page)
}

/// The profiles of a build: the whole (small) cache as field-value pairs, the same
/// as one kept string (see [`text_of_profiles`]), or the page's players' own, in
/// board order (nil for none).
enum Profiles {
    All(Value),
    Text(Vec<u8>),
    Some(Vec<Value>),
}

/// `(member, score)` pairs of ZRANGE WITHSCORES: a flat array (RESP2) or an array of
/// pairs (RESP3).
fn scored_members(v: Value) -> Result<Vec<(Value, Value)>, StoreError> {
    let items = match v {
        Value::ServerError(e) => return Err(super::failure::backend(e.into())),
        v => array(v, "board range")?,
    };
    if items.iter().all(|i| matches!(i, Value::Array(_))) && !items.is_empty() {
        return items
            .into_iter()
            .map(
                |pair| match <[Value; 2]>::try_from(array(pair, "board entry")?) {
                    Ok([member, score]) => Ok((member, score)),
                    Err(other) => Err(protocol(format!("board entry: {other:?}"))),
                },
            )
            .collect();
    }
    if items.len() % 2 != 0 {
        return Err(protocol("board range: an odd number of items"));
    }
    let mut pairs = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(member), Some(score)) = (it.next(), it.next()) {
        pairs.push((member, score));
    }
    Ok(pairs)
}

/// The (owner, profile) pairs of the profile cache as HSCAN answered it whole: a
/// map (RESP3) or a flat array of field and value.
fn profile_pairs(items: &Value) -> Result<Vec<(&str, &str)>, StoreError> {
    fn pair<'a>(k: &'a Value, v: &'a Value) -> Result<(&'a str, &'a str), StoreError> {
        Ok((text(k, "profile owner")?, text(v, "cached profile")?))
    }
    match items {
        Value::Map(map) => map.iter().map(|(k, v)| pair(k, v)).collect(),
        Value::Array(flat) => flat
            .chunks_exact(2)
            .map(|kv| pair(&kv[0], &kv[1]))
            .collect(),
        other => Err(protocol(format!("HSCAN items: {other:?}"))),
    }
}

/// The read of a bracket's profile cache: one HSCAN, which answers a small (listpack)
/// hash whole and a large one in part (see [`PROFILES_AT_ONCE`]).
fn profiles_scan(bracket: &BracketKeys) -> redis::Cmd {
    let mut hscan = redis::cmd("HSCAN");
    hscan
        .arg(&bracket.profiles)
        .arg(0)
        .arg("COUNT")
        .arg(PROFILES_AT_ONCE);
    hscan
}

/// Whether the profile cache's items, as HSCAN answered them whole, hold a profile.
fn holds_profiles(items: &Value) -> bool {
    match items {
        Value::Map(map) => !map.is_empty(),
        Value::Array(flat) => !flat.is_empty(),
        _ => false,
    }
}

/// The string of the profile cache's items (owner and profile in turn, separated by
/// [`SEP`]) for keep_page.lua to keep; none when there is no profile (nothing to
/// keep: keep_page.lua keeps no string of a profile cache that does not exist) or an
/// item holds the separator (data leaguekit did not write), which would split wrongly
/// when read back.
fn text_of_profiles(items: &Value) -> Option<String> {
    let pairs = profile_pairs(items).ok()?;
    if pairs.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(pairs.len() * 64);
    for (owner, profile) in pairs {
        if owner.contains(SEP) || profile.contains(SEP) {
            return None;
        }
        if !out.is_empty() {
            out.push(SEP);
        }
        out.push_str(owner);
        out.push(SEP);
        out.push_str(profile);
    }
    Some(out)
}

/// A build's profiles by player. foldhash, not the standard SipHash: hashing a
/// page's player ids twice (in, then out) was 2% of a build's client instructions,
/// and these keys are the board's own members, read back from Redis.
type ByPlayer<'a> = HashMap<&'a str, &'a str, foldhash::fast::RandomState>;

/// The profiles of a kept string (see [`text_of_profiles`]), by player.
fn profiles_of_text(text: &[u8]) -> Result<ByPlayer<'_>, StoreError> {
    let text = std::str::from_utf8(text).map_err(|_| protocol("cached profiles: not UTF-8"))?;
    if text.is_empty() {
        return Ok(ByPlayer::default());
    }
    let mut by_player = ByPlayer::default();
    let mut parts = fields(text);
    while let Some(player) = parts.next() {
        let Some(profile) = parts.next() else {
            return Err(protocol("cached profiles: a player without a profile"));
        };
        by_player.insert(player, profile);
    }
    Ok(by_player)
}

/// The page, and its text for the page cache (`standings.lua`'s reply format);
/// no text when a field holds the separator (data leaguekit did not write), so that
/// such a page is answered but never kept. The page's profiles share the text, as a
/// kept page's do (see `reply::page`).
fn assemble(
    total: u64,
    read: &Read<'_>,
    board: &[(Value, Value)],
    profiles: &Profiles,
) -> Result<(Page, Option<Arc<String>>), StoreError> {
    let by_player: ByPlayer<'_> = match profiles {
        Profiles::All(items) => profile_pairs(items)?.into_iter().collect(),
        Profiles::Text(text) => profiles_of_text(text)?,
        Profiles::Some(_) => ByPlayer::default(),
    };
    let mut out = String::with_capacity(32 + board.len() * 64);
    let _ = write!(out, "{total}{SEP}{}", read.first);
    // (player, packed score, where the profile's JSON is in `out`) of each entry.
    let mut parts = Vec::with_capacity(board.len());
    let mut keepable = true;
    for (i, (member, score)) in board.iter().enumerate() {
        let player = text(member, "board member")?;
        let packed = packed_from_score(score, "board score")?;
        let cached = match profiles {
            Profiles::Some(got) => match got.get(i) {
                Some(v) if !is_nil(v) => Some(text(v, "cached profile")?),
                _ => None,
            },
            Profiles::All(_) | Profiles::Text(_) => by_player.get(player).copied(),
        };
        let cached = cached.filter(|c| !c.is_empty());
        keepable &= !player.contains(SEP) && !cached.is_some_and(|c| c.contains(SEP));
        out.push(SEP);
        out.push_str(player);
        out.push(SEP);
        if packed == 0 {
            out.push('0');
        } else {
            let _ = write!(out, "-{packed}");
        }
        out.push(SEP);
        // Where the profile's JSON (the end of `cached`) lands in `out`.
        let json = cached.map(cached_profile).transpose()?.map(|json| {
            let end = out.len() + cached.map_or(0, str::len);
            end.saturating_sub(json.len())..end
        });
        out.push_str(cached.unwrap_or(""));
        parts.push((player, packed, json));
    }
    let text = Arc::new(out);
    let mut entries = Vec::with_capacity(parts.len());
    for (player, packed, json) in parts {
        let profile = match json {
            Some(at) => Some(
                StoredText::part(&text, at)
                    .ok_or_else(|| protocol("assembling a page: a profile out of place"))?,
            ),
            None => None,
        };
        entries.push(RawEntry {
            player: player.to_owned(),
            packed,
            profile,
        });
    }
    let page = Page {
        total,
        offset: read.offset,
        entries,
    };
    Ok((page, keepable.then_some(text)))
}
