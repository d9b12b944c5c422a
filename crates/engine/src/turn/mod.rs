//! One turn of a session: from its start to exactly one terminal event.
//!
//! Invariants (see the behaviour spec §2): a turn ends with exactly one of `turn_end`, `error` or
//! `interrupted`; the model is called at most `max_iterations` times; every tool call of every
//! assistant message gets exactly one answer, including when the turn is stopped; notices are
//! persisted but never sent to a model; the assistant message holding a tool call is stored before
//! anything about that call is shown or run.

mod approval;
mod authorize;
mod compact;
pub(crate) use compact::Trigger as CompactTrigger;
mod execute;
mod explore;
mod gateway;
pub use gateway::check_gateway_policy;
mod interactive;
mod memory_notice;
mod outcome;
mod persona;
mod plan;
mod preview;
mod recover;
mod repeat;
pub use recover::RESTARTED_NOTICE;
pub(crate) use recover::{Recovery, plan as plan_recovery};
mod run_policy;
mod stream;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use workmate_protocol::{
    Actor, EventKind, Message, NoticeKind, ToolCall, TurnEndStatus, UserContent, UserId,
};
use workmate_store::{IntakeKey, SessionRecord};
use workmate_tools::Root;

use crate::Result;
use crate::deps::Deps;
use crate::emitter::{Emitter, Step, Written};
use stream::Streamed;

pub(crate) use interactive::ask_user_spec;

/// Metadata of the tools the engine itself provides.
pub(crate) fn engine_tool_metadata(tool: &str) -> Option<workmate_tools::ToolMetadata> {
    (tool == explore::EXPLORE).then(explore::explore_metadata)
}

/// The reason given for calls answered because the user stopped the turn.
pub(crate) const INTERRUPTED_BY_USER: &str = "interrupted by user";

/// A message a chat user can act on, for the errors that have one (spec §6.6); `None` when the
/// provider's own text is the best there is.
fn friendly_error(model: &str, error: &workmate_providers::ProviderError) -> Option<String> {
    use workmate_providers::ProviderErrorKind as Kind;
    if let Some(text) = workmate_providers::friendly_error(model, &error.message) {
        return Some(text);
    }
    match error.kind {
        Kind::ContextOverflow => Some(format!(
            "This conversation no longer fits in what {model} can read at once. Start a new thread, \
             or switch this one to a model with a larger context window."
        )),
        // A 401 from the gateway: the key is missing or wrong (other access errors keep their text,
        // which names what is wrong, e.g. an unconfigured provider).
        Kind::Access if error.message.contains("HTTP 401") => Some(format!(
            "The model gateway did not accept workmate's key for {model}: it is missing or wrong. \
             An admin needs to set api_key or api_key_env for this provider."
        )),
        Kind::RateLimited | Kind::Unavailable => Some(format!(
            "{model} is overloaded or unavailable right now. Try again in a minute, or switch this \
             thread to another model."
        )),
        _ => None,
    }
}

/// Why a turn runs.
#[derive(Debug)]
pub(crate) enum TurnStart {
    /// A person wrote a message.
    Message {
        author: Actor,
        text: String,
        content: UserContent,
        /// The intake rows this message came from, marked done when it is stored.
        deliveries: Vec<IntakeKey>,
    },
    /// The last turn failed; run the model again on the same history.
    Retry,
    /// The service restarted (or an answer arrived for an idle session) with tool calls pending.
    Resume(Vec<ToolCall>),
    /// A crash cut this turn short: it goes on (under its own turn id) as the plan says.
    Recover(Recovery),
    /// Someone asked for the conversation to be compacted now.
    Compact,
}

