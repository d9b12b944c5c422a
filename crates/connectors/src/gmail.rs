//! Gmail, as the person signed in with Google: search and read mail, draft and send. Sending
//! carries its recipients as the target, so a standing rule can allow exactly one address.

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::args::{parse, schema};
use workmate_tools::{ToolError, ToolFuture};

use crate::connector::{each, no_tool, query, segment, trimmed};
use crate::google;
use crate::http::{Api, Auth};
use crate::markup::text_of;
use crate::{AuthKind, Connector, Credentials, Descriptor, Http, Risk, ToolDef};

const API: &str = "https://gmail.googleapis.com";
const SYSTEM: &str = "Gmail";

/// The most messages a search reads the headers of.
const MAX_SEARCH: u32 = 20;
/// The most characters of a message's text returned.
const MAX_TEXT: usize = 20_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// A Gmail search, e.g. `from:billing@globex.com newer_than:7d`.
    query: String,
    /// At most this many messages (default 10, at most 20).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MessageArgs {
    /// The message's id (from gmail_search).
    id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ComposeArgs {
    /// The recipients, comma-separated addresses.
    to: String,
    /// The subject.
    subject: String,
    /// The text (plain text).
    body: String,
    /// Copy recipients, comma-separated addresses.
    #[serde(default)]
    cc: Option<String>,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "gmail",
    title: "Gmail",
    auth: AuthKind::Oauth,
    fields: google::fields(),
    tools: vec![
        ToolDef {
            name: "gmail_search",
            description: "Search the caller's mail with a Gmail query: sender, subject, date, snippet.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "gmail_get_message",
            description: "Read one message: its headers and text.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<MessageArgs>(),
        },
        ToolDef {
            name: "gmail_create_draft",
            description: "Save a draft in the caller's mailbox (not sent).",
            risk: Some(Risk::Write),
            target_arg: Some("to"),
            parameters: schema::<ComposeArgs>(),
        },
        ToolDef {
            name: "gmail_send",
            description: "Send a message as the caller.",
            risk: Some(Risk::Write),
            target_arg: Some("to"),
            parameters: schema::<ComposeArgs>(),
        },
    ],
});

/// A header value, refused if it could smuggle in another header.
fn header_value<'a>(name: &str, value: &'a str) -> Result<&'a str, ToolError> {
    if value.contains(['\r', '\n']) {
        return Err(ToolError::new(format!("{name} must be on one line")));
    }
    Ok(value.trim())
}

