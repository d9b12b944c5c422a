//! Storing deliveries in the intake table, the layer's durable queue: a fresh row is stored
//! claimed and handed to the workers when the channel has room, pending otherwise.
//!
//! Invariants: [`accept`] says [`Taken::Stored`] only after the row is committed; a redelivery
//! within its platform's window (seen by the shared coordinator or by the table's key) is
//! [`Taken::Duplicate`] and stores nothing; nothing is stored once shutdown began.

use tracing::debug;
use workmate_adapter::{Inbound, Taken};
use workmate_store::{Delivery, IntakeKey, NewDelivery};

use super::millis;
use crate::error::{ChatError, Result};
use crate::handle::Chat;
use crate::queue::Queued;
use crate::tenants::tenant_of;

/// Stores `inbound` for the workers; see `Chat::accept`. A recall is acted on at once
/// instead (see [`crate::recall`]): it must reach a message before a worker takes it.
pub(crate) async fn accept(chat: &Chat, inbound: &Inbound) -> Result<Taken> {
    if let Some(message_ref) = crate::recall::recalled(inbound) {
        return chat.recall(inbound, message_ref).await;
    }
    // A full channel only means the row is stored pending, and the sweeper takes it a moment
    // later.
    let place = chat.inner.intake.tx.clone().try_reserve_owned().ok();
    let lease = place.as_ref().map(|_| chat.lease_ms());
    let Some(delivery) = store(chat, inbound, lease).await? else {
        return Ok(Taken::Duplicate);
    };
    if let (Some(place), Some(lease)) = (place, lease) {
        let until_ms = delivery.received_at_ms.saturating_add(lease);
        place.send(Queued { delivery, until_ms });
    }
    Ok(Taken::Stored)
}

/// Stores `inbound` already claimed by the caller, who runs it now (a slash command, whose
/// reply is its request's response); `None` for a delivery seen before.
pub(crate) async fn accept_claimed(chat: &Chat, inbound: &Inbound) -> Result<Option<IntakeKey>> {
    let stored = store(chat, inbound, Some(chat.lease_ms())).await?;
    Ok(stored.map(|delivery| delivery.key()))
}

/// Writes the intake row; returns it as its first claim leaves it, or `None` when the delivery
/// was seen before.
async fn store(chat: &Chat, inbound: &Inbound, claimed: Option<i64>) -> Result<Option<Delivery>> {
    if chat.inner.stop.is_cancelled() {
        return Err(ChatError::ShuttingDown);
    }
    if inbound.delivery_id.is_empty() {
        return Err(ChatError::Unreadable(
            "the delivery carries no id to deduplicate it on".into(),
        ));
    }
    let tenant = tenant_of(inbound.surface, &inbound.tenant_key);
    // A redelivery another replica (or this one) already stored is known to the shared
    // coordinator: acknowledged without a database round trip. Unknown goes to the table.
    let coordinator = chat.hub().coordinator();
    let dedupe_key = coordinator.is_shared().then(|| {
        format!(
            "{tenant}:{}:{}",
            inbound.surface.as_str(),
            inbound.delivery_id
        )
    });
    if let Some(key) = &dedupe_key
        && coordinator.seen(key).await
    {
        debug!(delivery = %inbound.delivery_id, "Delivery seen before (coordinator); acknowledged, not applied.");
        return Ok(None);
    }
    if let Some(limit) = chat.inner.config.deliveries_per_minute {
        let key = format!("deliveries:{tenant}:{}", inbound.surface.as_str());
        let now = chat.store().clock_ms();
        if let Some(retry_after) = coordinator.try_acquire(&key, limit, now).await {
            return Err(ChatError::OverLimit { limit, retry_after });
        }
    }
    let mut payload =
        serde_json::to_value(inbound).map_err(|e| ChatError::Unreadable(e.to_string()))?;
    if let (Some(parent), Some(fields)) =
        (crate::trace::current_traceparent(), payload.as_object_mut())
    {
        fields.insert(crate::trace::PAYLOAD_KEY.into(), parent.into());
    }
    let new = NewDelivery {
        platform: inbound.surface.as_str().to_owned(),
        delivery_id: inbound.delivery_id.clone(),
        kind: inbound.kind.word().to_owned(),
        payload,
        ttl_ms: millis(chat.dedupe_window(inbound.surface)),
    };
    let intake = chat.store().intake();
    let received_at_ms = chat.store().clock_ms();
    let new_row = match claimed {
        None => intake.accept(&tenant, &new).await?,
        Some(lease) => {
            intake
                .accept_claimed(&tenant, &new, chat.replica(), lease)
                .await?
        }
    };
    // Durable now (stored, or stored before): remembered for the platform's window, off the
    // acknowledgement's path.
    if let Some(key) = dedupe_key {
        let coordinator = std::sync::Arc::clone(coordinator);
        let ttl = chat.dedupe_window(inbound.surface);
        tokio::spawn(async move { coordinator.remember(&key, ttl).await });
    }
    if !new_row {
        debug!(delivery = %inbound.delivery_id, "Delivery seen before; acknowledged, not applied.");
        return Ok(None);
    }
    Ok(Some(Delivery::fresh(&tenant, new, received_at_ms)))
}

impl Chat {
    /// How long a claim on an intake row lasts, in milliseconds.
    pub(crate) fn lease_ms(&self) -> i64 {
        millis(self.inner.config.lease)
    }

    /// This process's replica name, which its intake claims carry.
    pub(super) fn replica(&self) -> &str {
        &self.inner.hub.config().replica
    }
}
