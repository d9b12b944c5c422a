//! The fake Slack of the intake crash tests: it takes every call, gives each posted message a
//! `ts` of its own (so a second card in a thread shows as one), keeps each post's metadata so
//! `conversations.replies` finds it again as Slack would, and reads back what each thread's
//! cards show last.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

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
