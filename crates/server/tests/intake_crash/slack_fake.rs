//! Slack in the intake crash tests: signed `app_mention` events, one thread each, and a fake Web
//! API that takes every call, gives each posted message a `ts` of its own (so a second card in a
//! thread shows as one), keeps each post's metadata so `conversations.replies` finds it again as
//! Slack would, and reads back what each thread's cards show last.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::runtime::Runtime;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};
use workmate_protocol::{Surface, TenantId};
use workmate_store::SessionKey;

use super::{Fake, text_of};
use crate::crash::{scripted, with_database};
use crate::support::{Server, http_send};

const SECRET: &str = "intake-crash-signing-secret";

/// The thread (and so the session) of event `i`.
fn thread_of(i: usize) -> String {
    format!("1700000100.{i:06}")
}

fn mention(i: usize) -> String {
    let ts = thread_of(i);
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": format!("EvCrash{i:04}"), "event_time": 1_700_000_100,
        "event": {"type": "app_mention", "user": "U1", "text": format!("<@UBOT> {}", text_of(i)),
                  "ts": ts, "channel": "C1", "event_ts": ts}
    })
    .to_string()
}

/// Posts event `i` signed as Slack does; the status code.
pub(crate) fn post(server: &Server, i: usize) -> u16 {
    let body = mention(i);
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let signature = workmate_slack::sign(SECRET.as_bytes(), &timestamp, body.as_bytes());
    let headers = [
        ("X-Slack-Request-Timestamp", timestamp.as_str()),
        ("X-Slack-Signature", signature.as_str()),
    ];
    http_send(
        server.addr,
        "POST",
        "/v1/platforms/slack/events",
        &headers,
        Some(&body),
    )
    .map_or(0, |(status, _)| status)
}

/// The settings of Slack over HTTP to `fake`.
fn settings(fake: &MockServer) -> Vec<(String, String)> {
    [
        ("WORKMATE__PLATFORMS__SLACK__SIGNING_SECRET", SECRET),
        ("WORKMATE__PLATFORMS__SLACK__BOT_TOKEN", "xoxb-crash-test"),
        ("WORKMATE__PLATFORMS__SLACK__API_BASE", &fake.uri()),
        ("WORKMATE__PLATFORMS__SLACK__MODE", "http"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .to_vec()
}

/// A server's environment: the scripted model playing `script`, Slack over HTTP to `fake`.
pub(crate) fn slack_env(
    dir: &Path,
    script: &Value,
    database: Option<&str>,
    fake: &MockServer,
) -> Vec<(String, String)> {
    let mut env = with_database(scripted(dir, script), database);
    env.extend(settings(fake));
    env
}

/// Slack's side of a crash run.
pub(crate) struct SlackFake(pub(crate) MockServer);

impl Fake for SlackFake {
    fn name(&self) -> &'static str {
        "Slack"
    }

    fn settings(&self) -> Vec<(String, String)> {
        settings(&self.0)
    }

    fn send(&self, server: &Server, i: usize) -> u16 {
        post(server, i)
    }

    fn session(&self, i: usize) -> (TenantId, SessionKey) {
        let key = SessionKey {
            surface: Surface::Slack,
            chat_id: "C1".into(),
            thread_id: thread_of(i),
        };
        (workmate_chat::tenant_of(Surface::Slack, "T1"), key)
    }

    fn cards(&self, runtime: &Runtime, i: usize) -> Vec<String> {
        runtime.block_on(cards_in(&self.0, &thread_of(i)))
    }
}

/// Posts so far, per thread: each one's metadata.
type Posts = Arc<Mutex<HashMap<String, Vec<Value>>>>;

/// The `ts` of the `n`-th message (from 0) posted in `thread`.
fn card_ts(thread: &str, n: usize) -> String {
    format!("9{thread}{n:03}")
}

/// A fake Slack Web API that accepts every call the server makes.
pub(crate) async fn fake_slack() -> MockServer {
    let fake = MockServer::start().await;
    let posts = Posts::default();
    let answers = [
        (
            "/auth.test",
            json!({"team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"}),
        ),
        (
            "/chat.update",
            json!({"channel": "C1", "ts": "1700000000.0001"}),
        ),
        (
            "/chat.postEphemeral",
            json!({"message_ts": "1700000000.0009"}),
        ),
        (
            "/users.info",
            json!({"user": {"id": "U1", "name": "ana", "real_name": "Ana Lima",
                            "profile": {"display_name": "", "real_name": "Ana Lima"}}}),
        ),
    ];
    let posted = Arc::clone(&posts);
    Mock::given(method("POST"))
        .and(path("/chat.postMessage"))
        .respond_with(move |request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let thread = body["thread_ts"].as_str().unwrap_or("0").to_owned();
            let mut posts = posted.lock().unwrap();
            let thread_posts = posts.entry(thread.clone()).or_default();
            let ts = card_ts(&thread, thread_posts.len());
            thread_posts.push(json!({"ts": ts, "metadata": body["metadata"]}));
            ResponseTemplate::new(200).set_body_json(json!({"ok": true, "channel": "C1", "ts": ts}))
        })
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/conversations.replies"))
        .respond_with(move |request: &Request| {
            let form = String::from_utf8_lossy(&request.body).into_owned();
            let thread = form
                .split('&')
                .find_map(|pair| pair.strip_prefix("ts="))
                .unwrap_or_default()
                .to_owned();
            let messages = posts
                .lock()
                .unwrap()
                .get(&thread)
                .cloned()
                .unwrap_or_default();
            ResponseTemplate::new(200).set_body_json(json!({"ok": true, "messages": messages}))
        })
        .mount(&fake)
        .await;
    for (route, extra) in answers {
        let mut body = json!({"ok": true});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        Mock::given(method("POST"))
            .and(path(route))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&fake)
            .await;
    }
    fake
}

/// What the cards posted in `thread` show last: each posted card's last body (its post, or its
/// last update), in the order they were posted.
pub(crate) async fn cards_in(fake: &MockServer, thread: &str) -> Vec<String> {
    let requests = fake.received_requests().await.unwrap_or_default();
    let mut cards: Vec<(String, String)> = Vec::new();
    for request in requests {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        match request.url.path() {
            "/chat.postMessage" if body["thread_ts"].as_str() == Some(thread) => {
                cards.push((card_ts(thread, cards.len()), body.to_string()));
            }
            "/chat.update" => {
                if let Some(card) = cards
                    .iter_mut()
                    .find(|(ts, _)| body["ts"].as_str() == Some(ts))
                {
                    card.1 = body.to_string();
                }
            }
            _ => {}
        }
    }
    cards.into_iter().map(|(_, shown)| shown).collect()
}
