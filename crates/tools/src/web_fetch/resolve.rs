//! Name resolution for `web_fetch`'s client.
//!
//! Invariant: the client connects to a host name only through the addresses returned here, and for
//! a host that is not allow-listed no forbidden address is ever returned — so a name cannot lead
//! to the server itself, its private networks or the metadata service, and since the connection
//! uses these very addresses, re-resolving (DNS rebinding) has nothing to exploit.

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tracing::debug;

use super::guard::{self, GuardError};

/// Resolves with the system resolver, then drops every forbidden address.
#[derive(Debug)]
pub(super) struct GuardedResolver {
    allow_hosts: Arc<[String]>,
}

impl GuardedResolver {
    pub(super) fn new(allow_hosts: Arc<[String]>) -> Self {
        Self { allow_hosts }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_hosts = Arc::clone(&self.allow_hosts);
        Box::pin(async move {
            let addrs = resolve(&allow_hosts, name.as_str()).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The addresses `host` may be reached at (port 0: the client fills in the URL's port).
async fn resolve(allow_hosts: &[String], host: &str) -> Result<Vec<SocketAddr>, GuardError> {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| GuardError(format!("cannot resolve {host}: {e}")))?
        .collect();
    if resolved.is_empty() {
        return Err(GuardError(format!("cannot resolve {host}: no addresses")));
    }
    if guard::host_allowed(allow_hosts, host) {
        return Ok(resolved);
    }
    let (allowed, forbidden): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|addr| guard::forbidden_reason(addr.ip()).is_none());
    if allowed.is_empty() {
        let reasons: Vec<String> = forbidden
            .iter()
            .filter_map(|addr| {
                let reason = guard::forbidden_reason(addr.ip())?;
                Some(format!("{} is {reason}", addr.ip()))
            })
            .collect();
        return Err(GuardError(format!(
            "refusing to fetch from {host}: it resolves only to forbidden addresses ({})",
            reasons.join("; ")
        )));
    }
    if !forbidden.is_empty() {
        debug!(
            host,
            dropped = forbidden.len(),
            "Dropped forbidden addresses."
        );
    }
    Ok(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    // These resolve through /etc/hosts or parse as addresses: no query leaves the machine.

    #[tokio::test]
    async fn forbidden_only_names_are_refused() {
        for host in [
            "localhost",
            "127.0.0.1",
            "169.254.169.254",
            "::1",
            "10.1.2.3",
        ] {
            let error = resolve(&[], host).await.unwrap_err();
            assert!(
                error
                    .0
                    .starts_with(&format!("refusing to fetch from {host}:")),
                "{host}: {error}"
            );
        }
    }

    #[tokio::test]
    async fn allow_listed_names_keep_their_addresses() {
        let allow = vec!["LocalHost.".to_owned()];
        let addrs = resolve(&allow, "localhost").await.unwrap();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    #[tokio::test]
    async fn public_addresses_pass() {
        let addrs = resolve(&[], "93.184.216.34").await.unwrap();
        assert_eq!(addrs, vec!["93.184.216.34:0".parse().unwrap()]);
    }
}
