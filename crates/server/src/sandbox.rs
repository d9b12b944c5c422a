//! `workmate demo`'s local Slack stand-in: the sandbox mounted beside the real Slack routes.
//!
//! Invariant: only `workmate demo` mounts it; the Slack surface and the sandbox share a signing
//! secret and a bot token generated for this process, so nothing outside it can post to the
//! sandbox's Web API or sign events that workmate accepts.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use secrecy::SecretString;
use workmate_sandbox::SandboxConfig;

use crate::config::SlackConfig;
use crate::error::StartupError;

/// The Slack configuration and the sandbox routes of one demo process.
#[derive(Debug)]
pub(crate) struct DemoSandbox {
    /// `[platforms.slack]` pointed at the sandbox.
    pub(crate) slack: SlackConfig,
    /// The routes under `/sandbox`.
    pub(crate) router: axum::Router,
    /// The page a person opens.
    pub(crate) page_url: String,
}

/// The address a browser on this machine uses for `listen` (a wildcard is not connectable).
fn reachable(listen: SocketAddr) -> SocketAddr {
    let ip = match listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, listen.port())
}

fn random_secret(prefix: &str) -> String {
    format!(
        "{prefix}{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

impl DemoSandbox {
    /// A sandbox for a server listening on `listen`.
    pub(crate) fn new(listen: SocketAddr) -> Result<Self, StartupError> {
        let base = format!("http://{}", reachable(listen));
        let signing_secret = random_secret("");
        let bot_token = random_secret("xoxb-sandbox-");
        let slack = SlackConfig::http(
            SecretString::from(signing_secret.clone()),
            SecretString::from(bot_token.clone()),
            &format!("{base}/sandbox/api"),
        );
        let router = workmate_sandbox::router(SandboxConfig {
            signing_secret,
            bot_token,
            workmate_base: base.clone(),
        })
        .map_err(|e| StartupError::Usage(format!("sandbox: {e}")))?;
        Ok(Self {
            slack,
            router,
            page_url: format!("{base}/sandbox"),
        })
    }

    /// Tells the person running the demo where to chat.
    #[allow(
        clippy::print_stderr,
        reason = "the demo banner is for the person at the terminal, not the log pipeline"
    )]
    pub(crate) fn show_banner(&self) {
        eprintln!(
            "\nOpen {} to chat with workmate in a local Slack stand-in.\n",
            self.page_url
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_listen_address_becomes_loopback() {
        let wildcard: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(reachable(wildcard).to_string(), "127.0.0.1:8080");
        let v6: SocketAddr = "[::]:8080".parse().unwrap();
        assert_eq!(reachable(v6).to_string(), "[::1]:8080");
        let fixed: SocketAddr = "10.0.0.5:9000".parse().unwrap();
        assert_eq!(reachable(fixed), fixed);
    }

    #[test]
    fn the_slack_surface_points_at_the_sandbox() {
        let sandbox = DemoSandbox::new("0.0.0.0:8080".parse().unwrap()).unwrap();
        assert_eq!(sandbox.slack.api_base, "http://127.0.0.1:8080/sandbox/api");
        assert_eq!(sandbox.page_url, "http://127.0.0.1:8080/sandbox");
    }
}
