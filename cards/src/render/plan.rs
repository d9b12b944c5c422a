//! The plan card: the plan `propose_plan` put forward in plan mode, and the three answers to it.
//!
//! Approve runs the plan in interactive mode (risky steps still ask), Approve in auto mode runs
//! it without asking (the engine refuses that answer from a member whose tenant does not let
//! members choose auto), and Reject sends the model back to planning; feedback goes with a reply
//! in the thread that quotes the card's token.

use workmate_protocol::{PermissionMode, Resolution};

use super::resolved_line;
use crate::fold::display_name;
use crate::ir::{Block, Button, ButtonAction, ButtonStyle, Card, Inline};
use crate::markdown::markdown_to_blocks;
use crate::view::{PlanCard, PromptState};

/// A parked plan: who asked, the plan, then either the buttons or who decided and how.
pub fn plan_card(card: &PlanCard) -> Card {
    let mut blocks = vec![Block::Text(crate::ir::RichText(vec![Inline::Bold(
        "📋 Plan for approval".into(),
    )]))];
    if let Some(actor) = &card.requested_by {
        blocks.push(Block::Fields(vec![(
            "Requested by".to_owned(),
            display_name(actor).to_owned(),
        )]));
    }
    blocks.extend(markdown_to_blocks(&card.plan));
    match &card.state {
        PromptState::Pending => {
            let answer = |label: &str, resolution: Resolution, style| Button {
                label: label.to_owned(),
                action: ButtonAction::Resolve {
                    item_id: card.item_id.clone(),
                    resolution,
                },
                style,
            };
            let approve = |mode| Resolution::Plan {
                approved: true,
                mode: Some(mode),
                feedback: None,
            };
            let reject = Resolution::Plan {
                approved: false,
                mode: None,
                feedback: None,
            };
            blocks.push(Block::Actions(vec![
                answer(
                    "Approve",
                    approve(PermissionMode::Interactive),
                    ButtonStyle::Primary,
                ),
                answer(
                    "Approve in auto mode",
                    approve(PermissionMode::Auto),
                    ButtonStyle::Default,
                ),
                answer("Reject", reject, ButtonStyle::Danger),
            ]));
            blocks.push(Block::Context(vec![Inline::Text(format!(
                "Approve asks before risky steps; auto mode does not. To reject with feedback, \
                 reply in the thread with {} and what to change.",
                card.item_id.reply_token()
            ))]));
        }
        PromptState::Resolved { by, resolution, .. } => {
            let name = display_name(by);
            let line = match resolution {
                Resolution::Plan { approved: true, .. } => format!(
                    "✅ Approved by {name} · {} mode",
                    resolution
                        .plan_mode()
                        .unwrap_or(PermissionMode::Interactive)
                        .as_str()
                ),
                Resolution::Plan {
                    approved: false,
                    feedback: Some(feedback),
                    ..
                } if !feedback.trim().is_empty() => {
                    format!("❌ Rejected by {name}: {}", feedback.trim())
                }
                Resolution::Plan { .. } => format!("❌ Rejected by {name}"),
                other => resolved_line(other, name),
            };
            blocks.push(Block::Context(vec![Inline::Text(line)]));
        }
    }
    Card { blocks }
}

#[cfg(test)]
mod tests {
    use workmate_protocol::{Actor, InboxItemId, Surface, ToolCallId, UserId};

    use super::*;

    fn card(state: PromptState) -> PlanCard {
        PlanCard {
            item_id: InboxItemId::from("ib_plan1"),
            tool_call_id: ToolCallId::from("call_1"),
            turn_id: None,
            plan: "1. Add the route\n2. Test it".into(),
            requested_by: None,
            state,
        }
    }

    fn texts(card: &Card) -> String {
        format!("{card:?}")
    }

    #[test]
    fn a_pending_plan_offers_approve_auto_and_reject_and_names_its_token() {
        let shown = plan_card(&card(PromptState::Pending));
        let Some(Block::Actions(buttons)) =
            shown.blocks.iter().find(|b| matches!(b, Block::Actions(_)))
        else {
            panic!("no buttons: {shown:?}");
        };
        let labels: Vec<&str> = buttons.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(labels, ["Approve", "Approve in auto mode", "Reject"]);
        assert!(matches!(
            &buttons[1].action,
            ButtonAction::Resolve {
                resolution: Resolution::Plan {
                    approved: true,
                    mode: Some(PermissionMode::Auto),
                    ..
                },
                ..
            }
        ));
        let text = texts(&shown);
        assert!(
            text.contains("Add the route") && text.contains("[wm:ib_plan1]"),
            "{text}"
        );
    }

    #[test]
    fn a_decided_plan_says_who_and_how_without_buttons() {
        let by = Actor {
            user_id: UserId::from("u_ana"),
            name: Some("Ana".into()),
        };
        let decided = |resolution| PromptState::Resolved {
            by: by.clone(),
            via: Surface::Slack,
            resolution,
        };
        let approved = plan_card(&card(decided(Resolution::Plan {
            approved: true,
            mode: Some(PermissionMode::Auto),
            feedback: None,
        })));
        assert!(texts(&approved).contains("Approved by Ana · auto mode"));
        assert!(
            !approved
                .blocks
                .iter()
                .any(|b| matches!(b, Block::Actions(_)))
        );
        let rejected = plan_card(&card(decided(Resolution::Plan {
            approved: false,
            mode: None,
            feedback: Some("smaller steps".into()),
        })));
        assert!(texts(&rejected).contains("Rejected by Ana: smaller steps"));
    }
}
