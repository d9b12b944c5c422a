//! A hub on a temporary SQLite store, test tools that observe how they are run, and helpers that
//! collect a turn's events.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::broadcast;
use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{EngineConfig, EngineParts, SessionHub};
use workmate_protocol::{
    Actor, ApprovalChoice, Command, Event, EventKind, InboxItemId, PermissionMode, Resolution,
    SessionId, Surface, TenantId, ToolSpec,
};
use workmate_providers::{
    Capabilities, ModelProvider, ModelRequest, ModelStream, ProviderRouter, ScriptedProvider,
};
use workmate_store::{Clock, ConnectOptions, NewSession, NewUser, Role, SessionKey, Store};
use workmate_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolRegistry};

/// How long any single wait in a test may take before it fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The clock of every test store and hub: the real time plus whatever tests added. Shared by the
/// whole test binary, so a test that moves it must only compare days it moved to itself.
pub static CLOCK: std::sync::LazyLock<Arc<ShiftedClock>> =
    std::sync::LazyLock::new(|| Arc::new(ShiftedClock::default()));

/// Real time shifted by an offset tests can grow.
#[derive(Debug, Default)]
pub struct ShiftedClock {
    offset_ms: std::sync::atomic::AtomicI64,
}

impl ShiftedClock {
    /// Moves every later reading forward.
    pub fn advance(&self, ms: i64) {
        self.offset_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ShiftedClock {
    fn now_ms(&self) -> i64 {
        workmate_store::SystemClock.now_ms() + self.offset_ms.load(Ordering::SeqCst)
    }
}

/// Observes how a test tool was run.
#[derive(Debug, Default)]
pub struct Probe {
    pub calls: AtomicUsize,
    pub active: AtomicUsize,
    pub max_active: AtomicUsize,
}

impl Probe {
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    pub fn max_active(&self) -> usize {
        self.max_active.load(Ordering::SeqCst)
    }
}

/// A tool that sleeps `ms` (or until stopped) and records overlap with its other calls.
#[derive(Debug)]
pub struct ProbeTool {
    pub name: &'static str,
    pub metadata: Option<ToolMetadata>,
    pub probe: Arc<Probe>,
}

impl Tool for ProbeTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: "test probe".into(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        self.metadata.clone()
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            self.probe.calls.fetch_add(1, Ordering::SeqCst);
            let now = self.probe.active.fetch_add(1, Ordering::SeqCst) + 1;
            self.probe.max_active.fetch_max(now, Ordering::SeqCst);
            let ms = arguments
                .get("ms")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            let stopped = tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => false,
                () = ctx.cancel.cancelled() => true,
            };
            self.probe.active.fetch_sub(1, Ordering::SeqCst);
            if stopped {
                return Err(ToolError::new("interrupted by user"));
            }
            if arguments.get("hide").is_some() {
                return Ok(
                    serde_json::json!({"items": 1, "_display": {"hidden_by_filters": 2, "hidden_fields": 1}}),
                );
            }
            Ok(serde_json::json!({"slept_ms": ms}))
        })
    }
}

/// The scripted provider, remembering every request it was sent.
#[derive(Debug)]
pub struct Recording {
    inner: ScriptedProvider,
    pub requests: std::sync::Mutex<Vec<ModelRequest>>,
}

impl Recording {
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl ModelProvider for Recording {
    fn capabilities(&self, model: &str) -> Capabilities {
        self.inner.capabilities(model)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.stream(request)
    }
}

/// A model gateway that is down: every call fails at once as overloaded (HTTP 503).
#[derive(Debug, Default)]
pub struct Down {
    pub calls: AtomicUsize,
}

impl ModelProvider for Down {
    fn capabilities(&self, _model: &str) -> Capabilities {
        Capabilities::default()
    }

    fn stream(&self, _request: ModelRequest) -> ModelStream {
        self.calls.fetch_add(1, Ordering::SeqCst);
        ModelStream::failed(workmate_providers::ProviderError::new(
            workmate_providers::ProviderErrorKind::Unavailable,
            "down:x: HTTP 503: upstream overloaded",
        ))
    }
}

/// A hub, its store, and one session.
pub struct Harness {
    pub hub: SessionHub,
    pub store: Store,
    pub tenant: TenantId,
    pub session: SessionId,
    pub reads: Arc<Probe>,
    pub writes: Arc<Probe>,
    pub dir: std::path::PathBuf,
    pub events: broadcast::Receiver<Arc<Event>>,
    pub model: Arc<Recording>,
    pub down: Arc<Down>,
    keep: bool,
}

pub struct Options {
    pub max_iterations: u32,
    /// Runs the session in `auto` mode: every call runs unasked.
    pub allow_all: bool,
    /// The clock of the store and hub (the shared shifted clock unless a test fixes its own).
    pub clock: Arc<dyn Clock>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_iterations: 150,
            allow_all: false,
            clock: CLOCK.clone(),
        }
    }
}

