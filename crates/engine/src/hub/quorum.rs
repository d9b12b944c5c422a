//! Answers to prompts that need several distinct approvers (see [`crate::quorum`]).
//!
//! Invariants: only an allowing answer to an item parked with a quorum is counted (a denial by
//! anyone who may answer resolves it at once, as before); when more than one approval is needed,
//! the requester's approval never counts and is refused; when the quorum names an approver group,
//! only its members may approve (one approval from a member resolves a `required: 1` item); a refusal
//! changes nothing, says why and is audited; the approval that reaches the quorum resolves the
//! item in the same transaction ([`workmate_store::InboxRepo::count_approval`]).

use workmate_protocol::{Actor, EventKind, Resolution, Surface, TenantId};
use workmate_store::{InboxItem, ResolveOutcome};

use super::SessionHub;
use crate::quorum::{Quorum, is_member};
use crate::{Error, Result};

impl SessionHub {
    /// Counts `actor`'s answer towards `item`'s quorum; `None` when it is not counted that way
    /// (the item needs one approval, or the answer does not allow the call).
    pub(super) async fn count_approval(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        resolution: &Resolution,
        actor: &Actor,
        via: Surface,
    ) -> Result<Option<ResolveOutcome>> {
        let Resolution::Approval { choice } = resolution else {
            return Ok(None);
        };
        let quorum: Option<Quorum> = item
            .data
            .get("quorum")
            .and_then(|q| serde_json::from_value(q.clone()).ok());
        let Some(quorum) = quorum.filter(|_| choice.allows()) else {
            return Ok(None);
        };
        if let Some(reason) = self.not_counted(tenant, item, &quorum, actor).await? {
            return Err(self.refuse_answer(tenant, item, actor, via, reason).await?);
        }
        if quorum.required <= 1 {
            // An approver group's member: one approval resolves it, as usual.
            return Ok(None);
        }
        let outcome = self
            .store()
            .inbox()
            .count_approval(
                tenant,
                &item.id,
                &actor.user_id,
                *choice,
                via,
                quorum.required,
            )
            .await?;
        if let ResolveOutcome::Counted {
            item, approvals, ..
        } = &outcome
        {
            let counted = EventKind::ApprovalCounted {
                item_id: item.id.clone(),
                approved_by: actor.clone(),
                choice: *choice,
                via,
                approvals: u32::try_from(approvals.len()).unwrap_or(u32::MAX),
                required: quorum.required,
            };
            match self.emitter(tenant, &item.session_id).await {
                Ok(emit) => {
                    emit.state(counted)?;
                }
                // Another process drives the session; the count is stored all the same.
                Err(Error::DrivenElsewhere(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Some(outcome))
    }

    /// Why `actor`'s approval does not count towards `quorum`, if it does not.
    async fn not_counted(
        &self,
        tenant: &TenantId,
        item: &InboxItem,
        quorum: &Quorum,
        actor: &Actor,
    ) -> Result<Option<String>> {
        if quorum.required > 1 && item.requested_by.as_ref() == Some(&actor.user_id) {
            return Ok(Some(format!(
                "{} asked for this call, and it needs {} approvals from others; the requester's \
                 own approval never counts",
                actor.user_id, quorum.required
            )));
        }
        let Some(group) = &quorum.group else {
            return Ok(None);
        };
        let settings = self.tenant_settings(tenant).await?;
        let directory_groups = self
            .store()
            .tenants()
            .get_user(tenant, &actor.user_id)
            .await?
            .map(|u| u.directory_groups)
            .unwrap_or_default();
        if is_member(&settings, group, &actor.user_id, &directory_groups) {
            return Ok(None);
        }
        Ok(Some(format!(
            "{} is not in approver group `{group}`, whose approvals this call needs ({} of them)",
            actor.user_id, quorum.required
        )))
    }
}
