//! The persona a turn answers as.
//!
//! Invariants: every model call of a turn starts with one system message: the persona's
//! instructions and, when the session can load skills, the skill catalog (names and
//! descriptions only). It is built once per turn, so a skill saved or a persona switched applies
//! from the next turn; it is never stored in the history. The model is offered only the tools of
//! the persona's groups (the engine's own tools always).

use workmate_personas::{Personas, Skills, catalog, channel_key};
use workmate_protocol::Message;

use super::Turn;
use crate::Result;

/// What an exploration is told: it has no persona of its own.
const EXPLORER_INSTRUCTIONS: &str = "You are an explorer working for another assistant. \
Investigate the task you are given with the read-only tools you have, then answer with your \
findings: concrete, complete and self-contained, since whoever asked sees nothing else.";

impl Turn {
    /// Resolves the session's persona and the skills it sees, for the turn's model calls.
    pub(crate) async fn load_persona(&mut self) -> Result<()> {
        if self.is_child {
            self.context = EXPLORER_INSTRUCTIONS.to_owned();
            return Ok(());
        }
        let tenant = &self.emit.tenant;
        let store = &self.deps.store;
        let persona = Personas::new(store.clone())
            .resolve(tenant, &self.session.persona)
            .await?;
        let channel = channel_key(self.session.key.surface, &self.session.key.chat_id);
        let skills = Skills::new(store.clone())
            .visible(tenant, &persona, &channel)
            .await?;
        let mut context = persona.instructions.clone();
        if let Some(catalog) = catalog(&skills) {
            context.push_str("\n\n");
            context.push_str(&catalog);
        }
        self.context = context;
        self.persona = persona;
        Ok(())
    }

    /// The system message every model call of this turn starts with.
    pub(crate) fn system_message(&self) -> Option<Message> {
        (!self.context.is_empty()).then(|| Message::System {
            content: self.context.clone(),
        })
    }

    /// Adds what the hub's tool sources give this turn's tenant, requester and persona (an
    /// exploration keeps the read-only set its parent gave it).
    pub(crate) async fn load_tools(&mut self) {
        if self.is_child {
            return;
        }
        let scope = workmate_tools::ToolScope {
            tenant_id: &self.emit.tenant,
            session_id: &self.emit.session,
            user_id: &self.requester,
            persona: &self.persona.id,
            connectors: &self.persona.connectors,
            mcp_servers: self.persona.mcp.as_deref(),
        };
        self.tools = self.deps.sources.registry(&self.deps.tools, scope).await;
    }

    /// Whether the persona may be offered `tool`.
    pub(crate) fn persona_offers(&self, tool: &str) -> bool {
        self.tools
            .metadata(tool)
            .is_none_or(|m| self.persona.tools.allows(&m.category))
    }
}