/// A running turn.
#[derive(Debug)]
pub(crate) struct Turn {
    pub(crate) deps: Arc<Deps>,
    /// The tools of this turn: the server's, and what its sources add for its scope (resolved
    /// when it starts).
    pub(crate) tools: Arc<workmate_tools::ToolRegistry>,
    pub(crate) emit: Emitter,
    pub(crate) session: SessionRecord,
    pub(crate) history: Vec<Message>,
    pub(crate) cancel: CancellationToken,
    pub(crate) roots: Vec<Root>,
    /// Who the calls being made act for: the author of the latest message of the turn (its
    /// first, or a steering message), else the session owner.
    pub(crate) requester: UserId,
    /// The tenant's permission policy.
    pub(crate) permissions: crate::permissions::PermissionEngine,
    /// Standing rules that allowed calls of this turn, by call, for `tool_finished`.
    pub(crate) standing_rules_used:
        std::collections::HashMap<workmate_protocol::ToolCallId, String>,
    /// The tenant's gateway policy (fallbacks, retries, budgets).
    pub(crate) gateway: gateway::GatewayPolicy,
    /// The model answering the current call (the session's, or a fallback).
    pub(crate) answering_model: String,
    /// Whether this turn is an exploration inside another turn (no questions, no nesting).
    pub(crate) is_child: bool,
    /// Calls this turn's model proposed and stored: the ledger holds them as `proposed`, so
    /// deciding them needs no read.
    pub(crate) fresh_calls: std::collections::HashSet<workmate_protocol::ToolCallId>,
    iterations: u32,
    truncated: bool,
    resuming: bool,
    /// Whether this turn goes on after a crash cut it (a failure then ends it with the restart
    /// notice).
    recovering: bool,
    /// Whether the session's workspace folders exist (made before the turn's first call).
    workspace_ready: bool,
    /// Who answers: the session's persona, resolved when the turn starts.
    pub(crate) persona: workmate_personas::Persona,
    /// The system message of the turn's model calls (instructions and skill catalog).
    context: String,
}

impl Turn {
    pub(crate) fn new(
        deps: Arc<Deps>,
        emit: Emitter,
        session: SessionRecord,
        history: Vec<Message>,
        cancel: CancellationToken,
        roots: Vec<Root>,
    ) -> Self {
        let requester = session.owner.clone();
        Self {
            tools: Arc::clone(&deps.tools),
            deps,
            emit,
            session,
            history,
            cancel,
            roots,
            requester,
            permissions: crate::permissions::PermissionEngine::default(),
            standing_rules_used: std::collections::HashMap::new(),
            gateway: gateway::GatewayPolicy::default(),
            answering_model: String::new(),
            is_child: false,
            fresh_calls: std::collections::HashSet::new(),
            iterations: 0,
            truncated: false,
            resuming: false,
            recovering: false,
            workspace_ready: false,
            persona: workmate_personas::default_persona(),
            context: String::new(),
        }
    }

    /// Runs the turn to its terminal event.
    pub(crate) async fn run(&mut self, start: TurnStart) -> Result<()> {
        self.permissions = self.tenant_permissions().await?;
        self.gateway = self.load_gateway_policy().await?;
        self.load_persona().await?;
        if let TurnStart::Message { author, .. } = &start {
            self.requester = author.user_id.clone();
        }
        self.load_tools().await;
        match start {
            TurnStart::Message {
                author,
                text,
                content,
                deliveries,
            } => {
                workmate_faults::kill_point("turn.message_unstored");
                let message = Message::User {
                    content,
                    ts: self.now(),
                    author: Some(author.clone()),
                    display: None,
                };
                let start = EventKind::TurnStart {
                    input: text,
                    author: Some(author),
                    display: None,
                };
                self.append_marking_with(message, Some(start), deliveries)?;
            }
            TurnStart::Retry => {
                self.emit.state(EventKind::TurnStart {
                    input: String::new(),
                    author: None,
                    display: None,
                })?;
            }
            TurnStart::Resume(pending) => {
                self.emit.state(EventKind::TurnStart {
                    input: "(resumed)".into(),
                    author: None,
                    display: None,
                })?;
                self.resume_calls(pending).await?;
                if self.cancel.is_cancelled() {
                    return self.interrupted();
                }
            }
            TurnStart::Recover(recovery) => return self.recover(recovery).await,
            TurnStart::Compact => return self.compact_asked().await,
        }
        self.run_loop().await
    }

