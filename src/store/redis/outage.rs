//! The outage gate of a store on one server: once Redis has refused a connection,
//! calls are answered at once, without being sent, until the next check of the server
//! is due; then one call checks it (a PING on every connection of the pool) before
//! anything is sent again.
//!
//! Why: redis-rs's [`ConnectionManager`](redis::aio::ConnectionManager) makes a
//! command wait for its whole reconnection series (seconds), and a command that meets
//! a connection the server closed fails with the same error as one lost in flight, so
//! a write there can only be answered "unknown". With the gate, the manager makes one
//! connection attempt per reconnection (see [`super::RedisOptions::reconnect_retries`]),
//! the store does the backoff, and a request is sent only on connections that have
//! just answered: during an outage every call is answered within milliseconds, and
//! "not sent, nothing written" is the truth. The requests that were in flight when the
//! server went away (and the first one to meet a connection it closed) stay unknown.
//!
//! A cluster has no gate: redis-rs's cluster connection reconnects node by node.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::RedisError;

/// The gate's state, shared by the clones of one store.
#[derive(Debug)]
pub(super) struct Outage {
    /// Fast path: false while the server answers (no lock taken).
    down: AtomicBool,
    state: Mutex<State>,
    /// The first and the longest wait between checks.
    min: Duration,
    max: Duration,
}

#[derive(Debug)]
struct State {
    /// When the next check may run.
    retry_at: Instant,
    /// The wait after the next failed check.
    delay: Duration,
    /// Whether a call is checking the server now.
    probing: bool,
    /// What the last failure was.
    reason: String,
}

/// What the gate says to a call.
pub(super) enum Admit<'a> {
    /// Go ahead.
    Open,
    /// Check the server first, and report how that went to the guard.
    Probe(Probe<'a>),
    /// Do not send: the server refused lately; this error says so.
    Closed(RedisError),
}

/// The right to check the server, held by one call at a time. Dropped without a
/// verdict (its call was cancelled), it lets the next call check.
pub(super) struct Probe<'a> {
    outage: &'a Outage,
    settled: bool,
}

impl Outage {
    /// A gate that waits `min` after the first failed check, doubling up to `max`.
    pub(super) fn new(min: Duration, max: Duration) -> Outage {
        let min = min.max(Duration::from_millis(1));
        Outage {
            down: AtomicBool::new(false),
            state: Mutex::new(State {
                retry_at: Instant::now(),
                delay: min,
                probing: false,
                reason: String::new(),
            }),
            min,
            max: max.max(min),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent whatever a panicking holder did.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether Redis refused lately (one atomic load: the path of every call while
    /// Redis answers takes nothing more).
    pub(super) fn is_down(&self) -> bool {
        self.down.load(Ordering::Acquire)
    }

    /// Whether a call may be sent now.
    pub(super) fn admit(&self) -> Admit<'_> {
        if !self.down.load(Ordering::Acquire) {
            return Admit::Open;
        }
        let mut state = self.lock();
        let now = Instant::now();
        if state.probing || now < state.retry_at {
            let wait = state.retry_at.saturating_duration_since(now).max(self.min);
            return Admit::Closed(not_sent(&state.reason, wait));
        }
        state.probing = true;
        Admit::Probe(Probe {
            outage: self,
            settled: false,
        })
    }

    /// Learns from a failed attempt: a refused connection closes the gate for the
    /// current delay; a connection the server closed makes the next call check the
    /// server first. Timeouts and error replies say nothing about reachability.
    pub(super) fn observe(&self, err: &RedisError) {
        if err.is_connection_refusal() {
            // Only the first refusal closes the gate: concurrent calls refused by the
            // same reconnection must not multiply the delay.
            self.close(err.to_string(), true);
        } else if err.is_connection_dropped() && !err.is_timeout() {
            let mut state = self.lock();
            if !self.down.load(Ordering::Acquire) {
                state.retry_at = Instant::now();
                state.reason = err.to_string();
                self.down.store(true, Ordering::Release);
            }
        }
    }

    /// How long a caller told "not sent" should wait: until the next check (at least
    /// the first delay).
    pub(super) fn retry_after(&self) -> Duration {
        if !self.down.load(Ordering::Acquire) {
            return self.min;
        }
        let state = self.lock();
        state
            .retry_at
            .saturating_duration_since(Instant::now())
            .max(self.min)
    }

    /// Closes the gate for the current delay and doubles the next; with `if_open`,
    /// only when it is open.
    fn close(&self, reason: String, if_open: bool) {
        let mut state = self.lock();
        if if_open && self.down.load(Ordering::Acquire) {
            return;
        }
        let delay = state.delay;
        state.retry_at = Instant::now() + delay;
        state.delay = delay.saturating_mul(2).min(self.max);
        state.reason = reason;
        self.down.store(true, Ordering::Release);
    }
}

impl Probe<'_> {
    /// The server answered on every connection: open the gate.
    pub(super) fn up(mut self) {
        self.settled = true;
        let mut state = self.outage.lock();
        state.probing = false;
        state.delay = self.outage.min;
        self.outage.down.store(false, Ordering::Release);
    }

    /// The check failed with `err`: close the gate for the next delay; the call is
    /// answered with the error this returns (it was not sent).
    pub(super) fn down(mut self, err: &RedisError) -> RedisError {
        self.settled = true;
        self.outage
            .close(format!("a check of the connection failed: {err}"), false);
        let mut state = self.outage.lock();
        state.probing = false;
        let wait = state.retry_at.saturating_duration_since(Instant::now());
        not_sent(&state.reason, wait)
    }
}

impl Drop for Probe<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.outage.lock().probing = false;
        }
    }
}

