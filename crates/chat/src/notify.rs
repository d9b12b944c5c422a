//! How the layer speaks to the person behind a delivery: in the delivery's own thread, or
//! privately to them there.
//!
//! Invariant: a private notice is best effort — a failure is logged, never returned, because
//! the job that wanted to say something has already succeeded or failed on its own terms.

use tracing::warn;
use workmate_adapter::{ChatTarget, Inbound};

use crate::handle::Slot;
use crate::identity::Person;

/// Where a reply to a delivery goes: its own thread.
pub(crate) fn thread_of(inbound: &Inbound) -> ChatTarget {
    ChatTarget {
        chat_id: inbound.chat_id.clone(),
        thread_id: inbound.thread_id.clone(),
        reply: inbound.reply.clone(),
        person: None,
    }
}

/// Shows a card to one person; a failure is only logged (the job itself succeeded).
pub(crate) async fn private(
    slot: &Slot,
    target: &ChatTarget,
    person: &Person,
    card: &workmate_cards::Card,
) {
    let sent = workmate_adapter::with_retry(&slot.retry, || {
        slot.platform
            .private_notice(target, &person.platform_id, card)
    })
    .await;
    if let Err(e) = sent {
        warn!(error = %e, "Cannot show a private notice.");
    }
}
