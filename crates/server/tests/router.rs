//! The HTTP surface in process, with `oneshot` against a store in a temporary SQLite file.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{EngineConfig, EngineParts, SessionHub};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_server::engine::DEMO_SCRIPT;
use workmate_server::http::api::Auth;
use workmate_server::http::{AppState, router};
use workmate_server::metrics::Metrics;
use workmate_server::platforms::Platforms;
use workmate_store::{ConnectOptions, Store, SystemClock};
use workmate_tools::{BuiltinOptions, builtin_registry};

pub(crate) struct App {
    pub(crate) router: Router,
    pub(crate) store: Store,
    pub(crate) state: AppState,
    pub(crate) dir: tempfile::TempDir,
}

/// The admin token of test apps.
pub(crate) const TOKEN: &str = "test-admin-token-0123456789";

/// The token of test apps' surface (`[server.surface_tokens] tests`): it acts for the user each
/// request names in `X-Workmate-Acting-User`.
pub(crate) const SURFACE_TOKEN: &str = "test-surface-token-0123456789";

/// An app on a temporary SQLite store whose sessions run the demo script.
pub(crate) async fn app() -> App {
    app_with_script(DEMO_SCRIPT).await
}

/// An app whose sessions run `script`.
pub(crate) async fn app_with_script(script: &str) -> App {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/test.db", dir.path().display());
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store
        .tenants()
        .ensure(&"default".into(), "Default")
        .await
        .unwrap();
    app_on(store, dir, script, &EngineConfig::default().replica)
}

/// An app on `store` (already migrated), as the replica named `replica`, whose sessions run
/// `script`, working in `dir`.
pub(crate) fn app_on(store: Store, dir: tempfile::TempDir, script: &str, replica: &str) -> App {
    let mut providers = ProviderRouter::new("scripted");
    providers.register(
        "scripted",
        Arc::new(ScriptedProvider::from_json(script).unwrap()),
    );
    let config = EngineConfig {
        workspaces_dir: dir.path().join("workspaces"),
        replica: replica.to_owned(),
        ..EngineConfig::default()
    };
    let hub = SessionHub::new(EngineParts {
        store: store.clone(),
        providers,
        tools: builtin_registry(&BuiltinOptions::default()),
        permissions: PermissionConfig::default(),
        config,
        clock: Arc::new(SystemClock),
    });
    let scheduler = workmate_engine::Scheduler::new(
        hub.clone(),
        Arc::new(workmate_engine::NoObserver),
        workmate_engine::SchedulerConfig::default(),
    );
    let state = AppState {
        store: store.clone(),
        metrics: Arc::new(Metrics::new()),
        hub: hub.clone(),
        auth: Arc::new(Auth::admin(TOKEN.to_owned().into()).with_surfaces([(
            "tests".to_owned(),
            SURFACE_TOKEN.to_owned().into(),
            // As an operator who lets this surface act for admins too.
            workmate_server::config::SurfaceGrants::everyone(),
        )])),
        scheduler,
        chat: workmate_chat::Chat::new(hub, store.clone(), workmate_chat::ChatConfig::default()),
        platforms: Platforms::default(),
        shutdown: tokio_util::sync::CancellationToken::new(),
        personas: Arc::default(),
        streams: Arc::default(),
    };
    App {
        router: router(state.clone()),
        store,
        state,
        dir,
    }
}

/// Sends one request; the status, content type and body.
pub(crate) async fn send(
    router: &Router,
    method: &str,
    path: &str,
) -> (StatusCode, String, String) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

async fn get_json(router: &Router, path: &str) -> (StatusCode, Value) {
    let (status, content_type, body) = send(router, "GET", path).await;
    assert_eq!(content_type, "application/json", "{path}");
    (status, serde_json::from_str(&body).unwrap())
}

