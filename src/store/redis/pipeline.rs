//! Pipelines of script calls that work on one server and on a Redis Cluster.
//!
//! redis-rs sends a cluster pipeline to the node of its first key and refuses one whose
//! keys span two slots (CROSSSLOT), and it resends a whole pipeline after MOVED or ASK.
//! So on a cluster the calls are grouped by hash tag (every key of one call shares its
//! tag, see [`crate::store::keys`]), each group is one pipeline, and the groups run
//! concurrently. Each group is retried on its own, as its [`Retry`] allows; a resent
//! group repeats only calls that are safe to repeat (the caller's `retry` decides).
//! On one server the whole batch is one pipeline, one round trip.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use redis::{Script, ScriptInvocation, Value};

use super::connection::RedisConnection;
use super::{RedisStore, Retry, write_error};
use crate::error::StoreError;

/// Groups of one cluster batch in flight at once: enough to keep every node busy,
/// few enough not to flood a small cluster's connections.
const GROUPS_IN_FLIGHT: usize = 32;

impl RedisStore {
    /// Runs `calls` (all of `script`) pipelined and answers one result per call, in
    /// order. `tags[i]` is the hash tag of call `i`'s keys; `retry(group)` says how a
    /// group (indices into `calls`) may be retried. The inner result is the call's own
    /// reply or error (`Ok(Err)`: the server refused that call, the others ran); an
    /// outer error is the failure of the call's whole pipeline, answered for each of
    /// its calls ([`StoreError::Unknown`] when they may have run).
    pub(super) async fn pipelined(
        &self,
        op: &'static str,
        script: &Script,
        calls: &[ScriptInvocation<'_>],
        tags: &[&str],
        retry: impl Fn(&[usize]) -> Retry,
    ) -> Vec<Answer> {
        // The futures are built first (owning their groups), then polled a few at a
        // time: a lazy iterator of borrowing closures would not be Send.
        let runs: Vec<_> = self
            .groups(tags)
            .into_iter()
            .map(|group| {
                let retry = retry(&group);
                async move {
                    let replies = self.pipeline(op, script, calls, &group, retry).await;
                    (group, replies)
                }
            })
            .collect();
        let mut answers: Vec<Option<Answer>> = calls.iter().map(|_| None).collect();
        let mut done = futures::stream::iter(runs).buffer_unordered(GROUPS_IN_FLIGHT);
        while let Some((group, replies)) = done.next().await {
            for (&i, reply) in group.iter().zip(replies) {
                answers[i] = Some(reply);
            }
        }
        answers
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| {
                    Err(StoreError::Protocol(format!(
                        "{op}: a pipelined call got no reply"
                    )))
                })
            })
            .collect()
    }

    /// Plain commands pipelined, for idempotent reads: `add(i, pipe)` adds call `i`'s
    /// commands (exactly `per_call` of them, all of keys of the hash tag `tags[i]`),
    /// and each call is answered with its commands' replies, grouped as
    /// [`RedisStore::pipelined`] groups script calls.
    pub(super) async fn pipelined_commands(
        &self,
        op: &'static str,
        tags: &[&str],
        per_call: usize,
        add: impl Fn(usize, &mut redis::Pipeline),
    ) -> Vec<Result<Vec<Value>, StoreError>> {
        let runs: Vec<_> = self
            .groups(tags)
            .into_iter()
            .map(|group| {
                let mut pipe = redis::pipe();
                for &i in &group {
                    add(i, &mut pipe);
                }
                async move {
                    let pipe = &pipe;
                    let result = self
                        .run(op, Retry::Idempotent, |mut con| async move {
                            pipe.query_async::<Vec<Value>>(&mut con).await
                        })
                        .await
                        .map_err(|e| self.store_error(e));
                    (group, result)
                }
            })
            .collect();
        let mut answers: Vec<Option<Result<Vec<Value>, StoreError>>> =
            tags.iter().map(|_| None).collect();
        let mut done = futures::stream::iter(runs).buffer_unordered(GROUPS_IN_FLIGHT);
        while let Some((group, result)) = done.next().await {
            match result {
                Ok(replies) if replies.len() == group.len() * per_call => {
                    let mut replies = replies.into_iter();
                    for &i in &group {
                        answers[i] = Some(Ok(replies.by_ref().take(per_call).collect()));
                    }
                }
                Ok(replies) => {
                    let e = StoreError::Protocol(format!(
                        "{op}: a pipeline of {} commands answered {} replies",
                        group.len() * per_call,
                        replies.len()
                    ));
                    for &i in &group {
                        answers[i] = Some(Err(e.clone()));
                    }
                }
                Err(e) => {
                    for &i in &group {
                        answers[i] = Some(Err(e.clone()));
                    }
                }
            }
        }
        answers
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| {
                    Err(StoreError::Protocol(format!(
                        "{op}: a pipelined read got no reply"
                    )))
                })
            })
            .collect()
    }

    /// Items of a batch sent in script calls of up to `at_once` items each, all calls
    /// pipelined: `make(items)` builds the call of those items (indices into the
    /// batch; `tags[i]` is item `i`'s hash tag), and each call is answered with its
    /// items, in order of first appearance. On one server a call takes items of any
    /// slots (a script's keys need not share a slot there), so a batch of players
    /// spread over thousands of buckets costs a few calls, not one each. On a
    /// cluster a call takes items of one tag. `retry(items)` says how a pipeline of
    /// calls holding those items may be retried. A server that refuses keys of
    /// several slots in one script (CROSSSLOT: a sharding proxy behind one address;
    /// the refused call did not run) is remembered, and the batch is sent again by
    /// tag.
    pub(super) async fn pipelined_items(
        &self,
        op: &'static str,
        script: &Script,
        tags: &[&str],
        at_once: usize,
        make: impl Fn(&[usize]) -> ScriptInvocation<'static>,
        retry: impl Fn(&[usize]) -> Retry,
    ) -> Vec<(Vec<usize>, Answer)> {
        let by_tag = || -> Vec<Vec<usize>> {
            groups_by_tag(tags)
                .into_iter()
                .flat_map(|group| {
                    group
                        .chunks(at_once.max(1))
                        .map(<[usize]>::to_vec)
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let spans_slots = self.calls_span_slots();
        let calls: Vec<Vec<usize>> = if spans_slots {
            (0..tags.len())
                .collect::<Vec<_>>()
                .chunks(at_once.max(1))
                .map(<[usize]>::to_vec)
                .collect()
        } else {
            by_tag()
        };
        let run = |calls: Vec<Vec<usize>>| async {
            let invocations: Vec<ScriptInvocation<'static>> =
                calls.iter().map(|c| make(c)).collect();
            let call_tags: Vec<&str> = calls.iter().map(|c| tags[c[0]]).collect();
            let answers = self
                .pipelined(op, script, &invocations, &call_tags, |group| {
                    let items: Vec<usize> = group
                        .iter()
                        .flat_map(|&c| calls[c].iter().copied())
                        .collect();
                    retry(&items)
                })
                .await;
            calls.into_iter().zip(answers).collect::<Vec<_>>()
        };
        let answered = run(calls).await;
        let refused = |a: &Answer| matches!(a, Ok(Err(e)) if is_cross_slot(e));
        if spans_slots && answered.iter().any(|(_, a)| refused(a)) {
            self.bind_calls_to_slots(op);
            return run(by_tag()).await;
        }
        answered
    }

    /// Whether one script call may take keys of many slots: on one server, until it
    /// has refused such a call (see [`RedisStore::bind_calls_to_slots`]).
    fn calls_span_slots(&self) -> bool {
        !self.slot_bound.load(Ordering::Relaxed)
            && !matches!(self.connection, RedisConnection::Cluster(_))
    }

    /// The server refused a script whose keys span slots (CROSSSLOT: a sharding proxy
    /// behind one address; the refused call did not run): from now on batches keep to
    /// one slot a call, as on a cluster.
    fn bind_calls_to_slots(&self, op: &'static str) {
        tracing::info!(
            op,
            "the server refused a script whose keys span slots (CROSSSLOT); \
             batches keep to one slot per call from now on"
        );
        self.slot_bound.store(true, Ordering::Relaxed);
    }

    /// The calls' indices grouped so that each group may be one pipeline: all of them
    /// on one server, by hash tag on a cluster (in order of first appearance, and in
    /// call order inside a group).
    fn groups(&self, tags: &[&str]) -> Vec<Vec<usize>> {
        if !matches!(self.connection, RedisConnection::Cluster(_)) {
            return vec![(0..tags.len()).collect()];
        }
        groups_by_tag(tags)
    }

    /// One group: one pipeline of the group's calls (EVALSHA), with per-call errors
    /// answered in place. The script is not loaded first: SCRIPT LOAD carries the
    /// script's whole source (up to 7 KB) and Redis hashes it on every call, about
    /// 0.7 µs of server time a join when every pipeline carried one (INFO
    /// commandstats, gathered joins at 1,000,000 players). Calls answered NOSCRIPT
    /// (a restarted server, a failover, a moved slot: an empty script cache) did not
    /// run, so they alone are sent again, in order, after the script's SCRIPT LOAD in
    /// the same pipeline (a keyless command that goes to the node of the group's
    /// slot). Calls of one pipeline that ran stay run: only a cache emptied and
    /// refilled by another client between two calls of one pipeline could let a call
    /// run before an earlier one that met NOSCRIPT, and every script of a pipeline
    /// is idempotent and converges whatever the order of its calls.
    ///
    /// Except on a cluster for calls that must not run twice: redis-rs answers a
    /// cluster pipeline in which one call met MOVED, ASK or TRYAGAIN with that error
    /// alone, dropping the replies of the calls that ran (when a slot's move ends
    /// while the node works through a pipeline, the calls before the end run and the
    /// calls after it meet MOVED). Sent again, the calls that ran would run twice. So those calls go one request each, in order (two updates of one
    /// player in a batch apply in the batch's order, as in a pipeline; concurrent
    /// requests could overtake each other after a NOSCRIPT or a redirection): one
    /// round trip per call, the groups of a batch still concurrent. Each call's error
    /// is its own.
    async fn pipeline(
        &self,
        op: &'static str,
        script: &Script,
        calls: &[ScriptInvocation<'_>],
        group: &[usize],
        retry: Retry,
    ) -> Vec<Answer> {
        if retry == Retry::NotExecuted
            && group.len() > 1
            && matches!(self.connection, RedisConnection::Cluster(_))
        {
            let mut answers = Vec::with_capacity(group.len());
            for &i in group {
                let call = &calls[i];
                let result = self
                    .run(op, retry, |mut con| async move {
                        call.invoke_async::<Value>(&mut con).await
                    })
                    .await;
                answers.push(match result {
                    Ok(value) => Ok(Ok(value)),
                    // Not sent: the call's whole answer, as for any other call.
                    Err(err) if err.is_connection_refusal() => Err(self.store_error(err)),
                    Err(err) => match write_error(op, err, Duration::ZERO) {
                        unknown @ StoreError::Unknown { .. } => Err(unknown),
                        refused => Ok(Err(refused)),
                    },
                });
            }
            return answers;
        }
        let mut answers = self.send(op, script, calls, group, retry, false).await;
        let unloaded: Vec<usize> = answers
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a, Ok(Err(e)) if is_no_script(e)))
            .map(|(k, _)| k)
            .collect();
        if !unloaded.is_empty() {
            let again: Vec<usize> = unloaded.iter().map(|&k| group[k]).collect();
            let resent = self.send(op, script, calls, &again, retry, true).await;
            for (k, answer) in unloaded.into_iter().zip(resent) {
                answers[k] = answer;
            }
        }
        answers
    }

    /// One pipeline of the calls `group` of `calls`, after the script's SCRIPT LOAD
    /// with `load`.
    async fn send(
        &self,
        op: &'static str,
        script: &Script,
        calls: &[ScriptInvocation<'_>],
        group: &[usize],
        retry: Retry,
        load: bool,
    ) -> Vec<Answer> {
        let mut pipe = redis::pipe();
        if load {
            pipe.load_script(script).ignore();
        }
        for &i in group {
            pipe.invoke_script(&calls[i]);
        }
        pipe.ignore_errors();
        let pipe = &pipe;
        let replies = self
            .run(op, retry, |mut con| async move {
                pipe.query_async::<Vec<Value>>(&mut con).await
            })
            .await
            .map_err(|e| write_error(op, e, self.outage.retry_after()));
        match replies {
            Ok(replies) if replies.len() == group.len() => replies
                .into_iter()
                .map(|reply| {
                    Ok(match reply {
                        Value::ServerError(err) => Err(super::failure::backend(err.into())),
                        reply => Ok(reply),
                    })
                })
                .collect(),
            Ok(replies) => {
                let e = StoreError::Protocol(format!(
                    "{op}: a pipeline of {} calls answered {} replies",
                    group.len(),
                    replies.len()
                ));
                group.iter().map(|_| Err(e.clone())).collect()
            }
            Err(e) => group.iter().map(|_| Err(e.clone())).collect(),
        }
    }
}

/// Whether the server answered a call NOSCRIPT: its script is not in the server's
/// cache, and the call did not run.
fn is_no_script(e: &StoreError) -> bool {
    super::failure::code(e) == Some("NOSCRIPT")
}

/// Whether the server refused a call for keys that span slots.
fn is_cross_slot(e: &StoreError) -> bool {
    super::failure::code(e) == Some("CROSSSLOT")
}

/// The calls' indices by hash tag, in order of first appearance.
fn groups_by_tag(tags: &[&str]) -> Vec<Vec<usize>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, tag) in tags.iter().enumerate() {
        let g = *index.entry(tag).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
}

/// One pipelined call's answer: the call's own reply or error (`Ok(Err)`: the server
/// refused that call, the others ran), or the failure of its whole pipeline
/// ([`StoreError::Unknown`] when the call may have run).
pub(super) type Answer = Result<Result<Value, StoreError>, StoreError>;
