//! Finding 3 of the second review, and its siblings: connectors (a person's `base_url`), MCP
//! servers and their OAuth endpoints (a third party's metadata), sign-in discovery and
//! `web_fetch` (a model's URL) could be aimed at the host, its networks or the metadata service.
//! Every one of these paths now goes through the one guarded egress; each test aims its path at
//! a service on this host and shows nothing reaches it, with the operator's default policy
//! (public addresses only), and the same request reaching it once the operator allows it.

use std::sync::Arc;

use secrecy::SecretString;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use url::Url;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_connectors::{ConnectorSource, CredentialStore, builtin_connectors, secret_name};
use workmate_identity::{Clock, Oidc, TokenClient};
use workmate_net::{Egress, EgressOptions, NetworkPolicy};
use workmate_protocol::{SessionId, TenantId, UserId};
use workmate_tools::{BuiltinOptions, ToolContext, builtin_registry};
use workmate_vault::{Keyring, MasterKey};

use crate::router::app;

/// A service on the host that must not be reached: it answers everything.
async fn internal() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "items": [], "total_count": 0, "secret": "instance-role-credentials",
            "access_token": "t", "issuer": "x",
        })))
        .mount(&server)
        .await;
    server
}

async fn reached(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

fn public_only() -> Arc<NetworkPolicy> {
    Arc::new(NetworkPolicy::public_only())
}

fn allowing_the_host() -> Arc<NetworkPolicy> {
    Arc::new(NetworkPolicy::allow_private(["127.0.0.1"]).unwrap())
}

async fn context(app: &crate::router::App) -> ToolContext {
    ToolContext {
        tenant_id: TenantId::from("default"),
        session_id: SessionId::new(),
        user_id: UserId::from("alice"),
        channel: "slack:C1".into(),
        persona: "cowork".into(),
        roots: Vec::new(),
        cancel: CancellationToken::new(),
        repos: workmate_engine::tool_repos::tool_repos(&app.store),
        network: false,
    }
}

#[tokio::test]
async fn web_fetch_cannot_be_aimed_at_the_host() {
    let app = app().await;
    let host = internal().await;
    let ctx = context(&app).await;
    let call = |network: Arc<NetworkPolicy>| {
        let registry = builtin_registry(&BuiltinOptions {
            network,
            ..BuiltinOptions::default()
        });
        let url = format!("{}/latest/meta-data/", host.uri());
        let ctx = &ctx;
        async move {
            let tool = Arc::clone(registry.get("web_fetch").unwrap());
            tool.call(ctx, json!({"url": url})).await
        }
    };
    let error = call(public_only()).await.unwrap_err();
    assert!(error.message.contains("refusing"), "{error}");
    assert_eq!(reached(&host).await, 0);
    call(allowing_the_host()).await.unwrap();
    assert_eq!(reached(&host).await, 1);
}

#[tokio::test]
async fn a_connectors_base_url_cannot_be_aimed_at_the_host() {
    let app = app().await;
    let host = internal().await;
    let keys = Keyring::new(MasterKey::generate("test").unwrap(), Vec::new());
    let vault = workmate_store::Vault::new(app.store.clone(), Arc::new(keys));
    let ctx = context(&app).await;
    let credentials = json!({"token": "ghp_ada", "base_url": host.uri()}).to_string();
    vault
        .put(
            &ctx.tenant_id,
            Some(&ctx.user_id),
            &secret_name("github"),
            &SecretString::from(credentials),
        )
        .await
        .unwrap();
    for (network, refused) in [(public_only(), true), (allowing_the_host(), false)] {
        let source = ConnectorSource::new(
            builtin_connectors(),
            CredentialStore::new(vault.clone()),
            network,
        )
        .unwrap();
        let tool = source
            .tools_of("github")
            .into_iter()
            .find(|t| t.spec().name == "github_search")
            .unwrap();
        let result = tool.call(&ctx, json!({"query": "is:pr"})).await;
        match result {
            Err(e) if refused => assert!(e.message.contains("refusing"), "{e}"),
            Ok(_) if !refused => {}
            other => panic!("refused={refused}: {other:?}"),
        }
    }
    assert_eq!(
        reached(&host).await,
        1,
        "only the allowed call reached the host"
    );
}

#[tokio::test]
async fn an_mcp_server_or_a_token_endpoint_cannot_be_aimed_at_the_host() {
    let app = app().await;
    let host = internal().await;
    let settings = |network| workmate_mcp::McpSettings {
        network,
        ..workmate_mcp::McpSettings::default()
    };
    let mcp =
        workmate_mcp::McpManager::new(app.store.clone(), settings(public_only()), None).unwrap();
    let (_, def) =
        workmate_mcp::ServerDef::parse(&json!({"url": format!("{}/mcp", host.uri())})).unwrap();
    let error = mcp
        .add(&TenantId::from("default"), "inner", &def, "admin")
        .await
        .unwrap_err();
    assert!(
        matches!(error, workmate_mcp::Error::NotAllowed(_)),
        "{error}"
    );

    // A token endpoint named by a third party's metadata.
    let token_url = Url::parse(&format!("{}/token", host.uri())).unwrap();
    let client = TokenClient {
        client_id: "workmate",
        client_secret: "",
        token_url: &token_url,
        resource: None,
    };
    let guarded = Egress::new(public_only(), EgressOptions::credentialed()).unwrap();
    let error = client.refresh(&guarded, "rt").await.unwrap_err();
    assert!(error.to_string().contains("refusing"), "{error}");
    assert_eq!(reached(&host).await, 0);
    let allowed = Egress::new(allowing_the_host(), EgressOptions::credentialed()).unwrap();
    client.refresh(&allowed, "rt").await.unwrap();
    assert_eq!(reached(&host).await, 1);
}

#[tokio::test]
async fn sign_in_discovery_cannot_be_aimed_at_the_host() {
    let host = internal().await;
    let oidc = Oidc::new(
        crate::support::oidc_settings(&host.uri()),
        Egress::new(
            public_only(),
            EgressOptions::credentialed().without_redirects(),
        )
        .unwrap(),
        Clock::system(),
    )
    .unwrap();
    let error = oidc.start_login().await.unwrap_err();
    assert!(error.to_string().contains("refusing"), "{error}");
    assert_eq!(reached(&host).await, 0);
}
