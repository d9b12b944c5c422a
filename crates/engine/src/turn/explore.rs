//! `explore`: a read-only child turn that investigates a question and reports back.
//!
//! Invariants: the child sees only tools that declare themselves read-only (so it never asks
//! anyone anything and never changes anything), makes at most ten model calls, cannot explore in
//! turn, and stops when the parent is stopped. It runs as a session of its own (surface `system`,
//! keyed by the parent's tool call), so its work is stored and audited like any other, and a
//! resumed parent finds a finished exploration instead of repeating it.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use workmate_protocol::{
    Actor, Message, NoticeKind, PermissionMode, Surface, ToolCall, ToolSpec, TurnId, UserContent,
};
use workmate_store::{NewSession, SessionKey};
use workmate_tools::ToolMetadata;

use super::outcome::Outcome;
use super::{Turn, TurnStart};
use crate::deps::Deps;
use crate::emitter::Emitter;
use crate::inbox_wait::InboxWaiters;
use crate::runtime::SessionRuntime;
use crate::{EngineConfig, Result};

/// The tool's name.
pub(crate) const EXPLORE: &str = "explore";

/// Model calls an exploration may make.
const EXPLORE_MAX_ITERATIONS: u32 = 10;

/// `explore` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExploreArgs {
    /// What to find out, stated fully: the explorer sees nothing of this conversation.
    task: String,
}

/// The spec offered to models.
pub(crate) fn explore_spec() -> ToolSpec {
    ToolSpec {
        name: EXPLORE.into(),
        description: "Hand a self-contained research question to a read-only helper that can read files, search and fetch pages, and get its findings back. Use it for broad investigations that would clutter this conversation.".into(),
        parameters: serde_json::to_value(schemars::schema_for!(ExploreArgs)).unwrap_or_default(),
    }
}

/// What `explore` declares about itself: it only reads.
pub(crate) fn explore_metadata() -> ToolMetadata {
    ToolMetadata::read("explore")
}

impl Turn {
    /// Runs the exploration and returns its findings as the call's outcome.
    pub(crate) async fn explore(&self, call: &ToolCall) -> Result<Outcome> {
        let args = match serde_json::from_value::<ExploreArgs>(call.arguments.clone()) {
            Ok(args) if !args.task.trim().is_empty() => args,
            _ => {
                return Ok(Outcome::failed(
                    "explore needs {\"task\": \"<a self-contained question>\"}",
                ));
            }
        };
        let tenant = &self.emit.tenant;
        let new = NewSession {
            key: SessionKey {
                surface: Surface::System,
                chat_id: format!("explore:{}", self.emit.session),
                thread_id: call.id.to_string(),
            },
            owner: self.requester.clone(),
            title: Some(args.task.chars().take(60).collect()),
            persona: "explorer".into(),
            model: self.session.model.clone(),
            mode: PermissionMode::Discuss,
            unattended: true,
        };
        let (record, created) = self
            .deps
            .store
            .sessions()
            .get_or_create(tenant, &new)
            .await?;
        let mut history = self.deps.store.messages().list(tenant, &record.id).await?;
        if created || findings(&history).is_none() {
            let emit = Emitter {
                store: self.deps.store.clone(),
                tenant: tenant.clone(),
                session: record.id.clone(),
                turn: Some(TurnId::new()),
                // An exploration's own events stay in this process: nobody watches them live.
                runtime: Arc::new(SessionRuntime::new(record.clone(), None)),
                clock: Arc::clone(&self.deps.clock),
                observer: Arc::clone(&self.deps.observer),
            };
            let mut child = Turn::new(
                self.child_deps(),
                emit,
                record.clone(),
                history,
                self.cancel.child_token(),
                self.roots.clone(),
            );
            child.is_child = true;
            let start = TurnStart::Message {
                author: Actor::new(self.requester.clone()),
                content: UserContent::Text(args.task.clone()),
                text: args.task,
                deliveries: Vec::new(),
            };
            Box::pin(child.run(start)).await?;
            history = child.history;
        }
        Ok(match findings(&history) {
            Some(Ok(text)) => {
                Outcome::ran(serde_json::json!({ "findings": text, "explorer_session": record.id }))
            }
            Some(Err(error)) => Outcome::failed(&format!("the exploration failed: {error}")),
            None => Outcome::failed("the exploration ended without findings"),
        })
    }

    /// The child's collaborators: the same store, models and clock; read-only tools; ten calls.
    fn child_deps(&self) -> Arc<Deps> {
        let parent = &self.deps;
        Arc::new(Deps {
            store: parent.store.clone(),
            providers: parent.providers.clone(),
            tools: Arc::new(
                self.tools.filtered(|_, metadata| {
                    metadata.is_some_and(ToolMetadata::is_concurrency_safe)
                }),
            ),
            sources: Arc::default(),
            permissions: parent.permissions.clone(),
            config: EngineConfig {
                max_iterations: EXPLORE_MAX_ITERATIONS,
                ..parent.config.clone()
            },
            clock: Arc::clone(&parent.clock),
            waiters: InboxWaiters::default(),
            coordinator: Arc::clone(&parent.coordinator),
            shutdown: parent.shutdown.clone(),
            observer: Arc::clone(&parent.observer),
        })
    }
}

/// The final answer of a finished exploration, or its error; `None` while unfinished.
fn findings(history: &[Message]) -> Option<Result<String, String>> {
    match history.last()? {
        Message::Assistant {
            content,
            tool_calls,
            ..
        } if tool_calls.is_empty() => Some(Ok(content.clone())),
        Message::Notice {
            kind: NoticeKind::Error,
            text,
            ..
        } => Some(Err(text.clone().unwrap_or_default())),
        Message::Notice {
            kind: NoticeKind::Interrupted,
            ..
        } => Some(Err(super::INTERRUPTED_BY_USER.into())),
        _ => None,
    }
}
