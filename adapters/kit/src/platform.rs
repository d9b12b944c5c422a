//! A chat platform as the chat layer uses it: its card plumbing plus the few calls that are not
//! about cards.
//!
//! Invariant: every method is wire format only. A platform never decides who may do what, never
//! reads or writes the store, and never retries on its own: the chat layer wraps its calls in
//! the one [`crate::RetryPolicy`].

use workmate_cards::Card;

use crate::{AdapterError, BoxFuture, ChatAdapter, ChatTarget};

/// What a platform knows about one of its users.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The name the platform shows for them.
    pub name: Option<String>,
    /// Their IANA time zone, when the platform keeps one.
    pub time_zone: Option<String>,
}

/// One chat platform: cards, notices and profiles.
pub trait Platform: ChatAdapter {
    /// What the platform says about `user`. Bounded in time by the implementation: a platform
    /// that does not answer quickly gives [`Profile::default`], and callers fall back to ids.
    fn profile<'a>(&'a self, user: &'a str) -> BoxFuture<'a, Profile>;

    /// Posts a short text in a thread, visible to everyone in it.
    fn notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), AdapterError>>;

    /// Shows a card to one person only, in a thread (Slack ephemeral message, Feishu and
    /// DingTalk private card, WeCom single-user message).
    fn private_notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        user: &'a str,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), AdapterError>>;
}
