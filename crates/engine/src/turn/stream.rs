//! Streaming one model reply.
//!
//! Invariant: every read of the stream is raced against the turn's stop token, so a stalled
//! provider can never hold a turn; what streamed before a stop or a failure is kept as a partial
//! assistant message (text and reasoning only, never tool calls).

use workmate_protocol::{EventKind, Message, ToolCall};
use workmate_providers::{
    AssistantTurn, FinishReason, ModelRequest, ModelStream, ProviderError, StreamEvent,
};

use super::Turn;
use tracing::Instrument;

use crate::Result;
use crate::emitter::Step;
use crate::history::{outbound, shrink_mangled};
use crate::observe::ModelCallOutcome;

/// Text and reasoning streamed so far.
#[derive(Debug, Default)]
pub(crate) struct Partial {
    text: String,
    reasoning: String,
}

impl Partial {
    /// Whether nothing streamed yet (a retry or fallback would not repeat anything).
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty() && self.reasoning.is_empty()
    }
}

/// How a model call ended.
#[derive(Debug)]
pub(crate) enum Streamed {
    Completed(Box<AssistantTurn>),
    Failed {
        error: ProviderError,
        partial: Partial,
    },
    Interrupted {
        partial: Partial,
    },
}

impl Turn {
    /// The tenant's settings (cached by the store).
    pub(crate) async fn tenant_settings(&self) -> Result<serde_json::Value> {
        Ok(self
            .deps
            .store
            .tenants()
            .settings(&self.emit.tenant)
            .await?)
    }

    /// Whether the tenant redacts what is sent to models (setting `dlp.model`).
    pub(crate) async fn redacts_model_input(&self) -> Result<bool> {
        Ok(crate::dlp::redacts_model_input(
            &self.tenant_settings().await?,
        ))
    }

    /// Calls `model_id` once on the current history.
    pub(crate) async fn stream_once(&mut self, model_id: &str) -> Result<Streamed> {
        let partial = Partial::default();
        let (provider, model) = match self.deps.providers.resolve(model_id) {
            Ok(found) => found,
            Err(error) => return Ok(Streamed::Failed { error, partial }),
        };
        let caps = provider.capabilities(&model);
        let mut tools: Vec<_> = self
            .tools
            .specs()
            .iter()
            .filter(|spec| self.offers_tool(&spec.name) && self.persona_offers(&spec.name))
            .cloned()
            .collect();
        if !self.is_child {
            tools.push(super::ask_user_spec());
            tools.push(super::explore::explore_spec());
            tools.push(super::plan::propose_plan_spec());
        }
        let mut messages = outbound(&self.history, self.session.compaction.as_ref(), &caps);
        messages.splice(0..0, self.system_message());
        if self.redacts_model_input().await? {
            messages = crate::dlp::redact_messages(messages);
        }
        let request = ModelRequest {
            session_id: self.emit.session.clone(),
            model,
            messages,
            tools,
        };
        let started = std::time::Instant::now();
        let span = tracing::info_span!("model.call", model = model_id);
        let streamed = self
            .stream_request(provider.stream(request), partial)
            .instrument(span)
            .await;
        if let Some(observer) = self.deps.observer.get() {
            let (outcome, usage) = match &streamed {
                Streamed::Completed(reply) => (ModelCallOutcome::Ok, reply.usage.as_ref()),
                Streamed::Failed { .. } => (ModelCallOutcome::Error, None),
                Streamed::Interrupted { .. } => (ModelCallOutcome::Interrupted, None),
            };
            observer.model_call(model_id, started.elapsed(), outcome, usage);
        }
        Ok(streamed)
    }

    /// Reads a model stream to its end, streaming deltas as they come.
    async fn stream_request(&mut self, mut stream: ModelStream, mut partial: Partial) -> Streamed {
        loop {
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Streamed::Interrupted { partial },
                next = stream.next() => next,
            };
            match next {
                Some(Ok(StreamEvent::TextDelta(text))) => {
                    partial.text.push_str(&text);
                    self.emit.transport(EventKind::AssistantDelta { text });
                    workmate_faults::kill_point("model.delta");
                }
                Some(Ok(StreamEvent::ReasoningDelta(text))) => {
                    partial.reasoning.push_str(&text);
                    self.emit.transport(EventKind::ReasoningDelta { text });
                }
                Some(Ok(StreamEvent::Completed(reply))) => {
                    return Streamed::Completed(Box::new(reply));
                }
                Some(Err(error)) => return Streamed::Failed { error, partial },
                // A provider that ended without a reply: what streamed is the reply.
                None => {
                    let reasoning = (!partial.reasoning.is_empty()).then_some(partial.reasoning);
                    return Streamed::Completed(Box::new(AssistantTurn {
                        text: partial.text,
                        reasoning,
                        ..AssistantTurn::default()
                    }));
                }
            }
        }
    }

    /// Keeps what streamed before a stop or failure, without tool calls.
    pub(crate) fn keep_partial(&mut self, partial: Partial) -> Result<()> {
        if partial.text.is_empty() && partial.reasoning.is_empty() {
            return Ok(());
        }
        let message = Message::Assistant {
            content: partial.text,
            ts: self.now(),
            tool_calls: Vec::new(),
            reasoning: (!partial.reasoning.is_empty()).then_some(partial.reasoning),
            usage: None,
            provider_state: Box::default(),
        };
        self.append(message)
    }

    /// Stores a complete reply in one step: ledger rows for its calls, the assistant message,
    /// `assistant_message` and the call's token usage. Returns the calls to handle.
    pub(crate) fn store_reply(&mut self, reply: AssistantTurn) -> Result<Vec<ToolCall>> {
        self.truncated = reply.finish_reason == FinishReason::Length;
        let mut calls = reply.tool_calls;
        calls.iter_mut().for_each(shrink_mangled);
        let usage = reply.usage.map(|mut usage| {
            usage.model.clone_from(&self.answering_model);
            usage
        });
        let message = Message::Assistant {
            content: reply.text.clone(),
            ts: self.now(),
            tool_calls: calls.clone(),
            reasoning: reply.reasoning.clone(),
            usage: usage.clone(),
            provider_state: Box::new(reply.provider_state),
        };
        let announced = EventKind::AssistantMessage {
            text: (!reply.text.is_empty()).then_some(reply.text),
            tool_calls: calls.iter().map(|c| c.name.clone()).collect(),
            reasoning: reply.reasoning,
            usage: usage.clone(),
        };
        let used = usage.map(|usage| workmate_store::NewUsage {
            session_id: self.emit.session.clone(),
            user_id: Some(self.requester.clone()),
            model: usage.model,
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
        });
        let audit = calls
            .iter()
            .map(|call| {
                let detail = serde_json::json!({
                    "tool_call_id": call.id,
                    "turn_id": self.emit.turn,
                    "model": self.answering_model,
                    "surface": self.session.key.surface,
                    "arguments": call.arguments,
                });
                self.audit_record(call, "tool_proposed", None, detail)
            })
            .collect();
        self.emit.write(Step {
            messages: vec![message.clone()],
            events: vec![announced],
            proposed: calls.clone(),
            usage: used.into_iter().collect(),
            audit,
            ..Step::default()
        })?;
        self.history.push(message);
        self.fresh_calls
            .extend(calls.iter().map(|call| call.id.clone()));
        Ok(calls)
    }
}
