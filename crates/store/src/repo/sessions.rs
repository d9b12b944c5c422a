//! Sessions: one row per conversation, keyed by where it happens.
//!
//! The session row also holds the per-session counters (`last_seq`, `message_count`) that the
//! event and message repositories increment inside their writing transactions.

use sqlx::any::AnyRow;
use workmate_protocol::{PermissionMode, SessionId, Surface, TenantId, TurnId, UserId};

use crate::row::{col, enum_col, to_word};
use crate::{Error, Result, Store};

/// The token of a session's first lease: a take by a new holder adds one to the stored token,
/// which starts at 0.
const FIRST_LEASE_TOKEN: u64 = 1;

/// Where a conversation happens: a surface, a chat on it and a thread in that chat.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionKey {
    /// The platform or API the conversation is on.
    pub surface: Surface,
    /// The chat (channel, group, DM) id on that surface.
    pub chat_id: String,
    /// The thread within the chat; empty for a chat without threads.
    pub thread_id: String,
}

/// A session to create.
#[derive(Clone, Debug)]
pub struct NewSession {
    /// Where it happens.
    pub key: SessionKey,
    /// Who started it.
    pub owner: UserId,
    /// A title, when one is known.
    pub title: Option<String>,
    /// The persona answering in it.
    pub persona: String,
    /// The routed model id (`provider:model`).
    pub model: String,
    /// Its permission mode.
    pub mode: PermissionMode,
    /// Whether prompts go to the cross-session inbox instead of inline.
    pub unattended: bool,
}

/// A stored session.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRecord {
    /// Owning tenant.
    pub tenant_id: TenantId,
    /// Its id.
    pub id: SessionId,
    /// Where it happens.
    pub key: SessionKey,
    /// Who started it.
    pub owner: UserId,
    /// Its title.
    pub title: Option<String>,
    /// The persona answering in it.
    pub persona: String,
    /// The routed model id.
    pub model: String,
    /// Its permission mode.
    pub mode: PermissionMode,
    /// Whether prompts go to the cross-session inbox.
    pub unattended: bool,
    /// The sequence number of its latest state event (0 before the first).
    pub last_seq: u64,
    /// How many history messages it has.
    pub message_count: u64,
    /// When it was created.
    pub created_at_ms: i64,
    /// When it last changed.
    pub updated_at_ms: i64,
    /// What people granted for the rest of the session (the engine's grant set, as JSON; `{}`
    /// when nothing was granted).
    pub grants: serde_json::Value,
    /// The turn the session was in the middle of when it was read: one that runs, or one a
    /// crash cut short (see [`crate::OpenTurnRepo`]).
    pub open_turn: Option<TurnId>,
    /// What stands in for the older part of the history when a model is called (`None` until the
    /// conversation is first compacted).
    pub compaction: Option<workmate_protocol::CompactionView>,
    /// Whether anyone in its group or thread may talk to it, not only its owner
    /// ([`SessionRepo::set_shared`]).
    pub shared: bool,
}

impl SessionRecord {
    /// The session's stored counters.
    pub fn counters(&self) -> crate::Counters {
        crate::Counters {
            last_seq: self.last_seq,
            message_count: self.message_count,
        }
    }
}

/// The one column list every session query reads, followed by its `WHERE` clause.
macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, session_id, surface, chat_id, thread_id, owner_user_id, title, persona, \
             model, mode, unattended, last_seq, message_count, created_at_ms, updated_at_ms, \
             grants_json, open_turn_id, compaction_json, shared FROM sessions WHERE ",
            $where
        )
    };
}

/// Sessions.
#[derive(Debug)]
pub struct SessionRepo<'s> {
    store: &'s Store,
}

