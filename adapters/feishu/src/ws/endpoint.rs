//! Endpoint discovery: where to open the long connection, and the server's timing for it.
//!
//! Invariants: the App Secret goes only into the request body, never into an error or a log;
//! a refusal is [`Error::Refused`] (not retried) unless Feishu's code says it is transient.

use std::time::Duration;

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};
use workmate_adapter::net::post_json;

use super::error::{CODE_INTERNAL, CODE_SYSTEM_BUSY, Error};

/// The discovery path under the open-platform domain.
pub const ENDPOINT_PATH: &str = "/callback/ws/endpoint";

/// The server's timing of a connection, in seconds; pushed at discovery and in pongs.
///
/// A field the server leaves out keeps its previous value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ClientConfig {
    /// How many reconnection attempts in a row before giving up; negative: forever.
    pub reconnect_count: i64,
    /// The wait between reconnection attempts.
    pub reconnect_interval: u64,
    /// The first reconnection waits a random part of this, so clients do not come back at once.
    pub reconnect_nonce: u64,
    /// The wait between pings.
    pub ping_interval: u64,
}

impl Default for ClientConfig {
    /// The SDKs' defaults: reconnect forever, every 2 minutes after up to 30 s; ping every 2 min.
    fn default() -> Self {
        Self {
            reconnect_count: -1,
            reconnect_interval: 120,
            reconnect_nonce: 30,
            ping_interval: 120,
        }
    }
}

/// A [`ClientConfig`] as sent: any field may be missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ConfigUpdate {
    /// See [`ClientConfig::reconnect_count`].
    pub reconnect_count: Option<i64>,
    /// See [`ClientConfig::reconnect_interval`].
    pub reconnect_interval: Option<u64>,
    /// See [`ClientConfig::reconnect_nonce`].
    pub reconnect_nonce: Option<u64>,
    /// See [`ClientConfig::ping_interval`].
    pub ping_interval: Option<u64>,
}

impl ClientConfig {
    /// Applies the fields `update` carries. A zero ping interval is ignored: it would ping
    /// without pause.
    pub fn apply(&mut self, update: ConfigUpdate) {
        if let Some(count) = update.reconnect_count {
            self.reconnect_count = count;
        }
        if let Some(interval) = update.reconnect_interval {
            self.reconnect_interval = interval;
        }
        if let Some(nonce) = update.reconnect_nonce {
            self.reconnect_nonce = nonce;
        }
        if let Some(ping) = update.ping_interval.filter(|p| *p > 0) {
            self.ping_interval = ping;
        }
    }

    /// The ping interval when one config second lasts `second`.
    pub fn ping_every(&self, second: Duration) -> Duration {
        second.saturating_mul(u32::try_from(self.ping_interval).unwrap_or(u32::MAX))
    }
}

/// Where to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The WebSocket URL (`wss://…?device_id=…&service_id=…`); it embeds a ticket, so it is
    /// not logged.
    pub url: url::Url,
    /// `service_id` of the URL, which every ping carries (0 when absent).
    pub service_id: i32,
    /// `device_id` of the URL: Feishu's id of this connection, safe to log.
    pub device_id: String,
    /// The timing sent with the URL.
    pub config: ConfigUpdate,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Request<'a> {
    #[serde(rename = "AppID")]
    app_id: &'a str,
    app_secret: &'a str,
}

#[derive(Deserialize)]
struct Response {
    code: i64,
    #[serde(default)]
    msg: String,
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "URL", default)]
    url: String,
    #[serde(rename = "ClientConfig", default)]
    client_config: Option<ConfigUpdate>,
}

/// Asks `{base_url}/callback/ws/endpoint` where app `app_id` should connect.
pub async fn discover(
    http: &reqwest::Client,
    base_url: &str,
    app_id: &str,
    app_secret: &SecretString,
) -> Result<Endpoint, Error> {
    let url = format!("{}{ENDPOINT_PATH}", base_url.trim_end_matches('/'));
    let request = Request {
        app_id,
        app_secret: app_secret.expose_secret(),
    };
    let answer = post_json(http, &url, &[("locale", "zh")], &request).await;
    let (status, body) =
        answer.map_err(|e| Error::Unavailable(format!("endpoint discovery: {e}")))?;
    parse(status, &body)
}

