//! The chat layer's test harness: a migrated SQLite store, a hub on a scripted model, and a fake
//! platform that records everything the chat layer sends it. Shared by every test module.

#![allow(dead_code)]

pub mod platform;

use std::sync::Arc;
use std::time::Duration;

use workmate_adapter::{Inbound, InboundKind, InboundUser, RetryPolicy};
use workmate_cards::ButtonAction;
use workmate_chat::{Chat, ChatConfig, PlatformSettings, Taken};
use workmate_engine::{EngineConfig, EngineParts, SessionHub};
use workmate_policy::PermissionConfig;
use workmate_protocol::{Surface, TenantId};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_store::{ConnectOptions, SessionKey, SessionRecord, Store};
use workmate_tools::{BuiltinOptions, builtin_registry};

pub use platform::{FakePlatform, Sent};

/// The surface the fake platform plays: not Slack, so nothing Slack-only can hide in the layer.
pub const SURFACE: Surface = Surface::Feishu;
/// The installation every delivery comes from.
pub const INSTALLATION: &str = "T1";
/// The group chat of the tests.
pub const CHAT: &str = "C1";

/// A model that answers every message "Done.".
pub const DONE: &str = r#"{"conversations": [{"when": "*", "turns": [{"text": "Done."}]}]}"#;
/// A model that streams a long answer slowly (a turn to stop).
pub const SLOW: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty", "chunk_delay_ms": 300}]}]}"#;
/// A model that asks to run a shell command, then answers.
pub const SHELL: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;

/// How long a chat test waits for something to happen.
pub const PATIENCE: Duration = Duration::from_secs(10);

pub use workmate_test_support::{eventually, eventually_holds};

/// A chat layer on a fresh SQLite store, with the fake platform registered.
pub struct TestChat {
    pub chat: Chat,
    pub hub: SessionHub,
    pub store: Store,
    pub platform: Arc<FakePlatform>,
    pub tenant: TenantId,
    dir: tempfile::TempDir,
}

impl TestChat {
    pub async fn new(script: &str) -> Self {
        Self::with(script, PlatformSettings::default()).await
    }

    pub async fn with(script: &str, settings: PlatformSettings) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("chat.db").display());
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        Self::on(store, dir, script, settings, FakePlatform::new()).await
    }

    /// A chat layer with `platform` registered instead of the default fake.
    pub async fn on_platform(script: &str, platform: Arc<FakePlatform>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("chat.db").display());
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        Self::on(store, dir, script, PlatformSettings::default(), platform).await
    }

    /// A second layer (a restarted process) over the same store and folder.
    pub async fn restarted(self, script: &str) -> Self {
        let Self {
            chat,
            hub,
            store,
            dir,
            ..
        } = self;
        chat.shutdown(Duration::from_secs(1)).await;
        hub.shutdown().await;
        Self::on(
            store,
            dir,
            script,
            PlatformSettings::default(),
            FakePlatform::new(),
        )
        .await
    }

    async fn on(
        store: Store,
        dir: tempfile::TempDir,
        script: &str,
        settings: PlatformSettings,
        platform: Arc<FakePlatform>,
    ) -> Self {
        let hub = hub(&store, dir.path(), script);
        let chat = Chat::new(hub.clone(), store.clone(), config());
        chat.register(platform.clone(), settings);
        let surface = workmate_adapter::ChatAdapter::surface(platform.as_ref());
        chat.start();
        Self {
            chat,
            hub,
            store,
            platform,
            tenant: workmate_chat::tenant_of(surface, INSTALLATION),
            dir,
        }
    }

    /// Another replica's chat layer over the same store, named `replica` as a lease holder.
    pub fn replica(&self, replica: &str, script: &str) -> Chat {
        let hub = hub_as(&self.store, self.dir.path(), script, replica);
        let chat = Chat::new(hub, self.store.clone(), config());
        chat.register(FakePlatform::new(), PlatformSettings::default());
        chat
    }

    /// Another replica's chat layer (named `replica`), started, that shares this one's
    /// coordinator, as replicas sharing a Redis do: each hears the other's signals.
    pub fn sharing(&self, replica: &str, script: &str) -> Chat {
        let hub = SessionHub::with_coordinator(
            parts(&self.store, self.dir.path(), script, replica),
            Arc::clone(self.hub.coordinator()),
        );
        let chat = Chat::new(hub, self.store.clone(), config());
        chat.register(FakePlatform::new(), PlatformSettings::default());
        chat.start();
        chat
    }

    /// Another replica (named `replica`) that takes at most `per_minute` deliveries a minute
    /// from one installation.
    pub fn limited(&self, replica: &str, script: &str, per_minute: u32) -> Chat {
        self.configured(replica, script, |config| ChatConfig {
            deliveries_per_minute: Some(per_minute),
            ..config
        })
    }

    /// Another replica (named `replica`) whose layer the tests' settings are changed for by
    /// `change`; not started.
    pub fn configured(
        &self,
        replica: &str,
        script: &str,
        change: impl FnOnce(ChatConfig) -> ChatConfig,
    ) -> Chat {
        let hub = hub_as(&self.store, self.dir.path(), script, replica);
        let chat = Chat::new(hub, self.store.clone(), change(config()));
        chat.register(FakePlatform::new(), PlatformSettings::default());
        chat
    }

    /// Stores a delivery as a platform route would.
    pub async fn send(&self, inbound: Inbound) -> Taken {
        self.chat.accept(inbound).await.unwrap()
    }

    /// The session of a thread of the test chat, once it exists.
    pub async fn session(&self, thread: &str) -> SessionRecord {
        let key = SessionKey {
            surface: SURFACE,
            chat_id: CHAT.into(),
            thread_id: thread.into(),
        };
        eventually("the thread's session", PATIENCE, || async {
            self.store
                .sessions()
                .find_by_key(&self.tenant, &key)
                .await
                .unwrap()
        })
        .await
    }

    /// How many turns the session has started.
    pub async fn turns(&self, session: &SessionRecord) -> usize {
        self.store
            .events()
            .list_after(&self.tenant, &session.id, 0, 10_000)
            .await
            .unwrap()
            .iter()
            .filter(|e| matches!(e.kind, workmate_protocol::EventKind::TurnStart { .. }))
            .count()
    }

    /// Whether the session's last turn ended (by an answer, an error or a stop).
    pub async fn last_turn_ended(&self, session: &SessionRecord) -> bool {
        let events = self
            .store
            .events()
            .list_after(&self.tenant, &session.id, 0, 10_000)
            .await
            .unwrap();
        events.last().is_some_and(|e| {
            matches!(
                e.kind,
                workmate_protocol::EventKind::TurnEnd { .. }
                    | workmate_protocol::EventKind::Interrupted { .. }
            )
        })
    }
}

