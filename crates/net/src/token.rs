//! Short-lived access tokens, cached the same way for every API that issues them:
//! [`AccessToken`] for one app (Feishu's `tenant_access_token`, DingTalk's and WeCom's
//! `access_token`, held by each platform's adapter), [`TokenCache`] for many (the connectors'
//! apps and people's sign-ins, by a digest of the credential each was issued for).
//!
//! Invariants: at most one fetch per credential runs at a time (callers wait for it rather than
//! fetching again); a token is handed out only while more than the refresh margin of its life is
//! left, so no call starts with a token about to expire; [`AccessToken::forget`] drops a token
//! the issuer refused, unless another call replaced it already; a [`TokenCache`] keeps no
//! secret it was given, only a SHA-256 digest of the credential.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
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

impl AccessToken {
    /// Whether it holds no token it would hand out (and no fetch is running).
    fn is_spent(&self) -> bool {
        let margin = Instant::now() + self.refresh_ahead;
        self.current
            .try_lock()
            .is_ok_and(|current| current.as_ref().is_none_or(|(_, until)| *until <= margin))
    }
}

/// The tokens of many credentials, each with [`AccessToken`]'s guarantees.
#[derive(Debug)]
pub struct TokenCache {
    refresh_ahead: Duration,
    tokens: std::sync::Mutex<HashMap<[u8; 32], Arc<AccessToken>>>,
}

impl TokenCache {
    /// An empty cache whose tokens are replaced `refresh_ahead` before they expire.
    pub fn new(refresh_ahead: Duration) -> Self {
        Self {
            refresh_ahead,
            tokens: std::sync::Mutex::default(),
        }
    }

    /// The token slot of the credential made of `parts` (an issuer, a client id, a secret...);
    /// adding one drops the slots whose tokens ran out.
    pub fn of(&self, parts: &[&str]) -> Arc<AccessToken> {
        let mut digest = Sha256::new();
        for part in parts {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        let key: [u8; 32] = digest.finalize().into();
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(token) = tokens.get(&key) {
            return Arc::clone(token);
        }
        tokens.retain(|_, token| Arc::strong_count(token) > 1 || !token.is_spent());
        let token = Arc::new(AccessToken::new(self.refresh_ahead));
        tokens.insert(key, Arc::clone(&token));
        token
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

    #[tokio::test]
    async fn a_cache_keeps_one_token_per_credential_and_drops_spent_ones() {
        let cache = TokenCache::new(Duration::from_secs(60));
        let fetch = |name: &'static str, life: u64| {
            move || async move { Ok::<_, ()>((name.to_owned(), Duration::from_secs(life))) }
        };
        let ana = cache.of(&["issuer", "ana", "secret"]);
        assert_eq!(ana.get(fetch("a", 7200)).await, Ok("a".to_owned()));
        let again = cache.of(&["issuer", "ana", "secret"]);
        assert_eq!(again.get(fetch("x", 7200)).await, Ok("a".to_owned()));
        // Parts are separated: ("ab", "c") is not ("a", "bc").
        let bo = cache.of(&["issuer", "an", "asecret"]);
        assert_eq!(bo.get(fetch("b", 30)).await, Ok("b".to_owned()));
        drop((ana, again, bo));
        // Bo's token has less than the margin left: spent, and dropped when a slot is added.
        let _chen = cache.of(&["issuer", "chen", "secret"]);
        let held = cache.tokens.lock().unwrap().len();
        assert_eq!(held, 2, "Ana's live token and Chen's new slot");
    }
}
