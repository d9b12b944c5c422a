//! [`AccessToken`]: the cached access token every platform's server API wants (Feishu's
//! `tenant_access_token`, DingTalk's and WeCom's `access_token`), the same way on each.
//!
//! Invariants: at most one fetch runs at a time (callers wait for it rather than fetching
//! again); a token is handed out only while more than the refresh margin of its life is left, so
//! no call starts with a token about to expire; [`AccessToken::forget`] drops a token the
//! platform refused, unless another call replaced it already.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

/// How long before its expiry a token is replaced, unless a platform says otherwise.
pub const REFRESH_AHEAD: Duration = Duration::from_secs(180);

/// One app's token.
#[derive(Debug)]
pub struct AccessToken {
    refresh_ahead: Duration,
    current: Mutex<Option<(String, Instant)>>,
}

impl Default for AccessToken {
    fn default() -> Self {
        Self::new(REFRESH_AHEAD)
    }
}

impl AccessToken {
    /// No token yet; one is replaced `refresh_ahead` before it expires.
    pub fn new(refresh_ahead: Duration) -> Self {
        Self {
            refresh_ahead,
            current: Mutex::new(None),
        }
    }

    /// A token with time left: the cached one, or what `fetch` gives (the token and how long
    /// it lives).
    pub async fn get<E, F, Fut>(&self, fetch: F) -> Result<String, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(String, Duration), E>>,
    {
        let mut current = self.current.lock().await;
        if let Some((token, until)) = current.as_ref()
            && *until > Instant::now() + self.refresh_ahead
        {
            return Ok(token.clone());
        }
        let (token, life) = fetch().await?;
        *current = Some((token.clone(), Instant::now() + life));
        Ok(token)
    }

    /// Forgets `token`, which the platform refused (unless another call replaced it already).
    pub async fn forget(&self, token: &str) {
        let mut current = self.current.lock().await;
        if current.as_ref().is_some_and(|(t, _)| t == token) {
            *current = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_token_is_fetched_once_then_again_when_refused_or_near_its_end() {
        let token = AccessToken::new(Duration::from_secs(60));
        let fetch = |name: &'static str, life: u64| {
            move || async move { Ok::<_, ()>((name.to_owned(), Duration::from_secs(life))) }
        };
        assert_eq!(token.get(fetch("a", 7200)).await, Ok("a".to_owned()));
        assert_eq!(token.get(fetch("b", 7200)).await, Ok("a".to_owned()));
        token.forget("other").await;
        assert_eq!(token.get(fetch("b", 7200)).await, Ok("a".to_owned()));
        token.forget("a").await;
        assert_eq!(token.get(fetch("b", 30)).await, Ok("b".to_owned()));
        // Less than the margin left: replaced at once.
        assert_eq!(token.get(fetch("c", 7200)).await, Ok("c".to_owned()));
        let refused = token.get(|| async { Err::<(String, Duration), _>("down") });
        assert_eq!(refused.await, Ok("c".to_owned()));
    }
}
