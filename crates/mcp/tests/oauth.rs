//! A server people sign in to: a small streamable-HTTP MCP server that takes only the bearer
//! tokens its authorization server (a wiremock fake) issued, found through its protected-resource
//! metadata. A person who has not signed in gets none of its tools; one whose token expired is
//! renewed once with the refresh token, and calls it as themselves. When the server says its
//! tools changed (`notifications/tools/list_changed`), the next turn gets the new list.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_identity::OAuthGrant;
use workmate_mcp::{McpManager, McpSettings, ServerDef, grant_secret};
use workmate_protocol::{SessionId, TenantId, UserId};
use workmate_store::{ConnectOptions, Store, Vault};
use workmate_tools::ToolContext;
use workmate_vault::{Keyring, MasterKey};

/// The fake server's state: the tokens it takes, and its authorization server.
#[derive(Clone)]
struct Fake {
    valid: Arc<Mutex<HashSet<String>>>,
    tools: Arc<Mutex<Vec<Value>>>,
    issuer: String,
    own: String,
}

async fn metadata(State(fake): State<Fake>) -> Response {
    axum::Json(
        json!({"resource": format!("{}/mcp", fake.own), "authorization_servers": [fake.issuer]}),
    )
    .into_response()
}

async fn rpc(State(fake): State<Fake>, headers: HeaderMap, body: Bytes) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let Some(token) = token.filter(|t| fake.valid.lock().unwrap().contains(t)) else {
        let challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            fake.own
        );
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
        )
            .into_response();
    };
    let message: Value = serde_json::from_slice(&body).unwrap();
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "wiki", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": *fake.tools.lock().unwrap()}),
        "tools/call" if message["params"]["name"] == "add_tool" => {
            fake.tools.lock().unwrap().push(tool("search"));
            // The answer as a stream: the notification first, then the result.
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            let result = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "added"}]}});
            let body =
                format!("event: message\ndata: {changed}\n\nevent: message\ndata: {result}\n\n");
            return ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response();
        }
        "tools/call" => {
            json!({"content": [{"type": "text", "text": format!("called with {token}")}]})
        }
        other => {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("no {other}")}});
            return axum::Json(error).into_response();
        }
    };
    (
        [("mcp-session-id", "s1")],
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})),
    )
        .into_response()
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("The {name} tool"), "inputSchema": {"type": "object"}})
}

/// Starts the fake server; its tokens are `valid`.
async fn fake_server(issuer: &str, valid: &[&str]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let own = format!("http://{}", listener.local_addr().unwrap());
    let fake = Fake {
        valid: Arc::new(Mutex::new(valid.iter().map(|t| (*t).to_owned()).collect())),
        tools: Arc::new(Mutex::new(vec![tool("whoami"), tool("add_tool")])),
        issuer: issuer.to_owned(),
        own: own.clone(),
    };
    let app = Router::new()
        .route(
            "/mcp",
            post(rpc)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        )
        .route("/.well-known/oauth-protected-resource/mcp", get(metadata))
        .with_state(fake);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    own
}

/// A fake authorization server publishing its metadata (with a registration endpoint when
/// `registers`).
async fn authorization_server(registers: bool) -> MockServer {
    let issuer = MockServer::start().await;
    let mut metadata = json!({
        "issuer": issuer.uri(),
        "authorization_endpoint": format!("{}/authorize", issuer.uri()),
        "token_endpoint": format!("{}/token", issuer.uri()),
    });
    if registers {
        metadata["registration_endpoint"] = json!(format!("{}/register", issuer.uri()));
    }
    Mock::given(method("GET"))
        .and(path("/.well-known/oauth-authorization-server"))
        .respond_with(ResponseTemplate::new(200).set_body_json(metadata))
        .mount(&issuer)
        .await;
    issuer
}

/// A migrated SQLite store in a temporary folder, and a vault over it.
/// The fakes listen on 127.0.0.1, which an operator allows here as an internal host.
fn settings() -> McpSettings {
    McpSettings {
        network: Arc::new(workmate_net::NetworkPolicy::allow_private(["127.0.0.1"]).unwrap()),
        ..McpSettings::default()
    }
}

async fn store_with_vault() -> (tempfile::TempDir, Store, Vault) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.db").display());
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    let keys = Keyring::new(MasterKey::generate("test").unwrap(), Vec::new());
    let vault = Vault::new(store.clone(), Arc::new(keys));
    (dir, store, vault)
}

