//! The Slack side of the chaos test: a fake of the Web API every replica calls, which hands out
//! a fresh `ts` per posted message and remembers the approval buttons it was shown, and the
//! signed Events API and interactivity requests the platform sends to a replica.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};
use workmate_cards::ButtonAction;
use workmate_protocol::{ApprovalChoice, Resolution};

use super::Dice;
use super::cluster::Cluster;
use super::load::pick;
use crate::support::http_send;

/// `[platforms.slack] signing_secret` of every replica.
pub(crate) const SECRET: &str = "chaos-signing-secret";
/// The workspace (team) every event comes from.
pub(crate) const TEAM: &str = "T1";
/// The channel every thread is in.
pub(crate) const CHANNEL: &str = "C1";
/// The person who mentions the bot and approves its calls.
pub(crate) const USER: &str = "U1";
/// The text the chat layer starts a delivery's "not taken" notice with.
const NOT_TAKEN: &str = "⚠️ workmate could not take";

/// One Slack mention, opening its own thread.
#[derive(Debug)]
pub(crate) struct Mention {
    due: Duration,
    pub(crate) event_id: String,
    pub(crate) ts: String,
    pub(crate) text: String,
    body: String,
    /// The replica that answered 200 first.
    pub(crate) acked_by: Option<usize>,
    retry_at: Duration,
    /// When the same event goes again to another replica, if it does.
    pub(crate) redeliver_at: Option<Duration>,
    /// Redeliveries answered: (replica, status).
    pub(crate) redelivered: Vec<(usize, u16)>,
    pub(crate) done: bool,
}

/// What one [`Mention::send`] did.
pub(crate) enum Sent {
    Nothing,
    /// The event's first delivery was acknowledged, by this replica.
    Acked(usize),
    Refused,
}

impl Mention {
    /// Mention `index` of run `run`, due `due` into the load.
    pub(crate) fn new(index: usize, run: &str, due: Duration) -> Self {
        let (event_id, ts) = (
            format!("EvChaos{run}x{index}"),
            format!("1700100000.{index:06}"),
        );
        let text = format!("chaos slack {index} {run}");
        Self {
            due,
            body: mention(&event_id, &ts, &text),
            event_id,
            ts,
            text,
            acked_by: None,
            retry_at: Duration::ZERO,
            redeliver_at: None,
            redelivered: Vec::new(),
            done: false,
        }
    }

    /// Delivers the event when due, as Slack does: again a second later when it was not
    /// acknowledged; and, for half the events, once more to another replica up to four seconds
    /// after it was.
    pub(crate) fn send(&mut self, cluster: &Cluster, dice: &mut Dice, now: Duration) -> Sent {
        if self.acked_by.is_none() && now >= self.due && now >= self.retry_at {
            let Some(r) = pick(cluster, dice, None) else {
                return Sent::Nothing;
            };
            let addr = cluster.server(r).map(|s| s.addr);
            if addr.and_then(|a| deliver(a, "events", &self.body)) != Some(200) {
                self.retry_at = now + Duration::from_secs(1);
                return Sent::Refused;
            }
            self.acked_by = Some(r);
            if dice.below(2) == 0 {
                self.redeliver_at = Some(now + Duration::from_millis(dice.below(4000)));
            }
            return Sent::Acked(r);
        }
        if self.redeliver_at.is_none_or(|at| now < at) {
            return Sent::Nothing;
        }
        let Some(r) = pick(cluster, dice, self.acked_by) else {
            return Sent::Nothing;
        };
        let addr = cluster.server(r).map(|s| s.addr);
        let status = addr.and_then(|a| deliver(a, "events", &self.body));
        self.redelivered.push((r, status.unwrap_or(0)));
        if status == Some(200) {
            self.redeliver_at = None;
            Sent::Nothing
        } else {
            self.redeliver_at = Some(now + Duration::from_secs(1));
            Sent::Refused
        }
    }
}

/// An approval button a card showed: what a click on it sends back.
#[derive(Clone, Debug)]
pub(crate) struct Button {
    pub(crate) value: String,
    pub(crate) thread_ts: String,
    pub(crate) message_ts: String,
}

/// What the fake saw.
#[derive(Debug, Default)]
struct Seen {
    /// The "once" button of each approval item, by item id, as first shown.
    buttons: HashMap<String, Button>,
    posts: usize,
    updates: usize,
    /// The threads (and texts) of "could not take this message" notices.
    not_taken: Vec<(String, String)>,
}

/// The Web API: `chat.postMessage` answers a fresh `ts`, `chat.update` the one it was given,
/// everything else (`auth.test`, `users.info`, `chat.postEphemeral`, …) `ok` with the fields
/// those callers read.
#[derive(Debug)]
struct Api {
    next: AtomicU64,
    seen: Arc<Mutex<Seen>>,
}

