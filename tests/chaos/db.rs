//! The shared database as the test reads it, straight through the store (no replica in
//! between): what the driver checks while the load runs, and whether everything is quiet.

use std::future::Future;

use workmate_protocol::{Event, EventKind, Message, SessionId, Surface, TenantId};
use workmate_store::{
    AutomationRun, ConnectOptions, InboxFilter, InboxItem, InboxItemState, RunStatus,
    SessionRecord, Store,
};

/// The tenant of the HTTP API's admin token (sessions and automations made over HTTP).
pub(crate) fn api_tenant() -> TenantId {
    TenantId::from("default")
}

/// The tenant of the fake Slack workspace.
pub(crate) fn slack_tenant() -> TenantId {
    workmate_chat::tenant_of(Surface::Slack, super::slack::TEAM)
}

pub(crate) struct Db {
    handle: tokio::runtime::Handle,
    pub(crate) store: Store,
}

impl Db {
    pub(crate) fn connect(handle: tokio::runtime::Handle, url: &str) -> Self {
        let store = handle
            .block_on(Store::connect(url, ConnectOptions::default()))
            .unwrap();
        Self { handle, store }
    }

    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }

    pub(crate) fn close(&self) {
        self.block_on(self.store.close());
    }

    pub(crate) fn events(&self, tenant: &TenantId, session: &SessionId) -> Vec<Event> {
        self.block_on(self.store.events().list_after(tenant, session, 0, 100_000))
            .unwrap_or_default()
    }

    pub(crate) fn history(&self, tenant: &TenantId, session: &SessionId) -> Vec<Message> {
        self.block_on(self.store.messages().list(tenant, session))
            .unwrap_or_default()
    }

    /// Whether the session's history holds a user message containing `text`.
    pub(crate) fn has_user_message(&self, tenant: &TenantId, session: &str, text: &str) -> bool {
        let history = self.history(tenant, &SessionId::from(session.to_owned()));
        history
            .iter()
            .any(|m| user_text(m).is_some_and(|t| t.contains(text)))
    }

    /// Whether the session had a turn, and its last turn ended.
    pub(crate) fn turn_over(&self, tenant: &TenantId, session: &SessionId) -> bool {
        let events = self.events(tenant, session);
        let Some(last) = events
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EventKind::TurnStart { .. }))
        else {
            return false;
        };
        events
            .iter()
            .any(|e| e.kind.is_terminal() && e.turn_id.is_some() && e.turn_id == last.turn_id)
    }

    /// The session of Slack thread `ts`, once the chat layer made it.
    pub(crate) fn thread_session(&self, ts: &str) -> Option<SessionRecord> {
        let store = &self.store;
        self.block_on(crate::support::thread_session(
            store,
            Surface::Slack,
            super::slack::TEAM,
            super::slack::CHANNEL,
            ts,
        ))
    }

    pub(crate) fn pending(&self, tenant: &TenantId) -> Vec<InboxItem> {
        let filter = InboxFilter {
            state: Some(InboxItemState::Pending),
            ..InboxFilter::default()
        };
        self.block_on(self.store.inbox().list(tenant, &filter, 10_000))
            .unwrap_or_default()
    }

    pub(crate) fn runs(&self, tenant: &TenantId, automation: &str) -> Vec<AutomationRun> {
        let id = workmate_protocol::AutomationId::from(automation.to_owned());
        self.block_on(self.store.automations().runs(tenant, &id, 1_000))
            .unwrap_or_default()
    }

    pub(crate) fn sessions(&self, tenant: &TenantId) -> Vec<SessionRecord> {
        self.block_on(self.store.sessions().list(tenant, 100_000))
            .unwrap_or_default()
    }

    /// Turns open now, in both tenants.
    pub(crate) fn open_turns(&self) -> usize {
        [api_tenant(), slack_tenant()]
            .iter()
            .map(|t| {
                self.sessions(t)
                    .iter()
                    .filter(|s| s.open_turn.is_some())
                    .count()
            })
            .sum()
    }

    /// `Ok` when nothing is left to do anywhere: no delivery waiting or running, no turn open,
    /// no prompt waiting, no automation run going; otherwise what is still going.
    pub(crate) fn quiet(&self) -> Result<(), String> {
        let unfinished = self
            .block_on(self.store.intake().unfinished())
            .unwrap_or(-1);
        if unfinished != 0 {
            return Err(format!("{unfinished} deliveries pending or running"));
        }
        for tenant in [api_tenant(), slack_tenant()] {
            let open: Vec<String> = self
                .sessions(&tenant)
                .into_iter()
                .filter(|s| s.open_turn.is_some())
                .map(|s| s.id.to_string())
                .collect();
            if !open.is_empty() {
                return Err(format!("turns open in {tenant}: {open:?}"));
            }
            let pending = self.pending(&tenant);
            if !pending.is_empty() {
                return Err(format!("{} prompts waiting in {tenant}", pending.len()));
            }
        }
        let tenant = api_tenant();
        let automations = self
            .block_on(self.store.automations().list(&tenant, 10_000))
            .unwrap_or_default();
        for automation in automations {
            let runs = self.runs(&tenant, automation.id.as_str());
            if runs.iter().any(|r| r.status == RunStatus::Running) {
                return Err(format!("automation {} has a run going", automation.id));
            }
        }
        Ok(())
    }
}

/// A user message's content as text (its JSON when it has parts).
pub(crate) fn user_text(message: &Message) -> Option<String> {
    match message {
        Message::User { content, .. } => Some(match serde_json::to_value(content) {
            Ok(serde_json::Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(_) => String::new(),
        }),
        _ => None,
    }
}
