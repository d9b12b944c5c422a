//! `workmate demo`'s local Slack, Feishu, WeCom and DingTalk stand-ins: the sandbox mounted beside
//! the real Slack, Feishu, WeCom and DingTalk routes.
//!
//! Invariant: only `workmate demo` mounts it; the Slack surface and the sandbox share a signing
//! secret and a bot token, the Feishu surface (webhook mode) and the sandbox an app secret, an
//! Encrypt Key and a Verification Token, and the WeCom surface (the smart robot in callback
//! mode) and the sandbox a Token and an EncodingAESKey, and the DingTalk surface (HTTP mode) and
//! the sandbox an app secret, all generated for this process, so
//! nothing outside it can call the sandbox's APIs or sign (and encrypt) callbacks that workmate
//! accepts.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use secrecy::SecretString;
use workmate_sandbox::{DingTalkSandbox, FeishuSandbox, SandboxConfig, SlackSandbox, WeComSandbox};

use crate::config::{DingTalkConfig, FeishuConfig, SlackConfig, WeComConfig};
use crate::error::StartupError;

/// The sandbox app's id on the Feishu side.
const FEISHU_APP_ID: &str = "cli_sandbox";
/// The sandbox corp's id on the WeCom side.
const WECOM_CORP_ID: &str = "wwsandbox";
/// The self-built app beside the WeCom robot.
const WECOM_AGENT_ID: &str = "1000002";
/// The sandbox app's Client ID on the DingTalk side.
const DINGTALK_CLIENT_ID: &str = "dingsandboxapp";
/// The approval card's template id on the DingTalk side.
const DINGTALK_APPROVAL_TEMPLATE: &str = "sandbox-approval.schema";

/// The Slack, Feishu, WeCom and DingTalk configurations and the sandbox routes of one demo
/// process.
#[derive(Debug)]
pub(crate) struct DemoSandbox {
    /// `[platforms.slack]` pointed at the sandbox.
    pub(crate) slack: SlackConfig,
    /// `[platforms.feishu]` (webhook mode) pointed at the sandbox.
    pub(crate) feishu: FeishuConfig,
    /// `[platforms.wecom]` (the smart robot in callback mode) pointed at the sandbox.
    pub(crate) wecom: WeComConfig,
    /// `[platforms.dingtalk]` (HTTP mode) pointed at the sandbox.
    pub(crate) dingtalk: DingTalkConfig,
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

/// `N` random bytes from the system's generator (through v4 UUIDs, skipping the bytes that carry
/// their version and variant bits).
fn random_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let mut filled = 0;
    while filled < N {
        let uuid = uuid::Uuid::new_v4();
        for (i, byte) in uuid.as_bytes().iter().enumerate() {
            if i != 6 && i != 8 && filled < N {
                out[filled] = *byte;
                filled += 1;
            }
        }
    }
    out
}

/// A WeCom EncodingAESKey: 32 random bytes in standard base64 without the trailing `=`, the 43
/// characters WeCom's console hands out.
fn random_aes_key() -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let random: [u8; 32] = random_bytes();
    // A zero byte makes whole 3-byte groups; the character that is only padding is dropped.
    let mut bytes = random.to_vec();
    bytes.push(0);
    let mut key = String::with_capacity(44);
    for group in bytes.chunks(3) {
        let n = (u32::from(group[0]) << 16) | (u32::from(group[1]) << 8) | u32::from(group[2]);
        for shift in [18, 12, 6, 0] {
            key.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
        }
    }
    key.truncate(43);
    key
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
        // WeCom's Token is at most 32 letters and digits.
        let wecom_side = WeComSandbox {
            corp_id: WECOM_CORP_ID.to_owned(),
            token: uuid::Uuid::new_v4().simple().to_string(),
            encoding_aes_key: random_aes_key(),
            app_secret: random_secret(""),
        };
        let mut wecom = WeComConfig::callback(
            &wecom_side.corp_id,
            SecretString::from(wecom_side.token.clone()),
            SecretString::from(wecom_side.encoding_aes_key.clone()),
            &format!("{base}/sandbox/wecom"),
        );
        // The self-built app beside the robot: people's names, and messages to one person.
        wecom.agent_id = Some(WECOM_AGENT_ID.to_owned());
        wecom.secret = Some(SecretString::from(wecom_side.app_secret.clone()));
        let dingtalk_side = DingTalkSandbox {
            client_id: DINGTALK_CLIENT_ID.to_owned(),
            client_secret: random_secret(""),
            card_template_id: DINGTALK_APPROVAL_TEMPLATE.to_owned(),
        };
        let dingtalk = DingTalkConfig::stream(
            &dingtalk_side.client_id,
            SecretString::from(dingtalk_side.client_secret.clone()),
            &dingtalk_side.card_template_id,
            &format!("{base}/sandbox/dingtalk"),
        )
        .http();
        let router = workmate_sandbox::router(SandboxConfig {
            workmate_base: base.clone(),
            slack: slack_side,
            feishu: feishu_side,
            wecom: wecom_side,
            dingtalk: dingtalk_side,
        })
        .map_err(|e| StartupError::Usage(format!("sandbox: {e}")))?;
        Ok(Self {
            slack,
            feishu,
            wecom,
            dingtalk,
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
            "\nOpen {} to chat with workmate in a local stand-in for Slack, Feishu, WeCom or \
             DingTalk (pick one on the page).\n",
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
    fn the_slack_feishu_wecom_and_dingtalk_surfaces_point_at_the_sandbox() {
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

        let wecom = &sandbox.wecom;
        assert_eq!(wecom.mode, crate::config::WeComMode::Callback);
        assert_eq!(wecom.api_base, "http://127.0.0.1:8080/sandbox/wecom");
        let (token, aes_key) = (secret(&wecom.token), secret(&wecom.encoding_aes_key));
        assert_eq!(token.len(), 32);
        assert_ne!(secret(&other.wecom.token), token);
        assert_ne!(secret(&other.wecom.encoding_aes_key), aes_key);

        let dingtalk = &sandbox.dingtalk;
        assert_eq!(dingtalk.mode, crate::config::DingTalkMode::Http);
        assert_eq!(dingtalk.api_base, "http://127.0.0.1:8080/sandbox/dingtalk");
        let app_secret = dingtalk.client_secret.expose_secret().to_owned();
        assert!(app_secret.len() >= 32);
        assert_ne!(other.dingtalk.client_secret.expose_secret(), app_secret);
    }

    #[test]
    fn an_encoding_aes_key_is_43_characters_of_32_random_bytes() {
        let key = random_aes_key();
        assert_eq!(key.len(), 43);
        assert!(
            key.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        );
        // The last character carries two bits and four zero bits, as base64 of 32 bytes does.
        assert!(key.ends_with([
            'A', 'E', 'I', 'M', 'Q', 'U', 'Y', 'c', 'g', 'k', 'o', 's', 'w', '0', '4', '8'
        ]));
        assert!(workmate_wxcrypto::Crypto::new("t", &key, "").is_ok());
        assert_ne!(random_aes_key(), key);
        assert_ne!(random_bytes::<32>(), random_bytes::<32>());
    }
}
