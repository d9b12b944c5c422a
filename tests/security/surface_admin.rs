//! Finding 5 of the second review: with single sign-on on and the break-glass admin token off,
//! a surface token sent `X-Workmate-Acting-User: admin` and acted as the built-in admin (it
//! registered an MCP server). A surface token now acts only for people, and for admins only where
//! the operator granted it (`[server.surface_grants]`); each refusal is a `403` that says why,
//! and is audited.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use workmate_server::config::SurfaceGrants;
use workmate_server::http::api::Auth;
use workmate_server::http::router;

use crate::authority::people;
use crate::router::{SURFACE_TOKEN, TOKEN};

async fn acting(
    router: &axum::Router,
    user: &str,
    method: &str,
    path: &str,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {SURFACE_TOKEN}"))
        .header("x-workmate-acting-user", user)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            json!({"url": "https://mcp.example.com/mcp"}).to_string(),
        ))
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
