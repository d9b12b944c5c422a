//! Full engine turns against fake model gateways that speak each real wire format: a tool call
//! whose result goes back to the model, then the answer; and one session switched between the
//! three formats mid-conversation.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{EngineConfig, EngineParts, SessionHub};
use workmate_protocol::{Actor, Command, EventKind, PermissionMode, Surface, TenantId};
use workmate_providers::{ProviderKind, ProviderRouter, ProviderSettings};
use workmate_store::{ConnectOptions, NewSession, SessionKey, Store, SystemClock};
use workmate_tools::{BuiltinOptions, builtin_registry};

fn sse(events: &[Value], named: bool) -> String {
    events
        .iter()
        .map(|e| match (named, e["type"].as_str()) {
            (true, Some(kind)) => format!("event: {kind}\ndata: {e}\n\n"),
            _ => format!("data: {e}\n\n"),
        })
        .collect()
}

/// A reply that calls `list_files` on ".", in the kind's wire format.
fn tool_reply(kind: ProviderKind) -> String {
    match kind {
        ProviderKind::Openai => {
            let mut body = sse(
                &[
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_a1", "type": "function", "function": {"name": "list_files", "arguments": ""}}]}}]}),
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}}]}),
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": " \".\"}"}}]}}]}),
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                    json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 7}}),
                ],
                false,
            );
            body.push_str("data: [DONE]\n\n");
            body
        }
        ProviderKind::Anthropic => sse(
            &[
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": {"input_tokens": 20, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_a1", "name": "list_files", "input": {}}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":"}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": " \".\"}"}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
                json!({"type": "message_stop"}),
            ],
            true,
        ),
        ProviderKind::Gemini => sse(
            &[json!({
                "candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "list_files", "args": {"path": "."}}}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 7}
            })],
            false,
        ),
    }
}

/// A plain text reply, in the kind's wire format.
fn text_reply(kind: ProviderKind, text: &str) -> String {
    match kind {
        ProviderKind::Openai => {
            let mut body = sse(
                &[
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 30, "completion_tokens": 3}}),
                ],
                false,
            );
            body.push_str("data: [DONE]\n\n");
            body
        }
        ProviderKind::Anthropic => sse(
            &[
                json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": {"input_tokens": 30, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
                json!({"type": "message_stop"}),
            ],
            true,
        ),
        ProviderKind::Gemini => sse(
            &[json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 3}
            })],
            false,
        ),
    }
}

const KINDS: [(ProviderKind, &str); 3] = [
    (ProviderKind::Openai, "oa"),
    (ProviderKind::Anthropic, "an"),
    (ProviderKind::Gemini, "ge"),
];

struct World {
    hub: SessionHub,
    tenant: TenantId,
    servers: Vec<MockServer>,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(
        &format!("sqlite://{}/g.db", dir.path().display()),
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    store.migrate().await.unwrap();
    let tenant = TenantId::from("t_gw");
    store.tenants().ensure(&tenant, "Gateways").await.unwrap();
    let mut providers = ProviderRouter::new("oa");
    let mut servers = Vec::new();
    for (kind, name) in KINDS {
        let server = MockServer::start().await;
        let mut settings = ProviderSettings::new(name, kind, server.uri());
        settings.api_key = Some("test-key".to_owned().into());
        settings.headers = vec![("x-cost-center".into(), "ops".into())];
        providers.register(name, workmate_providers::connect(settings).unwrap());
        servers.push(server);
    }
    let config = EngineConfig {
        workspaces_dir: dir.path().join("workspaces"),
        ..EngineConfig::default()
    };
    let hub = SessionHub::new(EngineParts {
        store,
        providers,
        tools: builtin_registry(&BuiltinOptions::default()),
        permissions: PermissionConfig::default(),
        config,
        clock: Arc::new(SystemClock),
    });
    World {
        hub,
        tenant,
        servers,
        _dir: dir,
    }
}

impl World {
    async fn session(&self, model: &str) -> workmate_protocol::SessionId {
        let new = NewSession {
            key: SessionKey {
                surface: Surface::Http,
                chat_id: uuid::Uuid::now_v7().to_string(),
                thread_id: String::new(),
            },
            owner: "u_alice".into(),
            title: None,
            persona: "cowork".into(),
            model: model.into(),
            mode: PermissionMode::Interactive,
            unattended: false,
        };
        self.hub
            .create_session(&self.tenant, &new)
            .await
            .unwrap()
            .id
    }

