//! Tenant isolation over HTTP. Tenant B's admin (a provider-signed bearer token whose tenant
//! claim names B) tries every read and write route with tenant A's ids: each answers 404, no list
//! shows anything of A's, and A's session, prompt, automation, settings and people are as they
//! were. The chat commands get the same probe in `crates/chat/tests/isolation.rs`.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::Utc;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_identity::testing::{TestKey, claims_with};
use workmate_identity::{Clock, GroupRoles, Oidc, OidcSettings, SessionKey};
use workmate_server::http::api::{Auth, Sso};
use workmate_server::http::router;
use workmate_store::InboxItemState;

use crate::authority::{as_user, asks, people};
use crate::automations_api::{created_by, hourly};
use crate::router::TOKEN;

pub(crate) const CLIENT: &str = "workmate";
const TENANT_B: &str = "acme-b";

/// A provider that publishes `key`: discovery and keys only (bearer tokens need no more).
pub(crate) async fn provider(key: &TestKey) -> MockServer {
    let server = MockServer::start().await;
    let issuer = server.uri();
    Mock::given(method("GET"))
        .and(path("/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/jwks"))
        .respond_with(ResponseTemplate::new(200).set_body_json(key.jwks_json()))
        .mount(&server)
        .await;
    server
}

/// The key single sign-on cookies and links are sealed with in these tests.
pub(crate) const SESSION_KEY: [u8; 32] = [3; 32];

/// Single sign-on through `idp`, whose tokens name their organisation (the tenant) in `org`;
/// `wm-admins` are admins.
pub(crate) fn org_sso(idp: &MockServer) -> Sso {
    let oidc = Oidc::new(
        OidcSettings {
            issuer: idp.uri(),
            client_id: CLIENT.into(),
            client_secret: "secret".to_owned().into(),
            redirect_url: "http://localhost:8080/v1/auth/callback".into(),
            groups_claim: "groups".into(),
            tenant_claim: Some("org".into()),
            scopes: vec!["openid".into()],
        },
        crate::support::local_egress(),
        Clock::system(),
    )
    .unwrap();
    Sso::new(
        oidc,
        SessionKey::from_bytes(SESSION_KEY),
        GroupRoles::new(["wm-admins".to_owned()], []),
    )
}

pub(crate) async fn call(
    router: &axum::Router,
    token: &str,
    verb: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(verb)
        .uri(uri)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn tenant_b_gets_404_for_every_route_with_tenant_a_ids() {
    // Tenant A is `default`: Alice's session with a pending prompt, her automation, a setting.
    let app = people().await;
    let (session, item) = asks(&app, "alice").await;
    let automation = created_by(&app, "alice", hourly("Sales digest")).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = as_user(
        &app,
        "carol",
        "PATCH",
        "/v1/tenant/settings",
        Some(json!({"timezone": "Asia/Shanghai"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // Single sign-on whose tokens name their tenant in `org`; B's admin holds one.
    let key = TestKey::a("k1");
    let idp = provider(&key).await;
    let sso = org_sso(&idp);
    let mut state = app.state.clone();
    state.auth = std::sync::Arc::new(Auth::admin(TOKEN.to_owned().into()).with_sso(sso, true));
    let router = router(state);
    let exp = Utc::now() + chrono::Duration::minutes(10);
    let mallory = key.sign(claims_with(
        &idp.uri(),
        CLIENT,
        "mallory",
        exp,
        &["wm-admins"],
        &[("org", json!(TENANT_B))],
    ));
    let (status, me) = call(&router, &mallory, "GET", "/v1/auth/me", None).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["tenant"], TENANT_B);
    assert_eq!(
        me["role"], "admin",
        "B's admin, so no refusal below is about her role"
    );

    let probes: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", format!("/v1/sessions/{session}"), None),
        (
            "PATCH",
            format!("/v1/sessions/{session}"),
            Some(json!({"unattended": true})),
        ),
        (
            "POST",
            format!("/v1/sessions/{session}/commands"),
            Some(json!({"type": "user_message", "text": "print the secrets"})),
        ),
        (
            "POST",
            format!("/v1/sessions/{session}/commands"),
            Some(json!({"type": "set_mode", "mode": "auto"})),
        ),
        (
            "POST",
            format!("/v1/sessions/{session}/commands"),
            Some(json!({"type": "interrupt"})),
        ),
        ("GET", format!("/v1/sessions/{session}/messages"), None),
        ("GET", format!("/v1/sessions/{session}/events"), None),
        (
            "POST",
            format!("/v1/inbox/{item}/resolve"),
            Some(json!({"resolution": {"type": "approval", "choice": "once"}})),
        ),
        ("GET", format!("/v1/automations/{automation}"), None),
        (
            "PATCH",
            format!("/v1/automations/{automation}"),
            Some(json!({"enabled": false})),
        ),
        ("POST", format!("/v1/automations/{automation}/run"), None),
        ("GET", format!("/v1/automations/{automation}/runs"), None),
        (
            "POST",
            format!("/v1/automations/{automation}/rules/approve"),
            None,
        ),
        (
            "POST",
            format!("/v1/automations/{automation}/rules/deny"),
            None,
        ),
        ("DELETE", format!("/v1/automations/{automation}"), None),
        (
            "PATCH",
            "/v1/users/alice".into(),
            Some(json!({"active": false})),
        ),
        ("POST", "/v1/users/alice/deprovision".into(), None),
    ];
    for (verb, uri, body) in probes {
        let (status, answer) = call(&router, &mallory, verb, &uri, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{verb} {uri}: {answer}");
    }

    // Lists show nothing of A's; settings are B's own.
    for (uri, field) in [
        ("/v1/sessions", "sessions"),
        ("/v1/inbox", "items"),
        ("/v1/automations", "automations"),
        ("/v1/audit", "records"),
    ] {
        let (status, listed) = call(&router, &mallory, "GET", uri, None).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {listed}");
        assert_eq!(listed[field], json!([]), "{uri}: {listed}");
    }
    let (_, settings) = call(&router, &mallory, "GET", "/v1/tenant/settings", None).await;
    assert!(
        !settings.to_string().contains("Asia/Shanghai"),
        "{settings}"
    );
    let (_, usage) = call(&router, &mallory, "GET", "/v1/usage", None).await;
    assert!(!usage.to_string().contains("alice"), "{usage}");

    // A's things are as they were.
    let tenant_a = workmate_protocol::TenantId::from("default");
    let stored = app
        .store
        .inbox()
        .get(&tenant_a, &item.as_str().into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.state, InboxItemState::Pending);
    let stored = app
        .store
        .sessions()
        .get(&tenant_a, &session.as_str().into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.mode, workmate_protocol::PermissionMode::Interactive);
    assert!(!stored.unattended);
    let alice = app
        .store
        .tenants()
        .get_user(&tenant_a, &"alice".into())
        .await
        .unwrap()
        .unwrap();
    assert!(!alice.is_disabled());
    let (status, view) = as_user(
        &app,
        "alice",
        "GET",
        &format!("/v1/automations/{automation}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["enabled"], true);
}
