//! Tools the engine answers itself, by asking a person: `ask_user`.
//!
//! Invariant: the person's answer is the consent, so these bypass the policy; like approvals they
//! are parked once per tool call and a stop answers them without an answer.

use schemars::JsonSchema;
use serde::Deserialize;
use workmate_protocol::{
    EventKind, InboxItemKind, Question, QuestionOption, Resolution, ToolCall, ToolSpec, ToolStatus,
};
use workmate_store::NewInboxItem;

use super::outcome::Outcome;
use super::{INTERRUPTED_BY_USER, Turn};
use crate::Result;
use crate::inbox_wait::Waited;

/// The name of the question tool.
pub(crate) const ASK_USER: &str = "ask_user";

/// `ask_user` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct AskUserArgs {
    /// The question to ask the user.
    question: String,
    /// Answers to offer as buttons.
    #[serde(default)]
    options: Vec<String>,
    /// Whether a free-text answer is allowed (default true).
    #[serde(default = "yes")]
    allow_text: bool,
    /// Whether several options may be chosen.
    #[serde(default)]
    multi: bool,
    /// A short label for the question.
    #[serde(default)]
    header: String,
}

fn yes() -> bool {
    true
}

/// The spec offered to models.
pub(crate) fn ask_user_spec() -> ToolSpec {
    ToolSpec {
        name: ASK_USER.into(),
        description: "Ask the user a question and wait for the answer. Use it when you cannot proceed without a decision or a fact only the user has.".into(),
        parameters: serde_json::to_value(schemars::schema_for!(AskUserArgs)).unwrap_or_default(),
    }
}

impl Turn {
    /// Parks the question and answers the call with the user's reply.
    pub(crate) async fn ask_user(&mut self, call: &ToolCall) -> Result<()> {
        let args: AskUserArgs = match serde_json::from_value(call.arguments.clone()) {
            Ok(args) => args,
            Err(e) => {
                let reason = format!(
                    "invalid ask_user arguments: {e}; pass at least {{\"question\": \"…\"}}"
                );
                return self
                    .answer(call, Outcome::not_executed(ToolStatus::Error, &reason))
                    .await;
            }
        };
        let options: Vec<QuestionOption> = args
            .options
            .iter()
            .map(|label| QuestionOption {
                label: label.clone(),
                description: None,
                recommended: false,
                preview: None,
            })
            .collect();
        let new = NewInboxItem {
            session_id: self.emit.session.clone(),
            tool_call_id: Some(call.id.clone()),
            kind: InboxItemKind::Question,
            title: args.question.clone(),
            body: String::new(),
            inbox: "default".into(),
            visibility: self.visibility(),
            requested_by: Some(self.requester.clone()),
            data: serde_json::json!({ "options": args.options, "allow_text": args.allow_text, "multi": args.multi, "header": args.header }),
        };
        let (item, created) = self.park(new).await?;
        if created {
            self.emit.state(EventKind::QuestionRequested {
                tool_call_id: call.id.clone(),
                question: args.question.clone(),
                options: options.clone(),
                allow_text: args.allow_text,
                multi: args.multi,
                header: args.header.clone(),
                questions: vec![Question {
                    question: args.question,
                    header: args.header,
                    options,
                    allow_text: args.allow_text,
                    multi: args.multi,
                }],
            })?;
            self.announce_parked(&item).await?;
        }
        let outcome = match self.wait_for(&item).await? {
            Waited::Resolved(item) => match item.resolution {
                Some(Resolution::Answer { text }) if !text.trim().is_empty() => {
                    Outcome::answered(ToolStatus::Ok, &serde_json::json!({ "answer": text }))
                }
                _ => Outcome::answered(
                    ToolStatus::Error,
                    &serde_json::json!({ "answer": "", "error": "no answer" }),
                ),
            },
            Waited::Interrupted => {
                let mut outcome = Outcome::answered(
                    ToolStatus::Interrupted,
                    &serde_json::json!({ "answer": "", "error": INTERRUPTED_BY_USER }),
                );
                outcome.reason = Some(INTERRUPTED_BY_USER.into());
                outcome
            }
        };
        self.answer(call, outcome).await
    }
}
