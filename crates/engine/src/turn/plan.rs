//! `propose_plan`: in plan mode the model puts its plan to a person, who approves it (choosing
//! the mode to implement it in) or rejects it with feedback.
//!
//! Invariants: the tool means something only in plan mode; anywhere else it is answered with an
//! error that tells the model what to do instead, and nothing is parked. Like `ask_user` the
//! person's answer is the consent, so the policy is not asked; the plan is parked once per tool
//! call (a resumed turn waits on the same item). An approval changes the session's mode and
//! announces it in the same step, before the tool result tells the model to implement the plan,
//! so the calls that follow are judged in the new mode.

use schemars::JsonSchema;
use serde::Deserialize;
use workmate_protocol::{
    Actor, EventKind, InboxItemKind, PermissionMode, Resolution, ToolCall, ToolSpec, ToolStatus,
};
use workmate_store::{NewInboxItem, SessionChange};

use super::outcome::Outcome;
use super::{INTERRUPTED_BY_USER, Turn};
use crate::Result;
use crate::emitter::Step;
use crate::inbox_wait::Waited;

/// The name of the plan tool.
pub(crate) const PROPOSE_PLAN: &str = "propose_plan";

/// What the tool result says after an approval.
const APPROVED_NOTE: &str = "plan approved — implement it now";

/// `propose_plan` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct ProposePlanArgs {
    /// The plan, as markdown: the steps, the files or systems each one changes, and how the
    /// result will be checked.
    plan: String,
}

/// The spec offered to models.
pub(crate) fn propose_plan_spec() -> ToolSpec {
    ToolSpec {
        name: PROPOSE_PLAN.into(),
        description: "In plan mode, put your plan to the user for approval once you have explored enough to know what to change. The user approves it (and you implement it at once) or rejects it with feedback (revise and propose again). Only meaningful in plan mode.".into(),
        parameters: serde_json::to_value(schemars::schema_for!(ProposePlanArgs))
            .unwrap_or_default(),
    }
}

impl Turn {
    /// Parks the plan and answers the call with the person's decision.
    pub(crate) async fn propose_plan(&mut self, call: &ToolCall) -> Result<()> {
        let mode = self.emit.runtime.record().mode;
        if let Some(reason) = not_in_plan_mode(mode) {
            return self
                .answer(call, Outcome::not_executed(ToolStatus::Error, reason))
                .await;
        }
        let plan = match serde_json::from_value::<ProposePlanArgs>(call.arguments.clone()) {
            Ok(args) if !args.plan.trim().is_empty() => args.plan,
            Ok(_) => {
                let reason = "the plan is empty; pass {\"plan\": \"…\"} with the steps";
                return self
                    .answer(call, Outcome::not_executed(ToolStatus::Error, reason))
                    .await;
            }
            Err(e) => {
                let reason =
                    format!("invalid propose_plan arguments: {e}; pass {{\"plan\": \"…\"}}");
                return self
                    .answer(call, Outcome::not_executed(ToolStatus::Error, &reason))
                    .await;
            }
        };
        let new = NewInboxItem {
            session_id: self.emit.session.clone(),
            tool_call_id: Some(call.id.clone()),
            kind: InboxItemKind::Plan,
            title: plan_title(&plan),
            body: plan.clone(),
            inbox: "default".into(),
            visibility: self.visibility(),
            requested_by: Some(self.requester.clone()),
            data: serde_json::json!({ "plan": plan }),
        };
        let (item, created) = self.park(new).await?;
        if created {
            self.emit.state(EventKind::PlanProposed {
                tool_call_id: call.id.clone(),
                plan,
            })?;
            self.announce_parked(&item).await?;
        }
        let outcome = match self.wait_for(&item).await? {
            Waited::Resolved(item) => {
                let by = item.resolved_by.clone().map(|user_id| Actor {
                    user_id,
                    name: None,
                });
                self.decided(item.resolution.as_ref(), by)?
            }
            Waited::Interrupted => {
                let mut outcome = Outcome::answered(
                    ToolStatus::Interrupted,
                    &serde_json::json!({ "approved": false, "error": INTERRUPTED_BY_USER }),
                );
                outcome.reason = Some(INTERRUPTED_BY_USER.into());
                outcome
            }
        };
        self.answer(call, outcome).await
    }

    /// The tool result of a decided plan; an approval first sets the session's mode.
    fn decided(&self, resolution: Option<&Resolution>, by: Option<Actor>) -> Result<Outcome> {
        let Some(resolution) = resolution else {
            return Ok(no_answer());
        };
        if let Some(mode) = resolution.plan_mode() {
            self.implement_in(mode, by)?;
            return Ok(Outcome::answered(
                ToolStatus::Ok,
                &serde_json::json!({ "approved": true, "mode": mode, "note": APPROVED_NOTE }),
            ));
        }
        Ok(match resolution {
            Resolution::Plan { feedback, .. } => {
                let feedback = feedback.as_deref().map(str::trim).unwrap_or_default();
                Outcome::answered(
                    ToolStatus::Error,
                    &serde_json::json!({
                        "approved": false,
                        "feedback": feedback,
                        "note": "plan rejected — revise it with the feedback and propose again",
                    }),
                )
            }
            _ => no_answer(),
        })
    }

    /// Sets the session's mode (and announces it) unless it is that already.
    fn implement_in(&self, mode: PermissionMode, by: Option<Actor>) -> Result<()> {
        let from = self.emit.runtime.record().mode;
        if from == mode {
            return Ok(());
        }
        let by = by.unwrap_or_else(|| Actor {
            user_id: self.requester.clone(),
            name: None,
        });
        self.emit.write(Step {
            events: vec![EventKind::ModeChanged { from, to: mode, by }],
            change: SessionChange {
                mode: Some(mode),
                ..SessionChange::default()
            },
            ..Step::default()
        })?;
        Ok(())
    }
}

/// Why `propose_plan` does not apply in `mode`, if it does not.
fn not_in_plan_mode(mode: PermissionMode) -> Option<&'static str> {
    match mode {
        PermissionMode::Plan => None,
        PermissionMode::Discuss => Some(
            "propose_plan is for plan mode; this session is in discuss mode, so describe the \
             changes you would make in your answer instead",
        ),
        _ => Some("not in plan mode — proceed with the work directly"),
    }
}

/// The item's one-line title: the plan's first non-empty line, cut to 80 characters.
fn plan_title(plan: &str) -> String {
    let Some(first) = plan
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
    else {
        return "Plan".into();
    };
    let cut: String = first.chars().take(80).collect();
    if cut.len() < first.len() {
        format!("Plan: {cut}…")
    } else {
        format!("Plan: {cut}")
    }
}

fn no_answer() -> Outcome {
    Outcome::answered(
        ToolStatus::Error,
        &serde_json::json!({ "approved": false, "error": "no response" }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plan_mode_takes_a_plan() {
        assert_eq!(not_in_plan_mode(PermissionMode::Plan), None);
        assert!(
            not_in_plan_mode(PermissionMode::Discuss)
                .is_some_and(|r| r.contains("describe the changes"))
        );
        for mode in [PermissionMode::Interactive, PermissionMode::Auto] {
            assert_eq!(
                not_in_plan_mode(mode),
                Some("not in plan mode — proceed with the work directly")
            );
        }
    }

    #[test]
    fn the_title_is_the_first_line() {
        assert_eq!(plan_title("\n# Add the route\n1. x"), "Plan: Add the route");
        assert!(plan_title(&"a".repeat(200)).ends_with('…'));
        assert_eq!(plan_title("   "), "Plan");
    }
}