fn config() -> ChatConfig {
    ChatConfig {
        lease: Duration::from_millis(600),
        sweep_every: Duration::from_millis(100),
        backoff: Duration::from_millis(20),
        connection_lease: Duration::from_millis(600),
        retry: RetryPolicy {
            max_attempts: 2,
            base_backoff: Duration::from_millis(10),
            jitter: false,
            ..RetryPolicy::default()
        },
        ..ChatConfig::default()
    }
}

fn hub(store: &Store, dir: &std::path::Path, script: &str) -> SessionHub {
    hub_as(store, dir, script, &EngineConfig::default().replica)
}

fn hub_as(store: &Store, dir: &std::path::Path, script: &str, replica: &str) -> SessionHub {
    SessionHub::new(parts(store, dir, script, replica))
}

/// A hub's parts: the store, the scripted model playing `script`, the builtin tools.
fn parts(store: &Store, dir: &std::path::Path, script: &str, replica: &str) -> EngineParts {
    let mut providers = ProviderRouter::new("scripted");
    providers.register(
        "scripted",
        Arc::new(ScriptedProvider::from_json(script).unwrap()),
    );
    EngineParts {
        store: store.clone(),
        providers,
        tools: builtin_registry(&BuiltinOptions::default()),
        permissions: PermissionConfig::default(),
        config: EngineConfig {
            workspaces_dir: dir.join("workspaces"),
            default_model: "scripted:test".into(),
            inbox_poll: Duration::from_millis(50),
            replica: replica.to_owned(),
            ..EngineConfig::default()
        },
        clock: Arc::new(workmate_store::SystemClock),
    }
}

/// A delivery from `user` in the test chat.
pub fn inbound(id: &str, user: &str, thread: Option<&str>, kind: InboundKind) -> Inbound {
    Inbound {
        surface: SURFACE,
        tenant_key: INSTALLATION.into(),
        delivery_id: id.into(),
        user: InboundUser {
            id: user.into(),
            name: None,
        },
        chat_id: CHAT.into(),
        thread_id: thread.map(str::to_owned),
        direct: false,
        reply: None,
        message_ref: None,
        kind,
    }
}

/// A message addressed to workmate in a thread.
pub fn message(id: &str, user: &str, thread: &str, text: &str) -> Inbound {
    inbound(
        id,
        user,
        Some(thread),
        InboundKind::Message {
            text: text.into(),
            files: Vec::new(),
        },
    )
}

/// A click on a card button in a thread.
pub fn click(id: &str, user: &str, thread: &str, action: ButtonAction) -> Inbound {
    inbound(id, user, Some(thread), InboundKind::Click { action })
}

/// A native slash command in the test chat (no thread).
pub fn command(id: &str, user: &str, text: &str) -> Inbound {
    inbound(id, user, None, InboundKind::Command { text: text.into() })
}
