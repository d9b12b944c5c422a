//! Name resolution for the guarded egress.
//!
//! Invariant: a client connects to a host name only through the addresses returned here, and no
//! address the [`NetworkPolicy`] refuses is ever returned; since the connection uses these very
//! addresses, a name that resolves differently a moment later (DNS rebinding) gains nothing.

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tracing::debug;

use crate::policy::NetworkPolicy;

/// The resolver's refusal; found again in a failed request's causes.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refusal(pub(crate) String);

/// Resolves with the system resolver, then drops every address the policy refuses.
#[derive(Debug)]
pub(crate) struct GuardedResolver {
    policy: Arc<NetworkPolicy>,
}

impl GuardedResolver {
    pub(crate) fn new(policy: Arc<NetworkPolicy>) -> Self {
        Self { policy }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        Box::pin(async move {
            let addrs = resolve(&policy, name.as_str()).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The addresses `host` may be reached at under `policy`, for a program that connects on its own
/// (and is told to use exactly these, so it cannot resolve anew): an IP literal is checked as
/// it is, a name is resolved and its refused addresses dropped.
pub async fn resolve_allowed(
    policy: &NetworkPolicy,
    host: &str,
) -> Result<Vec<std::net::IpAddr>, crate::EgressError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return match policy.refusal(bare, ip) {
            Some(reason) => Err(crate::EgressError::refused(format!(
                "refusing {host}: {reason} (an operator can allow it with [network] allow_private)"
            ))),
            None => Ok(vec![ip]),
        };
    }
    let addrs = resolve(policy, bare)
        .await
        .map_err(|e| crate::EgressError::refused(e.0))?;
    Ok(addrs.into_iter().map(|a| a.ip()).collect())
}

/// The addresses `host` may be reached at (port 0: the client fills in the URL's port).
pub(crate) async fn resolve(
    policy: &NetworkPolicy,
    host: &str,
) -> Result<Vec<SocketAddr>, Refusal> {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| Refusal(format!("cannot resolve {host}: {e}")))?
        .collect();
    if resolved.is_empty() {
        return Err(Refusal(format!("cannot resolve {host}: no addresses")));
    }
    let (allowed, refused): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|addr| policy.refusal(host, addr.ip()).is_none());
    if allowed.is_empty() {
        let reasons: Vec<String> = refused
            .iter()
            .filter_map(|addr| policy.refusal(host, addr.ip()))
            .collect();
        return Err(Refusal(format!(
            "refusing {host}: it resolves only to addresses that are not public ({}); an \
             operator can allow it with [network] allow_private",
            reasons.join("; ")
        )));
    }
    if !refused.is_empty() {
        debug!(
            host,
            dropped = refused.len(),
            "Dropped non-public addresses."
        );
    }
    Ok(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    // These resolve through /etc/hosts or parse as addresses: no query leaves the machine.

    #[tokio::test]
    async fn names_of_non_public_addresses_are_refused() {
        let policy = NetworkPolicy::public_only();
        for host in [
            "localhost",
            "127.0.0.1",
            "169.254.169.254",
            "::1",
            "10.1.2.3",
        ] {
            let error = resolve(&policy, host).await.unwrap_err();
            assert!(
                error.0.starts_with(&format!("refusing {host}:")),
                "{host}: {error}"
            );
        }
    }

    #[tokio::test]
    async fn operator_named_hosts_and_ranges_keep_their_addresses() {
        let policy = NetworkPolicy::allow_private(["LocalHost.", "10.1.0.0/16"]).unwrap();
        let addrs = resolve(&policy, "localhost").await.unwrap();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        resolve(&policy, "10.1.2.3").await.unwrap();
        assert!(resolve(&policy, "10.2.0.1").await.is_err());
    }

    #[tokio::test]
    async fn public_addresses_pass() {
        let addrs = resolve(&NetworkPolicy::public_only(), "93.184.216.34")
            .await
            .unwrap();
        assert_eq!(addrs, vec!["93.184.216.34:0".parse().unwrap()]);
    }
}