#[tokio::test]
async fn healthz_says_ok() {
    let app = app().await;
    assert_eq!(
        get_json(&app.router, "/healthz").await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
}

#[tokio::test]
async fn readyz_follows_the_database() {
    let app = app().await;
    assert_eq!(
        get_json(&app.router, "/readyz").await,
        (StatusCode::OK, json!({"status": "ready"}))
    );

    app.store.close().await;
    let (status, body) = get_json(&app.router, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["status"], "unavailable");
    assert!(
        body["reason"].as_str().unwrap().starts_with("database: "),
        "{body}"
    );
    // Unauthenticated: the database's own error text stays in the log.
    assert_eq!(
        body["reason"], "database: unreachable (the server's log says why)",
        "{body}"
    );
    // The liveness probe does not depend on the database.
    assert_eq!(get_json(&app.router, "/healthz").await.0, StatusCode::OK);
}

#[tokio::test]
async fn readyz_says_not_ready_once_the_replica_drains() {
    let app = app().await;
    assert_eq!(get_json(&app.router, "/readyz").await.0, StatusCode::OK);
    app.state.shutdown.cancel();
    let (status, body) = get_json(&app.router, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        body["reason"].as_str().unwrap().starts_with("draining"),
        "{body}"
    );
    assert_eq!(
        get_json(&app.router, "/healthz").await.0,
        StatusCode::OK,
        "alive"
    );
}

#[tokio::test]
async fn metrics_count_requests_by_route_template() {
    let app = app().await;
    send(&app.router, "GET", "/healthz").await;
    send(&app.router, "GET", "/healthz").await;
    send(&app.router, "GET", "/no/such/path-1234").await;

    let (status, content_type, text) = send(&app.router, "GET", "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let version = env!("CARGO_PKG_VERSION");
    for line in [
        format!(r#"workmate_build_info{{version="{version}"}} 1"#),
        r#"workmate_http_requests_total{method="GET",route="/healthz",status="200"} 2"#.to_owned(),
        r#"workmate_http_requests_total{method="GET",route="unmatched",status="404"} 1"#.to_owned(),
        r#"workmate_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 2"#
            .to_owned(),
        "workmate_db_pool_connections ".to_owned(),
        "workmate_db_pool_idle_connections ".to_owned(),
    ] {
        assert!(text.lines().any(|l| l.starts_with(&line)), "missing {line:?} in:\n{text}");
    }
    assert!(
        !text.contains("path-1234"),
        "raw paths must not become labels:\n{text}"
    );
}

#[tokio::test]
async fn pool_gauges_are_read_at_scrape_time() {
    let app = app().await;
    app.store.ping().await.unwrap();
    let (open, idle) = app.store.pool_stats();
    assert!(open >= 1);
    let (_, _, text) = send(&app.router, "GET", "/metrics").await;
    assert!(
        text.contains(&format!("workmate_db_pool_connections {open}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("workmate_db_pool_idle_connections {idle}\n")),
        "{text}"
    );
}

#[tokio::test]
async fn contract_publishes_the_protocol_schemas() {
    let app = app().await;
    let (status, body) = get_json(&app.router, "/v1/contract").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["event"], workmate_protocol::event_schema());
    assert_eq!(body["command"], workmate_protocol::command_schema());
}

#[tokio::test]
async fn unknown_routes_get_a_json_404() {
    let app = app().await;
    let (status, body) = get_json(&app.router, "/v1/nothing-here").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body, json!({"error": "no route for GET /v1/nothing-here"}));
}

#[tokio::test]
async fn wrong_methods_get_a_json_405() {
    let app = app().await;
    let (status, content_type, body) = send(&app.router, "POST", "/healthz").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(content_type, "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"error": "POST is not allowed on /healthz"})
    );
}

#[tokio::test]
async fn browsers_get_an_icon_not_a_404() {
    let app = app().await;
    let (status, content_type, body) = send(&app.router, "GET", "/favicon.ico").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "image/svg+xml");
    assert!(body.starts_with("<svg"), "{body}");
}

#[tokio::test]
async fn run_serves_until_cancelled_and_leaves_the_store_open() {
    let app = app().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let token = app.state.shutdown.clone();
    let server = tokio::spawn(workmate_server::serve::run(
        listener,
        app.state.clone(),
        workmate_server::config::HttpLimits::default(),
        std::time::Duration::from_millis(200),
    ));
    let (status, body) =
        tokio::task::spawn_blocking(move || crate::support::http_get(addr, "/healthz"))
            .await
            .unwrap()
            .unwrap();
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));

    token.cancel();
    // A deadline against hanging, not a timing assertion.
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(10), server).await;
    outcome.unwrap().unwrap().unwrap();
    // Closing the pool is the caller's job, after `run` returns.
    app.store.ping().await.unwrap();
}
