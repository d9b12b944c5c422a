//! Phase B of tool handling: running the cleared calls.
//!
//! Invariants: when more than one call is cleared, the low-risk calls that need no approval run
//! together (at most `tool_concurrency` at once, explorations beside them) before any other call,
//! and that batch is not stopped midway (an exploration stops with the turn, as its own turn); every other call runs alone, in call order, and a stop before one of them
//! answers it (and the rest) "interrupted by user". The ledger marks a call started before it runs
//! and finished (with its result) after, so a restart knows exactly what happened.

use std::sync::Arc;
use tracing::Instrument;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use workmate_protocol::{EventKind, ToolCall, ToolStatus};
use workmate_store::{LedgerMove, ToolCallState};
use workmate_tools::{Tool, ToolContext};

use super::outcome::Outcome;
use super::{INTERRUPTED_BY_USER, Turn};
use crate::Result;
use crate::emitter::Step;

impl Turn {
    /// Runs the cleared calls.
    pub(crate) async fn execute(&mut self, cleared: Vec<ToolCall>) -> Result<()> {
        let (concurrent, serial): (Vec<_>, Vec<_>) = if cleared.len() > 1 {
            cleared.into_iter().partition(|call| {
                self.tools
                    .metadata(&call.name)
                    .or_else(|| super::engine_tool_metadata(&call.name))
                    .is_some_and(|m| m.is_concurrency_safe())
            })
        } else {
            (Vec::new(), cleared)
        };
        if !concurrent.is_empty() {
            self.run_batch(concurrent).await?;
        }
        for call in serial {
            if self.cancel.is_cancelled() {
                self.answer(
                    &call,
                    Outcome::not_executed(ToolStatus::Interrupted, INTERRUPTED_BY_USER),
                )
                .await?;
                continue;
            }
            if !self.start(&call).await? {
                self.started_elsewhere(&call).await?;
                continue;
            }
            if self.is_engine_explore(&call) {
                let outcome = self.explore(&call).await?;
                self.answer(&call, outcome).await?;
                continue;
            }
            let Some(tool) = self.tools.get(&call.name).cloned() else {
                let reason = format!("unknown tool: {}", call.name);
                self.answer(&call, Outcome::failed(&reason)).await?;
                continue;
            };
            let ctx = self.tool_context(&call.name, self.cancel.clone());
            let outcome = run_one(tool, &call.name, ctx, call.arguments.clone()).await;
            self.answer(&call, outcome).await?;
        }
        Ok(())
    }

