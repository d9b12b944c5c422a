//! Phase A of tool handling: every call of an assistant message is authorized, in call order,
//! before any of them runs.
//!
//! Invariants: a prompt is parked once per tool call (parking again returns the same item, so a
//! resumed turn never asks twice and an already-given answer applies at once); a stop while
//! waiting answers the call "interrupted by user" and leaves the item pending; on resume the
//! ledger decides: a call already answered is replayed from its stored outcome, a call found
//! started is never re-run unless running it again cannot change anything
//! ([`Turn::repeatable`]).

use workmate_protocol::{EventKind, ToolCall, ToolStatus, Visibility};
use workmate_store::{InboxItem, NewInboxItem, ToolCallState};

use super::outcome::Outcome;
use super::{INTERRUPTED_BY_USER, Turn};
use crate::Result;
use crate::emitter::Step;
use crate::inbox_wait::Waited;
use crate::permissions::Decision;

/// What a restart tells about a call it finds started but not finished.
pub(crate) const OUTCOME_UNKNOWN: &str =
    "interrupted: outcome unknown (the service restarted while it ran)";

impl Turn {
    /// Authorizes every call, then runs the cleared ones.
    pub(crate) async fn handle_calls(&mut self, calls: Vec<ToolCall>) -> Result<()> {
        self.ensure_workspace()?;
        let mut cleared = Vec::new();
        for call in calls {
            if let Some(call) = self.authorize(call).await? {
                cleared.push(call);
            }
        }
        self.execute(cleared).await
    }

    /// Decides one call; `Some` when it may run.
    async fn authorize(&mut self, call: ToolCall) -> Result<Option<ToolCall>> {
        // A call this turn's model just proposed is known to be `proposed`; any other (a resume)
        // is read from the ledger, after this session's queued steps are stored.
        let record = if self.fresh_calls.contains(&call.id) {
            None
        } else {
            self.emit.flushed().await?;
            self.deps
                .store
                .tool_calls()
                .get(&self.emit.tenant, &self.emit.session, &call.id)
                .await?
        };
        if let Some(record) = &record {
            match record.state {
                ToolCallState::Finished | ToolCallState::Denied | ToolCallState::Interrupted => {
                    let outcome = record
                        .result
                        .clone()
                        .and_then(|r| serde_json::from_value(r).ok())
                        .unwrap_or_else(|| Outcome::failed(OUTCOME_UNKNOWN));
                    self.record(&call, outcome).await?;
                    return Ok(None);
                }
                ToolCallState::Started => {
                    if self.repeatable(&call) && !self.cancel.is_cancelled() {
                        return Ok(Some(call));
                    }
                    self.answer(&call, Outcome::failed(OUTCOME_UNKNOWN)).await?;
                    return Ok(None);
                }
                ToolCallState::Approved => return Ok(Some(call)),
                ToolCallState::Proposed | ToolCallState::AwaitingApproval => {}
            }
        } else if !self.fresh_calls.contains(&call.id) {
            self.emit.write(Step {
                proposed: vec![call.clone()],
                ..Step::default()
            })?;
        }
        if self.cancel.is_cancelled() {
            self.answer(
                &call,
                Outcome::not_executed(ToolStatus::Interrupted, INTERRUPTED_BY_USER),
            )
            .await?;
            return Ok(None);
        }
        if !self.resuming() {
            self.emit.state(EventKind::ToolProposed {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })?;
        }
        if call.raw_arguments().is_some() {
            let reason = self.mangled_reason();
            self.answer(&call, Outcome::not_executed(ToolStatus::Error, &reason))
                .await?;
            return Ok(None);
        }
        let engine_tool = !self.is_child && call.name == super::explore::EXPLORE;
        if call.name == super::interactive::ASK_USER && !self.is_child {
            self.ask_user(&call).await?;
            return Ok(None);
        }
        if call.name == super::plan::PROPOSE_PLAN && !self.is_child {
            self.propose_plan(&call).await?;
            return Ok(None);
        }
        if self.tools.get(&call.name).is_none() && !engine_tool {
            let reason = format!("unknown tool: {}", call.name);
            self.answer(&call, Outcome::not_executed(ToolStatus::Error, &reason))
                .await?;
            return Ok(None);
        }
        if !engine_tool && !self.persona_offers(&call.name) {
            let reason = format!(
                "{} is not among the tools of the {} persona",
                call.name, self.persona.id
            );
            self.answer(&call, Outcome::not_executed(ToolStatus::Denied, &reason))
                .await?;
            return Ok(None);
        }
        let metadata = if engine_tool {
            Some(super::explore::explore_metadata())
        } else {
            self.tools.metadata(&call.name)
        };
        let context = self.policy_context().await?;
        match self
            .permissions
            .evaluate(&context, &call.name, &call.arguments, metadata.as_ref())
        {
            Decision::Allow { rule, .. } => {
                self.approve(&call).await?;
                if let Some(rule) = rule {
                    self.standing_rules_used.insert(call.id.clone(), rule);
                }
                Ok(Some(call))
            }
            Decision::Deny { reason } => {
                self.answer(&call, Outcome::not_executed(ToolStatus::Denied, &reason))
                    .await?;
                Ok(None)
            }
            Decision::Ask { .. } if self.scheduled_approver_allows(&call, metadata.as_ref()) => {
                self.approve(&call).await?;
                Ok(Some(call))
            }
            Decision::Ask {
                reason,
                choices,
                standing_target,
                readonly_ok,
            } => {
                let prompt = super::approval::Prompt {
                    reason,
                    choices,
                    standing_target,
                    readonly_ok,
                    category: metadata.map(|m| m.category).unwrap_or_default(),
                };
                self.ask_approval(call, prompt).await
            }
        }
    }

