//! Parked prompts: a `permission_required` or `question_requested` announces a prompt, its
//! `inbox_item_parked` turns it into a card, and its `inbox_item_resolved` records the answer.
//!
//! Invariants: one card per inbox item, whatever is redelivered; the first answer wins; a parked
//! prompt marks its running turn so that the turn's next change opens a new segment below the
//! prompt's card (see `view.rs`).

use workmate_protocol::{
    Actor, InboxItemId, InboxItemKind, Resolution, ToolCallId, TurnId, UserId,
};

use super::display_name;

use crate::view::{
    ApprovalCard, CardRef, PendingBody, PendingPrompt, PlanCard, PromptState, QuestionCard, Quorum,
    SessionView, TurnStatus,
};

impl SessionView {
    pub(super) fn announce(
        &mut self,
        tool_call_id: &ToolCallId,
        turn_id: Option<&TurnId>,
        body: PendingBody,
    ) {
        self.pending.retain(|p| &p.tool_call_id != tool_call_id);
        self.pending.push(PendingPrompt {
            tool_call_id: tool_call_id.clone(),
            turn_id: turn_id.cloned(),
            body,
        });
    }

    /// Turns an announced prompt into a card once it is parked. A parked item whose prompt was
    /// never announced (a view started mid-session) has nothing to show and is skipped.
    pub(super) fn park(
        &mut self,
        item_id: &InboxItemId,
        item_kind: InboxItemKind,
        tool_call_id: &ToolCallId,
        requested_by: Option<&UserId>,
    ) -> Vec<CardRef> {
        if self.approval(item_id).is_some()
            || self.question(item_id).is_some()
            || self.plan(item_id).is_some()
        {
            return Vec::new();
        }
        let Some(index) = self.pending.iter().position(|p| {
            &p.tool_call_id == tool_call_id
                && matches!(
                    (&p.body, item_kind),
                    (PendingBody::Permission { .. }, InboxItemKind::Approval)
                        | (PendingBody::Question { .. }, InboxItemKind::Question)
                        | (PendingBody::Plan { .. }, InboxItemKind::Plan)
                )
        }) else {
            return Vec::new();
        };
        let prompt = self.pending.remove(index);
        let requested_by = requested_by.map(|user| self.actor(prompt.turn_id.as_ref(), user));
        let PendingPrompt {
            tool_call_id,
            turn_id,
            body,
        } = prompt;
        self.mark_split(turn_id.as_ref());
        match body {
            PendingBody::Permission {
                tool,
                arguments,
                reason,
                category,
                standing_target,
                readonly_ok,
                choices,
                approvals_required,
            } => {
                let quorum = approvals_required
                    .filter(|&n| n > 1)
                    .map(|required| Quorum {
                        required,
                        approved_by: Vec::new(),
                    });
                self.approvals.push(ApprovalCard {
                    item_id: item_id.clone(),
                    tool_call_id,
                    turn_id,
                    tool,
                    arguments,
                    reason,
                    category,
                    choices,
                    requested_by,
                    standing_target,
                    readonly_ok,
                    quorum,
                    state: PromptState::Pending,
                });
                vec![CardRef::Approval(item_id.clone())]
            }
            PendingBody::Question {
                header,
                question,
                options,
                allow_text,
                multi,
                questions,
            } => {
                self.questions.push(QuestionCard {
                    item_id: item_id.clone(),
                    tool_call_id,
                    turn_id,
                    header,
                    question,
                    options,
                    allow_text,
                    multi,
                    questions,
                    requested_by,
                    state: PromptState::Pending,
                });
                vec![CardRef::Question(item_id.clone())]
            }
            PendingBody::Plan { plan } => {
                self.plans.push(PlanCard {
                    item_id: item_id.clone(),
                    tool_call_id,
                    turn_id,
                    plan,
                    requested_by,
                    state: PromptState::Pending,
                });
                vec![CardRef::Plan(item_id.clone())]
            }
        }
    }

    /// Marks a running turn so that its next change opens a new segment, below the card of the
    /// prompt being parked.
    fn mark_split(&mut self, turn_id: Option<&TurnId>) {
        let Some(id) = turn_id else {
            return;
        };
        let running = self.turn(id).is_some_and(|t| !t.status.is_terminal());
        if running && !self.split.contains(id) {
            self.split.push(id.clone());
        }
    }

    /// Counts one approval of a prompt that needs several (each approver once).
    pub(super) fn count_approval(
        &mut self,
        item_id: &InboxItemId,
        by: &Actor,
        required: u32,
    ) -> Vec<CardRef> {
        let Some(card) = self.approvals.iter_mut().find(|a| &a.item_id == item_id) else {
            return Vec::new();
        };
        if card.state != PromptState::Pending {
            return Vec::new();
        }
        let quorum = card.quorum.get_or_insert_with(Quorum::default);
        quorum.required = required;
        if !quorum.approved_by.iter().any(|a| a.user_id == by.user_id) {
            quorum.approved_by.push(by.clone());
        }
        vec![CardRef::Approval(item_id.clone())]
    }

