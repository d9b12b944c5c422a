//! The pages behind single sign-on: the admin page for tenant admins, and the demo sandbox's
//! page, which a browser without a session is sent to sign in for.

use axum::Router;
use axum::routing::{get, post};
use workmate_server::config::HttpLimits;
use workmate_server::http::router_with;

use super::*;

/// Signs `login` in through the provider; the session cookie, ready for a `cookie` header.
async fn session_of(router: &Router, login: &str) -> String {
    let (login_cookie, query) = authorize(router, login).await;
    let callback = format!(
        "/v1/auth/callback?code={}&state={}",
        query["code"], query["state"]
    );
    let signed_in = call(
        router,
        "GET",
        &callback,
        &[("cookie", &format!("workmate_login={login_cookie}"))],
    )
    .await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", signed_in.body);
    format!(
        "workmate_session={}",
        signed_in.cookie("workmate_session").0
    )
}

#[tokio::test]
async fn the_admin_page_and_the_sandbox_page_need_a_signed_in_session() {
    let Some(provider) = Provider::start_or_skip() else {
        return;
    };
    let app = crate::router::app().await;
    let sso = sso_for(&provider, app.dir.path());
    let mut state = app.state.clone();
    state.auth = std::sync::Arc::new(
        workmate_server::http::api::Auth::admin(crate::router::TOKEN.to_owned().into())
            .with_sso(sso, false),
    );
    // The sandbox stand-in: its page and a platform API it serves to workmate.
    let sandbox = Router::new()
        .route("/sandbox", get(|| async { "the sandbox page" }))
        .route("/sandbox/say", post(|| async { "said" }))
        .route("/sandbox/api/chat.postMessage", post(|| async { "posted" }));
    let router = router_with(state, Some(sandbox), HttpLimits::default());

    // Without a session: the admin page and the sandbox page send the browser to sign in and
    // back; the sandbox's own calls are refused; the platform API stays as it was.
    let admin = call(&router, "GET", "/admin", &[]).await;
    assert_eq!(admin.status, StatusCode::SEE_OTHER);
    assert_eq!(
        admin.location.as_deref(),
        Some("/v1/auth/login?return_to=%2Fadmin")
    );
    let page = call(&router, "GET", "/sandbox", &[]).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(
        page.location.as_deref(),
        Some("/v1/auth/login?return_to=%2Fsandbox")
    );
    let said = call(&router, "POST", "/sandbox/say", &[]).await;
    assert_eq!(said.status, StatusCode::UNAUTHORIZED, "{}", said.body);
    let api = call(&router, "POST", "/sandbox/api/chat.postMessage", &[]).await;
    assert_eq!(api.body, "posted");
    // A login may only return to workmate itself.
    let away = call(
        &router,
        "GET",
        "/v1/auth/login?return_to=https%3A%2F%2Fevil.example",
        &[],
    )
    .await;
    assert_eq!(away.status, StatusCode::BAD_REQUEST, "{}", away.body);

    // Alice (an admin) sees the admin page; Carol (a member) is told it is for admins.
    let alice = session_of(&router, "alice").await;
    let admin = call(&router, "GET", "/admin", &[("cookie", &alice)]).await;
    assert_eq!(admin.status, StatusCode::OK, "{}", admin.body);
    for shown in [
        "Alice Admin",
        "Settings",
        "identity_binding",
        "Admins and approvers",
    ] {
        assert!(admin.body.contains(shown), "{shown}: {}", admin.body);
    }
    let page = call(&router, "GET", "/sandbox", &[("cookie", &alice)]).await;
    assert_eq!(page.body, "the sandbox page");
    let carol = session_of(&router, "carol").await;
    let admin = call(&router, "GET", "/admin", &[("cookie", &carol)]).await;
    assert_eq!(admin.status, StatusCode::FORBIDDEN, "{}", admin.body);
    assert!(admin.body.contains("tenant admins"), "{}", admin.body);
}