impl<'s> SessionRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Returns the session at `new.key`, creating it first if there is none. The flag tells
    /// whether this call created it (exactly one of several racing callers sees `true`).
    pub async fn get_or_create(
        &self,
        tenant: &TenantId,
        new: &NewSession,
    ) -> Result<(SessionRecord, bool)> {
        let id = SessionId::new();
        let now = self.store.clock_ms();
        self.store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO sessions (tenant_id, session_id, surface, chat_id, thread_id, owner_user_id, title, persona, model, mode, unattended, last_seq, message_count, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)",
                "session_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(id.as_str().to_owned())
            .bind(to_word(&new.key.surface)?)
            .bind(new.key.chat_id.clone())
            .bind(new.key.thread_id.clone())
            .bind(new.owner.as_str().to_owned())
            .bind(new.title.clone())
            .bind(new.persona.clone())
            .bind(new.model.clone())
            .bind(to_word(&new.mode)?)
            .bind(i64::from(new.unattended))
            .bind(now)
            .bind(now)
            .execute(&self.store.pool)
            .await?;
        let record = self
            .find_by_key(tenant, &new.key)
            .await?
            .ok_or_else(|| Error::NotFound {
                what: format!("session at {:?} right after creating it", new.key),
            })?;
        let created = record.id == id;
        Ok((record, created))
    }

    /// Creates the session at `new.key` with its writer lease held by `holder` until `until_ms`,
    /// in one insert, and returns it with the lease's token; `None` when the key already has a
    /// session (nothing is written: read that one with [`SessionRepo::find_by_key`]). The row is
    /// left as a first [`crate::LeaseRepo::take`] by `holder` would leave it, so the creator
    /// writes at once, and another holder's take after `until_ms` gets a larger token.
    pub async fn create_leased(
        &self,
        tenant: &TenantId,
        new: &NewSession,
        holder: &str,
        until_ms: i64,
    ) -> Result<Option<(SessionRecord, u64)>> {
        let id = SessionId::new();
        let now = self.store.clock_ms();
        // A plain insert: the key's unique index decides, and its violation means "already there".
        let inserted = self
            .store
            .dialect
            .query("INSERT INTO sessions (tenant_id, session_id, surface, chat_id, thread_id, owner_user_id, title, persona, model, mode, unattended, last_seq, message_count, created_at_ms, updated_at_ms, lease_holder, lease_token, lease_until_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?)")
            .bind(tenant.as_str().to_owned())
            .bind(id.as_str().to_owned())
            .bind(to_word(&new.key.surface)?)
            .bind(new.key.chat_id.clone())
            .bind(new.key.thread_id.clone())
            .bind(new.owner.as_str().to_owned())
            .bind(new.title.clone())
            .bind(new.persona.clone())
            .bind(new.model.clone())
            .bind(to_word(&new.mode)?)
            .bind(i64::from(new.unattended))
            .bind(now)
            .bind(now)
            .bind(holder.to_owned())
            .bind(crate::row::to_i64(FIRST_LEASE_TOKEN))
            .bind(until_ms)
            .execute(&self.store.writes)
            .await;
        match inserted {
            Ok(_) => {}
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let record = SessionRecord {
            tenant_id: tenant.clone(),
            id,
            key: new.key.clone(),
            owner: new.owner.clone(),
            title: new.title.clone(),
            persona: new.persona.clone(),
            model: new.model.clone(),
            mode: new.mode,
            unattended: new.unattended,
            last_seq: 0,
            message_count: 0,
            created_at_ms: now,
            updated_at_ms: now,
            grants: serde_json::json!({}),
            open_turn: None,
            compaction: None,
            shared: false,
        };
        Ok(Some((record, FIRST_LEASE_TOKEN)))
    }

    /// The session, if the tenant has it.
    pub async fn get(
        &self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Option<SessionRecord>> {
        let row = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND session_id = ?"))
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// The session at a key, if any.
    pub async fn find_by_key(
        &self,
        tenant: &TenantId,
        key: &SessionKey,
    ) -> Result<Option<SessionRecord>> {
        let row = self
            .store
            .dialect
            .query(select!(
                "tenant_id = ? AND surface = ? AND chat_id = ? AND thread_id = ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(to_word(&key.surface)?)
            .bind(key.chat_id.clone())
            .bind(key.thread_id.clone())
            .fetch_optional(&self.store.pool)
            .await?;
        row.map(|r| from_row(&r)).transpose()
    }

    /// The tenant's sessions, most recently changed first.
    pub async fn list(&self, tenant: &TenantId, limit: u32) -> Result<Vec<SessionRecord>> {
        let rows = self
            .store
            .dialect
            .query(select!(
                "tenant_id = ? ORDER BY updated_at_ms DESC, session_id DESC LIMIT ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// The sessions `sight` shows, most recently changed first: all of the tenant's, or only
    /// those its member owns.
    pub async fn list_visible(
        &self,
        tenant: &TenantId,
        sight: &crate::Sight,
        limit: u32,
    ) -> Result<Vec<SessionRecord>> {
        let Some(owner) = sight.owner() else {
            return self.list(tenant, limit).await;
        };
        let rows = self
            .store
            .dialect
            .query(select!(
                "tenant_id = ? AND owner_user_id = ? ORDER BY updated_at_ms DESC, session_id DESC LIMIT ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(owner.as_str().to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Makes a session shared (anyone in its group or thread may talk to it) or its owner's own
    /// again; `false` when the tenant has no such session.
    pub async fn set_shared(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        shared: bool,
    ) -> Result<bool> {
        let done = self
            .store
            .dialect
            .query("UPDATE sessions SET shared = ? WHERE tenant_id = ? AND session_id = ?")
            .bind(i64::from(shared))
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .execute(&self.store.pool)
            .await?;
        Ok(done.rows_affected() > 0 || self.get(tenant, session).await?.is_some())
    }

    /// The sessions of one chat (channel, group or DM) owned by `owner`, most recently changed
    /// first.
    pub async fn list_in_chat(
        &self,
        tenant: &TenantId,
        surface: Surface,
        chat_id: &str,
        owner: &UserId,
        limit: u32,
    ) -> Result<Vec<SessionRecord>> {
        let rows = self
            .store
            .dialect
            .query(select!(
                "tenant_id = ? AND surface = ? AND chat_id = ? AND owner_user_id = ? ORDER BY updated_at_ms DESC, session_id DESC LIMIT ?"
            ))
            .bind(tenant.as_str().to_owned())
            .bind(to_word(&surface)?)
            .bind(chat_id.to_owned())
            .bind(owner.as_str().to_owned())
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }
}

fn from_row(row: &AnyRow) -> Result<SessionRecord> {
    const T: &str = "sessions";
    Ok(SessionRecord {
        tenant_id: TenantId::from(col::<String>(row, T, "tenant_id")?),
        id: SessionId::from(col::<String>(row, T, "session_id")?),
        key: SessionKey {
            surface: enum_col(row, T, "surface")?,
            chat_id: col(row, T, "chat_id")?,
            thread_id: col(row, T, "thread_id")?,
        },
        owner: UserId::from(col::<String>(row, T, "owner_user_id")?),
        title: col(row, T, "title")?,
        persona: col(row, T, "persona")?,
        model: col(row, T, "model")?,
        mode: enum_col(row, T, "mode")?,
        unattended: col::<i64>(row, T, "unattended")? != 0,
        last_seq: u64::try_from(col::<i64>(row, T, "last_seq")?).unwrap_or_default(),
        message_count: u64::try_from(col::<i64>(row, T, "message_count")?).unwrap_or_default(),
        created_at_ms: col(row, T, "created_at_ms")?,
        updated_at_ms: col(row, T, "updated_at_ms")?,
        grants: crate::row::opt_json_col(row, T, "grants_json")?
            .unwrap_or_else(|| serde_json::json!({})),
        open_turn: col::<Option<String>>(row, T, "open_turn_id")?.map(TurnId::from),
        compaction: crate::row::opt_json_col(row, T, "compaction_json")?,
        shared: col::<i64>(row, T, "shared")? != 0,
    })
}
