//! Calling the model under the tenant's gateway policy (tenant setting `gateway`): retries with
//! jittered backoff before the first streamed token, then the ordered fallback list, and daily
//! token budgets for the tenant and for each person.
//!
//! Invariants: nothing is retried or re-asked of another model once a token has streamed (the
//! user would see the answer twice); a fallback is announced with `model_fallback`; a retry wait
//! honours `Retry-After` and ends at once when the turn is stopped; a turn whose tenant or person
//! has spent the day's budget ends with a `budget_exhausted` error before any model call.

use std::time::Duration;

use serde::Deserialize;
use workmate_protocol::EventKind;
use workmate_providers::{ProviderError, ProviderErrorKind};

use super::Turn;
use super::stream::{Partial, Streamed};
use crate::Result;

/// The tenant's gateway policy.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct GatewayPolicy {
    /// Models to try, in order, when the session's model is overloaded or failing.
    pub(crate) fallback: Vec<String>,
    /// Retries of one model before moving on (default 2).
    pub(crate) retries: Option<u32>,
    /// Tokens the whole tenant may use per UTC day.
    pub(crate) daily_tokens: Option<u64>,
    /// Tokens one person may use per UTC day.
    pub(crate) daily_tokens_per_user: Option<u64>,
    /// Model calls the whole tenant may start per minute; a call over the limit waits.
    pub(crate) requests_per_minute: Option<u32>,
    /// The tenant's data may only go to its private model: every call uses `private_model`.
    pub(crate) sensitive: bool,
    /// The model of a sensitive tenant.
    pub(crate) private_model: Option<String>,
    /// Per-persona routes: sessions of a persona use its model instead of their own.
    pub(crate) routes: Vec<Route>,
}

/// Sends a persona's sessions to a model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Route {
    /// The persona.
    pub(crate) persona: String,
    /// The `provider:model` its sessions use.
    pub(crate) model: String,
}

impl GatewayPolicy {
    /// The model a session's calls go to: a sensitive tenant's private model, else its persona's
    /// route, else the session's own model.
    pub(crate) fn route(
        &self,
        persona: &str,
        session_model: &str,
    ) -> Result<String, ProviderError> {
        if self.sensitive {
            return self.private_model.clone().ok_or_else(|| {
                ProviderError::new(
                    ProviderErrorKind::Access,
                    "this workspace is marked sensitive but has no private model; an admin must set gateway.private_model",
                )
            });
        }
        Ok(self
            .routes
            .iter()
            .find(|r| r.persona == persona)
            .map_or_else(|| session_model.to_owned(), |r| r.model.clone()))
    }
}

/// Checks a tenant's `gateway` setting with the parser turns use, so a setting the engine would
/// ignore is refused when it is set. The error says what is wrong.
pub fn check_gateway_policy(value: &serde_json::Value) -> Result<(), String> {
    if !value.is_object() {
        return Err("is an object such as {\"fallback\": [\"openai:gpt-4o-mini\"], \"daily_tokens\": 2000000}".into());
    }
    let policy: GatewayPolicy = serde_json::from_value(value.clone())
        .map_err(|e| format!("is not a valid gateway policy: {e}"))?;
    if policy.sensitive && policy.private_model.is_none() {
        return Err("marks the workspace sensitive but names no `private_model`".into());
    }
    Ok(())
}

/// First retry wait; each further one doubles, up to [`MAX_BACKOFF`].
const BASE_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// The longest `Retry-After` honoured; a longer one moves on to the next model.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

impl Turn {
    /// The tenant's policy (`gateway` in its settings); an unreadable one is ignored with a warning.
    pub(crate) async fn load_gateway_policy(&self) -> Result<GatewayPolicy> {
        let tenant = self.deps.store.tenants().get(&self.emit.tenant).await?;
        let Some(raw) = tenant.and_then(|t| t.settings.get("gateway").cloned()) else {
            return Ok(GatewayPolicy::default());
        };
        Ok(serde_json::from_value(raw).unwrap_or_else(|e| {
            tracing::warn!(tenant = %self.emit.tenant, error = %e, "Ignoring the tenant's unreadable gateway policy.");
            GatewayPolicy::default()
        }))
    }

