//! Answering a parked prompt with a chat reply that quotes its token, e.g.
//! "approve [wm:01a22c56]" (spec §4.4).
//!
//! Invariants: a reply without a token is not an answer (it is an ordinary message); the allow
//! and deny vocabularies match whole words only ("disallow" is not "allow", "north-east node" is
//! not "no"), allow is checked first; a question takes the reply's text, minus the token, as its
//! answer; the answer goes through the same authority checks as every other way of answering.

use workmate_protocol::{Actor, ApprovalChoice, InboxItemKind, Resolution, Surface, TenantId};
use workmate_store::ResolveOutcome;

use super::SessionHub;
use crate::{Error, Result};

const ALLOW_WORDS: &[&str] = &["approve", "approved", "allow", "allowed", "yes"];
const DENY_WORDS: &[&str] = &["deny", "denied", "reject", "rejected", "no"];
const ALLOW_EMOJI: &[&str] = &["👍", "✅"];
const DENY_EMOJI: &[&str] = &["👎", "❌"];
/// Shortest id prefix a token may carry.
const MIN_TOKEN: usize = 6;

/// What a reply says about the item its token names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The item id (or its prefix) from the token.
    pub token: String,
    /// Whether the text allows, denies, or answers in words.
    pub verdict: Verdict,
    /// The reply without the token, trimmed.
    pub text: String,
}

/// The allow/deny reading of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// An allow word or emoji.
    Allow,
    /// A deny word or emoji.
    Deny,
    /// Neither: free text.
    Text,
}

/// The token `[wm:<id>]` to put in a message about an item.
pub fn reply_token(item: &workmate_protocol::InboxItemId) -> String {
    item.reply_token()
}

/// Reads a reply; `None` when it quotes no token.
pub fn parse_reply(text: &str) -> Option<Reply> {
    let start = text.find("[wm:")?;
    let rest = &text[start + 4..];
    let end = rest.find(']')?;
    let token = rest[..end].trim().to_ascii_lowercase();
    if token.len() < MIN_TOKEN || !token.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return None;
    }
    let without = format!("{}{}", &text[..start], &rest[end + 1..]);
    let lowered = without.to_lowercase();
    let words: Vec<&str> = lowered
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |vocabulary: &[&str], emoji: &[&str]| {
        words.iter().any(|w| vocabulary.contains(w)) || emoji.iter().any(|e| without.contains(e))
    };
    let verdict = if has(ALLOW_WORDS, ALLOW_EMOJI) {
        Verdict::Allow
    } else if has(DENY_WORDS, DENY_EMOJI) {
        Verdict::Deny
    } else {
        Verdict::Text
    };
    Some(Reply {
        token,
        verdict,
        text: without.trim().to_owned(),
    })
}

impl SessionHub {
    /// Answers the item a chat reply's token names. `Ok(None)` when the reply carries no token
    /// (route it as an ordinary message instead).
    pub async fn resolve_reply(
        &self,
        tenant: &TenantId,
        text: &str,
        actor: &Actor,
        via: Surface,
    ) -> Result<Option<ResolveOutcome>> {
        let Some(reply) = parse_reply(text) else {
            return Ok(None);
        };
        let mut items = self
            .store()
            .inbox()
            .with_id_prefix(tenant, &reply.token, 2)
            .await?;
        let item = match items.len() {
            0 => return Ok(Some(ResolveOutcome::NotFound)),
            1 => items.remove(0),
            _ => {
                return Err(Error::Rejected(format!(
                    "[wm:{}] matches more than one item; quote more of its id",
                    reply.token
                )));
            }
        };
        let resolution = match (item.kind, reply.verdict) {
            (InboxItemKind::Question, _) if !reply.text.is_empty() => {
                Resolution::Answer { text: reply.text }
            }
            (InboxItemKind::Question, _) => {
                return Err(Error::Rejected(
                    "the reply has no answer besides the token".into(),
                ));
            }
            (InboxItemKind::Plan, Verdict::Allow) => Resolution::Plan {
                approved: true,
                mode: None,
                feedback: None,
            },
            // Any other reply to a plan rejects it, its text (the token taken out) the feedback.
            (InboxItemKind::Plan, _) => Resolution::Plan {
                approved: false,
                mode: None,
                feedback: Some(reply.text).filter(|t| !t.is_empty()),
            },
            (_, Verdict::Allow) => Resolution::Approval {
                choice: ApprovalChoice::Once,
            },
            (_, Verdict::Deny) => Resolution::Approval {
                choice: ApprovalChoice::Deny,
            },
            (_, Verdict::Text) => {
                return Err(Error::Rejected(
                    "answer with approve / allow / yes / 👍 or deny / no / 👎, and the token"
                        .into(),
                ));
            }
        };
        self.resolve(tenant, &item.id, &resolution, actor, via)
            .await
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(text: &str) -> Option<Verdict> {
        parse_reply(text).map(|r| r.verdict)
    }

    #[test]
    fn whole_words_decide_and_allow_wins() {
        assert_eq!(verdict("approve [wm:01a22c56]"), Some(Verdict::Allow));
        assert_eq!(verdict("[wm:01a22c56] Yes, go ahead"), Some(Verdict::Allow));
        assert_eq!(verdict("👍 [wm:01a22c56]"), Some(Verdict::Allow));
        assert_eq!(verdict("no [wm:01a22c56]"), Some(Verdict::Deny));
        assert_eq!(verdict("❌ [wm:01a22c56]"), Some(Verdict::Deny));
        assert_eq!(
            verdict("yes and no [wm:01a22c56]"),
            Some(Verdict::Allow),
            "allow is checked first"
        );
        assert_eq!(verdict("disallow [wm:01a22c56]"), Some(Verdict::Text));
        assert_eq!(
            verdict("north-east node [wm:01a22c56]"),
            Some(Verdict::Text)
        );
        assert_eq!(verdict("nothing to see [wm:01a22c56]"), Some(Verdict::Text));
    }

    #[test]
    fn replies_without_a_valid_token_are_not_answers() {
        assert_eq!(parse_reply("approve"), None);
        assert_eq!(parse_reply("approve [wm:abc]"), None, "too short");
        assert_eq!(parse_reply("approve [wm:zzzzzzzz]"), None, "not an id");
        assert_eq!(parse_reply("approve [wm:01a22c56"), None, "unclosed");
        let reply = parse_reply("Last week, please [WM:01A22C56-A186]").map(|r| (r.token, r.text));
        assert_eq!(reply, None, "the token is lower-case wm");
        let reply = parse_reply("Last week, please [wm:01A22C56-A186]").unwrap();
        assert_eq!(
            (reply.token.as_str(), reply.text.as_str()),
            ("01a22c56-a186", "Last week, please")
        );
    }
}