    /// Records the answer on the prompt's card (first answer wins) and lets its turn go on.
    pub(super) fn resolve(&mut self, item_id: &InboxItemId, state: PromptState) -> Vec<CardRef> {
        let (changed, turn_id) =
            if let Some(card) = self.approvals.iter_mut().find(|a| &a.item_id == item_id) {
                if card.state != PromptState::Pending {
                    return Vec::new();
                }
                card.state = state;
                (CardRef::Approval(item_id.clone()), card.turn_id.clone())
            } else if let Some(card) = self.questions.iter_mut().find(|q| &q.item_id == item_id) {
                if card.state != PromptState::Pending {
                    return Vec::new();
                }
                card.state = state;
                (CardRef::Question(item_id.clone()), card.turn_id.clone())
            } else if let Some(card) = self.plans.iter_mut().find(|p| &p.item_id == item_id) {
                if card.state != PromptState::Pending {
                    return Vec::new();
                }
                card.state = state;
                (CardRef::Plan(item_id.clone()), card.turn_id.clone())
            } else {
                return Vec::new();
            };
        let still_waiting = self.waiting_status(turn_id.as_ref());
        let closes = turn_id.as_ref().is_some_and(|id| self.split.contains(id));
        let mut changed = vec![changed];
        changed.extend(self.on_turn(turn_id.as_ref(), |turn| {
            if matches!(
                turn.status,
                TurnStatus::WaitingForApproval | TurnStatus::WaitingForAnswer
            ) {
                turn.status = still_waiting.unwrap_or(TurnStatus::Thinking);
            }
        }));
        if closes && let Some(turn_id) = &turn_id {
            self.settle_closed(turn_id, item_id);
        }
        changed
    }

    /// The segment the answer to `item_id` just closed (the turn's one before its newest) says
    /// how the prompt was answered, and marks the call answered as allowed or not.
    fn settle_closed(&mut self, turn_id: &TurnId, item_id: &InboxItemId) {
        let answered = self
            .approvals
            .iter()
            .find(|a| &a.item_id == item_id)
            .map(|a| (&a.state, Some(&a.tool_call_id)))
            .or_else(|| {
                self.questions
                    .iter()
                    .find(|q| &q.item_id == item_id)
                    .map(|q| (&q.state, None))
            })
            .or_else(|| {
                self.plans
                    .iter()
                    .find(|p| &p.item_id == item_id)
                    .map(|p| (&p.state, Some(&p.tool_call_id)))
            });
        let Some((PromptState::Resolved { by, resolution, .. }, call)) = answered else {
            return;
        };
        let (line, allowed) = settled_line(resolution, display_name(by));
        let call = call.cloned();
        let Some(closed) = self
            .turns
            .iter_mut()
            .rev()
            .filter(|t| &t.turn_id == turn_id)
            .nth(1)
        else {
            return;
        };
        if matches!(
            closed.status,
            TurnStatus::WaitingForApproval | TurnStatus::WaitingForAnswer
        ) {
            closed.status = TurnStatus::Continued(line);
        }
        if let Some(step) = call
            .and_then(|call| closed.steps.iter_mut().find(|s| s.tool_call_id == call))
            .filter(|s| s.outcome.is_none())
        {
            step.allowed = allowed;
        }
    }

    /// The waiting status of a turn that still has a pending prompt, if any.
    pub(super) fn waiting_status(&self, turn_id: Option<&TurnId>) -> Option<TurnStatus> {
        let turn_id = turn_id?;
        let pending = |state: &PromptState, turn: &Option<TurnId>| {
            *state == PromptState::Pending && turn.as_ref() == Some(turn_id)
        };
        if self.approvals.iter().any(|a| pending(&a.state, &a.turn_id))
            || self.plans.iter().any(|p| pending(&p.state, &p.turn_id))
        {
            Some(TurnStatus::WaitingForApproval)
        } else if self.questions.iter().any(|q| pending(&q.state, &q.turn_id)) {
            Some(TurnStatus::WaitingForAnswer)
        } else {
            None
        }
    }

    /// The requester as an actor, named when it is the person who started the turn.
    fn actor(&self, turn_id: Option<&TurnId>, user: &UserId) -> Actor {
        turn_id
            .and_then(|id| self.turn(id))
            .and_then(|turn| turn.author.as_ref())
            .filter(|author| &author.user_id == user)
            .cloned()
            .unwrap_or_else(|| Actor::new(user.clone()))
    }
}

/// How a closed segment says its prompt was answered, and whether the call it asked about may
/// run (`None` for a question, which asks about no call).
fn settled_line(resolution: &Resolution, by: &str) -> (String, Option<bool>) {
    match resolution {
        Resolution::Approval { choice } if choice.allows() => {
            (format!("✅ Approved by {by}"), Some(true))
        }
        Resolution::Approval { .. } => (format!("❌ Denied by {by}"), Some(false)),
        Resolution::Answer { .. } => (format!("💬 Answered by {by}"), None),
        Resolution::Plan { approved: true, .. } => {
            (format!("✅ Plan approved by {by}"), Some(true))
        }
        Resolution::Plan { .. } => (format!("❌ Plan rejected by {by}"), Some(false)),
        Resolution::Directory { granted: true, .. } => {
            (format!("✅ Folder granted by {by}"), Some(true))
        }
        Resolution::Directory { .. } => (format!("❌ Folder refused by {by}"), Some(false)),
        Resolution::Dismissed { reason } => (format!("Dismissed: {reason}"), Some(false)),
        _ => (format!("Answered by {by}"), None),
    }
}
