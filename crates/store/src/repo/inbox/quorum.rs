//! Approvals counted towards a prompt that needs several distinct approvers.
//!
//! Invariants: an approver counts once per item (a repeated approval is not a second one); an
//! approval counts only while the item is pending; the approval that reaches the quorum resolves
//! the item in the same transaction, so two approvers clicking at once never both wait for a third
//! nor resolve it twice.

use workmate_protocol::{ApprovalChoice, InboxItemId, Resolution, Surface, TenantId, UserId};

use super::{Answer, InboxItemState, InboxRepo, ResolveOutcome, from_row};
use crate::row::{col, enum_col, to_word};
use crate::{Result, Store};

/// One approval counted towards a quorum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountedApproval {
    /// Who approved.
    pub user_id: UserId,
    /// What they chose.
    pub choice: ApprovalChoice,
}

impl InboxRepo<'_> {
    /// Counts `by`'s approval (`choice`) of `item`, which needs `required` distinct approvals.
    /// When this approval reaches the quorum, the item is resolved with the narrowest choice the
    /// approvers agree on ([`agreed`]) and the outcome is [`ResolveOutcome::Resolved`]; before
    /// that it is [`ResolveOutcome::Counted`] with every approval so far.
    pub async fn count_approval(
        &self,
        tenant: &TenantId,
        item: &InboxItemId,
        by: &UserId,
        choice: ApprovalChoice,
        via: Surface,
        required: u32,
    ) -> Result<ResolveOutcome> {
        let store: &Store = self.store;
        let d = store.dialect;
        let mut tx = store.begin_write().await?;
        let found = d
            .query(select!("tenant_id = ? AND item_id = ?"))
            .bind(tenant.as_str().to_owned())
            .bind(item.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(found) = found.map(|r| from_row(&r)).transpose()? else {
            return Ok(ResolveOutcome::NotFound);
        };
        if found.state != InboxItemState::Pending {
            return Ok(ResolveOutcome::AlreadyResolved(found));
        }
        d.insert_ignoring_duplicates(
            "INSERT INTO inbox_approvals (tenant_id, item_id, user_id, choice, via, approved_at_ms) VALUES (?, ?, ?, ?, ?, ?)",
            "user_id",
        )
        .bind(tenant.as_str().to_owned())
        .bind(item.as_str().to_owned())
        .bind(by.as_str().to_owned())
        .bind(to_word(&choice)?)
        .bind(to_word(&via)?)
        .bind(store.clock_ms())
        .execute(&mut *tx)
        .await?;
        let rows = d
            .query("SELECT user_id, choice FROM inbox_approvals WHERE tenant_id = ? AND item_id = ? ORDER BY approved_at_ms, user_id")
            .bind(tenant.as_str().to_owned())
            .bind(item.as_str().to_owned())
            .fetch_all(&mut *tx)
            .await?;
        let mut approvals = Vec::with_capacity(rows.len());
        for row in &rows {
            let user: String = col(row, "inbox_approvals", "user_id")?;
            approvals.push(CountedApproval {
                user_id: UserId::from(user),
                choice: enum_col(row, "inbox_approvals", "choice")?,
            });
        }
        if approvals.len() < required as usize {
            tx.commit().await?;
            return Ok(ResolveOutcome::Counted {
                item: found,
                approvals,
                required,
            });
        }
        let resolution = Resolution::Approval {
            choice: agreed(&approvals),
        };
        let answer = Answer {
            resolution: &resolution,
            by,
            via,
        };
        let outcome = self.resolve_in(&mut tx, tenant, item, &answer).await?;
        tx.commit().await?;
        Ok(outcome)
    }
}

/// The choice a quorum agreed on: the one every approver chose, else "once" (a standing grant
/// needs everyone's agreement).
pub fn agreed(approvals: &[CountedApproval]) -> ApprovalChoice {
    match approvals.split_first() {
        Some((first, rest)) if rest.iter().all(|a| a.choice == first.choice) => first.choice,
        _ => ApprovalChoice::Once,
    }
}
