//! The tool-call execution ledger.
//!
//! Invariant: a call moves only forward through
//! `proposed → awaiting_approval → approved | denied → started → finished | interrupted`
//! (any unfinished state may become `interrupted`). Each move is one conditional update on the
//! expected previous states, so a replayed or racing transition changes nothing and reports so.
//! A call found `started` after a restart is never re-run blindly: its outcome is unknown.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use workmate_protocol::{SessionId, TenantId, ToolCall, ToolCallId, TurnId};

use crate::row::{col, enum_col, json_col, opt_json_col, to_json, to_word};
use crate::{Error, Result, Store};

/// Where a tool call is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallState {
    /// The model asked for it.
    Proposed,
    /// A person has been asked.
    AwaitingApproval,
    /// Cleared to run.
    Approved,
    /// Refused; it will not run.
    Denied,
    /// Running (or was running when the process stopped).
    Started,
    /// Ran to an outcome.
    Finished,
    /// Stopped before an outcome was known.
    Interrupted,
}

impl ToolCallState {
    /// The states a call may move to `self` from.
    fn predecessors(self) -> &'static [ToolCallState] {
        use ToolCallState::*;
        match self {
            Proposed => &[],
            AwaitingApproval => &[Proposed],
            Approved | Denied => &[Proposed, AwaitingApproval],
            Started => &[Approved],
            Finished => &[Started],
            Interrupted => &[Proposed, AwaitingApproval, Approved, Started],
        }
    }

    /// Whether the call still lacks an outcome.
    pub fn is_open(self) -> bool {
        !matches!(self, Self::Denied | Self::Finished | Self::Interrupted)
    }
}

/// A ledger row.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallRecord {
    /// The session the call belongs to.
    pub session_id: SessionId,
    /// The turn that proposed it.
    pub turn_id: Option<TurnId>,
    /// The call as the model made it.
    pub call: ToolCall,
    /// Where it is in its life.
    pub state: ToolCallState,
    /// Its result, once it has one.
    pub result: Option<serde_json::Value>,
    /// When it was proposed.
    pub proposed_at_ms: i64,
    /// When its state last changed.
    pub updated_at_ms: i64,
}

/// The tool-call ledger.
#[derive(Debug)]
pub struct ToolCallRepo<'s> {
    store: &'s Store,
}

macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT session_id, turn_id, tool_call_id, name, arguments_json, state, result_json, \
             proposed_at_ms, updated_at_ms FROM tool_calls WHERE ",
            $where
        )
    };
}

impl<'s> ToolCallRepo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a proposed call. Recording the same call id again returns the existing row
    /// unchanged, so a resumed turn never forgets how far a call got.
    pub async fn record_proposed(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        turn: Option<&TurnId>,
        call: &ToolCall,
    ) -> Result<ToolCallRecord> {
        let now = self.store.clock_ms();
        self.store
            .dialect
            .insert_ignoring_duplicates(
                "INSERT INTO tool_calls (tenant_id, session_id, tool_call_id, turn_id, name, arguments_json, state, result_json, proposed_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, 'proposed', NULL, ?, ?)",
                "tool_call_id",
            )
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .bind(call.id.as_str().to_owned())
            .bind(turn.map(|t| t.as_str().to_owned()))
            .bind(call.name.clone())
            .bind(to_json(&call.arguments)?)
            .bind(now)
            .bind(now)
            .execute(&self.store.pool)
            .await?;
        self.get(tenant, session, &call.id)
            .await?
            .ok_or_else(|| Error::NotFound {
                what: format!("tool call {} right after recording it", call.id),
            })
    }

    /// Moves a call to `to` if it is in one of the states allowed to precede it. Returns whether
    /// it moved; `false` means another writer moved it first (or it never existed).
    pub async fn transition(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        call: &ToolCallId,
        to: ToolCallState,
        result: Option<&serde_json::Value>,
    ) -> Result<bool> {
        let step = Transition { call, to, result };
        transition_on(&self.store.pool, self.store, (tenant, session), &step).await
    }

    /// One call, if the session has it.
    pub async fn get(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        call: &ToolCallId,
    ) -> Result<Option<ToolCallRecord>> {
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

    /// A session's calls that have no outcome yet, oldest first: what a restart must settle.
    pub async fn open_calls(
        &self,
        tenant: &TenantId,
        session: &SessionId,
    ) -> Result<Vec<ToolCallRecord>> {
        let rows = self
            .store
            .dialect
            .query(select!("tenant_id = ? AND session_id = ? AND state NOT IN ('denied', 'finished', 'interrupted') ORDER BY proposed_at_ms, tool_call_id"))
            .bind(tenant.as_str().to_owned())
            .bind(session.as_str().to_owned())
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }
}

