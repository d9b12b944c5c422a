//! Compacting a turn's conversation: before a model call when it nears the window, after a
//! provider said it overflowed (then the call is made once more), and when someone asks.
//!
//! Invariants: a compaction's view, its notice and its `compacted` event are one step (a crash
//! leaves the old view or the new one, never half of it); the summarizer is asked twice at most,
//! then the older part is trimmed; a sensitive tenant's summaries are written by its private
//! model; a compaction stopped with the turn changes nothing.

use workmate_protocol::{CompactionView, EventKind, Message, NoticeKind, SessionId};
use workmate_providers::{ModelRequest, ProviderError, ProviderErrorKind, StreamEvent};
use workmate_store::{NewUsage, SessionChange};

use super::Turn;
use super::stream::Streamed;
use crate::Result;
use crate::compaction::{
    COMPACTED_NOTICE, CompactionSettings, TRIMMED_NOTICE, block, boundary, context_tokens,
    keep_tokens, start, summary_request,
};
use crate::emitter::Step;
use crate::observe::ModelCallOutcome;

/// Why a compaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The conversation reached the tenant's threshold.
    Threshold,
    /// The provider said the conversation did not fit.
    Overflow,
    /// Someone asked (`/workmate compact`).
    Asked,
}

/// What the summarizer gave.
enum Summarized {
    Text(String, Option<NewUsage>),
    Failed,
    Stopped,
}

impl Turn {
    /// Calls the model on the conversation, compacted first when it nears the window, and once
    /// more after compacting when the provider says it did not fit.
    pub(crate) async fn stream_compacted(&mut self) -> Result<Streamed> {
        let settings = self.compaction_settings().await?;
        let model = self
            .gateway
            .route(&self.session.persona, &self.session.model)
            .ok();
        if let Some(model) = &model
            && settings.enabled
        {
            let window = self.deps.providers.capabilities(model).context_window;
            let tokens = context_tokens(&self.history, self.session.compaction.as_ref());
            if tokens >= settings.trigger_tokens(window) {
                self.compact(Trigger::Threshold).await?;
            }
        }
        let streamed = self.stream_model().await?;
        let Streamed::Failed { error, partial } = streamed else {
            return Ok(streamed);
        };
        let retry = partial.is_empty()
            && overflowed(&error)
            && settings.enabled
            && model.is_some()
            && !self.cancel.is_cancelled();
        if retry && self.compact(Trigger::Overflow).await? {
            return self.stream_model().await;
        }
        Ok(Streamed::Failed { error, partial })
    }

    /// The tenant's compaction setting.
    pub(crate) async fn compaction_settings(&self) -> Result<CompactionSettings> {
        Ok(CompactionSettings::of_tenant(
            &self.tenant_settings().await?,
        ))
    }

    /// Compacts the conversation now; whether its view changed (`false`: there is no earlier
    /// turn to compact, or the turn was stopped).
    pub(crate) async fn compact(&mut self, why: Trigger) -> Result<bool> {
        let Some((current, new, block_tokens)) = self.next_boundary(why).await? else {
            return Ok(false);
        };
        self.emit.state(EventKind::Compacting)?;
        let earlier = self
            .session
            .compaction
            .as_ref()
            .filter(|v| !v.trimmed)
            .map(|v| v.summary.clone());
        let request = summary_request(earlier.as_deref(), &self.history[current..new]);
        let (summary, usage) = match self.summarize(request, new).await? {
            Summarized::Text(text, usage) => (Some(text), usage),
            Summarized::Failed => (None, None),
            Summarized::Stopped => return Ok(false),
        };
        let view = CompactionView {
            boundary: new as u64,
            summary: block(
                summary.as_deref(),
                &self.history[..new],
                usize::try_from(block_tokens.saturating_mul(4)).unwrap_or(usize::MAX),
            ),
            trimmed: summary.is_none(),
            messages_at: self.history.len() as u64,
            at_ms: self.now(),
        };
        let text = if view.trimmed {
            TRIMMED_NOTICE
        } else {
            COMPACTED_NOTICE
        };
        let notice = Message::Notice {
            kind: NoticeKind::Compacted,
            text: Some(text.into()),
            ts: self.now(),
        };
        tracing::info!(session = %self.emit.session, ?why, boundary = new, trimmed = view.trimmed, "Conversation compacted.");
        // The view, its notice and the event announcing it are stored together.
        self.emit.write(Step {
            messages: vec![notice.clone()],
            events: vec![EventKind::Compacted { text: text.into() }],
            usage: usage.into_iter().collect(),
            change: SessionChange {
                compaction: Some(view.clone()),
                ..SessionChange::default()
            },
            ..Step::default()
        })?;
        self.history.push(notice);
        self.session.compaction = Some(view);
        Ok(true)
    }

