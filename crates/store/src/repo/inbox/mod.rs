//! Parked prompts: approvals, questions, directory grants, plans.
//!
//! Invariants: parking is idempotent on `(tenant, session, tool_call_id)` (parking the same tool
//! call twice returns the first item, pending or resolved, so a resumed turn never re-asks);
//! resolving is one conditional update `WHERE state = 'pending'`, so the first answerer wins on
//! every replica and later answerers learn who won.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{
    Event, EventKind, InboxItemId, InboxItemKind, Resolution, SessionId, Surface, TenantId,
    ToolCallId, UserId, Visibility,
};

use crate::repo::appends;
use crate::row::{col, enum_col, json_col, opt_enum_col, opt_json_col, to_json, to_word};
use crate::{Error, Result, Store};

/// Whether an item still waits for an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxItemState {
    /// Waiting.
    Pending,
    /// Answered; the answer is final.
    Resolved,
}

/// A prompt to park.
#[derive(Clone, Debug)]
pub struct NewInboxItem {
    /// The session it blocks.
    pub session_id: SessionId,
    /// The tool call it blocks, if any (the idempotency key).
    pub tool_call_id: Option<ToolCallId>,
    /// What kind of answer it needs.
    pub kind: InboxItemKind,
    /// One line saying what is asked.
    pub title: String,
    /// Details: the reason and an arguments preview, the plan text, …
    pub body: String,
    /// The named inbox it routes to.
    pub inbox: String,
    /// Where it shows.
    pub visibility: Visibility,
    /// Whose request caused it (for separation of duties).
    pub requested_by: Option<UserId>,
    /// Kind-specific data (tool and arguments, directory path, options, …).
    pub data: serde_json::Value,
}

/// A stored inbox item.
#[derive(Clone, Debug, PartialEq)]
pub struct InboxItem {
    /// Owning tenant.
    pub tenant_id: TenantId,
    /// Its id.
    pub id: InboxItemId,
    /// The session it blocks.
    pub session_id: SessionId,
    /// The tool call it blocks, if any.
    pub tool_call_id: Option<ToolCallId>,
    /// What kind of answer it needs.
    pub kind: InboxItemKind,
    /// One line saying what is asked.
    pub title: String,
    /// Details.
    pub body: String,
    /// Pending or resolved.
    pub state: InboxItemState,
    /// The named inbox it routes to.
    pub inbox: String,
    /// Where it shows.
    pub visibility: Visibility,
    /// Whose request caused it.
    pub requested_by: Option<UserId>,
    /// Kind-specific data.
    pub data: serde_json::Value,
    /// The answer, once resolved.
    pub resolution: Option<Resolution>,
    /// Who answered.
    pub resolved_by: Option<UserId>,
    /// Through which surface they answered.
    pub resolved_via: Option<Surface>,
    /// When it was parked.
    pub created_at_ms: i64,
    /// When it was answered.
    pub resolved_at_ms: Option<i64>,
}

/// How a resolve attempt ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ResolveOutcome {
    /// This call's answer was recorded.
    Resolved(InboxItem),
    /// Someone answered first; their answer stands and is returned.
    AlreadyResolved(InboxItem),
    /// The tenant has no such item.
    NotFound,
    /// The answer was an approval counted towards the item's quorum, which is not reached yet:
    /// the item stays pending.
    Counted {
        /// The item, still pending.
        item: InboxItem,
        /// Every approval counted so far, this one included.
        approvals: Vec<quorum::CountedApproval>,
        /// How many are needed.
        required: u32,
    },
}

/// Which items to list; empty fields match everything.
#[derive(Clone, Debug, Default)]
pub struct InboxFilter {
    /// Only this session's items.
    pub session: Option<SessionId>,
    /// Only items in this state.
    pub state: Option<InboxItemState>,
    /// Only items shown here.
    pub visibility: Option<Visibility>,
    /// Only items of sessions this user owns (what a member may see: [`crate::Sight::owner`]).
    pub owner: Option<UserId>,
}

/// The inbox.
#[derive(Debug)]
pub struct InboxRepo<'s> {
    store: &'s Store,
}

macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, item_id, session_id, tool_call_id, kind, title, body, state, inbox, \
             visibility, requested_by, data_json, resolution_json, resolved_by, resolved_via, \
             created_at_ms, resolved_at_ms FROM inbox_items WHERE ",
            $where
        )
    };
}

mod deciders;
mod quorum;

pub use quorum::{CountedApproval, agreed};

