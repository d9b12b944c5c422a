//! What workmate's replicas share besides the database.
//!
//! The SQL store is the source of truth for everything durable (sessions, leases, the intake,
//! the inbox); a [`Coordinator`] only makes replicas quicker and fairer together:
//! - **event fan-out:** a session's live events reach subscribers on every replica, not only
//!   the one that drives the session;
//! - **per-minute limits** counted once for all replicas;
//! - **delivery dedupe** in front of the intake table's own, so a platform's redelivery is
//!   recognised without a database round trip;
//! - **lease signals:** a replica that releases a lease says so, and whoever waits for it takes
//!   it at once instead of at its next poll.
//!
//! Invariant: losing the coordinator never loses or doubles anything. Every answer it gives is
//! either checked against the store (a lease, a delivery it has not seen) or only makes
//! something happen sooner (a signal, a live event whose state is also stored); when Redis is
//! unreachable each call falls back to what one replica alone would do.

mod error;
mod local;
mod redis;
mod sliding;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use workmate_protocol::{Event, SessionId, TenantId};

pub use error::{Error, Result};
pub use local::InProcess;
pub use redis::{RedisCoordinator, RedisSettings};

/// A boxed future, so [`Coordinator`] can be used as a trait object.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Live events of one session, as [`Coordinator::subscribe_events`] hands them out.
pub type EventReceiver = broadcast::Receiver<Arc<Event>>;

/// Something a replica tells the others, so they act now instead of at their next poll.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Signal {
    /// The lease of the long connection `name` was released: whoever wants it may take it.
    ConnectionReleased {
        /// The lease's name (`Connection::lease_name`).
        name: String,
        /// The replica that released it (it does not wait for its own release).
        by: String,
    },
    /// A session's writer lease was released (its replica drained): an open turn of it may be
    /// taken up now.
    SessionReleased {
        /// The session's tenant.
        tenant: TenantId,
        /// The session.
        session: SessionId,
    },
    /// A stored delivery (a chat message, an API command) waits for the replica that drives its
    /// session: that replica takes the row up now, so the message steers the turn it runs
    /// rather than waiting for it to end.
    DeliveryWaiting {
        /// The session's tenant.
        tenant: TenantId,
        /// The session.
        session: SessionId,
        /// The intake row's platform.
        platform: String,
        /// The intake row's delivery id.
        delivery_id: String,
    },
}

/// What replicas share besides the database. [`InProcess`] is the embedded default;
/// [`RedisCoordinator`] shares it between replicas.
pub trait Coordinator: Send + Sync + Debug {
    /// Whether other replicas see what this one publishes (false in process).
    fn is_shared(&self) -> bool;

    /// Hands a session's event to the other replicas' subscribers; never waits (an event that
    /// cannot be sent now is dropped and counted: subscribers replay state events from the
    /// store when they notice a gap).
    fn publish_event(&self, event: &Arc<Event>);

    /// Live events other replicas publish for a session, from when this resolves on. In
    /// process: a receiver that never yields (this replica's own events reach its subscribers
    /// directly).
    fn subscribe_events<'a>(
        &'a self,
        tenant: &'a TenantId,
        session: &'a SessionId,
    ) -> BoxFuture<'a, Result<EventReceiver>>;

    /// Counts one use of `key` at `now_ms` if fewer than `limit` were counted in the 60 s
    /// before; otherwise how long until one may start. Shared limits are counted for all
    /// replicas; when the coordinator cannot be asked, this replica counts alone.
    fn try_acquire<'a>(
        &'a self,
        key: &'a str,
        limit: u32,
        now_ms: i64,
    ) -> BoxFuture<'a, Option<Duration>>;

    /// Whether a delivery `key` was remembered as durably stored (a redelivery); `false` when
    /// unknown, in which case the store decides.
    fn seen<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool>;

    /// Remembers that delivery `key` is durably stored, for `ttl`.
    fn remember<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, ()>;

    /// Keeps `value` under `key` for `ttl`, for every replica to read with
    /// [`Coordinator::value`] (in process: for this one); a value that cannot be kept is
    /// logged and dropped.
    fn put_value<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> BoxFuture<'a, ()>;

    /// The value kept under `key`, unless it expired; `None` also when the coordinator cannot
    /// be asked.
    fn value<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>>;

    /// Tells every replica (this one included) `signal`.
    fn signal(&self, signal: Signal);

    /// Signals from now on, this replica's own included.
    fn signals(&self) -> broadcast::Receiver<Signal>;

    /// Waits (at most `within`) until everything published or signalled so far has left this
    /// replica: a replica that stops calls it last, so its final signals are not lost.
    fn flush(&self, within: Duration) -> BoxFuture<'_, ()>;

    /// Live figures, for `/metrics`.
    fn stats(&self) -> Stats;
}

/// What a coordinator has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events handed to other replicas.
    pub events_published: u64,
    /// Events received from other replicas.
    pub events_received: u64,
    /// Events that could not be handed over (a full queue, or Redis unreachable).
    pub events_dropped: u64,
    /// Sessions this replica listens to for other replicas' events.
    pub sessions_subscribed: u64,
    /// Calls answered by this replica alone because the coordinator could not be asked.
    pub fallbacks: u64,
}
