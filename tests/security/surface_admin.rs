//! Finding 5 of the second review: with single sign-on on and the break-glass admin token off,
//! a surface token sent `X-Workmate-Acting-User: admin` and acted as the built-in admin (it
//! registered an MCP server). A surface token now acts only for people, and for admins only where
//! the operator granted it (`[server.surface_grants]`); each refusal is a `403` that says why,
//! and is audited.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_server::config::SurfaceGrants;
use workmate_server::http::api::Auth;
use workmate_server::http::router;

use crate::authority::{as_user_on, people};
use crate::router::{SURFACE_TOKEN, TOKEN};

async fn acting(
    router: &axum::Router,
    user: &str,
    method: &str,
    path: &str,
) -> (StatusCode, Value) {
    let body = json!({"url": "https://mcp.example.com/mcp"});
    as_user_on(router, user, method, path, Some(body)).await
}

#[tokio::test]
async fn a_surface_token_never_acts_as_the_built_in_admin_and_for_admins_only_when_granted() {
    let app = people().await;
    let with_grants = |grants: SurfaceGrants| {
        let mut state = app.state.clone();
        state.auth = Arc::new(Auth::admin(TOKEN.to_owned().into()).with_surfaces([(
            "bridge".to_owned(),
            SURFACE_TOKEN.to_owned().into(),
            grants,
        )]));
        router(state)
    };
    let default = with_grants(SurfaceGrants::default());

    // The attack: the built-in admin, whatever the grants.
    for router in [&default, &with_grants(SurfaceGrants::everyone())] {
        let (status, body) = acting(router, "admin", "PUT", "/v1/mcp/servers/leak").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(body.to_string().contains("built-in admin"), "{body}");
    }
    // An admin by role only where the operator granted admins.
    let (status, body) = acting(&default, "carol", "GET", "/v1/auth/me").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.to_string().contains("surface_grants"), "{body}");

    // Members and approvers as before; an admin where granted.
    let (status, me) = acting(&default, "alice", "GET", "/v1/auth/me").await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["user_id"], "alice", "{me}");
    let (status, _) = acting(&default, "bob", "GET", "/v1/sessions").await;
    assert_eq!(status, StatusCode::OK);
    let everyone = with_grants(SurfaceGrants::everyone());
    let (status, me) = acting(&everyone, "carol", "GET", "/v1/auth/me").await;
    assert_eq!(status, StatusCode::OK, "{me}");

    let refused: Vec<Value> = app
        .store
        .audit()
        .recent(&"default".into(), 50)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.stage == "surface_refused")
        .map(|r| r.detail)
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused.iter().any(|d| d["acting_user"] == "admin"));
    assert!(refused.iter().any(|d| d["acting_user"] == "carol"));
}
