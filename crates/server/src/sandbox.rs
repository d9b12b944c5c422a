//! `workmate demo`'s local Slack and Feishu stand-ins: the sandbox mounted beside the real Slack
//! and Feishu routes.
//!
//! Invariant: only `workmate demo` mounts it; the Slack surface and the sandbox share a signing
//! secret and a bot token, and the Feishu surface (webhook mode) and the sandbox an app secret,
//! an Encrypt Key and a Verification Token, all generated for this process, so nothing outside
//! it can call the sandbox's APIs or sign (and encrypt) events that workmate accepts.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use secrecy::SecretString;
use workmate_sandbox::{FeishuSandbox, SandboxConfig, SlackSandbox};

use crate::config::{FeishuConfig, SlackConfig};
use crate::error::StartupError;

/// The sandbox app's id on the Feishu side.
const FEISHU_APP_ID: &str = "cli_sandbox";

/// The Slack and Feishu configurations and the sandbox routes of one demo process.
#[derive(Debug)]
pub(crate) struct DemoSandbox {
    /// `[platforms.slack]` pointed at the sandbox.
    pub(crate) slack: SlackConfig,
    /// `[platforms.feishu]` (webhook mode) pointed at the sandbox.
    pub(crate) feishu: FeishuConfig,
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
        let slack_side = SlackSandbox {
            signing_secret: random_secret(""),
            bot_token: random_secret("xoxb-sandbox-"),
        };
        let slack = SlackConfig::http(
            SecretString::from(slack_side.signing_secret.clone()),
            SecretString::from(slack_side.bot_token.clone()),
            &format!("{base}/sandbox/api"),
        );
        let feishu_side = FeishuSandbox {
            app_id: FEISHU_APP_ID.to_owned(),
            app_secret: random_secret(""),
            encrypt_key: random_secret(""),
            verification_token: random_secret(""),
        };
        let feishu = FeishuConfig::webhook(
            &feishu_side.app_id,
            SecretString::from(feishu_side.app_secret.clone()),
            Some(SecretString::from(feishu_side.encrypt_key.clone())),
            Some(SecretString::from(feishu_side.verification_token.clone())),
            &format!("{base}/sandbox/feishu"),
        );
        let router = workmate_sandbox::router(SandboxConfig {
            workmate_base: base.clone(),
            slack: slack_side,
            feishu: feishu_side,
        })
        .map_err(|e| StartupError::Usage(format!("sandbox: {e}")))?;
        Ok(Self {
            slack,
            feishu,
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
            "\nOpen {} to chat with workmate in a local stand-in for Slack or Feishu (pick one \
             on the page).\n",
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
    fn the_slack_and_feishu_surfaces_point_at_the_sandbox() {
        use secrecy::ExposeSecret;

        let sandbox = DemoSandbox::new("0.0.0.0:8080".parse().unwrap()).unwrap();
        assert_eq!(sandbox.slack.api_base, "http://127.0.0.1:8080/sandbox/api");
        assert_eq!(sandbox.page_url, "http://127.0.0.1:8080/sandbox");
        let feishu = &sandbox.feishu;
        assert_eq!(feishu.api_base, "http://127.0.0.1:8080/sandbox/feishu");
        assert_eq!(feishu.mode, crate::config::FeishuMode::Webhook);
        let secret = |s: &Option<SecretString>| s.as_ref().unwrap().expose_secret().to_owned();
        let (key, token) = (
            secret(&feishu.encrypt_key),
            secret(&feishu.verification_token),
        );
        assert!(key.len() >= 32 && token.len() >= 32 && key != token);
        // Another demo process has other secrets.
        let other = DemoSandbox::new("0.0.0.0:8080".parse().unwrap()).unwrap();
        assert_ne!(secret(&other.feishu.encrypt_key), key);
    }
}
