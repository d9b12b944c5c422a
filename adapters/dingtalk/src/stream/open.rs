//! `POST /v1.0/gateway/connections/open`: where to connect, with a single-use ticket.
//!
//! Invariants: the client secret goes only into the request body, never into an error or a
//! log; the ticket is only ever part of the connect URL, which is not logged; a 4xx answer is
//! [`Error::Refused`] with DingTalk's code and message, anything else that fails is
//! [`Error::Unavailable`].

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};
use workmate_adapter::net::post_json;

use super::error::Error;

/// The `open` path under the API base (`https://api.dingtalk.com`).
pub const OPEN_PATH: &str = "/v1.0/gateway/connections/open";
/// The callback topic of robot messages.
pub const TOPIC_ROBOT: &str = "/v1.0/im/bot/messages/get";
/// The callback topic of interactive-card button clicks.
pub const TOPIC_CARD: &str = "/v1.0/card/instances/callback";

/// Where to connect: `endpoint?ticket=…`. It embeds the ticket, so it is not logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint(pub url::Url);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    client_id: &'a str,
    client_secret: &'a str,
    subscriptions: [Subscription; 3],
    ua: &'static str,
}

#[derive(Serialize)]
struct Subscription {
    #[serde(rename = "type")]
    kind: &'static str,
    topic: &'static str,
}

/// Every event, robot messages and card clicks.
const SUBSCRIPTIONS: [Subscription; 3] = [
    Subscription {
        kind: "EVENT",
        topic: "*",
    },
    Subscription {
        kind: "CALLBACK",
        topic: TOPIC_ROBOT,
    },
    Subscription {
        kind: "CALLBACK",
        topic: TOPIC_CARD,
    },
];

#[derive(Deserialize)]
struct Opened {
    #[serde(default)]
    endpoint: String,
    #[serde(default)]
    ticket: String,
}

/// DingTalk's error JSON: `{"code":"…","message":"…","requestid":"…"}`.
#[derive(Deserialize)]
struct Refusal {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

/// Asks `{api_base}/v1.0/gateway/connections/open` for a connection of app `client_id`.
pub async fn open(
    http: &reqwest::Client,
    api_base: &str,
    client_id: &str,
    client_secret: &SecretString,
) -> Result<Endpoint, Error> {
    let url = format!("{}{OPEN_PATH}", api_base.trim_end_matches('/'));
    let request = Request {
        client_id,
        client_secret: client_secret.expose_secret(),
        subscriptions: SUBSCRIPTIONS,
        ua: concat!("workmate-dingtalk/", env!("CARGO_PKG_VERSION")),
    };
    let answer = post_json(http, &url, &[], &request).await;
    let (status, bytes) = answer.map_err(|e| Error::Unavailable(format!("the open call: {e}")))?;
    parse(status, &bytes)
}

/// Reads an `open` answer.
pub fn parse(status: u16, body: &[u8]) -> Result<Endpoint, Error> {
    if !(200..300).contains(&status) {
        let refusal = serde_json::from_slice::<Refusal>(body).ok();
        let (code, message) = refusal.map_or_else(
            || {
                (
                    String::new(),
                    String::from_utf8_lossy(body).chars().take(200).collect(),
                )
            },
            |r| (r.code, r.message),
        );
        return Err(match status {
            408 | 429 | 500.. => Error::Unavailable(format!(
                "the open call answered HTTP {status} ({code}: {message})"
            )),
            _ => Error::refused(status, code, message),
        });
    }
    let opened = serde_json::from_slice::<Opened>(body).map_err(|e| {
        Error::Unavailable(format!("the open response is not the expected JSON: {e}"))
    })?;
    if opened.endpoint.is_empty() || opened.ticket.is_empty() {
        return Err(Error::Unavailable(
            "the open response has no endpoint or no ticket".to_owned(),
        ));
    }
    let mut url = url::Url::parse(&opened.endpoint).map_err(|e| {
        Error::Unavailable(format!("the open response's endpoint is not a URL: {e}"))
    })?;
    url.query_pairs_mut().append_pair("ticket", &opened.ticket);
    Ok(Endpoint(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ticket_is_url_encoded_into_the_endpoint() {
        let body = br#"{"endpoint":"wss://wss-open-connection.dingtalk.com:443/connect","ticket":"a+b/c="}"#;
        let Endpoint(url) = parse(200, body).unwrap();
        assert_eq!(
            url.as_str(),
            "wss://wss-open-connection.dingtalk.com/connect?ticket=a%2Bb%2Fc%3D"
        );
    }

    #[test]
    fn refusals_carry_dingtalks_code_and_outages_are_retryable() {
        let body = br#"{"code":"InvalidAuthentication","message":"bad secret","requestid":"r"}"#;
        let refused = parse(401, body).unwrap_err();
        assert!(!refused.is_retryable());
        let text = refused.to_string();
        assert!(
            text.contains("InvalidAuthentication") && text.contains("bad secret"),
            "{text}"
        );
        assert!(text.contains("Client Secret"), "{text}");
        assert!(parse(503, b"busy").unwrap_err().is_retryable());
        assert!(
            parse(200, br#"{"endpoint":"wss://x"}"#)
                .unwrap_err()
                .is_retryable()
        );
    }
}
