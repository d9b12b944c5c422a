//! Who may answer a prompt, through the HTTP resolve endpoint; and session grants surviving a
//! restart of the real `workmate serve`.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use workmate_protocol::TenantId;
use workmate_store::{NewUser, Role};

use crate::crash;
use crate::router::{App, SURFACE_TOKEN, app_with_script};
use workmate_test_support::eventually_blocking;

const SHELL_SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "done"}]}]}"#;

/// One request with the surface token, acting as `user`; the status and the JSON body.
pub(crate) async fn as_user(
    app: &App,
    user: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    as_user_on(&app.router, user, method, path, body).await
}

/// [`as_user`] on `router`.
pub(crate) async fn as_user_on(
    router: &axum::Router,
    user: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {SURFACE_TOKEN}"))
        .header("x-workmate-acting-user", user)
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

/// An app whose sessions ask to run a shell command, with users alice and eve (members), bob
/// (approver), carol and admin (admins) in the default tenant.
pub(crate) async fn people() -> App {
    people_with_script(SHELL_SCRIPT).await
}

/// [`people`], with sessions that run `script`.
pub(crate) async fn people_with_script(script: &str) -> App {
    let app = app_with_script(script).await;
    let tenant = TenantId::from("default");
    for (id, role) in [
        ("alice", Role::Member),
        ("bob", Role::Approver),
        ("carol", Role::Admin),
        ("eve", Role::Member),
        ("admin", Role::Admin),
    ] {
        let user = NewUser {
            id: id.into(),
            display_name: id.into(),
            email: None,
            role,
            sso_subject: None,
        };
        app.store
            .tenants()
            .upsert_user(&tenant, &user)
            .await
            .unwrap();
    }
    app
}

/// Alice asks for a shell command; returns the parked item's id.
async fn alice_asks(app: &App) -> String {
    asks(app, "alice").await.1
}

/// `user` asks for a shell command in a new session; returns the session's and the parked item's
/// ids.
pub(crate) async fn asks(app: &App, user: &str) -> (String, String) {
    let (_, created) = as_user(app, user, "POST", "/v1/sessions", None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let message = json!({"type": "user_message", "text": "say hi"});
    as_user(
        app,
        user,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    )
    .await;
    let item =
        workmate_test_support::eventually("a prompt parked", Duration::from_secs(20), || async {
            let (_, listed) = as_user(
                app,
                user,
                "GET",
                &format!("/v1/inbox?state=pending&session={session}"),
                None,
            )
            .await;
            listed["items"]
                .as_array()
                .and_then(|items| items.first().cloned())
        })
        .await;
    assert_eq!(item["requested_by"], user);
    (session, item["id"].as_str().unwrap().to_owned())
}

async fn answer(app: &App, user: &str, item: &str) -> (StatusCode, Value) {
    let body = json!({"resolution": {"type": "approval", "choice": "once"}});
    as_user(
        app,
        user,
        "POST",
        &format!("/v1/inbox/{item}/resolve"),
        Some(body),
    )
    .await
}

#[tokio::test]
async fn the_owner_approvers_and_admins_may_answer_and_other_members_find_nothing() {
    let app = people().await;
    for (user, allowed) in [
        ("eve", false),
        ("alice", true),
        ("bob", true),
        ("carol", true),
    ] {
        let item = alice_asks(&app).await;
        let (status, body) = answer(&app, user, &item).await;
        if allowed {
            assert_eq!(status, StatusCode::OK, "{user}: {body}");
            assert_eq!(body["item"]["resolved_by"], user);
            assert_eq!(body["item"]["resolved_via"], "http");
        } else {
            // A member cannot see a coworker's prompt, so it answers as if it did not exist.
            assert_eq!(status, StatusCode::NOT_FOUND, "{user}: {body}");
            assert_eq!(body["error"], "no such inbox item", "{body}");
            let (_, listed) = as_user(&app, "alice", "GET", "/v1/inbox?state=pending", None).await;
            assert!(
                listed["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|i| i["id"] == item.as_str()),
                "still pending"
            );
        }
    }
    let (status, _) = as_user(&app, "mallory", "GET", "/v1/inbox", None).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "an unknown acting user is refused"
    );
}

#[tokio::test]
async fn separation_of_duties_refuses_self_approval_over_http() {
    let app = people().await;
    let tenant = TenantId::from("default");
    app.store
        .tenants()
        .set_settings(&tenant, &json!({"separation_of_duties": true}))
        .await
        .unwrap();
    let item = alice_asks(&app).await;
    let (status, body) = answer(&app, "alice", &item).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("Separation of duties"),
        "{body}"
    );
    let audit = app.store.audit().recent(&tenant, 50).await.unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.stage == "approval_refused" && r.actor.as_deref() == Some("alice")),
        "refusals are audited"
    );
    let (status, body) = answer(&app, "bob", &item).await;
    assert_eq!(status, StatusCode::OK, "another approver may: {body}");
}

