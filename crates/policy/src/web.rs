//! `web_fetch` and the tenant's `web_fetch_allow` list.
//!
//! Invariant: the host is the one the fetcher connects to first — the URL is read by the same
//! parser (`url`, WHATWG rules) the tool uses, so `https://allowed.example@evil.example/` or a
//! backslash trick names `evil.example` here too; a pattern matches a host exactly, or (`*.` and
//! a domain) any of its subdomains, never the bare domain or a look-alike suffix.

/// The built-in fetch tool.
pub(crate) const WEB_FETCH: &str = "web_fetch";

/// The host a `web_fetch` call would reach first, lower case, without a trailing dot.
pub(crate) fn fetch_host(arguments: &serde_json::Value) -> Option<String> {
    let url = arguments.get("url")?.as_str()?;
    workmate_tools::web_fetch::fetch_host(url)
}

/// Whether `pattern` is a host name (`docs.rs`) or `*.` and one (`*.example.com`).
pub fn valid_host_pattern(pattern: &str) -> bool {
    let name = pattern.strip_prefix("*.").unwrap_or(pattern);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// Whether `host` (lower case) is allowed by `pattern`: equal to it, or for `*.suffix` a
/// subdomain of `suffix` (`a.suffix`, `a.b.suffix`; not `suffix` itself, not `evilsuffix`).
pub fn host_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.trim().trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() || !valid_host_pattern(&pattern) {
        return false;
    }
    match pattern.strip_prefix("*.") {
        Some(suffix) => host
            .strip_suffix(suffix)
            .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        None => host == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_exact_hosts_and_subdomains_only() {
        assert!(host_matches("docs.rs", "docs.rs"));
        assert!(host_matches("Docs.RS", "docs.rs."));
        assert!(!host_matches("docs.rs", "evil-docs.rs"));
        assert!(!host_matches("docs.rs", "docs.rs.evil.example"));
        assert!(host_matches("*.example.com", "a.example.com"));
        assert!(host_matches("*.example.com", "a.b.example.com"));
        assert!(!host_matches("*.example.com", "example.com"));
        assert!(!host_matches("*.example.com", "evilexample.com"));
        assert!(!host_matches("*.example.com", ".example.com"));
        assert!(!host_matches("*", "anything"));
        assert!(!host_matches("", ""));
        assert!(!valid_host_pattern("*"));
        assert!(!valid_host_pattern("a..b"));
        assert!(!valid_host_pattern("https://docs.rs"));
        assert!(valid_host_pattern("*.internal"));
    }

    #[test]
    fn the_host_is_the_one_the_fetcher_reaches() {
        let host = |url: &str| fetch_host(&serde_json::json!({ "url": url }));
        assert_eq!(host("https://Docs.rs/x").as_deref(), Some("docs.rs"));
        assert_eq!(
            host("https://docs.rs@evil.example/").as_deref(),
            Some("evil.example")
        );
        assert_eq!(
            host("https://evil.example\\@docs.rs/").as_deref(),
            Some("evil.example")
        );
        assert_eq!(host("not a url"), None);
        assert_eq!(host("file:///etc/passwd"), None);
    }
}
