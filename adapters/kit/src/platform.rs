//! A chat platform as the chat layer uses it: its card plumbing plus the few calls that are not
//! about cards.
//!
//! Invariant: every method is wire format only. A platform never decides who may do what, never
//! reads or writes the store, and never retries on its own: the chat layer wraps its calls in
//! the one [`crate::RetryPolicy`]. A profile lookup never fails and never waits past its bound:
//! [`bounded_profile`] turns an error or a slow answer into [`Profile::default`].

use std::fmt::Display;
use std::time::Duration;

use workmate_cards::Card;

use crate::{AdapterError, BoxFuture, ChatAdapter, ChatTarget, Downloaded, InboundFile};

/// What a platform knows about one of its users.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The name the platform shows for them.
    pub name: Option<String>,
    /// Their IANA time zone, when the platform keeps one.
    pub time_zone: Option<String>,
    /// Their e-mail address, when the platform shares it (Slack needs `users:read.email`,
    /// Feishu the contact e-mail scope).
    pub email: Option<String>,
}

/// How long a profile lookup may take before callers fall back to ids, unless a platform needs a
/// tighter bound.
pub const PROFILE_LOOKUP: Duration = Duration::from_millis(1_500);

/// The profile `lookup` answers with, or [`Profile::default`] when it fails or takes longer than
/// `bound`. A failure is logged at debug level as "No answer from `what`."; a timeout is not
/// logged (the caller falls back to ids either way).
pub async fn bounded_profile<F, E>(bound: Duration, lookup: F, what: &str) -> Profile
where
    F: Future<Output = Result<Profile, E>>,
    E: Display,
{
    match tokio::time::timeout(bound, lookup).await {
        Ok(Ok(profile)) => profile,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "No answer from {what}.");
            Profile::default()
        }
        Err(_) => Profile::default(),
    }
}

/// One chat platform: cards, notices and profiles.
pub trait Platform: ChatAdapter {
    /// What the platform says about `user`. Bounded in time by the implementation (with
    /// [`bounded_profile`]): a platform that does not answer quickly gives [`Profile::default`],
    /// and callers fall back to ids.
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

    /// Fetches a file shared with a message, at most `max_bytes` of it: a larger file is
    /// refused (`Rejected`, naming the limit) rather than cut. Platforms without a file API
    /// refuse every file.
    fn download<'a>(
        &'a self,
        file: &'a InboundFile,
        max_bytes: u64,
    ) -> BoxFuture<'a, Result<Downloaded, AdapterError>> {
        let _ = max_bytes;
        Box::pin(async move {
            Err(AdapterError::Rejected(format!(
                "{} cannot fetch shared files, so {} was not read",
                self.surface().as_str(),
                file.name
            )))
        })
    }

    /// How many entries each of the platform's in-memory caches holds, by cache name (for
    /// `/metrics`); none by default.
    fn cached_items(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ana() -> Profile {
        Profile {
            name: Some("Ana".into()),
            time_zone: Some("Europe/Lisbon".into()),
            email: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_lookup_answers_within_its_bound_or_gives_the_default() {
        let answered = bounded_profile(PROFILE_LOOKUP, async { Ok::<_, String>(ana()) }, "a test");
        assert_eq!(answered.await, ana());
        let failed = bounded_profile(PROFILE_LOOKUP, async { Err("no".to_owned()) }, "a test");
        assert_eq!(failed.await, Profile::default());
        let late = async {
            tokio::time::sleep(PROFILE_LOOKUP + Duration::from_millis(1)).await;
            Ok::<_, String>(ana())
        };
        let started = tokio::time::Instant::now();
        assert_eq!(
            bounded_profile(PROFILE_LOOKUP, late, "a test").await,
            Profile::default()
        );
        assert_eq!(started.elapsed(), PROFILE_LOOKUP);
        let in_time = async {
            tokio::time::sleep(PROFILE_LOOKUP - Duration::from_millis(1)).await;
            Ok::<_, String>(ana())
        };
        assert_eq!(
            bounded_profile(PROFILE_LOOKUP, in_time, "a test").await,
            ana()
        );
    }
}