impl<'s> InboxRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Parks a prompt. With a tool call id, parking again returns the existing item (`false`);
    /// otherwise every call parks a new item (`true`).
    pub async fn park(&self, tenant: &TenantId, new: &NewInboxItem) -> Result<(InboxItem, bool)> {
        let id = InboxItemId::new();
        self.store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO inbox_items (tenant_id, item_id, session_id, tool_call_id, kind, title, body, state, inbox, visibility, requested_by, data_json, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
                "item_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(id.as_str().to_owned())
            .bind(new.session_id.as_str().to_owned())
            .bind(new.tool_call_id.as_ref().map(|c| c.as_str().to_owned()))
            .bind(to_word(&new.kind)?)
            .bind(new.title.clone())
            .bind(new.body.clone())
            .bind(new.inbox.clone())
            .bind(to_word(&new.visibility)?)
            .bind(new.requested_by.as_ref().map(|u| u.as_str().to_owned()))
            .bind(to_json(&new.data)?)
            .bind(self.store.clock_ms())
            .execute(&self.store.pool)
            .await?;
        let existing = match &new.tool_call_id {
            Some(call) => self.for_tool_call(tenant, &new.session_id, call).await?,
            None => self.get(tenant, &id).await?,
        };
        let item = existing.ok_or_else(|| Error::NotFound {
            what: format!("inbox item {id} right after parking it"),
        })?;
        let created = item.id == id;
        Ok((item, created))
    }

    /// Items of every tenant still waiting that were parked before `before_ms`, oldest first, at
    /// most `limit`: what the scheduler's reminders and expiry look at (the one read across
    /// tenants; each item names its own tenant, which every later step uses).
    pub async fn waiting_since_before(&self, before_ms: i64, limit: u32) -> Result<Vec<InboxItem>> {
        let rows = self
            .store
            .dialect
            .query(select!(
                "state = 'pending' AND created_at_ms < ? ORDER BY created_at_ms, item_id LIMIT ?"
            ))
            .bind(before_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// One item, if the tenant has it.
    pub async fn get(&self, tenant: &TenantId, item: &InboxItemId) -> Result<Option<InboxItem>> {
        let row = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND item_id = ?"))
            .bind(tenant.as_str().to_owned())
            .bind(item.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// The items whose id starts with `prefix` (a reply token), at most `limit`. Only hex digits and
    /// dashes are accepted, so the prefix can hold no pattern characters.
    pub async fn with_id_prefix(
        &self,
        tenant: &TenantId,
        prefix: &str,
        limit: u32,
    ) -> Result<Vec<InboxItem>> {
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Ok(Vec::new());
        }
        let rows = self
            .store
            .dialect
            .query(select!(
                "tenant_id = ? AND item_id LIKE ? ORDER BY created_at_ms LIMIT ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(format!("{}%", prefix.to_ascii_lowercase()))
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// The item parked for a tool call, if any.
    pub async fn for_tool_call(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        call: &ToolCallId,
    ) -> Result<Option<InboxItem>> {
        let row = self
            .store
            .dialect
            .query(select!(
                "tenant_id = ? AND session_id = ? AND tool_call_id = ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(call.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// Items matching the filter, oldest first, at most `limit`.
    pub async fn list(
        &self,
        tenant: &TenantId,
        filter: &InboxFilter,
        limit: u32,
    ) -> Result<Vec<InboxItem>> {
        let session = filter
            .session
            .as_ref()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default();
        let state = filter
            .state
            .as_ref()
            .map(to_word)
            .transpose()?
            .unwrap_or_default();
        let visibility = filter
            .visibility
            .as_ref()
            .map(to_word)
            .transpose()?
            .unwrap_or_default();
        let owner = filter
            .owner
            .as_ref()
            .map(|u| u.as_str().to_owned())
            .unwrap_or_default();
        // An empty filter value matches everything.
        let rows = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND (? = '' OR session_id = ?) AND (? = '' OR state = ?) AND (? = '' OR visibility = ?) AND (? = '' OR session_id IN (SELECT session_id FROM sessions WHERE tenant_id = ? AND owner_user_id = ?)) ORDER BY created_at_ms, item_id LIMIT ?"))
            .bind(tenant.as_str().to_owned())
            .bind(session.clone())
            .bind(session)
            .bind(state.clone())
            .bind(state)
            .bind(visibility.clone())
            .bind(visibility)
            .bind(owner.clone())
            .bind(tenant.as_str().to_owned())
            .bind(owner)
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Records an answer if the item is still pending. The first answer wins.
    pub async fn resolve(
        &self,
        tenant: &TenantId,
        item: &InboxItemId,
        resolution: &Resolution,
        by: &UserId,
        via: Surface,
    ) -> Result<ResolveOutcome> {
        let answer = Answer {
            resolution,
            by,
            via,
        };
        Ok(self
            .resolve_and_record(tenant, item, &answer, |_| None)
            .await?
            .0)
    }

    /// [`InboxRepo::resolve`], and when this answer wins, the state event `event` builds from the
    /// resolved item is appended to the item's session in the same transaction: no reader can
    /// see the item answered before the session's stream says so, and a crash loses neither.
    pub async fn resolve_and_record(
        &self,
        tenant: &TenantId,
        item: &InboxItemId,
        answer: &Answer<'_>,
        event: impl FnOnce(&InboxItem) -> Option<EventKind>,
    ) -> Result<(ResolveOutcome, Option<Event>)> {
        let mut tx = self.store.begin_write().await?;
        let found = match self.resolve_in(&mut tx, tenant, item, answer).await? {
            ResolveOutcome::Resolved(found) => found,
            other => return Ok((other, None)),
        };
        let recorded = match event(&found) {
            Some(kind) => {
                let key = (tenant, &found.session_id);
                let appended = appends::append_in(&mut tx, self.store, key, None, &[], vec![kind]);
                appended.await?.events.pop()
            }
            None => None,
        };
        tx.commit().await?;
        Ok((ResolveOutcome::Resolved(found), recorded))
    }

    /// Records `answer` in `tx` if the item is still pending: [`ResolveOutcome::Resolved`] when
    /// this answer won, with the item as it is now.
    pub(crate) async fn resolve_in(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        tenant: &TenantId,
        item: &InboxItemId,
        answer: &Answer<'_>,
    ) -> Result<ResolveOutcome> {
        let done = self
            .store
            .dialect
            .query("UPDATE inbox_items SET state = 'resolved', resolution_json = ?, resolved_by = ?, resolved_via = ?, resolved_at_ms = ? WHERE tenant_id = ? AND item_id = ? AND state = 'pending'")
            .bind(to_json(answer.resolution)?)
            .bind(answer.by.as_str().to_owned())
            .bind(to_word(&answer.via)?)
            .bind(self.store.clock_ms())
            .bind(tenant.as_str().to_owned())
            .bind(item.as_str().to_owned())
            .execute(&mut **tx)
            .await?;
        let won = done.rows_affected() == 1;
        let row = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND item_id = ?"))
            .bind(tenant.as_str().to_owned())
            .bind(item.as_str().to_owned())
            .fetch_optional(&mut **tx)
            .await?;
        let Some(found) = row.map(|r| from_row(&r)).transpose()? else {
            return Ok(ResolveOutcome::NotFound);
        };
        Ok(if won {
            ResolveOutcome::Resolved(found)
        } else {
            ResolveOutcome::AlreadyResolved(found)
        })
    }
}

/// Who answers a parked prompt, how, and through which surface.
#[derive(Clone, Copy, Debug)]
pub struct Answer<'a> {
    /// The answer.
    pub resolution: &'a Resolution,
    /// Who gave it.
    pub by: &'a UserId,
    /// Where it was given.
    pub via: Surface,
}

fn from_row(row: &AnyRow) -> Result<InboxItem> {
    const T: &str = "inbox_items";
    Ok(InboxItem {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        id: InboxItemId::from(col::<String>(row, T, "item_id")?),
        session_id: SessionId::from(col::<String>(row, T, "session_id")?),
        tool_call_id: col::<Option<String>>(row, T, "tool_call_id")?.map(ToolCallId::from),
        kind: enum_col(row, T, "kind")?,
        title: col(row, T, "title")?,
        body: col(row, T, "body")?,
        state: enum_col(row, T, "state")?,
        inbox: col(row, T, "inbox")?,
        visibility: enum_col(row, T, "visibility")?,
        requested_by: col::<Option<String>>(row, T, "requested_by")?.map(UserId::from),
        data: json_col(row, T, "data_json")?,
        resolution: opt_json_col(row, T, "resolution_json")?,
        resolved_by: col::<Option<String>>(row, T, "resolved_by")?.map(UserId::from),
        resolved_via: opt_enum_col(row, T, "resolved_via")?,
        created_at_ms: col(row, T, "created_at_ms")?,
        resolved_at_ms: col(row, T, "resolved_at_ms")?,
    })
}
