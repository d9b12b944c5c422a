//! Switching a session's persona (`set_persona`).
//!
//! Invariants: only an enabled persona (or a built-in) can be switched to, and never while a turn
//! runs; the persona, the model it names, the notice and the event announcing them are stored in
//! one step. A persona's model that workmate cannot reach is not applied: the session keeps its
//! model and the notice says so.

use workmate_personas::Personas;
use workmate_protocol::{EventKind, Message, NoticeKind, SessionId, TenantId};
use workmate_store::SessionChange;

use super::SessionHub;
use super::commands::Accepted;
use crate::emitter::Step;
use crate::history::has_conversation;
use crate::{Error, Result};

impl SessionHub {
    pub(super) async fn switch_persona(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        persona: String,
    ) -> Result<Accepted> {
        let id = persona.trim();
        if id.is_empty() {
            return Err(Error::Rejected(
                "name a persona, e.g. release-manager".into(),
            ));
        }
        let persona = Personas::new(self.inner.deps.store.clone())
            .usable(tenant, id)
            .await?;
        let runtime = self.runtime(tenant, session).await?;
        // Claiming the turn slot keeps a turn from starting while the persona changes.
        let _slot = runtime
            .try_claim()
            .ok_or_else(|| Error::Busy(session.clone()))?;
        let result = self.apply_persona(tenant, session, &persona).await;
        runtime.release();
        result
    }

    async fn apply_persona(
        &self,
        tenant: &TenantId,
        session: &SessionId,
        persona: &workmate_personas::Persona,
    ) -> Result<Accepted> {
        let emit = self.emitter(tenant, session).await?;
        let record = emit.runtime.record();
        if record.persona == persona.id {
            return Ok(Accepted::Updated);
        }
        let mut text = format!("Persona switched to {} ({})", persona.name, persona.id);
        let model = match &persona.model {
            Some(model) if *model != record.model => {
                match self.inner.deps.providers.resolve(model) {
                    Ok(_) => {
                        text.push_str(&format!(", answering with {model}"));
                        Some(model.clone())
                    }
                    Err(error) => {
                        text.push_str(&format!(
                            "; it asks for {model}, which is not available here ({}), so {} stays",
                            error.message, record.model
                        ));
                        None
                    }
                }
            }
            _ => None,
        };
        let history = self.read_history(&emit.runtime, tenant, session).await?;
        let mut messages = Vec::new();
        if has_conversation(&history) {
            messages.push(Message::Notice {
                kind: NoticeKind::PersonaSwitch,
                text: Some(text.clone()),
                ts: self.inner.deps.clock.now_ms(),
            });
        }
        let step = Step {
            messages,
            events: vec![EventKind::PersonaSwitched {
                from: record.persona,
                to: persona.id.clone(),
                model: model.clone(),
                text,
            }],
            change: SessionChange {
                persona: Some(persona.id.clone()),
                model,
                ..SessionChange::default()
            },
            ..Step::default()
        };
        emit.write(step)?.durable().await?;
        Ok(Accepted::Updated)
    }
}