impl Respond for Api {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let method = request.url.path().rsplit('/').next().unwrap_or_default();
        let mut answer = json!({
            "ok": true, "channel": CHANNEL, "team_id": TEAM, "user_id": "UBOT",
            "bot_id": "BBOT", "message_ts": "1700000000.000009",
            "user": {"id": USER, "name": "ana", "real_name": "Ana Lima",
                     "profile": {"display_name": "", "real_name": "Ana Lima"}},
        });
        let ts = match method {
            "chat.postMessage" => {
                let n = self.next.fetch_add(1, Ordering::Relaxed);
                format!("1800000000.{n:06}")
            }
            "chat.update" => body["ts"].as_str().unwrap_or_default().to_owned(),
            _ => return ResponseTemplate::new(200).set_body_json(answer),
        };
        answer["ts"] = Value::from(ts.clone());
        self.record(method, &body, &ts);
        ResponseTemplate::new(200).set_body_json(answer)
    }
}

impl Api {
    fn record(&self, method: &str, body: &Value, ts: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let thread = body["thread_ts"].as_str().unwrap_or(ts).to_owned();
        if method == "chat.postMessage" {
            seen.posts += 1;
            let text = body["text"].as_str().unwrap_or_default();
            if text.starts_with(NOT_TAKEN) {
                seen.not_taken.push((thread.clone(), text.to_owned()));
            }
        } else {
            seen.updates += 1;
        }
        for value in button_values(body) {
            let Ok(ButtonAction::Resolve {
                item_id,
                resolution:
                    Resolution::Approval {
                        choice: ApprovalChoice::Once,
                    },
            }) = workmate_slack::blocks::decode_button_value(&value)
            else {
                continue;
            };
            seen.buttons
                .entry(item_id.to_string())
                .or_insert_with(|| Button {
                    value,
                    thread_ts: thread.clone(),
                    message_ts: ts.to_owned(),
                });
        }
    }
}

/// Every button value in a message body.
fn button_values(body: &Value) -> Vec<String> {
    let blocks = body["blocks"].as_array().into_iter().flatten();
    let elements = blocks.flat_map(|b| b["elements"].as_array().into_iter().flatten());
    elements
        .filter_map(|e| e["value"].as_str().map(str::to_owned))
        .collect()
}

/// The fake Web API, served from `runtime` (the test's own).
#[derive(Debug)]
pub(crate) struct FakeSlack {
    server: MockServer,
    seen: Arc<Mutex<Seen>>,
}

impl FakeSlack {
    pub(crate) fn start(runtime: &tokio::runtime::Runtime) -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let api = Api {
            next: AtomicU64::new(1),
            seen: Arc::clone(&seen),
        };
        let server = runtime.block_on(async {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(api)
                .mount(&server)
                .await;
            server
        });
        Self { server, seen }
    }

    /// `[platforms.slack] api_base`.
    pub(crate) fn uri(&self) -> String {
        self.server.uri()
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The "once" button shown for approval item `item`, if a card showed one.
    pub(crate) fn button(&self, item: &str) -> Option<Button> {
        self.seen().buttons.get(item).cloned()
    }

    /// Messages posted and updated.
    pub(crate) fn traffic(&self) -> (usize, usize) {
        let seen = self.seen();
        (seen.posts, seen.updates)
    }

    /// The "could not take" notices posted: (thread, text).
    pub(crate) fn not_taken(&self) -> Vec<(String, String)> {
        self.seen().not_taken.clone()
    }
}

fn now() -> String {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
        .to_string()
}

/// Posts `body` to the replica's Slack route `route`, signed as Slack signs each delivery
/// (afresh, with the current time); the status, or `None` when the replica did not answer.
pub(crate) fn deliver(addr: SocketAddr, route: &str, body: &str) -> Option<u16> {
    let timestamp = now();
    let signature = workmate_slack::sign(SECRET.as_bytes(), &timestamp, body.as_bytes());
    let headers = [
        ("X-Slack-Request-Timestamp", timestamp.as_str()),
        ("X-Slack-Signature", signature.as_str()),
    ];
    let path = format!("/v1/platforms/slack/{route}");
    http_send(addr, "POST", &path, &headers, Some(body))
        .ok()
        .map(|(status, _)| status)
}

/// An `app_mention` that opens thread `ts` of the channel.
fn mention(event_id: &str, ts: &str, text: &str) -> String {
    json!({
        "type": "event_callback", "team_id": TEAM, "api_app_id": "A1",
        "event_id": event_id, "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": USER, "text": format!("<@UBOT> {text}"),
                  "ts": ts, "channel": CHANNEL, "event_ts": ts}
    })
    .to_string()
}

/// A click of `button` by the person, with its own trigger id (the click's delivery id).
pub(crate) fn click(button: &Button, trigger_id: &str) -> String {
    let payload = json!({
        "type": "block_actions", "trigger_id": trigger_id,
        "user": {"id": USER, "username": "ana", "name": "ana", "team_id": TEAM},
        "team": {"id": TEAM, "domain": "acme"},
        "container": {"type": "message", "message_ts": button.message_ts,
                      "channel_id": CHANNEL, "is_ephemeral": false},
        "channel": {"id": CHANNEL, "name": "general"},
        "message": {"type": "message", "ts": button.message_ts, "text": "Run run_shell?",
                    "thread_ts": button.thread_ts},
        "actions": [{"action_id": "wm:0", "block_id": "b", "type": "button",
                     "value": button.value, "action_ts": "1700000001.0"}]
    });
    let encoded: String =
        url::form_urlencoded::byte_serialize(payload.to_string().as_bytes()).collect();
    format!("payload={encoded}")
}