    /// Runs one user message to its terminal event; returns the events.
    async fn turn(
        &self,
        session: &workmate_protocol::SessionId,
        text: &str,
    ) -> Vec<workmate_protocol::Event> {
        let mut events = self.hub.subscribe(&self.tenant, session).await.unwrap();
        let command = Command::UserMessage {
            author: Actor::new("u_alice"),
            text: text.into(),
            attachments: vec![],
        };
        self.hub
            .submit(&self.tenant, session, command)
            .await
            .unwrap();
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .expect("an event in time")
                .unwrap();
            let done = matches!(
                event.kind,
                EventKind::TurnEnd { .. } | EventKind::Error { .. } | EventKind::Interrupted { .. }
            );
            seen.push(workmate_protocol::Event::clone(&event));
            if done {
                tokio::time::timeout(
                    Duration::from_secs(20),
                    self.hub.wait_idle(&self.tenant, session),
                )
                .await
                .unwrap()
                .unwrap();
                return seen;
            }
        }
    }
}

async fn respond_in_order(server: &MockServer, bodies: Vec<String>) {
    for (priority, body) in (1u8..).zip(bodies) {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
            .up_to_n_times(1)
            .with_priority(priority)
            .mount(server)
            .await;
    }
}

#[tokio::test]
async fn each_wire_format_drives_a_tool_turn_to_completion() {
    let world = world().await;
    for ((kind, name), server) in KINDS.iter().zip(&world.servers) {
        respond_in_order(
            server,
            vec![tool_reply(*kind), text_reply(*kind, "Two files.")],
        )
        .await;
        let session = world.session(&format!("{name}:model-x")).await;
        let events = world.turn(&session, "what is in the workspace?").await;
        let kinds: Vec<&str> = events
            .iter()
            .filter(|e| e.kind.is_state())
            .map(|e| e.kind.name())
            .collect();
        assert_eq!(
            kinds,
            vec![
                "turn_start",
                "assistant_message",
                "tool_proposed",
                "tool_started",
                "tool_finished",
                "iteration_end",
                "assistant_message",
                "turn_end"
            ],
            "{name}"
        );
        let usage = events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::AssistantMessage { usage, .. } => usage.clone(),
                _ => None,
            })
            .expect("usage reported");
        assert_eq!(
            (usage.model.as_str(), usage.output),
            (format!("{name}:model-x").as_str(), 7),
            "{name}"
        );
        let requests = server.received_requests().await.unwrap();
        assert_eq!(requests.len(), 2, "{name}");
        let second: Value = serde_json::from_slice(&requests[1].body).unwrap();
        let text = second.to_string();
        assert!(
            text.contains("list_files"),
            "{name}: the tool call goes back: {text}"
        );
        for private in ["_display", "\"reasoning\"", "\"usage\"", "\"author\""] {
            assert!(!text.contains(private), "{name}: {private} leaked: {text}");
        }
        let headers = &requests[0].headers;
        assert_eq!(headers.get("x-cost-center").unwrap(), "ops", "{name}");
    }
}

#[tokio::test]
async fn a_session_switches_between_the_three_formats() {
    let world = world().await;
    let session = world.session("oa:model-x").await;
    for ((kind, name), server) in KINDS.iter().zip(&world.servers) {
        respond_in_order(
            server,
            vec![text_reply(*kind, &format!("answer from {name}"))],
        )
        .await;
        let switch = Command::SwitchModel {
            model: format!("{name}:model-x"),
            actor: Actor::new("u_alice"),
        };
        world
            .hub
            .submit(&world.tenant, &session, switch)
            .await
            .unwrap();
        let events = world.turn(&session, &format!("question for {name}")).await;
        assert!(
            matches!(events.last().unwrap().kind, EventKind::TurnEnd { .. }),
            "{name}: {events:?}"
        );
        let request: Value =
            serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
        let text = request.to_string();
        assert!(
            text.contains("question for oa"),
            "{name}: the whole history is re-converted: {text}"
        );
        assert!(
            !text.contains("Model switched"),
            "{name}: notices are never sent"
        );
    }
}
