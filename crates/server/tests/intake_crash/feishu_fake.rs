//! Feishu in the intake crash test: encrypted, signed group mentions, each in a thread of its
//! own, and a fake open platform that keeps every CardKit card as its calls leave it (created,
//! replaced, an element's text streamed, streaming closed) and every message as Feishu would:
//! at most one per `uuid`, so a post repeated under the same key shows once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::runtime::Runtime;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};
use workmate_feishu::crypto;
use workmate_protocol::{Surface, TenantId};
use workmate_store::SessionKey;

use super::{Fake, text_of};
use crate::support::{Server, http_send};

const ENCRYPT_KEY: &str = "crash-encrypt-key";
const TOKEN: &str = "crash-verification-token";
const TENANT_KEY: &str = "tk_crash";
const CHAT: &str = "oc_crash";

/// The message event `i` is (and so the thread its answer goes in).
fn message_of(i: usize) -> String {
    format!("om_crash_{i:04}")
}

fn mention(i: usize) -> String {
    let content = json!({ "text": format!("@_user_1 {}", text_of(i)) }).to_string();
    json!({
        "schema": "2.0",
        "header": {"event_id": format!("EvFeishu{i:04}"), "event_type": "im.message.receive_v1",
                   "create_time": "1700000000000", "token": TOKEN, "app_id": "cli_crash",
                   "tenant_key": TENANT_KEY},
        "event": {
            "sender": {"sender_id": {"open_id": "ou_ana", "union_id": "on_ana", "user_id": "ana"},
                       "sender_type": "user", "tenant_key": TENANT_KEY},
            "message": {"message_id": message_of(i), "root_id": "", "parent_id": "",
                        "chat_id": CHAT, "chat_type": "group", "message_type": "text",
                        "content": content,
                        "mentions": [{"key": "@_user_1", "id": {"open_id": "ou_bot"},
                                      "name": "workmate", "tenant_key": TENANT_KEY}]}
        }
    })
    .to_string()
}

/// Feishu's side of a crash run.
pub(crate) struct FeishuFake {
    server: MockServer,
    world: Shared,
}

impl FeishuFake {
    pub(crate) async fn start() -> Self {
        let (server, world) = fake_feishu().await;
        Self { server, world }
    }
}

impl Fake for FeishuFake {
    fn name(&self) -> &'static str {
        "Feishu"
    }

    fn settings(&self) -> Vec<(String, String)> {
        [
            ("WORKMATE__PLATFORMS__FEISHU__APP_ID", "cli_crash"),
            ("WORKMATE__PLATFORMS__FEISHU__APP_SECRET", "crash-secret"),
            ("WORKMATE__PLATFORMS__FEISHU__ENCRYPT_KEY", ENCRYPT_KEY),
            ("WORKMATE__PLATFORMS__FEISHU__VERIFICATION_TOKEN", TOKEN),
            ("WORKMATE__PLATFORMS__FEISHU__API_BASE", &self.server.uri()),
            ("WORKMATE__PLATFORMS__FEISHU__MODE", "webhook"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .to_vec()
    }

    /// Encrypted and signed, as Feishu posts it.
    fn send(&self, server: &Server, i: usize) -> u16 {
        let sealed = crypto::encrypt_with(ENCRYPT_KEY, *b"0123456789abcdef", &mention(i));
        let body = json!({ "encrypt": sealed }).to_string();
        let now = crate::support::unix_now_s();
        let nonce = format!("nonce-{i}");
        let signature = crypto::signature(&now, &nonce, ENCRYPT_KEY, body.as_bytes());
        let headers = [
            ("X-Lark-Request-Timestamp", now.as_str()),
            ("X-Lark-Request-Nonce", nonce.as_str()),
            ("X-Lark-Signature", signature.as_str()),
        ];
        http_send(
            server.addr,
            "POST",
            "/v1/platforms/feishu/events",
            &headers,
            Some(&body),
        )
        .map_or(0, |(status, _)| status)
    }

    fn session(&self, i: usize) -> (TenantId, SessionKey) {
        let key = SessionKey {
            surface: Surface::Feishu,
            chat_id: CHAT.into(),
            thread_id: message_of(i),
        };
        (workmate_chat::tenant_of(Surface::Feishu, TENANT_KEY), key)
    }

    fn cards(&self, _runtime: &Runtime, i: usize) -> Vec<String> {
        cards_below(&self.world, &message_of(i))
    }
}

/// What the fake platform holds.
#[derive(Debug, Default)]
struct World {
    /// Cards by id, as their last call left them.
    cards: HashMap<String, Value>,
    /// Per replied-to message: the messages shown below it, as `(uuid, card id)`.
    replies: HashMap<String, Vec<(String, String)>>,
}

type Shared = Arc<Mutex<World>>;

fn ok(data: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"code": 0, "msg": "ok", "data": data}))
}