    /// Runs low-risk calls together; results are recorded in call order.
    async fn run_batch(&mut self, calls: Vec<ToolCall>) -> Result<()> {
        let mut runnable = Vec::with_capacity(calls.len());
        for call in calls {
            if self.start(&call).await? {
                runnable.push(call);
            } else {
                self.started_elsewhere(&call).await?;
            }
        }
        let calls = runnable;
        let (explorations, tools): (Vec<_>, Vec<_>) = calls
            .iter()
            .enumerate()
            .partition(|(_, call)| self.is_engine_explore(call));
        let limit = Arc::new(Semaphore::new(self.deps.config.tool_concurrency.max(1)));
        // The batch is not cancellable: its calls only read, and finish quickly.
        let batch = CancellationToken::new();
        let mut tasks = JoinSet::new();
        for (index, call) in tools {
            let tool = self.tools.get(&call.name).cloned();
            let ctx = self.tool_context(&call.name, batch.clone());
            let (arguments, limit) = (call.arguments.clone(), Arc::clone(&limit));
            let name = call.name.clone();
            let turn_span = tracing::Span::current();
            tasks.spawn(async move {
                let _permit = limit.acquire_owned().await;
                let outcome = match tool {
                    Some(tool) => {
                        run_one(tool, &name, ctx, arguments)
                            .instrument(turn_span)
                            .await
                    }
                    None => Outcome::failed("unknown tool"),
                };
                (index, outcome)
            });
        }
        let mut outcomes: Vec<Option<Outcome>> = vec![None; calls.len()];
        // Explorations are child turns of this one: they run here, beside the tools' tasks.
        let this = &*self;
        let explored = futures_util::future::join_all(
            explorations
                .into_iter()
                .map(|(index, call)| async move { (index, this.explore(call).await) }),
        );
        let (explored, ()) = tokio::join!(explored, async {
            while let Some(joined) = tasks.join_next().await {
                match joined {
                    Ok((index, outcome)) => {
                        if let Some(slot) = outcomes.get_mut(index) {
                            *slot = Some(outcome);
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "A tool task failed to complete."),
                }
            }
        });
        for (index, outcome) in explored {
            if let Some(slot) = outcomes.get_mut(index) {
                *slot = Some(outcome?);
            }
        }
        for (call, outcome) in calls.iter().zip(outcomes) {
            let outcome = outcome.unwrap_or_else(|| Outcome::failed("the tool crashed"));
            self.answer(call, outcome).await?;
        }
        Ok(())
    }

    /// Whether `call` is the engine's own `explore` (a registry tool of that name would win).
    fn is_engine_explore(&self, call: &ToolCall) -> bool {
        call.name == super::explore::EXPLORE && self.tools.get(&call.name).is_none()
    }

    /// Marks a call started and emits `tool_started`, in one step; whether it may run. A call
    /// that must not run twice runs only once the store holds it started, and only if this
    /// move started it: `false` means the ledger already had it started (by another process).
    async fn start(&self, call: &ToolCall) -> Result<bool> {
        let detail = serde_json::json!({
            "tool_call_id": call.id,
            "turn_id": self.emit.turn,
            "model": self.answering_model,
            "surface": self.session.key.surface,
        });
        let written = self.emit.write(Step {
            events: vec![EventKind::ToolStarted {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
            }],
            moves: vec![LedgerMove {
                call: call.id.clone(),
                to: ToolCallState::Started,
                result: None,
            }],
            audit: vec![self.audit_record(call, "tool_started", None, detail)],
            ..Step::default()
        })?;
        if self.repeatable(call) {
            // Re-running it is harmless: a repeatable call re-run after a restart is `false`.
            return Ok(true);
        }
        Ok(written
            .durable()
            .await?
            .moved
            .first()
            .copied()
            .unwrap_or(false))
    }

    /// Answers a call another process already started: its outcome is not known here.
    async fn started_elsewhere(&mut self, call: &ToolCall) -> Result<()> {
        self.answer(call, Outcome::failed(super::authorize::OUTCOME_UNKNOWN))
            .await
    }

    fn tool_context(&self, tool: &str, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            tenant_id: self.emit.tenant.clone(),
            session_id: self.emit.session.clone(),
            user_id: self.requester.clone(),
            channel: workmate_personas::channel_key(
                self.session.key.surface,
                &self.session.key.chat_id,
            ),
            persona: self.session.persona.clone(),
            roots: self.roots.clone(),
            cancel,
            repos: crate::tool_repos::tool_repos(&self.deps.store),
            // Sandboxed commands stay offline unless the tenant's `network_tools` names the tool.
            network: self
                .permissions
                .policy()
                .network_tools
                .iter()
                .any(|t| t == tool),
        }
    }
}

/// Runs one call on its own task, so a panicking tool becomes an error result.
async fn run_one(
    tool: Arc<dyn Tool>,
    name: &str,
    ctx: ToolContext,
    arguments: serde_json::Value,
) -> Outcome {
    let span = tracing::info_span!("tool.execute", tool = name);
    let task = tokio::spawn(async move { tool.call(&ctx, arguments).await }.instrument(span));
    match task.await {
        Ok(Ok(value)) => Outcome::ran(value),
        Ok(Err(error)) => Outcome::failed(&error.message),
        Err(e) => Outcome::failed(&format!("the tool crashed: {e}")),
    }
}