    /// Calls the session's model, retrying and falling back as the policy says.
    pub(crate) async fn stream_model(&mut self) -> Result<Streamed> {
        if let Some(error) = self.budget_error().await? {
            return Ok(Streamed::Failed {
                error,
                partial: Partial::default(),
            });
        }
        let first = match self
            .gateway
            .route(&self.session.persona, &self.session.model)
        {
            Ok(model) => model,
            Err(error) => {
                return Ok(Streamed::Failed {
                    error,
                    partial: Partial::default(),
                });
            }
        };
        let mut candidates = vec![first];
        // A sensitive tenant's data never leaves for a fallback.
        if !self.gateway.sensitive {
            for model in &self.gateway.fallback {
                if !candidates.contains(model) {
                    candidates.push(model.clone());
                }
            }
        }
        let retries = self.gateway.retries.unwrap_or(2);
        let mut last = None;
        for (index, model) in candidates.iter().enumerate() {
            for attempt in 0..=retries {
                if !self.wait_for_rate_limit().await {
                    return Ok(Streamed::Interrupted {
                        partial: Partial::default(),
                    });
                }
                self.answering_model.clone_from(model);
                match self.stream_once(model).await? {
                    Streamed::Failed { error, partial }
                        if partial.is_empty() && retryable(&error) =>
                    {
                        let wait = backoff(attempt, error.retry_after);
                        last = Some(error);
                        if attempt == retries || wait.is_none() {
                            break;
                        }
                        let wait = wait.unwrap_or(MAX_BACKOFF);
                        tokio::select! {
                            () = self.cancel.cancelled() => return Ok(Streamed::Interrupted { partial: Partial::default() }),
                            () = tokio::time::sleep(wait) => {}
                        }
                    }
                    other => return Ok(other),
                }
            }
            if let (Some(next), Some(error)) = (candidates.get(index + 1), &last) {
                let event = EventKind::ModelFallback {
                    from: model.clone(),
                    to: next.clone(),
                    reason: error.message.clone(),
                };
                self.emit.state(event)?;
            }
        }
        let error = last
            .unwrap_or_else(|| ProviderError::new(ProviderErrorKind::Other, "no model answered"));
        Ok(Streamed::Failed {
            error,
            partial: Partial::default(),
        })
    }
}

impl Turn {
    /// The budget error, when the tenant or the person asking has spent today's tokens.
    async fn budget_error(&self) -> Result<Option<ProviderError>> {
        let (tenant_limit, user_limit) = (
            self.gateway.daily_tokens,
            self.gateway.daily_tokens_per_user,
        );
        if tenant_limit.is_none() && user_limit.is_none() {
            return Ok(None);
        }
        let day = workmate_store::utc_day(self.deps.clock.now_ms());
        let usage = self.deps.store.usage();
        if let Some(limit) = tenant_limit {
            let used = usage.tokens_on_day(&self.emit.tenant, None, &day).await?;
            if used >= limit {
                return Ok(Some(budget(format!(
                    "This workspace has used its daily model budget ({used} of {limit} tokens). It resets at midnight UTC; an admin can raise gateway.daily_tokens."
                ))));
            }
        }
        if let Some(limit) = user_limit {
            let used = usage
                .tokens_on_day(&self.emit.tenant, Some(&self.requester), &day)
                .await?;
            if used >= limit {
                return Ok(Some(budget(format!(
                    "You have used your daily model budget ({used} of {limit} tokens). It resets at midnight UTC; an admin can raise gateway.daily_tokens_per_user."
                ))));
            }
        }
        Ok(None)
    }
}

impl Turn {
    /// Waits until the tenant may start another model call; `false` if the turn was stopped
    /// while waiting.
    async fn wait_for_rate_limit(&self) -> bool {
        let Some(limit) = self.gateway.requests_per_minute else {
            return true;
        };
        loop {
            let now = self.deps.clock.now_ms();
            let key = format!("model-calls:{}", self.emit.tenant);
            let wait = self.deps.coordinator.try_acquire(&key, limit, now).await;
            let Some(wait) = wait else {
                return true;
            };
            tokio::select! {
                () = self.cancel.cancelled() => return false,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

fn budget(message: String) -> ProviderError {
    ProviderError::new(ProviderErrorKind::Quota, message)
}

/// Whether another attempt (or another model) might succeed.
fn retryable(error: &ProviderError) -> bool {
    matches!(
        error.kind,
        ProviderErrorKind::Unavailable | ProviderErrorKind::RateLimited
    )
}

/// How long to wait before attempt `attempt + 1`; `None` when the server asked for longer than
/// is worth waiting.
fn backoff(attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
    if let Some(after) = retry_after {
        return (after <= MAX_RETRY_AFTER).then_some(after);
    }
    let doubled = BASE_BACKOFF
        .saturating_mul(2u32.saturating_pow(attempt))
        .min(MAX_BACKOFF);
    // Jitter between half and the whole wait, so retries from many sessions do not align.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let fraction = 0.5 + f64::from(nanos % 1000) / 2000.0;
    Some(doubled.mul_f64(fraction))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_honours_retry_after() {
        for attempt in 0..6 {
            let wait = backoff(attempt, None).unwrap();
            let full = BASE_BACKOFF
                .saturating_mul(2u32.pow(attempt))
                .min(MAX_BACKOFF);
            assert!(
                wait >= full / 2 && wait <= full,
                "attempt {attempt}: {wait:?}"
            );
        }
        assert_eq!(
            backoff(0, Some(Duration::from_secs(7))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            backoff(0, Some(Duration::from_secs(600))),
            None,
            "too long: move on"
        );
    }
}
