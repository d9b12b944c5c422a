//! Single sign-on against a real, certified OpenID provider: npm `oidc-provider`, started from
//! `tests/oidc/provider.mjs`. The test drives the whole authorization-code flow over HTTP (the
//! provider's login and consent pages, with a cookie jar), then checks the session, the role from
//! directory groups, logout, and bearer tokens: the provider's own ID token is accepted, and
//! expired, wrong-audience, wrong-issuer and wrong-signature ones are refused.

pub(crate) mod browser;
mod pages;
pub(crate) mod provider;

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use serde_json::Value;
use workmate_identity::testing::{TestKey, claims};

use crate::router::{TOKEN, app};

use browser::*;
use provider::*;

pub(crate) const CLIENT_ID: &str = "workmate";
pub(crate) const CLIENT_SECRET: &str = "workmate-test-secret-0123456789";
pub(crate) const REDIRECT: &str = "http://localhost:8080/v1/auth/callback";
pub(crate) const PROVIDER_KID: &str = "test-key-1";

#[tokio::test]
async fn login_session_roles_logout_and_bearer_tokens_against_a_real_provider() {
    let Some(provider) = Provider::start_or_skip() else {
        return;
    };
    let (router, app) = sso_app(&provider, false).await;

    // Alice (group wm-admins) signs in through the browser flow.
    let (login_cookie, query) = authorize(&router, "alice").await;
    let callback = format!(
        "/v1/auth/callback?code={}&state={}",
        query["code"], query["state"]
    );
    // The code is useless without this browser's login cookie.
    let stolen = call(&router, "GET", &callback, &[]).await;
    assert_eq!(stolen.status, StatusCode::UNAUTHORIZED, "{}", stolen.body);
    let forged_state = call(
        &router,
        "GET",
        &format!("/v1/auth/callback?code={}&state=forged", query["code"]),
        &[("cookie", &format!("workmate_login={login_cookie}"))],
    )
    .await;
    assert_eq!(forged_state.status, StatusCode::UNAUTHORIZED);
    assert!(forged_state.body.contains("state"), "{}", forged_state.body);

    let signed_in = call(
        &router,
        "GET",
        &callback,
        &[("cookie", &format!("workmate_login={login_cookie}"))],
    )
    .await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", signed_in.body);
    assert_eq!(signed_in.json()["role"], "admin");
    assert_eq!(signed_in.json()["user_id"], "sso:alice");
    let (session, header) = signed_in.cookie("workmate_session");
    assert!(
        header.contains("HttpOnly") && header.contains("SameSite=Lax"),
        "{header}"
    );
    // The redirect URL is plain-HTTP localhost, the one case without `Secure`.
    assert!(!header.contains("Secure"), "{header}");
    let stored = app
        .store
        .tenants()
        .get_user(&"default".into(), &"sso:alice".into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.sso_subject.as_deref(), Some("alice"));
    assert_eq!(stored.role, workmate_store::Role::Admin);
    let signed_in = app
        .store
        .audit()
        .recent(&"default".into(), 20)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.stage == "signed_in")
        .expect("a signed_in audit record");
    assert_eq!(signed_in.actor.as_deref(), Some("sso:alice"));
    assert_eq!(signed_in.detail["groups"][0], "wm-admins");

    let cookie = format!("workmate_session={session}");
    let me = call(&router, "GET", "/v1/auth/me", &[("cookie", &cookie)]).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    assert_eq!(me.json()["user_id"], "sso:alice");
    assert_eq!(me.json()["role"], "admin");
    assert_eq!(me.json()["via"], "session");
    assert_eq!(me.json()["display_name"], "Alice Admin");
    // The session opens the rest of the API too.
    let settings = call(
        &router,
        "GET",
        "/v1/tenant/settings",
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(settings.status, StatusCode::OK, "{}", settings.body);
    // A change sent with the session from another origin is refused; from workmate's own, allowed.
    let foreign = call(
        &router,
        "POST",
        "/v1/wakes/events",
        &[
            ("cookie", &cookie),
            ("origin", "http://evil.localhost:8080"),
        ],
    )
    .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN, "{}", foreign.body);
    let own = call(
        &router,
        "POST",
        "/v1/wakes/events",
        &[("cookie", &cookie), ("origin", "http://localhost:8080")],
    )
    .await;
    assert_ne!(own.status, StatusCode::FORBIDDEN, "{}", own.body);
    assert_ne!(own.status, StatusCode::UNAUTHORIZED, "{}", own.body);
    // A session cookie altered by one character is refused, with a reason.
    let mut tampered = session.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = format!("workmate_session={}", String::from_utf8(tampered).unwrap());
    let refused = call(&router, "GET", "/v1/auth/me", &[("cookie", &tampered)]).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("session refused")
    );

    // Logout clears the cookie and points at the provider's end-session endpoint.
    let logout = call(&router, "POST", "/v1/auth/logout", &[("cookie", &cookie)]).await;
    assert_eq!(logout.status, StatusCode::OK, "{}", logout.body);
    let (cleared, header) = logout.cookie("workmate_session");
    assert_eq!(cleared, "");
    assert!(header.contains("Max-Age=0"), "{header}");
    let end = logout.json()["end_session_url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        end.starts_with(&format!("{}/session/end", provider.issuer)),
        "{end}"
    );
    assert!(end.contains("client_id=workmate"), "{end}");
    let after = call(&router, "GET", "/v1/auth/me", &[]).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    // A copy of the signed-out cookie (a shared machine, a stolen backup) signs nobody in.
    let copy = call(&router, "GET", "/v1/auth/me", &[("cookie", &cookie)]).await;
    assert_eq!(copy.status, StatusCode::UNAUTHORIZED, "{}", copy.body);
    assert!(
        copy.json()["error"]
            .as_str()
            .unwrap()
            .contains("signed out"),
        "{}",
        copy.body
    );

    // Bob (group wm-approvers) signs in; the test plays the program and redeems the code itself
    // (the PKCE verifier is in the signed, not encrypted, login cookie), to hold the provider's
    // own ID token.
    let (login_cookie, query) = authorize(&router, "bob").await;
    let payload = login_cookie.split('.').next().unwrap();
    let login: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let tokens = reqwest::Client::builder()
        .tls_backend_preconfigured(workmate_adapter::net::tls_config().unwrap())
        .build()
        .unwrap()
        .post(format!("{}/token", provider.issuer))
        .basic_auth(CLIENT_ID, Some(CLIENT_SECRET));
    let tokens = form(
        tokens,
        &[
            ("grant_type", "authorization_code".to_owned()),
            ("code", query["code"].clone()),
            ("redirect_uri", REDIRECT.to_owned()),
            ("code_verifier", login["v"].as_str().unwrap().to_owned()),
        ],
    )
    .send()
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let tokens: Value = serde_json::from_str(&tokens).unwrap();
    let id_token = tokens["id_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no ID token: {tokens}"))
        .to_owned();
    let bearer = |token: &str| format!("Bearer {token}");
    let me = call(
        &router,
        "GET",
        "/v1/auth/me",
        &[("authorization", &bearer(&id_token))],
    )
    .await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    assert_eq!(me.json()["user_id"], "sso:bob");
    assert_eq!(me.json()["role"], "approver");
    assert_eq!(me.json()["via"], "bearer");

    // Carol (only `staff`) signs in from a browser: sent on to `/`, a member.
    let (login_cookie, query) = authorize(&router, "carol").await;
    let signed_in = call(
        &router,
        "GET",
        &format!(
            "/v1/auth/callback?code={}&state={}",
            query["code"], query["state"]
        ),
        &[
            ("cookie", &format!("workmate_login={login_cookie}")),
            ("accept", "text/html,application/xhtml+xml"),
        ],
    )
    .await;
    assert_eq!(
        signed_in.status,
        StatusCode::SEE_OTHER,
        "{}",
        signed_in.body
    );
    assert_eq!(signed_in.location.as_deref(), Some("/"));
    let (session, _) = signed_in.cookie("workmate_session");
    let cookie = format!("workmate_session={session}");
    let me = call(&router, "GET", "/v1/auth/me", &[("cookie", &cookie)]).await;
    assert_eq!(me.json()["role"], "member", "{}", me.body);

    // Offboarded, Carol's session and Bob's bearer token stop working at once, and signing in
    // again does not bring them back.
    let tenant = workmate_protocol::TenantId::from("default");
    let offboarding = app.store.offboarding();
    for user in ["sso:carol", "sso:bob"] {
        offboarding
            .deprovision(&tenant, &user.into(), &"admin".into())
            .await
            .unwrap();
    }
    let me = call(&router, "GET", "/v1/auth/me", &[("cookie", &cookie)]).await;
    assert_eq!(me.status, StatusCode::FORBIDDEN, "{}", me.body);
    let me = call(
        &router,
        "GET",
        "/v1/auth/me",
        &[("authorization", &bearer(&id_token))],
    )
    .await;
    assert_eq!(me.status, StatusCode::FORBIDDEN, "{}", me.body);
    for user in ["sso:carol", "sso:bob"] {
        offboarding
            .reactivate(&tenant, &user.into(), &"admin".into())
            .await
            .unwrap();
    }

    // Tokens minted with the provider's own key: a valid one (Carol, only `staff`: a member) is
    // accepted, so each refusal below is about the one thing wrong with it.
    let key = provider.signing_key();
    let issuer = provider.issuer.as_str();
    let later = Utc::now() + chrono::Duration::minutes(10);
    let valid = key.sign(claims(issuer, CLIENT_ID, "carol", later, &["staff"]));
    let me = call(
        &router,
        "GET",
        "/v1/auth/me",
        &[("authorization", &bearer(&valid))],
    )
    .await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    assert_eq!(me.json()["role"], "member");

    let earlier = Utc::now() - chrono::Duration::minutes(1);
    let refusals = [
        (
            key.sign(claims(issuer, CLIENT_ID, "carol", earlier, &[])),
            "expired",
        ),
        (
            key.sign(claims(issuer, "another-client", "carol", later, &[])),
            "audience",
        ),
        (
            key.sign(claims("http://127.0.0.1:1", CLIENT_ID, "carol", later, &[])),
            "issuer",
        ),
        (
            provider
                .impostor_key()
                .sign(claims(issuer, CLIENT_ID, "carol", later, &["wm-admins"])),
            "signature",
        ),
        (altered(&id_token), "signature"),
    ];
    for (token, reason) in refusals {
        let answer = call(
            &router,
            "GET",
            "/v1/auth/me",
            &[("authorization", &bearer(&token))],
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::UNAUTHORIZED,
            "{reason}: {}",
            answer.body
        );
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(reason), "{reason}: {error}");
        assert!(!error.contains(&token), "the refusal echoes the token");
    }

    // With single sign-on, the static admin token is off unless the break-glass switch is on.
    let admin = call(
        &router,
        "GET",
        "/v1/auth/me",
        &[("authorization", &bearer(TOKEN))],
    )
    .await;
    assert_eq!(admin.status, StatusCode::UNAUTHORIZED);
    assert!(
        admin.body.contains("break_glass_admin_token"),
        "{}",
        admin.body
    );
    let (glass, _app) = sso_app(&provider, true).await;
    let admin = call(
        &glass,
        "GET",
        "/v1/auth/me",
        &[("authorization", &bearer(TOKEN))],
    )
    .await;
    assert_eq!(admin.status, StatusCode::OK, "{}", admin.body);
    assert_eq!(admin.json()["via"], "admin_token");
}

