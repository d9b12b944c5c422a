//! DingTalk in the intake crash test: signed robot callbacks (HTTP mode), each from a person of
//! their own in a one-to-one chat with the robot, and a fake open platform that keeps every
//! interactive card as its calls leave it, by `outTrackId`: created and delivered once (a
//! second create of the same id is refused, as an id names one card), its data updated, its
//! streamed content replaced.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};
use workmate_protocol::{Surface, TenantId};
use workmate_store::SessionKey;

use super::{Fake, text_of};
use crate::support::{Server, http_send};

const CLIENT_ID: &str = "dingcrash";
const CLIENT_SECRET: &str = "ding-crash-secret";
const CORP: &str = "dingcorp";

/// What the fake platform holds.
#[derive(Debug, Default)]
struct World {
    /// Each card's data, by `outTrackId`.
    cards: HashMap<String, Map<String, Value>>,
    /// Per open space (a person's chat with the robot), its cards' ids in the order delivered.
    spaces: HashMap<String, Vec<String>>,
}

type Shared = Arc<Mutex<World>>;

fn ok(body: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

fn refused(code: &str) -> ResponseTemplate {
    ResponseTemplate::new(400).set_body_json(json!({"code": code, "message": code}))
}

/// The person who sends event `i`.
fn sender_of(i: usize) -> String {
    format!("staff{i:04}")
}

fn message(i: usize) -> Value {
    json!({
        "msgId": format!("msgCrash{i:04}"),
        "msgtype": "text",
        "text": { "content": text_of(i) },
        "conversationId": format!("cidDirect{i:04}"),
        "conversationType": "1",
        "chatbotCorpId": CORP,
        "chatbotUserId": "$:LWCP_v1:$bot",
        "senderStaffId": sender_of(i),
        "senderNick": format!("Person {i}"),
        "senderCorpId": CORP,
        "isInAtList": true,
        "robotCode": CLIENT_ID,
        "createAt": 1_700_000_000_000_i64,
    })
}

/// The clock in milliseconds, never the same twice in this process.
fn unique_millis() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let now = u64::try_from(now.as_millis()).unwrap();
    let mut last = LAST.load(Ordering::SeqCst);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange(last, next, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

fn body(request: &Request) -> Value {
    serde_json::from_slice(&request.body).unwrap_or_default()
}

async fn fake_dingtalk() -> (MockServer, Shared) {
    let fake = MockServer::start().await;
    let world = Shared::default();
    Mock::given(method("POST"))
        .and(path("/v1.0/oauth2/accessToken"))
        .respond_with(ok(&json!({"accessToken": "t-crash", "expireIn": 7200})))
        .mount(&fake)
        .await;
    let created = Arc::clone(&world);
    Mock::given(method("POST"))
        .and(path("/v1.0/card/instances/createAndDeliver"))
        .respond_with(move |request: &Request| {
            let sent = body(request);
            let id = sent["outTrackId"].as_str().unwrap_or_default().to_owned();
            let space = sent["openSpaceId"].as_str().unwrap_or_default().to_owned();
            let mut world = created.lock().unwrap();
            if world.cards.contains_key(&id) {
                return refused("param.outTrackIdExists");
            }
            let params = sent["cardData"]["cardParamMap"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            world.cards.insert(id.clone(), params);
            world.spaces.entry(space).or_default().push(id.clone());
            ok(&json!({"success": true, "result": {"outTrackId": id}}))
        })
        .mount(&fake)
        .await;
    let updated = Arc::clone(&world);
    Mock::given(method("PUT"))
        .and(path("/v1.0/card/instances"))
        .respond_with(move |request: &Request| {
            let sent = body(request);
            let id = sent["outTrackId"].as_str().unwrap_or_default();
            let mut world = updated.lock().unwrap();
            let Some(card) = world.cards.get_mut(id) else {
                return refused("param.cardNotExist");
            };
            for (key, value) in sent["cardData"]["cardParamMap"]
                .as_object()
                .into_iter()
                .flatten()
            {
                card.insert(key.clone(), value.clone());
            }
            ok(&json!({"success": true, "result": true}))
        })
        .mount(&fake)
        .await;
    let streamed = Arc::clone(&world);
    Mock::given(method("PUT"))
        .and(path("/v1.0/card/streaming"))
        .respond_with(move |request: &Request| {
            let sent = body(request);
            let id = sent["outTrackId"].as_str().unwrap_or_default();
            let key = sent["key"].as_str().unwrap_or("content").to_owned();
            let mut world = streamed.lock().unwrap();
            let Some(card) = world.cards.get_mut(id) else {
                return refused("param.cardNotExist");
            };
            card.insert(key, sent["content"].clone());
            ok(&json!({"success": true, "result": true}))
        })
        .mount(&fake)
        .await;
    (fake, world)
}

/// DingTalk's side of a crash run.
pub(crate) struct DingTalkFake {
    server: MockServer,
    world: Shared,
}

impl DingTalkFake {
    pub(crate) async fn start() -> Self {
        let (server, world) = fake_dingtalk().await;
        Self { server, world }
    }
}

impl Fake for DingTalkFake {
    fn name(&self) -> &'static str {
        "DingTalk"
    }

    fn settings(&self) -> Vec<(String, String)> {
        [
            ("WORKMATE__PLATFORMS__DINGTALK__CLIENT_ID", CLIENT_ID),
            (
                "WORKMATE__PLATFORMS__DINGTALK__CLIENT_SECRET",
                CLIENT_SECRET,
            ),
            (
                "WORKMATE__PLATFORMS__DINGTALK__CARD_TEMPLATE_ID",
                "tpl-approval.schema",
            ),
            (
                "WORKMATE__PLATFORMS__DINGTALK__API_BASE",
                &self.server.uri(),
            ),
            ("WORKMATE__PLATFORMS__DINGTALK__MODE", "http"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .to_vec()
    }

    /// Signed as DingTalk signs a robot callback, each at a millisecond of its own (a
    /// signature pair is taken once).
    fn send(&self, server: &Server, i: usize) -> u16 {
        let timestamp = unique_millis().to_string();
        let sign = workmate_dingtalk::sign::robot_sign(CLIENT_SECRET, &timestamp);
        let headers = [("timestamp", timestamp.as_str()), ("sign", sign.as_str())];
        http_send(
            server.addr,
            "POST",
            "/v1/platforms/dingtalk/robot",
            &headers,
            Some(&message(i).to_string()),
        )
        .map_or(0, |(status, _)| status)
    }

    fn session(&self, i: usize) -> (TenantId, SessionKey) {
        let key = SessionKey {
            surface: Surface::Dingtalk,
            chat_id: sender_of(i),
            thread_id: String::new(),
        };
        (workmate_chat::tenant_of(Surface::Dingtalk, CORP), key)
    }

    /// Each card's data as text; a card whose stream is not closed is marked with the Stop
    /// button the crash run looks for, since it still shows itself working.
    fn cards(&self, _runtime: &Runtime, i: usize) -> Vec<String> {
        let world = self.world.lock().unwrap();
        let space = format!("dtv1.card//IM_ROBOT.{}", sender_of(i));
        world
            .spaces
            .get(&space)
            .into_iter()
            .flatten()
            .map(|id| {
                let card = world.cards.get(id).cloned().unwrap_or_default();
                let done = matches!(
                    card.get("flowStatus").and_then(Value::as_str),
                    Some("3" | "5")
                );
                let shown = Value::Object(card).to_string();
                if done {
                    shown
                } else {
                    format!("{shown} \"Stop\"")
                }
            })
            .collect()
    }
}