    /// A turn that only compacts the conversation: `turn_start`, the compaction, `turn_end`.
    async fn compact_asked(&mut self) -> Result<()> {
        self.emit.state(EventKind::TurnStart {
            input: "(compact)".into(),
            author: None,
            display: None,
        })?;
        self.compact(CompactTrigger::Asked).await?;
        if self.cancel.is_cancelled() {
            return self.interrupted();
        }
        self.emit.state(EventKind::TurnEnd {
            status: TurnEndStatus::Completed,
            iterations: 0,
        })?;
        Ok(())
    }

    /// Decides and runs (or parks again) calls a previous process left without a result.
    async fn resume_calls(&mut self, pending: Vec<ToolCall>) -> Result<()> {
        self.resuming = true;
        self.handle_calls(pending).await?;
        self.resuming = false;
        self.emit.state(EventKind::IterationEnd { iteration: 0 })?;
        Ok(())
    }

    async fn run_loop(&mut self) -> Result<()> {
        loop {
            if self.iterations >= self.deps.config.max_iterations {
                let iterations = self.iterations;
                self.emit.state(EventKind::TurnEnd {
                    status: TurnEndStatus::MaxIterationsExceeded,
                    iterations,
                })?;
                return Ok(());
            }
            self.iterations += 1;
            let reply = match self.stream_compacted().await? {
                Streamed::Completed(reply) => reply,
                Streamed::Failed { error, partial } => {
                    self.keep_partial(partial)?;
                    return self.failed(&error);
                }
                // A replica that drains leaves the turn open, to be taken up where it goes on:
                // the answer is asked for again there (see `recover`), rather than a turn nobody
                // stopped ending with half an answer.
                Streamed::Interrupted { .. } if self.deps.shutdown.is_cancelled() => {
                    return Err(crate::Error::ShuttingDown);
                }
                Streamed::Interrupted { partial } => {
                    self.keep_partial(partial)?;
                    return self.interrupted();
                }
            };
            let calls = self.store_reply(*reply)?;
            if calls.is_empty() {
                if self.inject_steering()? {
                    continue;
                }
                workmate_faults::kill_point("turn.answered");
                let iterations = self.iterations;
                self.emit.state(EventKind::TurnEnd {
                    status: TurnEndStatus::Completed,
                    iterations,
                })?;
                return Ok(());
            }
            self.handle_calls(calls).await?;
            self.emit.state(EventKind::IterationEnd {
                iteration: self.iterations,
            })?;
            if self.cancel.is_cancelled() && self.deps.shutdown.is_cancelled() {
                return Err(crate::Error::ShuttingDown);
            }
            if self.cancel.is_cancelled() {
                return self.interrupted();
            }
            self.inject_steering()?;
        }
    }

    /// Appends queued steering messages as user messages; whether there were any. The calls
    /// that follow act for the author of the last one.
    fn inject_steering(&mut self) -> Result<bool> {
        let steering = self.emit.runtime.take_steering();
        let any = !steering.is_empty();
        for message in steering {
            self.requester = message.author.user_id.clone();
            let user = Message::User {
                content: UserContent::Text(message.text),
                ts: self.now(),
                author: Some(message.author),
                display: None,
            };
            self.append_marking_with(user, None, message.delivery.into_iter().collect())?;
        }
        Ok(any)
    }

    /// Ends the turn with `interrupted`.
    fn interrupted(&mut self) -> Result<()> {
        let notice = Message::Notice {
            kind: NoticeKind::Interrupted,
            text: None,
            ts: self.now(),
        };
        let iterations = self.iterations;
        self.append_with(
            notice,
            EventKind::Interrupted {
                iterations,
                by: None,
            },
        )
    }