/// The token with its payload changed (the subject made `admin`), signature kept.
fn altered(jwt: &str) -> String {
    let mut parts: Vec<String> = jwt.split('.').map(str::to_owned).collect();
    let mut payload: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
    payload["sub"] = Value::from("admin");
    parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&payload).unwrap());
    parts.join(".")
}

#[tokio::test]
async fn without_single_sign_on_the_routes_say_so_and_the_admin_token_stays() {
    let app = app().await;
    for (method, path) in [
        ("GET", "/v1/auth/login"),
        ("GET", "/v1/auth/callback?code=c&state=s"),
        ("POST", "/v1/auth/logout"),
    ] {
        let answer = call(&app.router, method, path, &[]).await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{path}: {}",
            answer.body
        );
        assert!(
            answer.body.contains("[auth.oidc]"),
            "{path}: {}",
            answer.body
        );
    }
    let me = call(
        &app.router,
        "GET",
        "/v1/auth/me",
        &[("authorization", &format!("Bearer {TOKEN}"))],
    )
    .await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    assert_eq!(me.json()["user_id"], "admin");
    assert_eq!(me.json()["via"], "admin_token");
    // A JWT-shaped token has nobody to judge it: refused like any unknown token.
    let jwt = TestKey::a("k").sign(claims(
        "https://idp.example.com",
        CLIENT_ID,
        "mallory",
        Utc::now() + chrono::Duration::minutes(5),
        &["wm-admins"],
    ));
    let me = call(
        &app.router,
        "GET",
        "/v1/auth/me",
        &[("authorization", &format!("Bearer {jwt}"))],
    )
    .await;
    assert_eq!(me.status, StatusCode::UNAUTHORIZED);
    let cookie = call(
        &app.router,
        "GET",
        "/v1/auth/me",
        &[("cookie", "workmate_session=abc.def")],
    )
    .await;
    assert_eq!(cookie.status, StatusCode::UNAUTHORIZED);
}