    /// Where the current view begins, where the new one would if it can move on, and the tokens
    /// its block may take.
    async fn next_boundary(&self, why: Trigger) -> Result<Option<(usize, usize, u64)>> {
        let settings = self.compaction_settings().await?;
        let view = self.session.compaction.as_ref();
        let window = self
            .deps
            .providers
            .capabilities(&self.session.model)
            .context_window;
        let trigger = settings.trigger_tokens(window);
        // Past the threshold the newest quarter of it is kept; asked, or told the conversation
        // did not fit, a quarter of what it holds now (at most that).
        let keep = match why {
            Trigger::Threshold => keep_tokens(trigger),
            Trigger::Overflow | Trigger::Asked => {
                keep_tokens(trigger.min(context_tokens(&self.history, view)))
            }
        };
        let current = start(&self.history, view);
        let whole_turns = why == Trigger::Asked;
        // The block may take what the kept part may past the threshold, so a view stays within
        // half the trigger.
        let block_tokens = keep_tokens(trigger);
        Ok(boundary(&self.history, current, keep, whole_turns)
            .map(|new| (current, new, block_tokens)))
    }

    /// Asks the summarizer for a summary of `request`, twice at most.
    async fn summarize(&mut self, request: Vec<Message>, boundary: usize) -> Result<Summarized> {
        let settings = self.compaction_settings().await?;
        let routed = self
            .gateway
            .route(&self.session.persona, &self.session.model)
            .unwrap_or_else(|_| self.session.model.clone());
        // A sensitive tenant's conversation goes to its private model only.
        let model_id = match settings.model {
            Some(model) if !self.gateway.sensitive => model,
            _ => routed,
        };
        let messages = if self.redacts_model_input().await? {
            crate::dlp::redact_messages(request)
        } else {
            request
        };
        for attempt in 1..=2 {
            match self
                .summarize_once(&model_id, messages.clone(), boundary)
                .await
            {
                Ok(Some((text, usage))) => return Ok(Summarized::Text(text, usage)),
                Ok(None) => return Ok(Summarized::Stopped),
                Err(error) => {
                    tracing::warn!(session = %self.emit.session, model = %model_id, attempt, error = %error.message, "The summary for a compaction failed.");
                }
            }
        }
        Ok(Summarized::Failed)
    }

    /// One summarizer call: its text and usage, `None` when the turn was stopped.
    async fn summarize_once(
        &self,
        model_id: &str,
        messages: Vec<Message>,
        boundary: usize,
    ) -> std::result::Result<Option<(String, Option<NewUsage>)>, ProviderError> {
        let (provider, model) = self.deps.providers.resolve(model_id)?;
        // Its own session key, so a provider keeping per-session state keeps the conversation's
        // apart from its summaries.
        let request = ModelRequest {
            session_id: SessionId::from(format!("{}:compaction:{boundary}", self.emit.session)),
            model,
            messages,
            tools: Vec::new(),
        };
        let started = std::time::Instant::now();
        let mut stream = provider.stream(request);
        let mut text = String::new();
        let reply = loop {
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Ok(None),
                next = stream.next() => next,
            };
            match next {
                Some(Ok(StreamEvent::TextDelta(delta))) => text.push_str(&delta),
                Some(Ok(StreamEvent::ReasoningDelta(_))) => {}
                Some(Ok(StreamEvent::Completed(reply))) => break Some(reply),
                Some(Err(error)) => {
                    self.observe_summary(model_id, started, ModelCallOutcome::Error, None);
                    return Err(error);
                }
                None => break None,
            }
        };
        let usage = reply.as_ref().and_then(|r| r.usage.clone());
        if let Some(reply) = reply
            && !reply.text.trim().is_empty()
        {
            text = reply.text;
        }
        self.observe_summary(model_id, started, ModelCallOutcome::Ok, usage.as_ref());
        if text.trim().is_empty() {
            return Err(ProviderError::new(
                ProviderErrorKind::Other,
                "the summarizer answered with no text",
            ));
        }
        let usage = usage.map(|usage| NewUsage {
            session_id: self.emit.session.clone(),
            user_id: Some(self.requester.clone()),
            model: model_id.to_owned(),
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
        });
        Ok(Some((text, usage)))
    }

    fn observe_summary(
        &self,
        model_id: &str,
        started: std::time::Instant,
        outcome: ModelCallOutcome,
        usage: Option<&workmate_protocol::TokenUsage>,
    ) {
        if let Some(observer) = self.deps.observer.get() {
            observer.model_call(model_id, started.elapsed(), outcome, usage);
        }
    }
}

/// Whether a provider's error says the conversation did not fit its context window.
fn overflowed(error: &ProviderError) -> bool {
    error.kind == ProviderErrorKind::ContextOverflow
        || workmate_providers::is_context_overflow(&error.message)
}