    /// Ends the turn with `error`.
    fn failed(&mut self, error: &workmate_providers::ProviderError) -> Result<()> {
        let model = if self.answering_model.is_empty() {
            &self.session.model
        } else {
            &self.answering_model
        };
        let friendly = friendly_error(model, error);
        let text = friendly.clone().unwrap_or_else(|| error.message.clone());
        if self.recovering {
            return self.ended_by_restart(Some(&text));
        }
        let raw = friendly.map(|_| error.message.clone());
        self.end_with_error(text, error.type_name(), raw)
    }

    /// Ends the turn with `error` and an error notice saying `text` (which `retry` accepts).
    pub(crate) fn end_with_error(
        &mut self,
        text: String,
        error_type: &str,
        raw: Option<String>,
    ) -> Result<()> {
        let notice = Message::Notice {
            kind: NoticeKind::Error,
            text: Some(text.clone()),
            ts: self.now(),
        };
        let event = EventKind::Error {
            error: text,
            error_type: error_type.to_owned(),
            raw,
        };
        self.append_with(notice, event)
    }

    /// Queues a ledger move of a call (stored in order with the turn's other steps).
    pub(crate) fn ledger_move(
        &self,
        call: &workmate_protocol::ToolCallId,
        to: workmate_store::ToolCallState,
        result: Option<serde_json::Value>,
    ) -> Result<Written> {
        self.emit.write(Step {
            moves: vec![workmate_store::LedgerMove {
                call: call.clone(),
                to,
                result,
            }],
            ..Step::default()
        })
    }

    /// An audit record of this turn about `call`.
    pub(crate) fn audit_record(
        &self,
        call: &ToolCall,
        stage: &str,
        status: Option<&str>,
        detail: serde_json::Value,
    ) -> workmate_store::NewAuditRecord {
        workmate_store::NewAuditRecord {
            session_id: Some(self.emit.session.clone()),
            actor: Some(self.requester.to_string()),
            stage: stage.into(),
            tool: Some(call.name.clone()),
            status: status.map(str::to_owned),
            detail,
        }
    }

    /// Queues an audit record of this turn about `call`.
    pub(crate) fn audit(
        &self,
        call: &ToolCall,
        stage: &str,
        status: Option<&str>,
        detail: serde_json::Value,
    ) -> Result<()> {
        self.emit.write(Step {
            audit: vec![self.audit_record(call, stage, status, detail)],
            ..Step::default()
        })?;
        Ok(())
    }

    /// Appends a message and emits the state event that announces it, in one step.
    pub(crate) fn append_with(&mut self, message: Message, kind: EventKind) -> Result<()> {
        self.append_marking_with(message, Some(kind), Vec::new())
    }

    /// Appends a message, with the state event that announces it (if any), and marks the
    /// deliveries the message came from `done`, in one step.
    fn append_marking_with(
        &mut self,
        message: Message,
        kind: Option<EventKind>,
        done: Vec<IntakeKey>,
    ) -> Result<()> {
        let mut step = Step::with_messages(vec![message.clone()], kind);
        step.done = done;
        self.emit.write(step)?;
        self.history.push(message);
        Ok(())
    }

    /// Appends a message to the stored history and the in-memory copy.
    pub(crate) fn append(&mut self, message: Message) -> Result<()> {
        self.append_marking_with(message, None, Vec::new())
    }

    /// Creates the session's writable folders, once per turn, before anything about a call is
    /// decided (path checks resolve paths inside them).
    pub(crate) fn ensure_workspace(&mut self) -> Result<()> {
        if self.workspace_ready {
            return Ok(());
        }
        for root in self.roots.iter().filter(|r| r.writable) {
            std::fs::create_dir_all(&root.path).map_err(|e| {
                crate::Error::Rejected(format!(
                    "cannot prepare the session workspace {}: {e}",
                    root.path.display()
                ))
            })?;
        }
        self.workspace_ready = true;
        Ok(())
    }

    pub(crate) fn now(&self) -> i64 {
        self.deps.clock.now_ms()
    }

    pub(crate) fn resuming(&self) -> bool {
        self.resuming
    }

    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }
}