impl Harness {
    pub async fn new(script: &str) -> Self {
        Self::with(script, Options::default()).await
    }

    pub async fn with(script: &str, options: Options) -> Self {
        let dir = std::env::temp_dir().join(format!("workmate-engine-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::connect(
            &format!("sqlite://{}", dir.join("engine.db").display()),
            ConnectOptions {
                clock: options.clock.clone(),
                ..ConnectOptions::default()
            },
        )
        .await
        .unwrap();
        store.migrate().await.unwrap();
        Self::on_store(store, dir, script, options).await
    }

    /// A new process on the database and folder a crashed one left: its own store connection,
    /// hub and provider, looking at the same session. Call [`Harness::keep_files`] on the first.
    pub async fn reopen(
        dir: std::path::PathBuf,
        session: SessionId,
        script: &str,
        options: Options,
    ) -> Self {
        let store = Store::connect(
            &format!("sqlite://{}", dir.join("engine.db").display()),
            ConnectOptions {
                clock: options.clock.clone(),
                ..ConnectOptions::default()
            },
        )
        .await
        .unwrap();
        store.migrate().await.unwrap();
        let mut next = Self::on_store(store, dir, script, options).await;
        next.session = session;
        next.events = next
            .hub
            .subscribe(&next.tenant, &next.session)
            .await
            .unwrap();
        next
    }

    /// Leaves the database and folder in place when this harness is dropped.
    pub fn keep_files(&mut self) {
        self.keep = true;
    }

    pub async fn on_store(
        store: Store,
        dir: std::path::PathBuf,
        script: &str,
        options: Options,
    ) -> Self {
        let mut providers = ProviderRouter::new("scripted");
        let model = Arc::new(Recording {
            inner: ScriptedProvider::from_json(script).unwrap(),
            requests: Default::default(),
        });
        providers.register("scripted", Arc::clone(&model) as Arc<dyn ModelProvider>);
        let down = Arc::new(Down::default());
        providers.register("down", Arc::clone(&down) as Arc<dyn ModelProvider>);
        let reads = Arc::new(Probe::default());
        let writes = Arc::new(Probe::default());
        let mut tools = ToolRegistry::new();
        tools.register(Arc::new(ProbeTool {
            name: "probe_read",
            metadata: Some(ToolMetadata::read("test")),
            probe: Arc::clone(&reads),
        }));
        tools.register(Arc::new(ProbeTool {
            name: "probe_schedule",
            metadata: Some(ToolMetadata {
                target_arg: None,
                ..ToolMetadata::write_local("automation", "")
            }),
            probe: Arc::new(Probe::default()),
        }));
        tools.register(Arc::new(workmate_tools::Remember));
        tools.register(Arc::new(ProbeTool {
            name: "probe_write",
            metadata: Some(ToolMetadata::write_local("test", "path")),
            probe: Arc::clone(&writes),
        }));
        let config = EngineConfig {
            max_iterations: options.max_iterations,
            default_model: "scripted:test".into(),
            inbox_poll: Duration::from_millis(50),
            workspaces_dir: dir.join("workspaces"),
            ..EngineConfig::default()
        };
        let hub = SessionHub::new(EngineParts {
            store: store.clone(),
            providers,
            tools,
            permissions: PermissionConfig::default(),
            config,
            clock: options.clock.clone(),
        });
        let tenant = TenantId::from("t_test");
        store.tenants().ensure(&tenant, "Test").await.unwrap();
        for approver in ["u_bob", "u_carol"] {
            let user = NewUser {
                id: approver.into(),
                display_name: approver.into(),
                email: None,
                role: Role::Approver,
                sso_subject: None,
            };
            store.tenants().upsert_user(&tenant, &user).await.unwrap();
        }
        let new = NewSession {
            key: SessionKey {
                surface: Surface::Http,
                chat_id: format!("chat-{}", uuid::Uuid::now_v7()),
                thread_id: String::new(),
            },
            owner: "u_alice".into(),
            title: None,
            persona: "cowork".into(),
            model: "scripted:test".into(),
            mode: if options.allow_all {
                PermissionMode::Auto
            } else {
                PermissionMode::Interactive
            },
            unattended: false,
        };
        let session = hub.create_session(&tenant, &new).await.unwrap().id;
        let events = hub.subscribe(&tenant, &session).await.unwrap();
        Self {
            hub,
            store,
            tenant,
            session,
            reads,
            writes,
            dir,
            events,
            model,
            down,
            keep: false,
        }
    }

    pub fn alice() -> Actor {
        Actor::named("u_alice", "Alice")
    }

    pub async fn say(&self, text: &str) -> workmate_engine::Accepted {
        let command = Command::UserMessage {
            author: Self::alice(),
            text: text.into(),
            attachments: vec![],
        };
        self.hub
            .submit(&self.tenant, &self.session, command)
            .await
            .unwrap()
    }

    pub async fn command(
        &self,
        command: Command,
    ) -> workmate_engine::Result<workmate_engine::Accepted> {
        self.hub.submit(&self.tenant, &self.session, command).await
    }

    /// Events until (and including) the first event that satisfies `stop`.
    pub async fn events_until(&mut self, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out; saw {:?}", names(&seen)))
                .expect("event stream open");
            let event = Event::clone(&event);
            let done = stop(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Events until the turn's terminal event.
    pub async fn turn_events(&mut self) -> Vec<Event> {
        self.events_until(|e| {
            matches!(
                e.kind,
                EventKind::TurnEnd { .. } | EventKind::Error { .. } | EventKind::Interrupted { .. }
            )
        })
        .await
    }

    /// Waits for the next parked inbox item and returns its id.
    pub async fn parked(&mut self) -> InboxItemId {
        let events = self
            .events_until(|e| matches!(e.kind, EventKind::InboxItemParked { .. }))
            .await;
        let EventKind::InboxItemParked { item_id, .. } = &events.last().unwrap().kind else {
            unreachable!("events_until stops at the parked item")
        };
        item_id.clone()
    }

    /// Alice answers the approval `item` with `choice` over HTTP; the answer must be taken.
    pub async fn decide(&self, item: &InboxItemId, choice: ApprovalChoice) {
        self.decide_as(item, choice, &Self::alice()).await.unwrap();
    }

    /// `by` answers the approval `item` with `choice` over HTTP.
    pub async fn decide_as(
        &self,
        item: &InboxItemId,
        choice: ApprovalChoice,
        by: &Actor,
    ) -> workmate_engine::Result<workmate_store::ResolveOutcome> {
        let resolution = Resolution::Approval { choice };
        self.hub
            .resolve(&self.tenant, item, &resolution, by, Surface::Http)
            .await
    }

    pub async fn idle(&self) {
        tokio::time::timeout(PATIENCE, self.hub.wait_idle(&self.tenant, &self.session))
            .await
            .expect("session went idle")
            .unwrap();
    }

    pub async fn history(&self) -> Vec<workmate_protocol::Message> {
        self.store
            .messages()
            .list(&self.tenant, &self.session)
            .await
            .unwrap()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The status and reason of the first `tool_finished` among `events`.
pub fn first_outcome(events: &[Event]) -> (workmate_protocol::ToolStatus, Option<String>) {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolFinished { status, reason, .. } => Some((*status, reason.clone())),
            _ => None,
        })
        .expect("a tool_finished event")
}

/// The kinds of events, by name.
pub fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}

/// The kinds of state events, by name.
pub fn state_names(events: &[Event]) -> Vec<&'static str> {
    events
        .iter()
        .filter(|e| e.kind.is_state())
        .map(|e| e.kind.name())
        .collect()
}

/// A script with one conversation of the given turns.
pub fn script(turns: serde_json::Value) -> String {
    serde_json::json!({"conversations": [{"when": "*", "turns": turns}]}).to_string()
}

/// Every tool call in the history has exactly one tool message.
pub fn assert_every_call_answered_once(history: &[workmate_protocol::Message]) {
    use workmate_protocol::Message;
    let mut answers: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for message in history {
        if let Message::Tool { tool_call_id, .. } = message {
            *answers.entry(tool_call_id.to_string()).or_default() += 1;
        }
    }
    for message in history {
        if let Message::Assistant { tool_calls, .. } = message {
            for call in tool_calls {
                assert_eq!(
                    answers.get(call.id.as_str()),
                    Some(&1),
                    "call {} answered once",
                    call.id
                );
            }
        }
    }
}
