//! Offboarding a user: the store revokes what they hold in one transaction
//! ([`workmate_store::OffboardingRepo::deprovision`]); then each session whose prompt it dismissed
//! is told, so a turn waiting on it goes on with a denial instead of waiting for ever.

use workmate_protocol::{Actor, EventKind, Surface, TenantId, UserId};
use workmate_store::Offboarded;

use super::SessionHub;
use crate::Result;

impl SessionHub {
    /// Deactivates `user` of `tenant` and revokes what they hold, as `by`; see
    /// [`workmate_store::OffboardingRepo::deprovision`].
    pub async fn deprovision(
        &self,
        tenant: &TenantId,
        user: &UserId,
        by: &Actor,
    ) -> Result<Offboarded> {
        let done = self
            .store()
            .offboarding()
            .deprovision(tenant, user, &by.user_id)
            .await?;
        for (item_tenant, _, item_id) in &done.items_dismissed {
            let Some(item) = self.store().inbox().get(item_tenant, item_id).await? else {
                continue;
            };
            let Some(resolution) = item.resolution.clone() else {
                continue;
            };
            let event = EventKind::InboxItemResolved {
                item_id: item.id.clone(),
                item_kind: item.kind,
                tool_call_id: item.tool_call_id.clone(),
                resolution,
                resolved_by: by.clone(),
                via: Surface::System,
            };
            self.announce_resolution(item_tenant, &item, event).await?;
        }
        Ok(done)
    }
}