#[tokio::test]
async fn people_sign_in_and_an_expired_token_is_renewed_once() {
    let issuer = authorization_server(false).await;
    let server = fake_server(&issuer.uri(), &["at-2"]).await;
    let resource = format!("{server}/mcp");
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(body_string_contains("grant_type=refresh_token"))
        .and(body_string_contains("refresh_token=rt-1"))
        .and(body_string_contains("client_id=workmate"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"access_token": "at-2", "expires_in": 3600})),
        )
        .expect(1)
        .mount(&issuer)
        .await;

    let (_dir, store, vault) = store_with_vault().await;
    let manager = McpManager::new(store.clone(), settings(), Some(vault.clone())).unwrap();
    let tenant = TenantId::from("acme");
    let (ada, bob) = (UserId::from("ada"), UserId::from("bob"));
    let (_, def) = ServerDef::parse(
        &json!({"url": resource, "oauth": {"client_id": "workmate", "scopes": ["wiki.read"]}}),
    )
    .unwrap();
    manager.add(&tenant, "wiki", &def, "admin").await.unwrap();

    assert!(
        manager.tools(&tenant, &ada, None).await.is_empty(),
        "not signed in: nothing offered"
    );

    let redirect =
        url::Url::parse("https://workmate.acme.example/v1/connectors/oauth/callback").unwrap();
    let app = manager.oauth_app(&tenant, "wiki", &redirect).await.unwrap();
    assert_eq!(
        app.authorize_url.as_str(),
        format!("{}/authorize", issuer.uri())
    );
    assert_eq!(app.token_url.as_str(), format!("{}/token", issuer.uri()));
    assert_eq!(app.resource.as_deref(), Some(resource.as_str()));

    // Ada signed in a while ago: her access token has expired since.
    let grant = OAuthGrant {
        access_token: SecretString::from("at-1".to_owned()),
        refresh_token: Some(SecretString::from("rt-1".to_owned())),
        expires_in: Some(3600),
    };
    manager
        .store_grant(&tenant, &ada, "wiki", &grant)
        .await
        .unwrap();
    let tools = manager.tools(&tenant, &ada, None).await;
    let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
    assert_eq!(
        names,
        ["mcp__wiki__whoami", "mcp__wiki__add_tool"],
        "renewed and listed"
    );
    let ctx = ToolContext {
        tenant_id: tenant.clone(),
        session_id: SessionId::new(),
        user_id: ada.clone(),
        channel: "slack:C1".into(),
        persona: "cowork".into(),
        roots: Vec::new(),
        cancel: CancellationToken::new(),
        repos: workmate_tools::ToolRepos::unavailable(),
        network: false,
    };
    let called = tools[0].call(&ctx, json!({})).await.unwrap();
    assert!(called.to_string().contains("called with at-2"), "{called}");
    let kept = vault
        .get(&tenant, Some(&ada), &grant_secret("wiki"))
        .await
        .unwrap()
        .unwrap();
    let kept: Value = serde_json::from_str(kept.expose_secret()).unwrap();
    assert_eq!(kept, json!({"token": "at-2", "refresh_token": "rt-1"}));

    assert!(
        manager.tools(&tenant, &bob, None).await.is_empty(),
        "Bob has not signed in"
    );
    let listed = manager.list(&tenant).await.unwrap();
    assert_eq!(listed[0].state.status, "per person (each signs in)");
}

#[tokio::test]
async fn without_a_client_id_workmate_registers_itself_once() {
    let issuer = authorization_server(true).await;
    let redirect = "https://workmate.acme.example/v1/connectors/oauth/callback";
    Mock::given(method("POST"))
        .and(path("/register"))
        .and(body_string_contains("\"client_name\":\"workmate\""))
        .and(body_string_contains(redirect))
        .and(body_string_contains(
            "\"token_endpoint_auth_method\":\"none\"",
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"client_id": "dyn-1"})))
        .expect(1)
        .mount(&issuer)
        .await;
    let server = fake_server(&issuer.uri(), &[]).await;
    let (_dir, store, vault) = store_with_vault().await;
    let manager = McpManager::new(store, settings(), Some(vault)).unwrap();
    let tenant = TenantId::from("acme");
    let (_, def) = ServerDef::parse(&json!({"url": format!("{server}/mcp"), "oauth": {}})).unwrap();
    manager.add(&tenant, "wiki", &def, "admin").await.unwrap();
    let redirect = url::Url::parse(redirect).unwrap();
    for _ in 0..2 {
        let app = manager.oauth_app(&tenant, "wiki", &redirect).await.unwrap();
        assert_eq!(app.client_id, "dyn-1", "registered once, then kept");
        assert_eq!(app.token_url.as_str(), format!("{}/token", issuer.uri()));
    }
}
