//! Durable intake: deliveries are stored before they are acknowledged, and workers drain the
//! table.
//!
//! Invariants:
//! - [`table::accept`] returns `Taken::Stored` only after the row is committed; a redelivery of
//!   the same (tenant, platform, delivery id) within the platform's window is `Taken::Duplicate`.
//! - The table is the queue. A fresh row that finds room in the in-process channel is stored
//!   already claimed (running, first attempt, leased) and handed to the workers with its
//!   content, so running it reads and writes nothing more; otherwise it is stored pending and
//!   the sweeper finds it. A burst is never refused while the database takes writes.
//! - A row is run by whoever claims it (a conditional update with a lease, or the insert that
//!   claims it), so two workers or two replicas never run it at once; a worker that dies loses
//!   its lease and the row runs again. A claimed row that waited in the channel for half its
//!   lease renews it first, on condition that it is still on its first attempt (nobody took it
//!   over), and is dropped otherwise; rows still waiting at shutdown are given back. A claim
//!   names the replica that holds it and when it claimed it, and a replica that starts gives
//!   back at once whatever its name claimed before it was made (its killed predecessor's rows),
//!   before its first sweep.
//! - A message's row is finished by the engine, in the transaction that stores the message, so
//!   a crash in between runs it again rather than losing it or running it twice. While the
//!   message waits to join a running turn, its lease is renewed.
//! - Finished rows stay for their platform's dedupe window, then are purged in bounded batches.
//!
//! Layout: [`table`] stores deliveries (and is all a caller that stores one needs), [`workers`]
//! drains the table and hands each row to the job path, reached only through [`Jobs`]; the
//! in-process channel between the two, which the layer's handle holds, is `crate::queue`.

pub(crate) mod table;
pub(crate) mod workers;

use std::time::Duration;

use workmate_adapter::BoxFuture;
use workmate_store::Delivery;

use crate::error::{ChatError, Result};

/// `d` in whole milliseconds, as the intake table counts time.
fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Who finishes a delivery's intake row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Handled {
    /// The job is done: the worker marks the row.
    Done,
    /// The engine marks the row when it stores the message.
    ByEngine,
}

/// The job path the workers hand each claimed row to; the intake knows nothing else of what a
/// delivery means.
pub(crate) trait Jobs: Send + Sync {
    /// Reads a stored delivery and runs it. An error leaves the row to be retried or given up.
    fn run<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Result<Handled>>;

    /// Tells the delivery's thread it was given up after `error`, so nobody waits for an
    /// answer that will not come.
    fn given_up<'a>(&'a self, delivery: &'a Delivery, error: &'a ChatError) -> BoxFuture<'a, ()>;
}