fn body(request: &Request) -> Value {
    serde_json::from_slice(&request.body).unwrap_or_default()
}

/// The card JSON a string field holds.
fn card_json(text: Option<&str>) -> Value {
    text.and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default()
}

/// Sets the `content` of the element `id` wherever it is in `card`.
fn set_element(card: &mut Value, id: &str, content: &Value) {
    match card {
        Value::Object(map) => {
            if map.get("element_id").and_then(Value::as_str) == Some(id) {
                map.insert("content".into(), content.clone());
            }
            for value in map.values_mut() {
                set_element(value, id, content);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| set_element(v, id, content)),
        _ => {}
    }
}

/// The fake, and what it holds.
async fn fake_feishu() -> (MockServer, Shared) {
    let fake = MockServer::start().await;
    let world = Shared::default();
    crate::feishu::fake::mount_identity(&fake).await;
    let cards = Arc::clone(&world);
    Mock::given(method("POST"))
        .and(path("/open-apis/cardkit/v1/cards"))
        .respond_with(move |request: &Request| {
            let mut world = cards.lock().unwrap();
            let id = format!("card_{}", world.cards.len() + 1);
            let card = card_json(body(request)["data"].as_str());
            world.cards.insert(id.clone(), card);
            ok(&json!({"card_id": id}))
        })
        .mount(&fake)
        .await;
    let replies = Arc::clone(&world);
    Mock::given(method("POST"))
        .and(path_regex("^/open-apis/im/v1/messages/[^/]+/reply$"))
        .respond_with(move |request: &Request| {
            let root = request
                .url
                .path()
                .split('/')
                .nth(5)
                .unwrap_or_default()
                .to_owned();
            let sent = body(request);
            let uuid = sent["uuid"].as_str().unwrap_or_default().to_owned();
            let card = card_json(sent["content"].as_str())["data"]["card_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let mut world = replies.lock().unwrap();
            let shown = world.replies.entry(root.clone()).or_default();
            // Feishu sends at most one message per uuid.
            let index = match shown
                .iter()
                .position(|(u, _)| !uuid.is_empty() && *u == uuid)
            {
                Some(index) => index,
                None => {
                    shown.push((uuid, card));
                    shown.len() - 1
                }
            };
            ok(&json!({"message_id": format!("om_{root}_{index}")}))
        })
        .mount(&fake)
        .await;
    let updates = Arc::clone(&world);
    Mock::given(path_regex("^/open-apis/cardkit/v1/cards/"))
        .respond_with(move |request: &Request| {
            let parts: Vec<&str> = request.url.path().split('/').collect();
            // /open-apis/cardkit/v1/cards/{id}[/elements/{element}/content | /settings]
            let id = parts.get(5).copied().unwrap_or_default();
            let sent = body(request);
            let mut world = updates.lock().unwrap();
            if let Some(card) = world.cards.get_mut(id) {
                match (parts.get(6).copied(), parts.get(7).copied()) {
                    (None, _) => *card = card_json(sent["card"]["data"].as_str()),
                    (Some("elements"), Some(element)) => {
                        set_element(card, element, &sent["content"]);
                    }
                    (Some("settings"), _) => {
                        let settings = card_json(sent["settings"].as_str());
                        card["config"]["streaming_mode"] =
                            settings["config"]["streaming_mode"].clone();
                    }
                    _ => {}
                }
            }
            ok(&json!({}))
        })
        .mount(&fake)
        .await;
    (fake, world)
}

/// What the cards shown below `root` show: each one's card JSON as text, in the order shown.
fn cards_below(world: &Shared, root: &str) -> Vec<String> {
    let world = world.lock().unwrap();
    world
        .replies
        .get(root)
        .map(|shown| {
            shown
                .iter()
                .map(|(_, card)| {
                    world
                        .cards
                        .get(card)
                        .map(Value::to_string)
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}