/// A header value in RFC 2047 form when it is not plain ASCII.
fn encoded_word(value: &str) -> String {
    if value.is_ascii() {
        value.to_owned()
    } else {
        format!(
            "=?UTF-8?B?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// The message as Gmail's `raw`: an RFC 2822 message, base64url.
fn raw_message(args: &ComposeArgs) -> Result<String, ToolError> {
    let to = header_value("to", &args.to)?;
    if to.is_empty() {
        return Err(ToolError::new("to must name at least one address"));
    }
    let mut message = format!("To: {to}\r\n");
    if let Some(cc) = args.cc.as_deref() {
        message.push_str(&format!("Cc: {}\r\n", header_value("cc", cc)?));
    }
    message.push_str(&format!(
        "Subject: {}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n",
        encoded_word(header_value("subject", &args.subject)?)
    ));
    message.push_str(&args.body.replace("\r\n", "\n").replace('\n', "\r\n"));
    Ok(URL_SAFE_NO_PAD.encode(message))
}

/// The value of the header `name` among a payload's headers.
fn header<'v>(payload: &'v Value, name: &str) -> &'v Value {
    payload["headers"]
        .as_array()
        .and_then(|h| {
            h.iter().find(|h| {
                h["name"]
                    .as_str()
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
        })
        .map_or(&Value::Null, |h| &h["value"])
}

/// The text of a message part: its first `text/plain` part, else its first `text/html` part as
/// text.
fn body_text(part: &Value) -> Option<String> {
    let decode = |p: &Value| {
        let data = p["body"]["data"].as_str()?;
        let bytes = URL_SAFE_NO_PAD
            .decode(data.trim_end_matches('='))
            .or_else(|_| URL_SAFE.decode(data))
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    };
    let find = |mime: &str| -> Option<String> {
        let mut stack = vec![part];
        while let Some(p) = stack.pop() {
            if p["mimeType"] == mime
                && let Some(text) = decode(p)
            {
                return Some(text);
            }
            if let Some(parts) = p["parts"].as_array() {
                stack.extend(parts.iter().rev());
            }
        }
        None
    };
    find("text/plain").or_else(|| find("text/html").map(|h| text_of(&h)))
}

/// A message's summary: who, what, when.
fn summary(message: &Value) -> Value {
    let payload = &message["payload"];
    json!({
        "id": message["id"],
        "thread_id": message["threadId"],
        "from": header(payload, "From"),
        "to": header(payload, "To"),
        "subject": header(payload, "Subject"),
        "date": header(payload, "Date"),
        "snippet": message["snippet"],
        "unread": message["labelIds"].as_array().is_some_and(|l| l.iter().any(|l| l == "UNREAD")),
    })
}

/// A message id, checked (Gmail's are hexadecimal).
fn message_id(id: &str) -> Result<String, ToolError> {
    let id = id.trim();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ToolError::new(format!("{id:?} is not a Gmail message id")));
    }
    Ok(segment(id))
}

/// The Gmail connector.
#[derive(Debug, Default)]
pub struct Gmail;

impl Connector for Gmail {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }

    fn call<'a>(
        &'a self,
        http: &'a Http,
        credentials: &'a Credentials,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a> {
        Box::pin(async move {
            let token = google::access_token(http, credentials, "gmail").await?;
            let api = Api {
                http,
                system: SYSTEM,
                base: trimmed(credentials.get("base_url").unwrap_or(API)),
                auth: Auth::Bearer(&token),
                headers: &[],
            };
            let mailbox = "/gmail/v1/users/me";
            match tool {
                "gmail_search" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    let limit = args.limit.unwrap_or(10).clamp(1, MAX_SEARCH);
                    let path = format!(
                        "{mailbox}/messages?q={}&maxResults={limit}",
                        query(&args.query)
                    );
                    let found = api.send(Method::GET, &path, None).await?;
                    let mut messages = Vec::new();
                    for id in each(&found["messages"], |m| m["id"].clone()) {
                        let id = message_id(id.as_str().unwrap_or_default())?;
                        let path = format!(
                            "{mailbox}/messages/{id}?format=metadata&metadataHeaders=From&metadataHeaders=To&metadataHeaders=Subject&metadataHeaders=Date"
                        );
                        messages.push(summary(&api.send(Method::GET, &path, None).await?));
                    }
                    Ok(
                        json!({"estimated_total": found["resultSizeEstimate"], "messages": messages}),
                    )
                }
                "gmail_get_message" => {
                    let args: MessageArgs = parse(tool, arguments)?;
                    let path = format!("{mailbox}/messages/{}?format=full", message_id(&args.id)?);
                    let message = api.send(Method::GET, &path, None).await?;
                    let mut shown = summary(&message);
                    let text: String = body_text(&message["payload"])
                        .unwrap_or_default()
                        .chars()
                        .take(MAX_TEXT)
                        .collect();
                    shown["text"] = json!(text);
                    Ok(shown)
                }
                "gmail_create_draft" => {
                    let args: ComposeArgs = parse(tool, arguments)?;
                    let body = json!({"message": {"raw": raw_message(&args)?}});
                    let draft = api
                        .send(Method::POST, &format!("{mailbox}/drafts"), Some(body))
                        .await?;
                    Ok(json!({"drafted": true, "id": draft["id"]}))
                }
                "gmail_send" => {
                    let args: ComposeArgs = parse(tool, arguments)?;
                    let body = json!({"raw": raw_message(&args)?});
                    let sent = api
                        .send(
                            Method::POST,
                            &format!("{mailbox}/messages/send"),
                            Some(body),
                        )
                        .await?;
                    Ok(json!({"sent": true, "id": sent["id"], "thread_id": sent["threadId"]}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_rfc_2822_and_refuses_header_injection() {
        let args = ComposeArgs {
            to: "bo@globex.com".into(),
            subject: "Q4 — renewal".into(),
            body: "Hi Bo,\nsee attached.".into(),
            cc: None,
        };
        let raw = URL_SAFE_NO_PAD.decode(raw_message(&args).unwrap()).unwrap();
        let text = String::from_utf8(raw).unwrap();
        assert!(
            text.starts_with("To: bo@globex.com\r\nSubject: =?UTF-8?B?"),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\nHi Bo,\r\nsee attached."), "{text}");
        let injected = ComposeArgs {
            subject: "hi\r\nBcc: eve@evil.example".into(),
            ..args
        };
        assert!(raw_message(&injected).is_err());
    }

    #[test]
    fn the_text_is_the_plain_part_or_the_html_as_text() {
        let plain = URL_SAFE_NO_PAD.encode("plain words");
        let html = URL_SAFE_NO_PAD.encode("<p>html words</p>");
        let both = json!({"mimeType": "multipart/alternative", "parts": [
            {"mimeType": "text/html", "body": {"data": html}},
            {"mimeType": "text/plain", "body": {"data": plain}},
        ]});
        assert_eq!(body_text(&both).as_deref(), Some("plain words"));
        let html_only = json!({"mimeType": "text/html", "body": {"data": html}});
        assert_eq!(body_text(&html_only).as_deref(), Some("html words"));
    }
}
