//! Emitting a session's events: the one path every write of a turn step takes.
//!
//! Invariants: a step (its history messages, state events, ledger moves, deliveries marked done,
//! audit records and usage) is stored whole, in one transaction, by the store's group-commit
//! writer; the session's runtime numbers the step and publishes its state events in `seq` order
//! at the moment it is queued, so callers go on while it is written and wait for durability only
//! where an invariant needs it ([`Written::durable`]); a subscriber that joins later and replays
//! from the store first waits for the queued steps (see `SessionHub::subscribe`). Transport
//! events are published only, carrying the latest state `seq`.

use std::sync::Arc;

use tokio::sync::oneshot;
use workmate_protocol::{Event, EventKind, Message, SessionId, TenantId, ToolCall, TurnId};
use workmate_store::{
    IntakeKey, LedgerMove, NewAuditRecord, NewUsage, SessionChange, StepError, StepWrite,
    StepWritten, Store,
};

use crate::runtime::SessionRuntime;
use crate::{Error, Result};

/// What one step writes; [`Emitter::write`] numbers and queues it.
#[derive(Debug, Default)]
pub(crate) struct Step {
    pub(crate) messages: Vec<Message>,
    pub(crate) events: Vec<EventKind>,
    pub(crate) proposed: Vec<ToolCall>,
    pub(crate) moves: Vec<LedgerMove>,
    pub(crate) done: Vec<IntakeKey>,
    pub(crate) audit: Vec<NewAuditRecord>,
    pub(crate) usage: Vec<NewUsage>,
    pub(crate) change: SessionChange,
}

impl Step {
    /// A step storing `messages` with the state event `kind` that announces them.
    pub(crate) fn with_messages(messages: Vec<Message>, kind: Option<EventKind>) -> Self {
        Self {
            messages,
            events: kind.into_iter().collect(),
            ..Self::default()
        }
    }
}

/// A queued step: its published events, and the store's answer to wait for when it matters.
#[derive(Debug)]
pub(crate) struct Written {
    pub(crate) events: Vec<Event>,
    answer: oneshot::Receiver<std::result::Result<StepWritten, StepError>>,
}

impl Written {
    /// Waits until the step is stored.
    pub(crate) async fn durable(self) -> Result<StepWritten> {
        match self.answer.await {
            Ok(Ok(written)) => Ok(written),
            Ok(Err(error)) => Err(Error::Log(error)),
            Err(_) => Err(Error::Log(StepError::Stopped)),
        }
    }
}

/// Emits events for one session (and, inside a turn, one turn).
#[derive(Clone, Debug)]
pub(crate) struct Emitter {
    pub(crate) store: Store,
    pub(crate) tenant: TenantId,
    pub(crate) session: SessionId,
    pub(crate) turn: Option<TurnId>,
    pub(crate) runtime: Arc<SessionRuntime>,
    pub(crate) clock: Arc<dyn workmate_store::Clock>,
    pub(crate) observer: Arc<crate::observe::ObserverSlot>,
}

impl Emitter {
    /// Numbers a step, queues it for the store and publishes its state events.
    pub(crate) fn write(&self, step: Step) -> Result<Written> {
        if let Some(transport) = step.events.iter().find(|k| !k.is_state()) {
            return Err(Error::Rejected(format!(
                "{} is a transport event: it is streamed, never stored",
                transport.name()
            )));
        }
        let (tx, answer) = oneshot::channel();
        let mut log = self.runtime.log();
        if let Some(failure) = self.runtime.failure() {
            return Err(Error::Log(failure));
        }
        let base = log.counters;
        let at_ms = self.clock.now_ms();
        let events: Vec<Event> = (base.last_seq + 1..)
            .zip(step.events)
            .map(|(seq, kind)| Event {
                tenant_id: self.tenant.clone(),
                session_id: self.session.clone(),
                seq,
                turn_id: self.turn.clone(),
                at_ms,
                kind,
            })
            .collect();
        if !step.change.is_empty() {
            let change = step.change.clone();
            self.runtime
                .update_record(|record| apply_change(record, change));
        }
        if self.turn.is_none() && !step.messages.is_empty() {
            // Only a turn keeps the cached history in step with what it writes.
            self.runtime.forget_history();
        }
        let write = StepWrite {
            tenant: self.tenant.clone(),
            session: self.session.clone(),
            turn: self.turn.clone(),
            lineage: self.runtime.lineage(),
            lease: self.runtime.lease_token(),
            base,
            messages: step.messages,
            events: events.clone(),
            proposed: step.proposed,
            moves: step.moves,
            done: step.done,
            audit: step.audit,
            usage: step.usage,
            change: step.change,
        };
        log.counters = write.end();
        log.queued += 1;
        let number = log.queued;
        let runtime = Arc::downgrade(&self.runtime);
        self.store.writer().submit(
            write,
            Box::new(move |outcome| {
                if let Some(runtime) = runtime.upgrade() {
                    runtime.answered(number, outcome.as_ref().err().cloned());
                }
                let _ = tx.send(outcome);
            }),
        );
        let observer = self.observer.get();
        for event in &events {
            if let Some(observer) = observer {
                observer.event(event);
            }
            self.runtime.publish(event.clone());
        }
        drop(log);
        Ok(Written { events, answer })
    }

    /// Waits until every step of the session queued so far is stored.
    pub(crate) async fn flushed(&self) -> Result<()> {
        self.runtime.flushed().await.map_err(Error::Log)
    }

    /// Queues and publishes a state event.
    pub(crate) fn state(&self, kind: EventKind) -> Result<Event> {
        self.state_with(Vec::new(), kind)
    }

    /// Queues history messages together with the state event that announces them (one step),
    /// and publishes the event.
    pub(crate) fn state_with(&self, messages: Vec<Message>, kind: EventKind) -> Result<Event> {
        let mut written = self.write(Step::with_messages(messages, Some(kind)))?;
        written
            .events
            .pop()
            .ok_or_else(|| Error::Rejected("a step with an event published none".into()))
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

/// The session row once `change` is stored.
fn apply_change(record: &mut workmate_store::SessionRecord, change: SessionChange) {
    if let Some(mode) = change.mode {
        record.mode = mode;
    }
    if let Some(model) = change.model {
        record.model = model;
    }
    if let Some(persona) = change.persona {
        record.persona = persona;
    }
    if let Some(grants) = change.grants {
        record.grants = grants;
    }
    if let Some(unattended) = change.unattended {
        record.unattended = unattended;
    }
    if let Some(compaction) = change.compaction {
        record.compaction = Some(compaction);
    }
}
