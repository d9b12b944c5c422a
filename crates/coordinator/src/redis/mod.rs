//! The Redis coordinator: what replicas share, on the Redis they are all pointed at.
//!
//! Keys and channels (all under the configured prefix `<p>`):
//! - `<p>:events:<tenant>:<session>`: a session's live events, one pub/sub message each;
//! - `<p>:signals`: [`Signal`]s;
//! - `<p>:rate:<key>`: a sorted set of recent uses per limit key (a sliding window);
//! - `<p>:seen:<delivery>`: deliveries known to be durably stored, with the platform's TTL.
//!
//! Invariants: every message carries the replica that sent it, and a replica ignores its own
//! (its subscribers had them directly); a subscription is confirmed by Redis before
//! [`Coordinator::subscribe_events`] returns, so a subscriber that then replays the store misses
//! nothing published after; a call that Redis does not answer in time falls back to this
//! replica alone (see the crate's invariant), and is counted.

mod publish;
mod subscribe;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use redis::aio::{MultiplexedConnection, PubSubSink};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::{CancellationToken, DropGuard};
use workmate_protocol::{Event, SessionId, TenantId};

use crate::local::SIGNAL_BUFFER;
use crate::sliding::{SlidingWindows, WINDOW_MS, wait_ms};
use crate::{BoxFuture, Coordinator, Error, EventReceiver, Result, Signal, Stats};

/// How long connecting, and each command, may take before the call falls back.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// Live events of one session buffered for this replica's subscribers.
const SESSION_BUFFER: usize = 1024;
/// Events waiting to be published; more are dropped (and counted).
const OUTGOING: usize = 8192;
/// The least time between two warnings that Redis cannot be reached.
const WARN_EVERY_MS: i64 = 30_000;

/// The sliding window of [`Coordinator::try_acquire`]: drop uses older than a minute, count,
/// add this one when under the limit (`-1`), else the ms until the oldest leaves the window.
const ACQUIRE_SCRIPT: &str = r"
local key, now, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - tonumber(ARGV[4]))
if redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, tonumber(ARGV[4]))
  return -1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return tonumber(oldest[2]) + tonumber(ARGV[4]) - now
";

/// Where the Redis coordinator connects, and who this replica is.
#[derive(Clone, Debug)]
pub struct RedisSettings {
    /// `redis://[:password@]host[:port][/db]` or `rediss://…`.
    pub url: String,
    /// The start of every key and channel.
    pub prefix: String,
    /// This replica's name (its lease-holder name): messages it sent are not its to receive.
    pub replica: String,
}

/// What a replica sends: who sent it, and what.
#[derive(Serialize)]
struct Outgoing<'a, T> {
    origin: &'a str,
    body: &'a T,
}

/// What a replica receives.
#[derive(Deserialize)]
struct Incoming<T> {
    origin: String,
    body: T,
}

/// The Redis coordinator. Dropping it stops its background tasks.
#[derive(Debug)]
pub struct RedisCoordinator {
    shared: Arc<Shared>,
    _stop: DropGuard,
}

#[derive(Debug)]
struct Shared {
    client: redis::Client,
    prefix: String,
    replica: String,
    commands: Mutex<Option<MultiplexedConnection>>,
    /// The pub/sub connection's command side while it is connected.
    sink: Mutex<Option<PubSubSink>>,
    /// This replica's subscribers of other replicas' events, by channel.
    sessions: Mutex<HashMap<String, broadcast::Sender<Arc<Event>>>>,
    signals: broadcast::Sender<Signal>,
    outgoing: mpsc::Sender<publish::Outgoing>,
    /// Limits counted here while Redis cannot be asked.
    fallback_windows: SlidingWindows,
    uses: AtomicU64,
    last_warning_ms: AtomicI64,
    published: AtomicU64,
    received: AtomicU64,
    dropped: AtomicU64,
    fallbacks: AtomicU64,
}

