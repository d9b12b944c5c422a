//! Who may decide a parked prompt, as the platform accounts a card's buttons can be bound to.
//!
//! A platform whose click callbacks are not signed over their body (DingTalk's HTTP card
//! callbacks) binds each button to the person who may press it when the card is created; this
//! is the list it binds. It mirrors the engine's rule for answering (the session's owner, or in a
//! shared session the person who asked, and the tenant's approvers and admins), restricted to accounts bound on that platform and not
//! deactivated. The engine still decides every answer; a person missing here can only not click.
//!
//! Invariant: the item is found by its id alone (ids are random and never reused, and a card
//! names no tenant); every other table is joined on the item's own tenant.

use workmate_protocol::InboxItemId;

use super::InboxRepo;
use crate::Result;
use crate::row::col;

/// The most accounts one card is bound to; a tenant with more approvers binds the first ones
/// by platform id (the owner always, see [`InboxRepo::deciders_on`]).
const MAX_DECIDERS: i64 = 500;

impl InboxRepo<'_> {
    /// The `platform` accounts (their platform user ids) of everyone who may answer `item`: its
    /// session's owner and the person who asked, then the tenant's approvers and admins. Empty when the
    /// item is unknown.
    pub async fn deciders_on(&self, platform: &str, item: &InboxItemId) -> Result<Vec<String>> {
        let rows = self
            .store
            .dialect
            .query(
                "SELECT p.platform_user_id, CASE WHEN u.user_id = s.owner_user_id OR u.user_id = i.requested_by THEN 0 ELSE 1 END AS decider_order \
                 FROM inbox_items i \
                 JOIN sessions s ON s.tenant_id = i.tenant_id AND s.session_id = i.session_id \
                 JOIN platform_identities p ON p.tenant_id = i.tenant_id AND p.platform = ? \
                 JOIN users u ON u.tenant_id = p.tenant_id AND u.user_id = p.user_id \
                 WHERE i.item_id = ? AND u.disabled_at_ms IS NULL \
                 AND (u.user_id = s.owner_user_id OR u.user_id = i.requested_by OR u.user_role IN ('approver', 'admin')) \
                 ORDER BY decider_order, p.platform_user_id LIMIT ?",
            )
            .bind(platform.to_owned())
            .bind(item.as_str().to_owned())
            .bind(MAX_DECIDERS)
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| col::<String>(row, "platform_identities", "platform_user_id"))
            .collect()
    }
}
