//! Waiting for a parked prompt to be answered.
//!
//! Invariants: waiting on an item that is already resolved returns at once (this is what makes a
//! resumed turn re-prompt-free); an answer given in this process wakes the waiter immediately, and
//! one given through another replica is noticed within one poll interval; a stop ends the wait
//! without touching the item, which stays pending for whoever answers later.

use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use workmate_protocol::{InboxItemId, TenantId};
use workmate_store::{InboxItem, InboxItemState, Store};

use crate::{Error, Result};

/// Wakes turns waiting on the inbox when an answer is recorded in this process.
#[derive(Debug, Default)]
pub(crate) struct InboxWaiters {
    resolved: Notify,
}

/// How a wait ended.
#[derive(Debug)]
pub(crate) enum Waited {
    /// The item was answered.
    Resolved(Box<InboxItem>),
    /// The turn was stopped first.
    Interrupted,
}

impl InboxWaiters {
    /// Tells every waiter to re-read its item.
    pub(crate) fn wake_all(&self) {
        self.resolved.notify_waiters();
    }

    /// Waits until the item is resolved or `cancel` fires.
    pub(crate) async fn wait(
        &self,
        store: &Store,
        tenant: &TenantId,
        item: &InboxItemId,
        poll: Duration,
        cancel: &CancellationToken,
    ) -> Result<Waited> {
        loop {
            // Register interest before reading, so an answer landing in between is not missed.
            let notified = self.resolved.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let current = store
                .inbox()
                .get(tenant, item)
                .await?
                .ok_or_else(|| Error::Rejected(format!("inbox item {item} vanished")))?;
            if current.state == InboxItemState::Resolved {
                return Ok(Waited::Resolved(Box::new(current)));
            }
            tokio::select! {
                () = cancel.cancelled() => return Ok(Waited::Interrupted),
                () = &mut notified => {}
                () = tokio::time::sleep(poll) => {}
            }
        }
    }
}