/// Reads a discovery response.
pub fn parse(status: u16, body: &[u8]) -> Result<Endpoint, Error> {
    let response = serde_json::from_slice::<Response>(body).ok();
    let Some(response) = response else {
        return Err(by_status(status));
    };
    match response.code {
        0 if status == 200 => {}
        0 => return Err(by_status(status)),
        CODE_SYSTEM_BUSY | CODE_INTERNAL => {
            return Err(Error::Unavailable(format!(
                "Feishu is busy (endpoint code {}: {})",
                response.code, response.msg
            )));
        }
        code => return Err(Error::refused(code, &response.msg)),
    }
    let data = response
        .data
        .filter(|d| !d.url.is_empty())
        .ok_or_else(|| Error::Unavailable("the endpoint response has no URL".to_owned()))?;
    let url = url::Url::parse(&data.url)
        .map_err(|e| Error::Unavailable(format!("the endpoint URL is not a URL: {e}")))?;
    let query = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let service_id = match query("service_id") {
        None => 0,
        Some(id) => id.parse().map_err(|_| {
            Error::Unavailable(format!(
                "the endpoint URL's service_id {id:?} is not a number"
            ))
        })?,
    };
    Ok(Endpoint {
        device_id: query("device_id").unwrap_or_default(),
        service_id,
        url,
        config: data.client_config.unwrap_or_default(),
    })
}

/// A response without a readable code, judged by its HTTP status.
fn by_status(status: u16) -> Error {
    match status {
        408 | 429 | 500.. => Error::Unavailable(format!("the endpoint answered HTTP {status}")),
        _ => Error::refused(
            i64::from(status),
            "unexpected HTTP status (check the base URL)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::error::CODE_CONNECTION_LIMIT;

    const OK: &str = r#"{"code":0,"msg":"ok","data":{"URL":"wss://msg-frontier.feishu.cn/ws/v2?fpid=493&aid=552564&device_id=d-1&access_key=k&service_id=33554678&ticket=t","ClientConfig":{"ReconnectCount":-1,"ReconnectInterval":120,"ReconnectNonce":30,"PingInterval":90}}}"#;

    #[test]
    fn a_good_answer_gives_the_url_service_and_timing() {
        let endpoint = parse(200, OK.as_bytes()).unwrap();
        assert_eq!(endpoint.service_id, 33_554_678);
        assert_eq!(endpoint.device_id, "d-1");
        assert_eq!(endpoint.url.scheme(), "wss");
        let mut config = ClientConfig::default();
        config.apply(endpoint.config);
        assert_eq!(config.ping_interval, 90);
        assert_eq!(
            config.ping_every(Duration::from_millis(2)),
            Duration::from_millis(180)
        );
    }

    #[test]
    fn busy_codes_are_retried_and_refusals_are_not() {
        for code in [1, 1_000_040_343] {
            let body = format!(r#"{{"code":{code},"msg":"busy"}}"#);
            assert!(
                parse(200, body.as_bytes()).unwrap_err().is_retryable(),
                "code {code}"
            );
        }
        for code in [403, 514, CODE_CONNECTION_LIMIT, 10003] {
            let body = format!(r#"{{"code":{code},"msg":"no"}}"#);
            let error = parse(200, body.as_bytes()).unwrap_err();
            assert!(!error.is_retryable(), "code {code}");
            assert!(error.to_string().contains(&code.to_string()), "{error}");
        }
        assert!(parse(503, b"<html>").unwrap_err().is_retryable());
        assert!(parse(502, br#"{"code":0}"#).unwrap_err().is_retryable());
        assert!(!parse(404, b"not found").unwrap_err().is_retryable());
        assert!(
            parse(200, br#"{"code":0,"data":{"URL":""}}"#)
                .unwrap_err()
                .is_retryable()
        );
    }

    #[test]
    fn a_partial_update_keeps_the_other_fields_and_never_zeroes_the_ping() {
        let mut config = ClientConfig::default();
        config.apply(serde_json::from_str(r#"{"PingInterval":0,"ReconnectNonce":5}"#).unwrap());
        assert_eq!(
            config,
            ClientConfig {
                reconnect_nonce: 5,
                ..ClientConfig::default()
            }
        );
    }
}