impl RedisCoordinator {
    /// Connects to Redis (a first `PING` must answer, so a wrong URL fails at start) and starts
    /// the publishing and subscribing tasks. Must be called inside a tokio runtime.
    pub async fn connect(settings: RedisSettings) -> Result<Self> {
        let client = redis::Client::open(settings.url.as_str())?;
        let (outgoing, queue) = mpsc::channel(OUTGOING);
        let shared = Arc::new(Shared {
            client,
            prefix: settings.prefix,
            replica: settings.replica,
            commands: Mutex::new(None),
            sink: Mutex::new(None),
            sessions: Mutex::default(),
            signals: broadcast::channel(SIGNAL_BUFFER).0,
            outgoing,
            fallback_windows: SlidingWindows::default(),
            uses: AtomicU64::new(0),
            last_warning_ms: AtomicI64::new(i64::MIN),
            published: AtomicU64::new(0),
            received: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
        });
        let mut connection = shared.connection().await?;
        let _: String = timed(redis::cmd("PING").query_async(&mut connection)).await?;
        let stop = CancellationToken::new();
        tokio::spawn(publish::run(Arc::clone(&shared), queue, stop.clone()));
        let subscribed = subscribe::run(Arc::clone(&shared), stop.clone()).await;
        if let Err(e) = subscribed {
            stop.cancel();
            return Err(e);
        }
        Ok(Self {
            shared,
            _stop: stop.drop_guard(),
        })
    }

    /// [`RedisCoordinator::connect`] behind the trait.
    pub async fn shared(settings: RedisSettings) -> Result<Arc<dyn Coordinator>> {
        Ok(Arc::new(Self::connect(settings).await?))
    }
}

impl Shared {
    fn events_channel(&self, tenant: &TenantId, session: &SessionId) -> String {
        format!("{}:events:{tenant}:{session}", self.prefix)
    }

    fn signals_channel(&self) -> String {
        format!("{}:signals", self.prefix)
    }

    /// The command connection, opened on first use and again after a failure.
    async fn connection(&self) -> Result<MultiplexedConnection> {
        let held = self
            .commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(connection) = held {
            return Ok(connection);
        }
        let connection = timed(self.client.get_multiplexed_async_connection()).await?;
        *self.commands.lock().unwrap_or_else(PoisonError::into_inner) = Some(connection.clone());
        Ok(connection)
    }

    /// Forgets the command connection after `error`, and says so at most every 30 s.
    fn failed(&self, what: &str, error: &Error) {
        *self.commands.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        self.warn(what, error);
    }

    fn warn(&self, what: &str, error: &Error) {
        let now = now_ms();
        let last = self.last_warning_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= WARN_EVERY_MS
            && self
                .last_warning_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(error = %error, "The Redis coordinator cannot {what}; this replica goes on alone until it is back.");
        }
    }

    fn send<T: Serialize>(&self, channel: String, body: &T) {
        let envelope = Outgoing {
            origin: self.replica.as_str(),
            body,
        };
        let Ok(payload) = serde_json::to_string(&envelope) else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let message = publish::Outgoing::Message { channel, payload };
        if self.outgoing.try_send(message).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    async fn acquire(&self, key: &str, limit: u32, now_ms: i64) -> Result<Option<Duration>> {
        let mut connection = self.connection().await?;
        let member = format!(
            "{now_ms}:{}:{}",
            self.replica,
            self.uses.fetch_add(1, Ordering::Relaxed)
        );
        let wait: i64 = timed(
            redis::cmd("EVAL")
                .arg(ACQUIRE_SCRIPT)
                .arg(1)
                .arg(format!("{}:rate:{key}", self.prefix))
                .arg(now_ms)
                .arg(limit.max(1))
                .arg(member)
                .arg(WINDOW_MS)
                .query_async(&mut connection),
        )
        .await?;
        Ok((wait >= 0).then(|| wait_ms(wait)))
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        let mut connection = self.connection().await?;
        let found: i64 = timed(
            redis::cmd("EXISTS")
                .arg(format!("{}:seen:{key}", self.prefix))
                .query_async(&mut connection),
        )
        .await?;
        Ok(found > 0)
    }

    async fn set_value(&self, key: &str, value: &str, ttl: Duration) -> Result<()> {
        let mut connection = self.connection().await?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let () = timed(
            redis::cmd("SET")
                .arg(format!("{}:value:{key}", self.prefix))
                .arg(value)
                .arg("PX")
                .arg(ttl_ms)
                .query_async(&mut connection),
        )
        .await?;
        Ok(())
    }

    async fn get_value(&self, key: &str) -> Result<Option<String>> {
        let mut connection = self.connection().await?;
        timed(
            redis::cmd("GET")
                .arg(format!("{}:value:{key}", self.prefix))
                .query_async(&mut connection),
        )
        .await
    }

    async fn set_seen(&self, key: &str, ttl: Duration) -> Result<()> {
        let mut connection = self.connection().await?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let () = timed(
            redis::cmd("SET")
                .arg(format!("{}:seen:{key}", self.prefix))
                .arg(1)
                .arg("PX")
                .arg(ttl_ms)
                .query_async(&mut connection),
        )
        .await?;
        Ok(())
    }
}

