//! Emitting a session's events.
//!
//! Invariant: a state event is published only after the store has given it its `seq`, so every
//! event a live subscriber sees can also be replayed from the store; transport events are
//! published only, carrying the latest state `seq`.

use std::sync::Arc;

use workmate_protocol::{Event, EventKind, Message, SessionId, TenantId, TurnId};
use workmate_store::{IntakeKey, Store};

use crate::Result;
use crate::runtime::SessionRuntime;

/// Emits events for one session (and, inside a turn, one turn).
#[derive(Clone, Debug)]
pub(crate) struct Emitter {
    pub(crate) store: Store,
    pub(crate) tenant: TenantId,
    pub(crate) session: SessionId,
    pub(crate) turn: Option<TurnId>,
    pub(crate) runtime: Arc<SessionRuntime>,
    pub(crate) clock: Arc<dyn workmate_store::Clock>,
}

impl Emitter {
    /// Persists and publishes a state event.
    pub(crate) async fn state(&self, kind: EventKind) -> Result<Event> {
        self.state_with(&[], kind).await
    }

    /// Persists history messages together with a state event (one transaction), then publishes
    /// the event.
    pub(crate) async fn state_with(&self, messages: &[Message], kind: EventKind) -> Result<Event> {
        self.state_marking(messages, kind, &[]).await
    }

    /// [`Emitter::state_with`] that also marks the deliveries `done` in the same transaction.
    pub(crate) async fn state_marking(
        &self,
        messages: &[Message],
        kind: EventKind,
        done: &[IntakeKey],
    ) -> Result<Event> {
        let mut events = self
            .store
            .events()
            .append_with_messages_marking(
                &self.tenant,
                &self.session,
                self.turn.as_ref(),
                messages,
                vec![kind],
                done,
            )
            .await?;
        let event = events.pop().ok_or_else(|| {
            crate::Error::Rejected("the store returned no event for an append".into())
        })?;
        self.runtime.publish(event.clone());
        Ok(event)
    }

    /// Moves a tool call through the ledger and stores its answer with `kind`, in one
    /// transaction; returns whether the ledger moved.
    pub(crate) async fn state_closing_call(
        &self,
        step: &workmate_store::Transition<'_>,
        message: &Message,
        kind: EventKind,
    ) -> Result<bool> {
        let (moved, mut events) = self
            .store
            .events()
            .append_call_answer(
                (&self.tenant, &self.session),
                self.turn.as_ref(),
                step,
                std::slice::from_ref(message),
                vec![kind],
            )
            .await?;
        if let Some(event) = events.pop() {
            self.runtime.publish(event);
        }
        Ok(moved)
    }

    /// Publishes a transport event (a delta).
    pub(crate) fn transport(&self, kind: EventKind) {
        self.runtime.publish(Event {
            tenant_id: self.tenant.clone(),
            session_id: self.session.clone(),
            seq: self.runtime.last_seq(),
            turn_id: self.turn.clone(),
            at_ms: self.clock.now_ms(),
            kind,
        });
    }
}