    pub(crate) async fn approve(&self, call: &ToolCall) -> Result<()> {
        self.ledger_move(&call.id, ToolCallState::Approved, None)?;
        Ok(())
    }

    /// Parks `new` (once: parking it again returns the same item); whether it must be announced
    /// now (it is new, or was never announced); marks its call as waiting.
    pub(crate) async fn park(&self, new: NewInboxItem) -> Result<(InboxItem, bool)> {
        // The item names a call: the step that proposed it is stored first.
        self.emit.flushed().await?;
        let (item, created) = self
            .deps
            .store
            .inbox()
            .park(&self.emit.tenant, &new)
            .await?;
        if let Some(call) = &new.tool_call_id {
            self.ledger_move(call, ToolCallState::AwaitingApproval, None)?;
        }
        // The item is stored at once, its announcement through the session's log: a crash in
        // between leaves a prompt nobody was shown (no card to click). Parked again, it is
        // announced then.
        let unannounced = !created
            && !self
                .deps
                .store
                .events()
                .announces_parked(&self.emit.tenant, &self.emit.session, &item.id)
                .await?;
        Ok((item, created || unannounced))
    }

    pub(crate) async fn announce_parked(&self, item: &InboxItem) -> Result<()> {
        self.emit.state(EventKind::InboxItemParked {
            item_id: item.id.clone(),
            item_kind: item.kind,
            tool_call_id: item.tool_call_id.clone(),
            title: item.title.clone(),
            visibility: item.visibility,
            requested_by: item.requested_by.clone(),
        })?;
        Ok(())
    }

    /// Waits for the item's answer. A stop because the service is shutting down leaves the
    /// prompt parked and its call unanswered (`Error::ShuttingDown` ends the turn where it is),
    /// so the next start resumes the wait instead of recording a denial nobody gave.
    pub(crate) async fn wait_for(&self, item: &InboxItem) -> Result<Waited> {
        // A parked turn may wait for days: what it wrote is stored before it waits.
        self.emit.flushed().await?;
        self.emit
            .runtime
            .set_waiting_for(Some(self.requester.clone()));
        let waited = self
            .deps
            .waiters
            .wait(
                &self.deps.store,
                &self.emit.tenant,
                &item.id,
                self.deps.config.inbox_poll,
                &self.cancel,
            )
            .await;
        self.emit.runtime.set_waiting_for(None);
        let waited = waited?;
        if matches!(waited, Waited::Interrupted) && self.deps.shutdown.is_cancelled() {
            return Err(crate::Error::ShuttingDown);
        }
        Ok(waited)
    }

    pub(crate) fn visibility(&self) -> Visibility {
        if self.session.unattended {
            Visibility::Inbox
        } else {
            Visibility::Inline
        }
    }

    fn mangled_reason(&self) -> String {
        if self.truncated() {
            "the tool-call arguments were cut off by the output-token limit; send the same content in several smaller calls".into()
        } else {
            "the tool-call arguments were not a JSON object (`_raw` is not a parameter); re-issue the call with the declared parameters".into()
        }
    }

    pub(crate) async fn audit_approval(
        &self,
        call: &ToolCall,
        stage: &str,
        status: Option<&str>,
        reason: &str,
    ) -> Result<()> {
        let detail = serde_json::json!({ "tool_call_id": call.id, "reason": reason });
        self.audit(call, stage, status, detail)
    }
}
