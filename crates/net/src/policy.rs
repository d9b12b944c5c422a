//! What the guarded egress may reach besides the public internet: the operator's
//! `[network] allow_private`, host names and address ranges, never a tenant's.
//!
//! Invariant: a destination is reachable when its address is public, or when the operator named
//! its host or a range holding its address. Plain http is accepted for a request that carries
//! credentials only to a host (or address) the operator named, so a tenant cannot make a token
//! travel in clear.

use std::net::IpAddr;

use url::{Host, Url};

use crate::address::{embedded_v4, forbidden_reason};
use crate::error::{EgressError, origin};

/// An `allow_private` entry that is neither a host name, an address nor a range.
#[derive(Debug, thiserror::Error)]
#[error("{entry:?} is not a host name, an IP address or a range such as 10.20.0.0/16: {why}")]
pub struct PolicyError {
    entry: String,
    why: &'static str,
}

/// An address range, `10.20.0.0/16` or `fd00::/8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    network: IpAddr,
    prefix: u8,
}

impl Range {
    fn parse(text: &str) -> Option<Result<Self, &'static str>> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .ok()?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix.map(str::parse::<u8>) {
            None => bits,
            Some(Ok(prefix)) if prefix <= bits => prefix,
            Some(_) => return Some(Err("the prefix length is not a number in range")),
        };
        Some(Ok(Self { network, prefix }))
    }

    fn contains(&self, ip: IpAddr) -> bool {
        // An IPv4 address written as IPv6 (mapped, NAT64, …) is matched as the IPv4 it is.
        let ip = match ip {
            IpAddr::V6(v6) => embedded_v4(v6).map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_match(&net.octets(), &ip.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_match(&net.octets(), &ip.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_match(network: &[u8], ip: &[u8], prefix: u8) -> bool {
    let mut left = usize::from(prefix);
    for (n, a) in network.iter().zip(ip) {
        if left == 0 {
            return true;
        }
        let bits = left.min(8);
        let mask = 0xffu8 << (8 - bits);
        if n & mask != a & mask {
            return false;
        }
        left -= bits;
    }
    true
}

/// The operator's exceptions to "public addresses only".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    hosts: Vec<String>,
    ranges: Vec<Range>,
    entries: Vec<String>,
}

impl NetworkPolicy {
    /// Public addresses only (the default).
    pub fn public_only() -> Self {
        Self::default()
    }

    /// Public addresses and the entries of `[network] allow_private`: host names
    /// (`gitlab.corp.internal`, matched exactly, any address they resolve to), addresses
    /// (`10.0.0.5`) and ranges (`10.20.0.0/16`).
    pub fn allow_private<S: AsRef<str>>(
        entries: impl IntoIterator<Item = S>,
    ) -> Result<Self, PolicyError> {
        let mut policy = Self::default();
        for entry in entries {
            let text = entry.as_ref().trim();
            let error = |why| PolicyError {
                entry: text.to_owned(),
                why,
            };
            match Range::parse(text) {
                Some(Ok(range)) => policy.ranges.push(range),
                Some(Err(why)) => return Err(error(why)),
                None if text.is_empty() => return Err(error("it is empty")),
                None if text.contains('/') => return Err(error("the address is not valid")),
                None if text.contains("://") || text.contains(':') => {
                    return Err(error("write the host alone, without a scheme or port"));
                }
                None if text.chars().any(|c| c.is_whitespace() || c == '@') => {
                    return Err(error("a host name has no spaces or '@'"));
                }
                None => policy.hosts.push(normalize(text)),
            }
            policy.entries.push(text.to_owned());
        }
        Ok(policy)
    }

    /// The entries as the operator wrote them.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Whether the operator named `host` (as in a URL, brackets allowed), or the address it is.
    pub fn names_host(&self, host: &str) -> bool {
        let host = normalize(host);
        if self.hosts.contains(&host) {
            return true;
        }
        host.parse::<IpAddr>()
            .is_ok_and(|ip| self.ranges.iter().any(|r| r.contains(ip)))
    }

    /// Why `host` may not be reached at `ip`, or `None` when it may.
    pub(crate) fn refusal(&self, host: &str, ip: IpAddr) -> Option<String> {
        let reason = forbidden_reason(ip)?;
        if self.names_host(host) || self.ranges.iter().any(|r| r.contains(ip)) {
            return None;
        }
        Some(format!("{ip} is {reason}"))
    }

    /// Checks what can be checked before resolving: an http(s) URL with a host; plain http only
    /// to an operator-named host when the request carries `credentials`; and, for an IP-literal
    /// host (which is connected to without resolving), an address that may be reached. Host
    /// names are checked again when they resolve.
    pub fn check_url(&self, url: &Url, credentials: bool) -> Result<(), EgressError> {
        let shown = origin(url);
        if !matches!(url.scheme(), "http" | "https") {
            return Err(EgressError::refused(format!(
                "refusing a {}: URL: only http and https URLs are reached",
                url.scheme()
            )));
        }
        let Some(host) = url.host() else {
            return Err(EgressError::refused(format!(
                "refusing {url}: the URL has no host"
            )));
        };
        let host_str = url.host_str().unwrap_or_default();
        if credentials && url.scheme() == "http" && !self.names_host(host_str) {
            return Err(EgressError::refused(format!(
                "refusing {shown}: credentials are only sent over https (an operator can allow \
                 plain http to an internal host with [network] allow_private)"
            )));
        }
        let ip = match host {
            Host::Domain(_) => return Ok(()),
            Host::Ipv4(ip) => IpAddr::V4(ip),
            Host::Ipv6(ip) => IpAddr::V6(ip),
        };
        match self.refusal(host_str, ip) {
            Some(reason) => Err(EgressError::refused(format!(
                "refusing {shown}: {reason} (an operator can allow it with [network] allow_private)"
            ))),
            None => Ok(()),
        }
    }
}

fn normalize(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(policy: &NetworkPolicy, url: &str, credentials: bool) -> Result<(), String> {
        policy
            .check_url(&Url::parse(url).unwrap(), credentials)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn entries_parse_as_hosts_addresses_and_ranges() {
        let policy = NetworkPolicy::allow_private([
            "10.20.0.0/16",
            "GitLab.Corp.Internal.",
            "127.0.0.1",
            "fd00::/8",
        ])
        .unwrap();
        assert!(policy.names_host("gitlab.corp.internal"));
        assert!(policy.names_host("10.20.3.4"));
        assert!(!policy.names_host("10.21.0.1"));
        assert!(policy.names_host("[fd12::1]"));
        assert!(policy.names_host("127.0.0.1"));
        assert!(!policy.names_host("127.0.0.2"));
        assert!(
            policy
                .refusal("x", "::ffff:10.20.0.9".parse().unwrap())
                .is_none()
        );
        for bad in ["", "10.0.0.0/33", "https://x", "x:80", "a b", "1.2.3/8"] {
            assert!(NetworkPolicy::allow_private([bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn urls_are_checked_by_scheme_credentials_and_ip_literal() {
        let public = NetworkPolicy::public_only();
        for url in [
            "https://169.254.169.254/latest/meta-data/",
            "http://[::ffff:10.0.0.1]/",
            "https://0x0a000001/",
            "http://[::1]:8080/",
            "http://127.0.0.1:9200/_cat",
            "file:///etc/passwd",
            "ftp://example.com/",
        ] {
            let error = check(&public, url, false).unwrap_err();
            assert!(error.starts_with("refusing"), "{url}: {error}");
        }
        check(&public, "https://8.8.8.8/", true).unwrap();
        check(&public, "http://example.com/", false).unwrap();
        let error = check(&public, "http://example.com/", true).unwrap_err();
        assert!(error.contains("only sent over https"), "{error}");
        let allowed = NetworkPolicy::allow_private(["127.0.0.1", "wiki.corp"]).unwrap();
        check(&allowed, "http://127.0.0.1:9200/", true).unwrap();
        check(&allowed, "http://wiki.corp/", true).unwrap();
        assert!(check(&allowed, "http://127.0.0.2/", false).is_err());
    }
}