impl ToolCallRepo<'_> {
    /// Every session, of any tenant, with a call that has no outcome yet: what the service must
    /// resume when it starts. The one cross-tenant read, for that start-up sweep only.
    pub async fn sessions_with_open_calls(&self, limit: u32) -> Result<Vec<(TenantId, SessionId)>> {
        let rows = self
            .store
            .dialect
            .query("SELECT DISTINCT tenant_id, session_id FROM tool_calls WHERE state NOT IN ('denied', 'finished', 'interrupted') ORDER BY tenant_id, session_id LIMIT ?")
            .bind(i64::from(limit))
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    TenantId::from(col::<String>(row, "tool_calls", "tenant_id")?),
                    SessionId::from(col::<String>(row, "tool_calls", "session_id")?),
                ))
            })
            .collect()
    }
}

/// One move of a call through the ledger, with the outcome it records (if any).
#[derive(Clone, Copy, Debug)]
pub struct Transition<'a> {
    /// The call.
    pub call: &'a ToolCallId,
    /// Where it moves.
    pub to: ToolCallState,
    /// The outcome to keep with it.
    pub result: Option<&'a serde_json::Value>,
}

/// Applies `step` through `executor` (the pool, or a transaction other writes share).
pub(crate) async fn transition_on<'c, E>(
    executor: E,
    store: &Store,
    (tenant, session): (&TenantId, &SessionId),
    step: &Transition<'_>,
) -> Result<bool>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let from = step.to.predecessors();
    let Some(first) = from.first() else {
        return Err(Error::Invalid(format!(
            "no call can move back to {:?}",
            step.to
        )));
    };
    let mut query = store
        .dialect
        .query("UPDATE tool_calls SET state = ?, result_json = COALESCE(?, result_json), updated_at_ms = ? WHERE tenant_id = ? AND session_id = ? AND tool_call_id = ? AND state IN (?, ?, ?, ?)")
        .bind(to_word(&step.to)?)
        .bind(step.result.map(to_json).transpose()?)
        .bind(store.clock_ms())
        .bind(tenant.as_str().to_owned())
        .bind(session.as_str().to_owned())
        .bind(step.call.as_str().to_owned());
    // Pad the fixed four-slot IN list by repeating the first allowed state.
    for state in (0..4).map(|i| from.get(i).unwrap_or(first)) {
        query = query.bind(to_word(state)?);
    }
    Ok(query.execute(executor).await?.rows_affected() == 1)
}

fn from_row(row: &AnyRow) -> Result<ToolCallRecord> {
    const T: &str = "tool_calls";
    Ok(ToolCallRecord {
        session_id: SessionId::from(col::<String>(row, T, "session_id")?),
        turn_id: col::<Option<String>>(row, T, "turn_id")?.map(TurnId::from),
        call: ToolCall {
            id: ToolCallId::from(col::<String>(row, T, "tool_call_id")?),
            name: col(row, T, "name")?,
            arguments: json_col(row, T, "arguments_json")?,
        },
        state: enum_col(row, T, "state")?,
        result: opt_json_col(row, T, "result_json")?,
        proposed_at_ms: col(row, T, "proposed_at_ms")?,
        updated_at_ms: col(row, T, "updated_at_ms")?,
    })
}
