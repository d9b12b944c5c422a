//! Fresh databases per test and the macro that runs a test body on every backend.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use workmate_protocol::{PermissionMode, Surface, TenantId, UserId};
use workmate_store::test_support::{drop_database, fresh_database, server_url_variable};
use workmate_store::{ConnectOptions, Dialect, NewSession, SessionKey, SessionRecord, Store};
use workmate_test_support::Backend;

pub(crate) use workmate_store::test_support::ManualClock;

/// What a test body gets: a migrated, empty store and the clock it runs on.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    pub(crate) store: Store,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) url: String,
}

/// Runs `body` against a fresh database of `dialect`, then removes the database.
pub(crate) async fn run<F, Fut>(dialect: Dialect, body: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()>,
{
    let (url, server, sqlite_dir) = match server_url_variable(dialect) {
        None => {
            let dir = std::env::temp_dir().join(format!("workmate-store-{}", uuid::Uuid::now_v7()));
            std::fs::create_dir_all(&dir).unwrap();
            (
                format!("sqlite://{}", dir.join("test.db").display()),
                None,
                Some(dir),
            )
        }
        // The test is ignored unless the variable was set at build time; set, an unreachable
        // server fails it.
        Some(var) => {
            let server = Backend::from_variable(var).url();
            (fresh_database(&server).await.unwrap(), Some(server), None)
        }
    };
    let clock = ManualClock::at_ms(1_780_000_000_000);
    let options = ConnectOptions {
        clock: clock.clone(),
        ..ConnectOptions::default()
    };
    let store = Store::connect(&url, options).await.unwrap();
    store.migrate().await.unwrap();
    body(Ctx {
        store: store.clone(),
        clock,
        url: url.clone(),
    })
    .await;
    store.close().await;
    if let Some(server) = server {
        drop_database(&server, &url).await.unwrap();
    }
    if let Some(dir) = sqlite_dir {
        remove_dir(dir);
    }
}

fn remove_dir(dir: PathBuf) {
    let _ = std::fs::remove_dir_all(dir);
}

/// Declares each `async fn name(ctx: Ctx) { … }` as three tests: `name::sqlite`, `name::mysql`
/// and `name::postgres`; the server-backed two are ignored when their variable was unset at build
/// time.
macro_rules! backend_matrix {
    ($(async fn $name:ident($ctx:ident: Ctx) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                async fn body($ctx: $crate::support::Ctx) $body

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sqlite() {
                    $crate::support::run(workmate_store::Dialect::Sqlite, body).await;
                }

                workmate_test_support::needs! { [mysql]
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn mysql() {
                        $crate::support::run(workmate_store::Dialect::Mysql, body).await;
                    }
                }

                workmate_test_support::needs! { [postgres]
                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn postgres() {
                        $crate::support::run(workmate_store::Dialect::Postgres, body).await;
                    }
                }
            }
        )*
    };
}

/// A tenant with one session in a Slack thread.
pub(crate) async fn tenant_with_session(store: &Store, tenant: &str) -> (TenantId, SessionRecord) {
    let tenant = TenantId::from(format!("{tenant}-{}", uuid::Uuid::now_v7().simple()));
    store.tenants().ensure(&tenant, "Acme").await.unwrap();
    let session = session_at(store, &tenant, "C01", "1700000000.000100").await;
    (tenant, session)
}

/// The session at a Slack thread, created if needed.
pub(crate) async fn session_at(
    store: &Store,
    tenant: &TenantId,
    chat: &str,
    thread: &str,
) -> SessionRecord {
    let new = NewSession {
        key: SessionKey {
            surface: Surface::Slack,
            chat_id: chat.into(),
            thread_id: thread.into(),
        },
        owner: UserId::from("u_alice"),
        title: None,
        persona: "cowork".into(),
        model: "scripted:demo".into(),
        mode: PermissionMode::Interactive,
        unattended: false,
    };
    store
        .sessions()
        .get_or_create(tenant, &new)
        .await
        .unwrap()
        .0
}

/// Queues every step at once (so they can share a batch) and waits for each outcome, in order.
pub(crate) async fn write_steps(
    store: &Store,
    steps: Vec<workmate_store::StepWrite>,
) -> Vec<Result<workmate_store::StepWritten, workmate_store::StepError>> {
    let mut waits = Vec::new();
    for step in steps {
        let (tx, rx) = tokio::sync::oneshot::channel();
        store.writer().submit(
            step,
            Box::new(move |outcome| {
                let _ = tx.send(outcome);
            }),
        );
        waits.push(rx);
    }
    let mut outcomes = Vec::new();
    for wait in waits {
        outcomes.push(wait.await.unwrap());
    }
    outcomes
}