impl Coordinator for RedisCoordinator {
    fn is_shared(&self) -> bool {
        true
    }

    fn publish_event(&self, event: &Arc<Event>) {
        let channel = self
            .shared
            .events_channel(&event.tenant_id, &event.session_id);
        self.shared.send(channel, event.as_ref());
    }

    fn subscribe_events<'a>(
        &'a self,
        tenant: &'a TenantId,
        session: &'a SessionId,
    ) -> BoxFuture<'a, Result<EventReceiver>> {
        Box::pin(async move {
            let channel = self.shared.events_channel(tenant, session);
            let receiver = {
                let mut sessions = self
                    .shared
                    .sessions
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if let Some(sender) = sessions.get(&channel) {
                    return Ok(sender.subscribe());
                }
                let (sender, receiver) = broadcast::channel(SESSION_BUFFER);
                sessions.insert(channel.clone(), sender);
                receiver
            };
            let sink = self
                .shared
                .sink
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            // While the pub/sub connection is down, its next connection subscribes to every
            // session in the map.
            if let Some(mut sink) = sink
                && let Err(e) = timed(sink.subscribe(&channel)).await
            {
                self.shared.warn("subscribe to a session's events", &e);
            }
            Ok(receiver)
        })
    }

    fn try_acquire<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        now_ms: i64,
    ) -> BoxFuture<'a, Option<Duration>> {
        Box::pin(async move {
            match self.shared.acquire(key, limit, now_ms).await {
                Ok(wait) => wait,
                Err(e) => {
                    self.shared.failed("count a shared limit", &e);
                    self.shared.fallback_windows.try_start(key, limit, now_ms)
                }
            }
        })
    }

    fn seen<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            match self.shared.exists(key).await {
                Ok(seen) => seen,
                Err(e) => {
                    self.shared.failed("look up a delivery", &e);
                    false
                }
            }
        })
    }

    fn remember<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self.shared.set_seen(key, ttl).await {
                self.shared.failed("remember a delivery", &e);
            }
        })
    }

    fn put_value<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self.shared.set_value(key, value, ttl).await {
                self.shared.failed("keep a value", &e);
            }
        })
    }

    fn value<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            match self.shared.get_value(key).await {
                Ok(value) => value,
                Err(e) => {
                    self.shared.failed("read a value", &e);
                    None
                }
            }
        })
    }

    fn signal(&self, signal: Signal) {
        let _ = self.shared.signals.send(signal.clone());
        self.shared.send(self.shared.signals_channel(), &signal);
    }

    fn signals(&self) -> broadcast::Receiver<Signal> {
        self.shared.signals.subscribe()
    }

    fn flush(&self, within: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let (done, flushed) = tokio::sync::oneshot::channel();
            let queued = self.shared.outgoing.send(publish::Outgoing::Flush(done));
            let _ = tokio::time::timeout(within, async {
                if queued.await.is_ok() {
                    let _ = flushed.await;
                }
            })
            .await;
        })
    }

    fn stats(&self) -> Stats {
        let s = &self.shared;
        let subscribed = s
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        Stats {
            events_published: s.published.load(Ordering::Relaxed),
            events_received: s.received.load(Ordering::Relaxed),
            events_dropped: s.dropped.load(Ordering::Relaxed),
            sessions_subscribed: u64::try_from(subscribed).unwrap_or(u64::MAX),
            fallbacks: s.fallbacks.load(Ordering::Relaxed),
        }
    }
}

/// `future`, or [`Error::Timeout`] after [`COMMAND_TIMEOUT`].
async fn timed<T>(future: impl std::future::Future<Output = redis::RedisResult<T>>) -> Result<T> {
    tokio::time::timeout(COMMAND_TIMEOUT, future)
        .await
        .map_err(|_| Error::Timeout(COMMAND_TIMEOUT))?
        .map_err(Error::from)
}

/// Wall-clock milliseconds, for spacing warnings.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}
