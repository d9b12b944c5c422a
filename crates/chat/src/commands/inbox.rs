//! `/workmate inbox [page]`: what waits for the caller's answer, as cards with their buttons;
//! `/workmate notify [on|off]`: whether an approver is told privately of what waits for them.
//!
//! Each waiting approval is shown as its approval card (who asked, the tool, the exact
//! arguments, why) with its buttons, plus how long it has waited; questions, plans and folder
//! requests show what they ask and where to answer. A click on a button here is a click like
//! any other: the engine's authority rule decides, and the first answer wins everywhere.
//!
//! Invariants: the caller sees what the store's one visibility rule lets them see
//! ([`workmate_store::Sight`]); the reply is private; a page holds at most [`PAGE`] items.

use std::fmt::Write as _;

use serde_json::Value;
use workmate_cards::{
    ApprovalCard, Block, Card, Inline, PromptState, Quorum, RichText, approval_card,
};
use workmate_engine::reply_token;
use workmate_protocol::{Actor, ApprovalChoice, InboxItemKind, TenantId, ToolCallId};
use workmate_store::{InboxFilter, InboxItem, InboxItemState, Sight};

use super::{Caller, Outcome};
use crate::{Chat, Result};

/// Items shown per page.
const PAGE: usize = 5;
/// Pending items read at most.
const READ: u32 = 500;

impl Chat {
    /// The caller's waiting items, page `page` (from 1).
    pub(super) async fn inbox(&self, caller: &Caller, page: usize) -> Result<Outcome> {
        let tenant = &caller.person.tenant;
        let sight = Sight::of(&caller.person.user);
        let filter = InboxFilter {
            state: Some(InboxItemState::Pending),
            owner: sight.owner().cloned(),
            ..InboxFilter::default()
        };
        let items = self.store().inbox().list(tenant, &filter, READ).await?;
        if items.is_empty() {
            return Ok(Outcome::ok("Nothing is waiting for you."));
        }
        let pages = items.len().div_ceil(PAGE);
        let page = page.clamp(1, pages);
        let shown = &items[(page - 1) * PAGE..(page * PAGE).min(items.len())];
        let now = self.store().clock_ms();
        let mut blocks = vec![Block::Heading {
            text: format!("Waiting for an answer: {}", items.len()),
        }];
        let mut text = format!("{} waiting for an answer:", items.len());
        for item in shown {
            let requester = self.actor_of(tenant, item).await?;
            blocks.push(Block::Divider);
            blocks.extend(item_blocks(item, requester, now));
            let _ = write!(text, "\n• {} {}", reply_token(&item.id), item.title);
        }
        if page < pages {
            let more = format!(
                "Page {page} of {pages}: `/workmate inbox {}` shows the next.",
                page + 1
            );
            blocks.push(Block::Context(vec![Inline::Text(more.clone())]));
            let _ = write!(text, "\n{more}");
        }
        Ok(Outcome::ok(text).with_card(Card { blocks }))
    }

    /// Shows, or turns on or off, whether the caller gets private copies of prompts that wait
    /// for approvers.
    pub(super) async fn notify(&self, caller: &Caller, switch: Option<bool>) -> Result<Outcome> {
        let (tenant, user) = (&caller.person.tenant, &caller.person.user.id);
        let approvers = self.store().approvers();
        if let Some(on) = switch {
            approvers.set_notices(tenant, user, on).await?;
        }
        let on = approvers.notices_on(tenant, user).await?;
        let role = caller.person.role();
        let note = if matches!(role, workmate_store::Role::Member) {
            " (only approvers and admins get them; you are a member)"
        } else {
            ""
        };
        Ok(Outcome::ok(if on {
            format!(
                "Notices are on{note}: a prompt that waits for approvers comes to your direct \
                 chat with workmate, with its buttons (`/workmate notify off` stops them)."
            )
        } else {
            format!(
                "Notices are off{note}: `/workmate inbox` still lists what waits for you \
                 (`/workmate notify on` turns them back on)."
            )
        }))
    }

    /// Who asked for `item`, named as the tenant knows them.
    async fn actor_of(&self, tenant: &TenantId, item: &InboxItem) -> Result<Option<Actor>> {
        let Some(user) = &item.requested_by else {
            return Ok(None);
        };
        let known = self.store().tenants().get_user(tenant, user).await?;
        Ok(Some(match known {
            Some(known) => Actor::named(user.clone(), known.display_name),
            None => Actor::new(user.clone()),
        }))
    }
}

/// The blocks of one waiting item (see the module docs).
fn item_blocks(item: &InboxItem, requester: Option<Actor>, now_ms: i64) -> Vec<Block> {
    let waited = waited(now_ms - item.created_at_ms);
    let token = reply_token(&item.id);
    if let Some(card) = approval_of(item, requester) {
        let mut blocks = approval_card(&card).blocks;
        blocks.push(Block::Context(vec![Inline::Text(format!(
            "Waiting {waited} · {token}"
        ))]));
        return blocks;
    }
    vec![
        Block::Text(RichText(vec![Inline::Bold(item.title.clone())])),
        Block::Text(RichText(vec![Inline::Text(item.body.clone())])),
        Block::Context(vec![Inline::Text(format!(
            "Waiting {waited} · answer it in its conversation, or reply there with {token}"
        ))]),
    ]
}

/// An approval item as its card, from what the engine parked with it.
fn approval_of(item: &InboxItem, requested_by: Option<Actor>) -> Option<ApprovalCard> {
    if item.kind != InboxItemKind::Approval {
        return None;
    }
    let data = &item.data;
    let tool = data.get("tool")?.as_str()?.to_owned();
    let choices: Vec<ApprovalChoice> =
        serde_json::from_value(data.get("choices").cloned().unwrap_or(Value::Null)).ok()?;
    let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_owned);
    let reason = text("reason").unwrap_or_else(|| {
        // Items parked before the reason was kept on its own: the body starts with it.
        item.body.split(" · ").next().unwrap_or_default().to_owned()
    });
    let required = data
        .pointer("/quorum/required")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n > 1);
    Some(ApprovalCard {
        item_id: item.id.clone(),
        tool_call_id: item
            .tool_call_id
            .clone()
            .unwrap_or_else(|| ToolCallId::from("")),
        turn_id: None,
        tool,
        arguments: data.get("arguments").cloned().unwrap_or(Value::Null),
        reason,
        category: text("category").unwrap_or_default(),
        choices,
        requested_by,
        standing_target: text("standing_target"),
        readonly_ok: data
            .get("readonly_ok")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        quorum: required.map(|required| Quorum {
            required,
            approved_by: Vec::new(),
        }),
        state: PromptState::Pending,
    })
}

/// How long something waited, as people say it: `3 min`, `2 h`, `1 d`.
fn waited(ms: i64) -> String {
    let minutes = (ms / 60_000).max(0);
    match minutes {
        0 => "under a minute".to_owned(),
        1..=59 => format!("{minutes} min"),
        60..=2879 => format!("{} h", minutes / 60),
        _ => format!("{} d", minutes / 1440),
    }
}

#[cfg(test)]
mod tests {
    use super::waited;

    #[test]
    fn waiting_times_read_as_people_say_them() {
        assert_eq!(waited(10_000), "under a minute");
        assert_eq!(waited(3 * 60_000), "3 min");
        assert_eq!(waited(2 * 3_600_000), "2 h");
        assert_eq!(waited(3 * 86_400_000), "3 d");
    }
}
