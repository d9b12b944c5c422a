//! Finding 2 of the second review: a connect link was a bearer token. An attacker's page posted
//! the attacker's own token from the victim's browser (`POST /v1/connectors/oauth/start`, no
//! session, no `Origin` check), so the victim's grant landed in the attacker's vault slot; a
//! forwarded link let anyone overwrite that person's credentials, as often as they liked. Now a
//! link works only from workmate's own page, once, and only with the confirmation code its
//! person's private card shows.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};

use crate::slack::connectors::{
    Connecting, browse, connect_code, connect_path, connecting, get, post_form, slash_reply,
    stored, token_of,
};

/// `post_form` as another site's page sends it.
fn from_another_site(uri: &str, form: &[(&str, &str)]) -> Request<Body> {
    let mut request = post_form(uri, form);
    request
        .headers_mut()
        .insert(header::ORIGIN, "https://attacker.example".parse().unwrap());
    request
}

#[tokio::test]
async fn a_link_posted_from_another_site_starts_no_sign_in_and_stores_nothing() {
    let Connecting { app, vault, .. } = connecting().await;
    // Bob (the attacker) takes his own Gmail link and code.
    let reply = slash_reply(&app, "U2", "connectors gmail").await;
    let (token, code) = (token_of(&connect_path(&reply)), connect_code(&reply));
    let (status, headers, _) = browse(
        &app,
        from_another_site(
            "/v1/connectors/oauth/start",
            &[("connect_token", &token), ("confirmation_code", &code)],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(headers.get("set-cookie").is_none(), "no flow was started");
    let (status, _, _) = browse(
        &app,
        from_another_site(
            "/v1/connectors/connect",
            &[
                ("connect_token", &token),
                ("confirmation_code", &code),
                ("token", "ghp_x"),
            ],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // From workmate's own page, the same link starts the sign-in.
    let (status, _, _) = browse(
        &app,
        post_form(
            "/v1/connectors/oauth/start",
            &[("connect_token", &token), ("confirmation_code", &code)],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(stored(&vault, "gmail").await.is_none());
}

#[tokio::test]
async fn a_forwarded_link_needs_its_code_and_a_link_works_once() {
    let Connecting { app, vault, .. } = connecting().await;
    let reply = slash_reply(&app, "U1", "connectors connect github").await;
    let link = connect_path(&reply);
    let (token, code) = (token_of(&link), connect_code(&reply));
    // Whoever got the link without Ana's card: no code, or a guess.
    for guess in [None, Some("AAAA-AAAA")] {
        let mut form = vec![
            ("connect_token", token.as_str()),
            ("token", "ghp_attacker"),
            ("base_url", "https://attacker.example"),
        ];
        if let Some(guess) = guess {
            form.push(("confirmation_code", guess));
        }
        let (status, _, page) = browse(&app, post_form("/v1/connectors/connect", &form)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    }
    assert!(stored(&vault, "github").await.is_none());

    // Ana, with her code: connected, once.
    let mine = [
        ("connect_token", token.as_str()),
        ("confirmation_code", code.as_str()),
        ("token", "ghp_ada"),
    ];
    let (status, _, page) = browse(&app, post_form("/v1/connectors/connect", &mine)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(stored(&vault, "github").await.unwrap()["token"], "ghp_ada");
    // Used: the page says so, and the form no longer overwrites anything.
    let (status, _, page) = browse(&app, get(&link)).await;
    assert_eq!(status, StatusCode::GONE, "{page}");
    let again = [
        ("connect_token", token.as_str()),
        ("confirmation_code", code.as_str()),
        ("token", "ghp_overwritten"),
    ];
    let (status, _, _) = browse(&app, post_form("/v1/connectors/connect", &again)).await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(stored(&vault, "github").await.unwrap()["token"], "ghp_ada");
}

#[tokio::test]
async fn with_single_sign_on_a_linked_person_must_be_signed_in_as_themselves() {
    use std::sync::Arc;

    use workmate_identity::{Clock, GroupRoles, Oidc, Session, SessionKey};
    use workmate_server::http::api::Sso;

    let cookie_key = SessionKey::from_bytes([7; 32]);
    let oidc = Oidc::new(
        crate::support::oidc_settings("http://127.0.0.1:9/"),
        crate::support::local_egress(),
        Clock::system(),
    )
    .unwrap();
    let sso = Arc::new(Sso::new(oidc, cookie_key.clone(), GroupRoles::new([], [])));
    let Connecting { app, vault, .. } = crate::slack::connectors::connecting_with(Some(sso)).await;
    let reply = slash_reply(&app, "U1", "connectors connect github").await;
    let (link, token, code) = (
        connect_path(&reply),
        token_of(&connect_path(&reply)),
        connect_code(&reply),
    );

    // Ana's chat account is linked to her directory identity; Bob signs in as himself.
    let tenant = workmate_chat::tenant_of(workmate_protocol::Surface::Slack, "T1");
    let directory = workmate_protocol::TenantId::from("default");
    for (tenant, id, subject) in [
        (&tenant, "slack-U1", "sub-ana"),
        (&directory, "sso:sub-ana", "sub-ana"),
        (&directory, "sso:sub-bob", "sub-bob"),
    ] {
        let user = workmate_store::NewUser {
            id: id.into(),
            display_name: id.into(),
            email: None,
            role: workmate_store::Role::Member,
            sso_subject: Some(subject.into()),
        };
        app.store
            .tenants()
            .upsert_user(tenant, &user)
            .await
            .unwrap();
    }
    let cookie = |user: &str, subject: &str| {
        let session = Session {
            subject: subject.into(),
            tenant: "default".into(),
            user_id: user.into(),
            expires_at: chrono::Utc::now().timestamp() + 600,
        };
        format!("workmate_session={}", cookie_key.seal_session(&session))
    };
    let with_cookie = |mut request: Request<Body>, cookie: &str| {
        request
            .headers_mut()
            .insert(header::COOKIE, cookie.parse().unwrap());
        request
    };

    // Not signed in, or signed in as Bob: the page asks to sign in, and even the code stores nothing.
    let (_, _, page) = browse(&app, get(&link)).await;
    assert!(page.contains("Sign in first"), "{page}");
    let form = [
        ("connect_token", token.as_str()),
        ("confirmation_code", code.as_str()),
        ("token", "ghp_not_ana"),
    ];
    let as_bob = with_cookie(
        post_form("/v1/connectors/connect", &form),
        &cookie("sso:sub-bob", "sub-bob"),
    );
    let (status, _, _) = browse(&app, as_bob).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(stored(&vault, "github").await.is_none());

    // Ana, signed in as herself: her page has no code to type, and her form is stored.
    let as_ana = cookie("sso:sub-ana", "sub-ana");
    let (_, _, page) = browse(&app, with_cookie(get(&link), &as_ana)).await;
    assert!(
        page.contains("Connect GitHub") && !page.contains("confirmation_code"),
        "{page}"
    );
    let form = [("connect_token", token.as_str()), ("token", "ghp_ada")];
    let (status, _, page) = browse(
        &app,
        with_cookie(post_form("/v1/connectors/connect", &form), &as_ana),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(stored(&vault, "github").await.unwrap()["token"], "ghp_ada");
}