/// The error of a call the gate did not send. Its kind is "connection refused"
/// because that is how redis-rs lets a caller recognise an error that proves the
/// request was not sent ([`RedisError::is_connection_refusal`]); the text says what
/// happened.
fn not_sent(reason: &str, wait: Duration) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!(
            "not sent: Redis refused a connection lately ({reason}); it is tried again in {} ms",
            wait.as_millis()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> RedisError {
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into()
    }

    /// A refusal closes the gate for a delay that doubles with each failed check and
    /// resets when a check succeeds; a dropped connection asks for a check at once;
    /// a timeout changes nothing.
    #[test]
    fn the_gate_backs_off_and_reopens() {
        let gate = Outage::new(Duration::from_millis(40), Duration::from_millis(100));
        let timeout: RedisError = std::io::Error::from(std::io::ErrorKind::TimedOut).into();
        gate.observe(&timeout);
        assert!(matches!(gate.admit(), Admit::Open));
        gate.observe(&refused());
        match gate.admit() {
            Admit::Closed(e) => {
                assert!(e.is_connection_refusal() && e.to_string().contains("not sent"))
            }
            _ => panic!("open after a refusal"),
        }
        assert!(gate.retry_after() >= Duration::from_millis(30));
        std::thread::sleep(Duration::from_millis(45));
        let Admit::Probe(probe) = gate.admit() else {
            panic!("no check after the delay");
        };
        // One call checks; the others are not sent meanwhile.
        assert!(matches!(gate.admit(), Admit::Closed(_)));
        let e = probe.down(&refused());
        assert!(e.is_connection_refusal());
        // The second delay is twice the first.
        assert!(
            gate.retry_after() > Duration::from_millis(60),
            "{:?}",
            gate.retry_after()
        );
        std::thread::sleep(Duration::from_millis(85));
        let Admit::Probe(probe) = gate.admit() else {
            panic!("no check after the second delay");
        };
        probe.up();
        assert!(matches!(gate.admit(), Admit::Open));
        let dropped: RedisError = std::io::Error::from(std::io::ErrorKind::BrokenPipe).into();
        gate.observe(&dropped);
        let Admit::Probe(probe) = gate.admit() else {
            panic!("no check after a dropped connection");
        };
        // A check abandoned without a verdict lets the next call check.
        drop(probe);
        assert!(matches!(gate.admit(), Admit::Probe(_)));
    }
}