#[test]
fn a_session_grant_survives_a_restart_of_workmate_serve() {
    let dir = tempfile::tempdir().unwrap();
    let env = crash::prepare_rounds(dir.path(), 0, 2);
    let server = crash::start(dir.path(), &env);
    let (session, count_file) = crash::start_counting(&server, dir.path());
    let item = eventually_blocking("the approval", crash::PROCESS_PATIENCE, || {
        crash::pending(&server).first().cloned()
    });
    let always = json!({"resolution": {"type": "approval", "choice": "always_command"}});
    let (status, body) = crash::call(
        &server,
        "POST",
        &format!("/v1/inbox/{}/resolve", item["id"].as_str().unwrap()),
        Some(always),
    );
    assert_eq!(status, 200, "{body}");
    crash::finished_history(&server, &session);
    assert_eq!(server.terminate(Duration::from_secs(5)).code(), Some(0));

    let server = crash::start(dir.path(), &env);
    let message = json!({"type": "user_message", "text": "count again"});
    let (status, _) = crash::call(
        &server,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    );
    assert_eq!(status, 202);
    eventually_blocking("the second run", crash::PROCESS_PATIENCE, || {
        (crash::runs(&count_file) == 2).then_some(())
    });
    let history = eventually_blocking("the second answer", crash::PROCESS_PATIENCE, || {
        let (_, body) = crash::call(
            &server,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        );
        let messages = body["messages"].as_array()?.clone();
        (messages.len() >= 8 && messages.last()?["content"] == "done").then_some(messages)
    });
    crash::assert_answered_once(&history);
    let (_, all) = crash::call(
        &server,
        "GET",
        &format!("/v1/inbox?session={session}"),
        None,
    );
    assert_eq!(
        all["items"].as_array().unwrap().len(),
        1,
        "the granted command ran without a second prompt"
    );
}

#[tokio::test]
async fn only_the_owner_or_an_admin_marks_a_session_unattended() {
    let app = people().await;
    let (_, created) = as_user(&app, "alice", "POST", "/v1/sessions", None).await;
    let path = format!("/v1/sessions/{}", created["session_id"].as_str().unwrap());
    let (status, _) = as_user(
        &app,
        "eve",
        "PATCH",
        &path,
        Some(json!({"unattended": true})),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a member cannot see it at all"
    );
    let (status, _) = as_user(
        &app,
        "bob",
        "PATCH",
        &path,
        Some(json!({"unattended": true})),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "an approver sees it but may not change it"
    );
    let (status, body) = as_user(
        &app,
        "alice",
        "PATCH",
        &path,
        Some(json!({"unattended": true})),
    )
    .await;
    assert_eq!(
        (status, body["unattended"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let message = json!({"type": "user_message", "text": "say hi"});
    as_user(
        &app,
        "alice",
        "POST",
        &format!("{path}/commands"),
        Some(message),
    )
    .await;
    workmate_test_support::eventually_holds(
        "an unattended session parks in the cross-session inbox",
        Duration::from_secs(20),
        || async {
            let (_, listed) = as_user(
                &app,
                "alice",
                "GET",
                "/v1/inbox?state=pending&visibility=inbox",
                None,
            )
            .await;
            !listed["items"].as_array().unwrap().is_empty()
        },
    )
    .await;
}

#[tokio::test]
async fn usage_is_for_admins_and_groups_by_user_or_model() {
    let app = people().await;
    let tenant = TenantId::from("default");
    let record = |user: &str, model: &str, input| workmate_store::NewUsage {
        session_id: workmate_protocol::SessionId::new(),
        user_id: Some(user.into()),
        model: model.into(),
        input,
        output: 1,
        cache_read: 0,
        cache_write: 0,
    };
    for usage in [
        record("alice", "oa:gpt", 10),
        record("alice", "an:claude", 5),
        record("bob", "oa:gpt", 7),
    ] {
        app.store.usage().record(&tenant, &usage).await.unwrap();
    }
    let (status, _) = as_user(&app, "alice", "GET", "/v1/usage", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "members do not see usage");
    let (status, body) = as_user(&app, "carol", "GET", "/v1/usage?group_by=user", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let by_user: Vec<(String, u64)> = body["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["key"].as_str().unwrap().to_owned(),
                t["input"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by_user,
        vec![("alice".to_owned(), 15), ("bob".to_owned(), 7)]
    );
    let (_, body) = as_user(
        &app,
        "carol",
        "GET",
        "/v1/usage?group_by=model&from=2020-01-01",
        None,
    )
    .await;
    let models: Vec<&str> = body["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(models, vec!["an:claude", "oa:gpt"]);
    let (status, _) = as_user(&app, "carol", "GET", "/v1/usage?from=tomorrow", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
