//! Requests and stream readers shared by the tests.

use workmate_protocol::{Message, SessionId};
use workmate_providers::{
    AssistantTurn, ModelProvider, ModelRequest, ModelStream, ProviderError, ScriptedProvider,
    StreamEvent,
};

/// A request from `session` whose history opens with `first_user` and holds `replies` earlier
/// assistant messages.
pub(crate) fn request(session: &SessionId, first_user: &str, replies: usize) -> ModelRequest {
    let mut messages = vec![
        Message::System {
            content: "You are a coworker.".into(),
        },
        Message::User {
            content: first_user.into(),
            ts: 1,
            author: None,
            display: None,
        },
    ];
    for n in 0..replies {
        messages.push(Message::Assistant {
            content: format!("reply {n}"),
            ts: 2,
            tool_calls: Vec::new(),
            reasoning: None,
            usage: None,
            provider_state: Box::default(),
        });
        messages.push(Message::User {
            content: "go on".into(),
            ts: 3,
            author: None,
            display: None,
        });
    }
    ModelRequest {
        session_id: session.clone(),
        model: "demo".into(),
        messages,
        tools: Vec::new(),
    }
}

/// Everything a stream delivered: its events, then the error it ended with, if any.
#[derive(Debug, Default)]
pub(crate) struct Played {
    pub(crate) events: Vec<StreamEvent>,
    pub(crate) error: Option<ProviderError>,
}

impl Played {
    pub(crate) fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn reply(&self) -> &AssistantTurn {
        match self.events.last() {
            Some(StreamEvent::Completed(turn)) => turn,
            other => panic!(
                "expected a completed turn, got {other:?} (error {:?})",
                self.error
            ),
        }
    }

    pub(crate) fn error_message(&self) -> &str {
        &self
            .error
            .as_ref()
            .expect("the stream should have failed")
            .message
    }
}

pub(crate) async fn drain(mut stream: ModelStream) -> Played {
    let mut played = Played::default();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => played.events.push(event),
            Err(error) => {
                played.error = Some(error);
                break;
            }
        }
    }
    played
}

/// Plays one call of `session`.
pub(crate) async fn play(
    provider: &ScriptedProvider,
    session: &SessionId,
    first_user: &str,
    replies: usize,
) -> Played {
    drain(provider.stream(request(session, first_user, replies))).await
}
