//! Review item 10: linking took the link token's tenant whatever the signer's, so with
//! `tenant_claim` (several organisations on one provider) a person of organisation B linked a
//! chat account of A's workspace and took a role there. A person whose provider names their
//! organisation now links only accounts of that organisation's workspace.

use axum::http::StatusCode;
use chrono::Utc;
use serde_json::json;
use workmate_identity::testing::{TestKey, claims_with};
use workmate_identity::{LinkClaim, SessionKey};
use workmate_protocol::TenantId;
use workmate_server::http::api::Auth;
use workmate_server::http::router;
use workmate_store::{NewUser, Role};

use super::isolation_http::{CLIENT, SESSION_KEY, call, org_sso, provider};
use crate::authority::people;
use crate::router::TOKEN;

#[tokio::test]
async fn a_person_of_another_organisation_cannot_link_this_ones_account() {
    let app = people().await;
    let key = TestKey::a("k1");
    let idp = provider(&key).await;
    let sso = org_sso(&idp);
    let session_key = SessionKey::from_bytes(SESSION_KEY);
    let mut state = app.state.clone();
    state.auth = std::sync::Arc::new(Auth::admin(TOKEN.to_owned().into()).with_sso(sso, true));
    let router = router(state);

    // Chat accounts: one in workspace A (`default`), one in B's.
    let tenant_b = TenantId::from("acme-b");
    app.store.tenants().ensure(&tenant_b, "B").await.unwrap();
    let account = |id: &str| NewUser {
        id: id.into(),
        display_name: id.into(),
        email: None,
        role: Role::Member,
        sso_subject: None,
    };
    app.store
        .tenants()
        .upsert_user(&tenant_b, &account("slack-UB"))
        .await
        .unwrap();
    let link_token = |tenant: &str, user: &str| {
        session_key.seal_link(&LinkClaim {
            tenant: tenant.into(),
            platform: "slack".into(),
            platform_user: user.trim_start_matches("slack-").into(),
            user_id: user.into(),
            name: user.into(),
            expires_at: Utc::now().timestamp() + 600,
        })
    };
    let mallory = key.sign(claims_with(
        &idp.uri(),
        CLIENT,
        "mallory",
        Utc::now() + chrono::Duration::minutes(10),
        &["wm-admins"],
        &[("org", json!("acme-b"))],
    ));

    // Alice's account in A: refused, and still unlinked.
    let body = json!({"token": link_token("default", "alice")});
    let (status, answer) = call(&router, &mallory, "POST", "/v1/auth/link", Some(body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    let alice = app
        .store
        .tenants()
        .get_user(&"default".into(), &"alice".into())
        .await
        .unwrap();
    assert_eq!(alice.unwrap().sso_subject, None);

    // Her own organisation's account: linked.
    let body = json!({"token": link_token("acme-b", "slack-UB")});
    let (status, answer) = call(&router, &mallory, "POST", "/v1/auth/link", Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["linked"], true);
}
